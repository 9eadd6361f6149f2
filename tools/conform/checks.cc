// Helpers shared by the suite's checks (checks.h).
#include "tools/conform/checks.h"

#include <chrono>
#include <thread>

#include "kiln/compile_options.h"

namespace kiln::conform {

namespace {

template <typename T>
void AppendValues(std::string& out, const HostArray& array, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, array.bytes.data() + i * sizeof(T), sizeof(T));
    if (i > 0) out += ", ";
    if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
      StrAppend(out, static_cast<int>(value));
    } else {
      StrAppend(out, value);
    }
  }
}

}  // namespace

Status NamingSlot(const Status& status, std::string_view slot) {
  if (status.ok() || StartsWith(status.message(), slot)) return status;
  return status.WithContext(slot);
}

std::string FormatArray(const HostArray& array) {
  std::string out = StrCat(array.shape.ToString(), " [");
  int bits = client::ElementTypeBits(array.shape.element_type);
  size_t element_bytes = bits <= 8 ? 1 : static_cast<size_t>(bits / 8);
  size_t count = std::min<size_t>(array.bytes.size() / element_bytes, 16);
  switch (array.shape.element_type) {
    case PJRT_Buffer_Type_F32:
      AppendValues<float>(out, array, count);
      break;
    case PJRT_Buffer_Type_F64:
      AppendValues<double>(out, array, count);
      break;
    case PJRT_Buffer_Type_S32:
      AppendValues<int32_t>(out, array, count);
      break;
    case PJRT_Buffer_Type_S64:
      AppendValues<int64_t>(out, array, count);
      break;
    case PJRT_Buffer_Type_BF16:
      for (size_t i = 0; i < count; ++i) {
        uint16_t bits16;
        std::memcpy(&bits16, array.bytes.data() + 2 * i, 2);
        StrAppend(out, i > 0 ? ", " : "", Bfloat16ToFloat(bits16));
      }
      break;
    case PJRT_Buffer_Type_F16:
      // Bit patterns.
      AppendValues<uint16_t>(out, array, count);
      break;
    case PJRT_Buffer_Type_S8:
      AppendValues<int8_t>(out, array, count);
      break;
    default:
      // Bytes for everything else (pred, u8, f16, ...).
      AppendValues<uint8_t>(out, array,
                            std::min<size_t>(array.bytes.size(), 16));
      break;
  }
  if (array.bytes.size() / element_bytes > count) out += ", ...";
  return out + "]";
}

uint16_t FloatToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffff) > 0x7f800000) return 0x7fc0;  // NaN
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float Bfloat16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}

const client::Device& FirstDevice(const CheckContext& context) {
  return *context.client->addressable_devices().front();
}

StatusOr<std::unique_ptr<client::Buffer>> Upload(const CheckContext& context,
                                                 const HostArray& array,
                                                 const client::Device& device) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<client::Buffer> buffer,
      context.client->BufferFromHost(array.bytes.data(), array.shape, &device));
  RETURN_IF_ERROR(buffer->AwaitReady().WithContext(
      StrCat("the ready event of an uploaded ", array.shape.ToString())));
  return buffer;
}

StatusOr<HostArray> Download(const client::Buffer& buffer) {
  HostArray array{buffer.shape(), {}};
  array.bytes.resize(static_cast<size_t>(buffer.shape().ByteSize()));
  RETURN_IF_ERROR(
      NamingSlot(buffer.ToHost(array.bytes.data(), array.bytes.size()),
                 "PJRT_Buffer_ToHostBuffer"));
  return array;
}

Status ExpectEqual(std::string_view what, const HostArray& actual,
                   const HostArray& expected) {
  if (actual.shape != expected.shape) {
    return Mismatch(what, " is ", actual.shape.ToString(), ", expected ",
                    expected.shape.ToString());
  }
  if (actual.bytes != expected.bytes) {
    return Mismatch(what, " is ", FormatArray(actual), ", expected ",
                    FormatArray(expected));
  }
  return OkStatus();
}

Status ExpectContents(std::string_view what, const client::Buffer& buffer,
                      const HostArray& expected) {
  if (buffer.shape() != expected.shape) {
    return Mismatch(what, " is ", buffer.shape().ToString(), ", expected ",
                    expected.shape.ToString());
  }
  ASSIGN_OR_RETURN(HostArray actual, Download(buffer));
  return ExpectEqual(what, actual, expected);
}

