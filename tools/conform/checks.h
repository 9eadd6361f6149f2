// What the suite's checks share: the lists they add themselves to, how a
// check says FAIL or UNSUPPORTED, and helpers over the client and the raw
// C API (for what the client does not wrap: byte strides, host layouts,
// mutable zero-copy, deliberately bad calls).
#ifndef KILN_TOOLS_CONFORM_CHECKS_H_
#define KILN_TOOLS_CONFORM_CHECKS_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/strings.h"
#include "kiln/pjrt.h"
#include "kiln/shape.h"
#include "pjrt_c_api.h"
#include "tools/conform/suite.h"

namespace kiln::conform {

// Each file of checks adds its own, in the order they run.
void AddPlatformChecks(std::vector<Check>& checks);  // checks_platform.cc
void AddBufferChecks(std::vector<Check>& checks);    // checks_buffers.cc
void AddExecuteChecks(std::vector<Check>& checks);   // checks_execute.cc
void AddErrorChecks(std::vector<Check>& checks);     // checks_errors.cc

// A result that differs from what the C API promises: the check FAILs with
// this message (UNKNOWN is the code no plugin error is converted to here:
// the runner prints the message alone).
template <typename... Args>
Status Mismatch(const Args&... args) {
  return UnknownError(args...);
}

// The check cannot run against this plugin or configuration: UNSUPPORTED
// for optional checks, FAIL for required ones.
template <typename... Args>
Status NotApplicable(const Args&... args) {
  return UnimplementedError(args...);
}

// `status` with the C API call that gave it named in front, unless its
// message already starts with that name.
Status NamingSlot(const Status& status, std::string_view slot);

// A host array: a shape and its dense row-major bytes (one byte per i1).
struct HostArray {
  client::Shape shape;
  std::vector<uint8_t> bytes;
};

template <typename T>
HostArray MakeArray(PJRT_Buffer_Type type, std::vector<int64_t> dims,
                    const std::vector<T>& values) {
  HostArray array{client::Shape(type, std::move(dims)), {}};
  array.bytes.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(array.bytes.data(), values.data(), array.bytes.size());
  return array;
}

// "f32[4] [1, 2, 3, 4]" (the first 16 values).
std::string FormatArray(const HostArray& array);

// bf16 as its bit pattern; conversions round to nearest even.
uint16_t FloatToBfloat16(float value);
float Bfloat16ToFloat(uint16_t bits);

// The first addressable device (a client without one fails at setup).
const client::Device& FirstDevice(const CheckContext& context);

// Uploads `array` to `device` (kImmutableOnlyDuringCall) and waits for the
// buffer to be ready.
StatusOr<std::unique_ptr<client::Buffer>> Upload(const CheckContext& context,
                                                 const HostArray& array,
                                                 const client::Device& device);
// The buffer's contents as a host array of its shape.
StatusOr<HostArray> Download(const client::Buffer& buffer);
// Checks the buffer's shape and contents against `expected`.
Status ExpectContents(std::string_view what, const client::Buffer& buffer,
                      const HostArray& expected);
Status ExpectEqual(std::string_view what, const HostArray& actual,
                   const HostArray& expected);

// Waits for `future` at most `seconds` (polling IsReady), then returns its
// status; DEADLINE_EXCEEDED naming `what` when it does not fire in time.
Status AwaitWithin(const client::Future& future, double seconds,
                   std::string_view what);

// Serialized compile options: one replica on each of `device_ids`, one
// partition.
StatusOr<std::string> CompileOptionsFor(const std::vector<int64_t>& device_ids);

// Compiles MLIR text for `device` (one replica, one partition).
StatusOr<std::unique_ptr<client::Executable>> CompileFor(
    const CheckContext& context, std::string_view program,
    const client::Device& device);

// One execution on the executable's device, awaited: the completion event
// and every output's ready event. Errors of any of them are returned.
StatusOr<std::vector<std::unique_ptr<client::Buffer>>> RunAndAwait(
    const client::Executable& executable,
    const std::vector<client::Buffer*>& arguments,
    const client::ExecuteOptions& options = {});

// OK when `status` is an error (the expected rejection), with a detail
// naming it; a Mismatch naming `what` when it is OK, or when the plugin's
// error has no message.
StatusOr<std::string> ExpectRejected(const Status& status,
                                     std::string_view what);

// The first error an execution reports: the Execute call, its completion
// event, or an output's ready event; OK when all of them succeed.
Status ExecutionError(const client::Executable& executable,
                      const std::vector<client::Buffer*>& arguments);

// A buffer made through the raw C API; destroyed with the plugin's table.
class RawBuffer {
 public:
  RawBuffer(std::shared_ptr<const client::Plugin> plugin, PJRT_Buffer* handle)
      : plugin_(std::move(plugin)), handle_(handle) {}
  ~RawBuffer();
  RawBuffer(RawBuffer&& other) noexcept
      : plugin_(std::move(other.plugin_)), handle_(other.handle_) {
    other.handle_ = nullptr;
  }
  RawBuffer(const RawBuffer&) = delete;
  RawBuffer& operator=(const RawBuffer&) = delete;
  RawBuffer& operator=(RawBuffer&&) = delete;

  PJRT_Buffer* handle() const { return handle_; }
  // Destroys the buffer now.
  void Reset();

 private:
  std::shared_ptr<const client::Plugin> plugin_;
  PJRT_Buffer* handle_ = nullptr;
};

struct RawUpload {
  RawBuffer buffer;
  client::Future done_with_host_buffer;
};

// PJRT_Client_BufferFromHostBuffer with the given semantics and byte
// strides (null: dense row-major) on `device`'s default memory.
StatusOr<RawUpload> RawBufferFromHost(const CheckContext& context,
                                      const void* data,
                                      const client::Shape& shape,
                                      PJRT_HostBufferSemantics semantics,
                                      const std::vector<int64_t>* byte_strides,
                                      const client::Client& client,
                                      const client::Device& device);

// PJRT_Buffer_ToHostBuffer into `size` bytes with `host_layout` (null:
// dense row-major), awaited.
StatusOr<std::vector<uint8_t>> RawToHost(const CheckContext& context,
                                         PJRT_Buffer* buffer, size_t size,
                                         PJRT_Buffer_MemoryLayout* host_layout);

// PJRT_LoadedExecutable_Execute on one argument list (handles passed as
// given, nulls and foreign ones included); the first error of the call,
// its completion event or an output's ready event.
Status RawExecutionError(const CheckContext& context,
                         const client::Executable& executable,
                         const std::vector<PJRT_Buffer*>& arguments);

}  // namespace kiln::conform

#endif  // KILN_TOOLS_CONFORM_CHECKS_H_
