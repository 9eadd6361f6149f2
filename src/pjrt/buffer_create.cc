// The PJRT_Client_* entry points that make buffers.
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/error.h"
#include "pjrt/handles.h"
#include "pjrt/layouts.h"
#include "pjrt/shapes.h"
#include "runtime/transfer.h"

namespace kiln::pjrt {
namespace {

StatusOr<runtime::HostBufferSemantics> SemanticsFromPjrt(int semantics) {
  switch (semantics) {
    case PJRT_HostBufferSemantics_kImmutableOnlyDuringCall:
      return runtime::HostBufferSemantics::kImmutableOnlyDuringCall;
    case PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes:
      return runtime::HostBufferSemantics::kImmutableUntilTransferCompletes;
    case PJRT_HostBufferSemantics_kImmutableZeroCopy:
      return runtime::HostBufferSemantics::kImmutableZeroCopy;
    case PJRT_HostBufferSemantics_kMutableZeroCopy:
      return runtime::HostBufferSemantics::kMutableZeroCopy;
    default:
      return InvalidArgumentError(
          "PJRT_Client_BufferFromHostBuffer_Args.host_buffer_semantics is ",
          semantics, ", which is not a PJRT_HostBufferSemantics");
  }
}

}  // namespace

PJRT_Error* PJRT_Client_BufferFromHostBuffer(
    PJRT_Client_BufferFromHostBuffer_Args* args) {
  return RunEntry([&]() -> Status {
    constexpr std::string_view kWhat = "PJRT_Client_BufferFromHostBuffer_Args.";
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_BufferFromHostBuffer_Args, buffer);
    ASSIGN_OR_RETURN(PJRT_Client * client,
                     CheckClient(args->client, StrCat(kWhat, "client")));
    ASSIGN_OR_RETURN(
        runtime::Shape shape,
        ReadShape(RawEnumValue(args->type), args->dims, args->num_dims, kWhat));
    ASSIGN_OR_RETURN(
        runtime::HostBufferSemantics semantics,
        SemanticsFromPjrt(RawEnumValue(args->host_buffer_semantics)));
    std::optional<std::span<const int64_t>> strides;
    if (args->num_byte_strides > 0) {
      if (args->num_byte_strides != shape.rank()) {
        return InvalidArgumentError(
            kWhat, "num_byte_strides is ", args->num_byte_strides, ", but ",
            shape.ToString(), " has ", shape.rank(), " dimensions");
      }
      if (args->byte_strides == nullptr) {
        return InvalidArgumentError(kWhat, "byte_strides is null, but ",
                                    "num_byte_strides is ",
                                    args->num_byte_strides);
      }
      strides.emplace(args->byte_strides, args->num_byte_strides);
    }
    ASSIGN_OR_RETURN(Memory * memory, ResolvePlacement(client, args->device,
                                                       args->memory, kWhat));
    ASSIGN_OR_RETURN(std::vector<int64_t> device_layout,
                     ReadDeviceLayout(args->device_layout, shape,
                                      StrCat(kWhat, "device_layout")));
    auto transfer = runtime::TransferFromHost(
        args->data, shape, strides, semantics, memory->memory, device_layout);
    if (!transfer.ok()) {
      return transfer.status().WithContext("PJRT_Client_BufferFromHostBuffer");
    }
    args->done_with_host_buffer =
        NewEventHandle(std::move(transfer->done_with_host_buffer));
    args->buffer = NewBufferHandle(std::move(transfer->buffer), client);
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_CreateUninitializedBuffer(
    PJRT_Client_CreateUninitializedBuffer_Args* args) {
  return RunEntry([&]() -> Status {
    constexpr std::string_view kWhat =
        "PJRT_Client_CreateUninitializedBuffer_Args.";
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_CreateUninitializedBuffer_Args,
                         buffer);
    ASSIGN_OR_RETURN(PJRT_Client * client,
                     CheckClient(args->client, StrCat(kWhat, "client")));
    ASSIGN_OR_RETURN(
        runtime::Shape shape,
        ReadShape(RawEnumValue(args->shape_element_type), args->shape_dims,
                  args->shape_num_dims, StrCat(kWhat, "shape_")));
    ASSIGN_OR_RETURN(std::vector<int64_t> layout,
                     ReadDeviceLayout(args->shape_layout, shape,
                                      StrCat(kWhat, "shape_layout")));
    ASSIGN_OR_RETURN(Memory * memory, ResolvePlacement(client, args->device,
                                                       args->memory, kWhat));
    // The bytes are zeroed: "uninitialized" never exposes old memory.
    ASSIGN_OR_RETURN(
        std::shared_ptr<runtime::Buffer> buffer,
        runtime::Buffer::CreateZeroed(shape, memory->memory, std::move(layout)));
    args->buffer = NewBufferHandle(std::move(buffer), client);
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_CreateViewOfDeviceBuffer(
    PJRT_Client_CreateViewOfDeviceBuffer_Args* args) {
  return RunEntry([&]() -> Status {
    constexpr std::string_view kWhat =
        "PJRT_Client_CreateViewOfDeviceBuffer_Args.";
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_CreateViewOfDeviceBuffer_Args,
                         buffer);
    ASSIGN_OR_RETURN(PJRT_Client * client,
                     CheckClient(args->client, StrCat(kWhat, "client")));
    ASSIGN_OR_RETURN(runtime::Shape shape,
                     ReadShape(RawEnumValue(args->element_type), args->dims,
                               args->num_dims, kWhat));
    ASSIGN_OR_RETURN(
        std::vector<int64_t> layout,
        ReadDeviceLayout(args->layout, shape, StrCat(kWhat, "layout")));
    PJRT_Memory* requested_memory =
        KILN_PJRT_HAS_FIELD(args, PJRT_Client_CreateViewOfDeviceBuffer_Args,
                            memory)
            ? args->memory
            : nullptr;
    ASSIGN_OR_RETURN(
        Memory * memory,
        ResolvePlacement(client, args->device, requested_memory, kWhat));
    if (args->stream != 0) {
      return InvalidArgumentError(kWhat, "stream is ", args->stream,
                                  "; CPU devices have no streams (pass 0)");
    }
    void* data = args->device_buffer_ptr;
    if (data == nullptr && shape.byte_size() > 0) {
      return InvalidArgumentError(kWhat, "device_buffer_ptr is null");
    }
    if (reinterpret_cast<uintptr_t>(data) % runtime::kMinExternalAlignment !=
        0) {
      return InvalidArgumentError(
          kWhat, "device_buffer_ptr ", data, " is not aligned to ",
          runtime::kMinExternalAlignment, " bytes, which Kiln needs to use it");
    }
    // The view borrows the memory; its owner hears back through the
    // callback once no buffer, copy or external reference uses it.
    void (*on_delete)(void*, void*) = args->on_delete_callback;
    void* on_delete_arg = args->on_delete_callback_arg;
    std::shared_ptr<runtime::Storage> storage = runtime::Storage::Wrap(
        data, static_cast<size_t>(shape.byte_size()), /*writable=*/true,
        [on_delete, data, on_delete_arg] {
          if (on_delete != nullptr) on_delete(data, on_delete_arg);
        });
    args->buffer = NewBufferHandle(
        runtime::Buffer::Create(shape, memory->memory, std::move(storage),
                                runtime::Event::CreateReady(),
                                std::move(layout)),
        client);
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_CreateErrorBuffer(
    PJRT_Client_CreateErrorBuffer_Args* args) {
  return RunEntry([&]() -> Status {
    constexpr std::string_view kWhat = "PJRT_Client_CreateErrorBuffer_Args.";
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_CreateErrorBuffer_Args, buffer);
    ASSIGN_OR_RETURN(PJRT_Client * client,
                     CheckClient(args->client, StrCat(kWhat, "client")));
    ASSIGN_OR_RETURN(StatusCode code,
                     StatusCodeFromPjrt(RawEnumValue(args->error_code),
                                        StrCat(kWhat, "error_code")));
    if (code == StatusCode::kOk) {
      return InvalidArgumentError(kWhat,
                                  "error_code is OK; an error buffer needs an "
                                  "error");
    }
    if (args->error_message == nullptr && args->error_message_size > 0) {
      return InvalidArgumentError(kWhat, "error_message is null");
    }
    Status error(
        code,
        std::string(args->error_message_size == 0 ? "" : args->error_message,
                    args->error_message_size));
    if (KILN_PJRT_HAS_FIELD(args, PJRT_Client_CreateErrorBuffer_Args,
                            num_payload)) {
      ASSIGN_OR_RETURN(std::vector<NamedValue> payload,
                       ReadNamedValues(args->payload, args->num_payload,
                                       StrCat(kWhat, "payload")));
      for (NamedValue& entry : payload) {
        auto* value = std::get_if<std::string>(&entry.value);
        if (value == nullptr) {
          return InvalidArgumentError(kWhat, "payload entry ", entry.ToString(),
                                      " is not a string; payloads are text");
        }
        error = error.WithPayload(entry.name, std::move(*value));
      }
    }
    ASSIGN_OR_RETURN(
        runtime::Shape shape,
        ReadShape(RawEnumValue(args->shape_element_type), args->shape_dims,
                  args->shape_num_dims, StrCat(kWhat, "shape_")));
    RETURN_IF_ERROR(CheckDeviceLayout(args->shape_layout, shape,
                                      StrCat(kWhat, "shape_layout")));
    ASSIGN_OR_RETURN(Memory * memory,
                     ResolvePlacement(client, nullptr, args->memory, kWhat));
    args->buffer = NewBufferHandle(
        runtime::Buffer::CreateError(shape, memory->memory, std::move(error)),
        client);
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