Status AwaitWithin(const client::Future& future, double seconds,
                   std::string_view what) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    ASSIGN_OR_RETURN(bool ready, future.IsReady());
    if (ready) break;
    if (std::chrono::steady_clock::now() > deadline) {
      return DeadlineExceededError(what, " did not fire within ", seconds,
                                   " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return future.Await();
}

StatusOr<std::string> CompileOptionsFor(
    const std::vector<int64_t>& device_ids) {
  client::CompileOptions options;
  options.num_replicas = static_cast<int>(device_ids.size());
  options.num_partitions = 1;
  options.device_ids = device_ids;
  return client::SerializeCompileOptions(options);
}

StatusOr<std::unique_ptr<client::Executable>> CompileFor(
    const CheckContext& context, std::string_view program,
    const client::Device& device) {
  ASSIGN_OR_RETURN(std::string options, CompileOptionsFor({device.id()}));
  auto executable = context.client->Compile(program, "mlir", options);
  if (!executable.ok()) {
    return NamingSlot(executable.status(), "PJRT_Client_Compile");
  }
  return std::move(*executable);
}

StatusOr<std::vector<std::unique_ptr<client::Buffer>>> RunAndAwait(
    const client::Executable& executable,
    const std::vector<client::Buffer*>& arguments,
    const client::ExecuteOptions& options) {
  std::vector<std::vector<client::Buffer*>> lists = {arguments};
  auto result = executable.Execute(lists, options);
  if (!result.ok()) {
    return NamingSlot(result.status(), "PJRT_LoadedExecutable_Execute");
  }
  for (const client::Future& done : result->device_complete) {
    RETURN_IF_ERROR(AwaitWithin(done, 60, "the execution's completion event"));
  }
  for (const auto& output : result->outputs[0]) {
    RETURN_IF_ERROR(
        output->AwaitReady().WithContext("an output's ready event"));
  }
  return std::move(result->outputs[0]);
}

StatusOr<std::string> ExpectRejected(const Status& status,
                                     std::string_view what) {
  if (status.ok()) return Mismatch(what, " succeeded; expected an error");
  if (status.message().empty()) {
    return Mismatch(what, " failed with ", StatusCodeName(status.code()),
                    " but an empty message");
  }
  return StrCat("rejected: ", status.ToString());
}

Status ExecutionError(const client::Executable& executable,
                      const std::vector<client::Buffer*>& arguments) {
  auto outputs = RunAndAwait(executable, arguments);
  return outputs.status().ok() ? OkStatus() : outputs.status();
}

RawBuffer::~RawBuffer() { Reset(); }

void RawBuffer::Reset() {
  if (handle_ == nullptr) return;
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_Destroy_Args);
  args.buffer = handle_;
  KILN_PJRT_CALL(*plugin_, PJRT_Buffer_Destroy, args).IgnoreError();
  handle_ = nullptr;
}

StatusOr<RawUpload> RawBufferFromHost(const CheckContext& context,
                                      const void* data,
                                      const client::Shape& shape,
                                      PJRT_HostBufferSemantics semantics,
                                      const std::vector<int64_t>* byte_strides,
                                      const client::Client& client,
                                      const client::Device& device) {
  const client::Plugin& plugin = *context.plugin;
  auto args = KILN_PJRT_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client.handle();
  args.data = data;
  args.type = shape.element_type;
  args.dims = shape.dimensions.data();
  args.num_dims = shape.dimensions.size();
  if (byte_strides != nullptr) {
    args.byte_strides = byte_strides->data();
    args.num_byte_strides = byte_strides->size();
  }
  args.host_buffer_semantics = semantics;
  args.device = device.handle();
  RETURN_IF_ERROR(
      NamingSlot(KILN_PJRT_CALL(plugin, PJRT_Client_BufferFromHostBuffer, args),
                 "PJRT_Client_BufferFromHostBuffer"));
  RawUpload upload{RawBuffer(context.plugin, args.buffer),
                   client::Future(context.plugin, args.done_with_host_buffer)};
  if (args.buffer == nullptr) {
    return Mismatch("PJRT_Client_BufferFromHostBuffer returned no buffer");
  }
  return upload;
}

StatusOr<std::vector<uint8_t>> RawToHost(
    const CheckContext& context, PJRT_Buffer* buffer, size_t size,
    PJRT_Buffer_MemoryLayout* host_layout) {
  std::vector<uint8_t> bytes(size);
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = buffer;
  args.host_layout = host_layout;
  args.dst = bytes.data();
  args.dst_size = bytes.size();
  RETURN_IF_ERROR(NamingSlot(
      KILN_PJRT_CALL(*context.plugin, PJRT_Buffer_ToHostBuffer, args),
      "PJRT_Buffer_ToHostBuffer"));
  client::Future done(context.plugin, args.event);
  RETURN_IF_ERROR(AwaitWithin(done, 60, "the ToHostBuffer event"));
  return bytes;
}

Status RawExecutionError(const CheckContext& context,
                         const client::Executable& executable,
                         const std::vector<PJRT_Buffer*>& arguments) {
  const client::Plugin& plugin = *context.plugin;
  std::vector<PJRT_Buffer*> outputs(
      static_cast<size_t>(std::max<int64_t>(executable.num_outputs(), 1)),
      nullptr);
  PJRT_Buffer** output_list = outputs.data();
  PJRT_Buffer* const* argument_list = arguments.data();
  PJRT_Event* complete = nullptr;
  PJRT_ExecuteOptions options{};
  options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  auto args = KILN_PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args);
  args.executable = executable.handle();
  args.options = &options;
  args.argument_lists = &argument_list;
  args.num_devices = 1;
  args.num_args = arguments.size();
  args.output_lists = &output_list;
  args.device_complete_events = &complete;
  RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_LoadedExecutable_Execute, args));
  client::Future done(context.plugin, complete);
  std::vector<RawBuffer> owned;
  for (PJRT_Buffer* output : outputs) {
    if (output != nullptr) owned.emplace_back(context.plugin, output);
  }
  RETURN_IF_ERROR(AwaitWithin(done, 60, "the execution's completion event"));
  for (const RawBuffer& output : owned) {
    auto ready_args = KILN_PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args);
    ready_args.buffer = output.handle();
    RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_Buffer_ReadyEvent, ready_args));
    client::Future ready(context.plugin, ready_args.event);
    RETURN_IF_ERROR(ready.Await());
  }
  return OkStatus();
}

}  // namespace kiln::conform
