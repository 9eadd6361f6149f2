// The PJRT_Buffer_* entry points that move bytes: to the host, to another
// device or memory, and raw copies.
#include "base/logging.h"
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/error.h"
#include "pjrt/handles.h"
#include "pjrt/layouts.h"
#include "runtime/transfer.h"

namespace kiln::pjrt {
namespace {

// What PJRT_Buffer_CopyRawToHostFuture hands the caller as callback_data:
// the way to give the copy its destination, used once by
// CopyRawToHostFutureReady and then freed.
struct DeferredCopyData {
  std::function<void(StatusOr<void*>)> provide_destination;
};

void CopyRawToHostFutureReady(
    PJRT_Buffer_CopyRawToHostFuture_Callback_Args* args) {
  // All fields of this struct exist in every PJRT version that has it, and
  // callers need not set struct_size, so it is not checked.
  if (args == nullptr || args->callback_data == nullptr) {
    KILN_LOG(ERROR) << "the PJRT_Buffer_CopyRawToHostFuture callback was "
                       "called without its callback_data; the copy is lost";
    return;
  }
  std::unique_ptr<DeferredCopyData> data(
      static_cast<DeferredCopyData*>(args->callback_data));
  auto code =
      StatusCodeFromPjrt(RawEnumValue(args->error_code),
                         "PJRT_Buffer_CopyRawToHostFuture_Callback_Args."
                         "error_code");
  if (!code.ok()) {
    data->provide_destination(code.status());
  } else if (*code != StatusCode::kOk) {
    data->provide_destination(Status(
        *code,
        std::string(
            args->error_message == nullptr ? "" : args->error_message,
            args->error_message == nullptr ? 0 : args->error_message_size)));
  } else {
    data->provide_destination(args->dst);
  }
}

}  // namespace

PJRT_Error* PJRT_Buffer_ToHostBuffer(PJRT_Buffer_ToHostBuffer_Args* args) {
  return RunEntry([&]() -> Status {
    constexpr std::string_view kWhat = "PJRT_Buffer_ToHostBuffer_Args.";
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_ToHostBuffer_Args, event);
    ASSIGN_OR_RETURN(PJRT_Buffer * buffer,
                     CheckBuffer(args->src, StrCat(kWhat, "src")));
    const runtime::Shape& shape = buffer->buffer->shape();
    ASSIGN_OR_RETURN(
        std::vector<int64_t> strides,
        HostStrides(args->host_layout, shape, StrCat(kWhat, "host_layout")));
    std::optional<std::span<const int64_t>> stride_span;
    if (!strides.empty()) stride_span.emplace(strides);
    if (args->dst == nullptr) {
      // A size query: how many bytes the host layout needs.
      auto size = runtime::HostTransferSize(shape, stride_span);
      if (!size.ok())
        return size.status().WithContext("PJRT_Buffer_ToHostBuffer");
      args->dst_size = static_cast<size_t>(*size);
      args->event = nullptr;
      return OkStatus();
    }
    if (args->dst_size > static_cast<size_t>(INT64_MAX)) {
      return InvalidArgumentError(kWhat, "dst_size ", args->dst_size,
                                  " is larger than any buffer");
    }
    auto done = runtime::TransferToHost(buffer->buffer, args->dst,
                                        static_cast<int64_t>(args->dst_size),
                                        stride_span);
    if (!done.ok())
      return done.status().WithContext("PJRT_Buffer_ToHostBuffer");
    args->event = NewEventHandle(std::move(*done));
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_CopyToDevice(PJRT_Buffer_CopyToDevice_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_CopyToDevice_Args, dst_buffer);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_CopyToDevice_Args.buffer"));
    ASSIGN_OR_RETURN(PJRT_Device * device,
                     CheckDevice(args->dst_device,
                                 "PJRT_Buffer_CopyToDevice_Args.dst_device"));
    RETURN_IF_ERROR(
        CheckSameClient(device->client, buffer->client,
                        "PJRT_Buffer_CopyToDevice_Args.dst_device"));
    auto copy = runtime::CopyToMemory(buffer->buffer,
                                      device->device->default_memory_space());
    if (!copy.ok())
      return copy.status().WithContext("PJRT_Buffer_CopyToDevice");
    args->dst_buffer = NewBufferHandle(std::move(*copy), buffer->client);
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_CopyToMemory(PJRT_Buffer_CopyToMemory_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_CopyToMemory_Args, dst_buffer);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_CopyToMemory_Args.buffer"));
    ASSIGN_OR_RETURN(Memory * memory,
                     CheckMemory(args->dst_memory,
                                 "PJRT_Buffer_CopyToMemory_Args.dst_memory"));
    RETURN_IF_ERROR(
        CheckSameClient(memory->client, buffer->client,
                        "PJRT_Buffer_CopyToMemory_Args.dst_memory"));
    auto copy = runtime::CopyToMemory(buffer->buffer, memory->memory);
    if (!copy.ok())
      return copy.status().WithContext("PJRT_Buffer_CopyToMemory");
    args->dst_buffer = NewBufferHandle(std::move(*copy), buffer->client);
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_CopyRawToHost(PJRT_Buffer_CopyRawToHost_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_CopyRawToHost_Args, event);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_CopyRawToHost_Args.buffer"));
    auto done = runtime::CopyRawToHost(buffer->buffer, args->dst, args->offset,
                                       args->transfer_size);
    if (!done.ok()) {
      return done.status().WithContext("PJRT_Buffer_CopyRawToHost");
    }
    args->event = NewEventHandle(std::move(*done));
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_CopyRawToHostFuture(
    PJRT_Buffer_CopyRawToHostFuture_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_CopyRawToHostFuture_Args,
                         future_ready_callback);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer,
                    "PJRT_Buffer_CopyRawToHostFuture_Args.buffer"));
    auto copy = runtime::CopyRawToHostDeferred(buffer->buffer, args->offset,
                                               args->transfer_size);
    if (!copy.ok()) {
      return copy.status().WithContext("PJRT_Buffer_CopyRawToHostFuture");
    }
    // The caller calls future_ready_callback(callback_data) exactly once,
    // with the destination or an error; until then the copy waits.
    auto data = std::make_unique<DeferredCopyData>();
    data->provide_destination = std::move(copy->provide_destination);
    args->event = NewEventHandle(std::move(copy->done));
    args->callback_data = data.release();
    args->future_ready_callback = &CopyRawToHostFutureReady;
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
