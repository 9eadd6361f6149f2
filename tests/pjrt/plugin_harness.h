// Loads libpjrt_kiln.so the way a framework does (dlopen, GetPjrtApi) and
// offers small helpers over the C API for Kiln's plugin tests.
#ifndef KILN_TESTS_PJRT_PLUGIN_HARNESS_H_
#define KILN_TESTS_PJRT_PLUGIN_HARNESS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pjrt_c_api.h"

namespace kiln::testing {

// The plugin's table, loaded once per process from
// <build dir>/lib/libpjrt_kiln.so. Null (with a test failure) when loading
// fails.
const PJRT_Api* LoadPlugin();

// A converted error: what PJRT_Error_GetCode/Message/ForEachPayload say.
struct ErrorInfo {
  PJRT_Error_Code code = PJRT_Error_Code_OK;
  std::string message;
  std::vector<std::pair<std::string, std::string>> payloads;
};

// Reads and destroys `error` (null means OK).
ErrorInfo TakeError(const PJRT_Api* api, PJRT_Error* error);

// "OK" or "CODE: message", for assertion output.
std::string Describe(const ErrorInfo& info);

// Stores `value` in an enum field, even one outside the enumerators' range
// (as a C caller may): C++ cannot form such an enum value directly.
template <typename Enum>
void SetRawEnum(Enum& field, int value) {
  static_assert(sizeof(Enum) == sizeof(int));
  std::memcpy(&field, &value, sizeof(value));
}

// Zero-initialized args with struct_size set to the full current size.
template <typename T>
T MakeArgs(size_t struct_size) {
  T args{};
  args.struct_size = struct_size;
  return args;
}
#define KILN_ARGS(T) ::kiln::testing::MakeArgs<T>(T##_STRUCT_SIZE)

// A serialized xla.CompileOptionsProto as jax builds it for jit:
// device_ordinal -1, profile_version -1, use_spmd_partitioning, and a
// `replicas` x `partitions` device assignment that puts partition p of
// replica r on device p * replicas + r (Kiln's default assignment), or on
// device_ids[p * replicas + r] when given. A portable executable gets
// compile_portable_executable and no assignment.
std::string JaxCompileOptions(int replicas = 1, int partitions = 1,
                              bool portable = false,
                              const std::vector<int64_t>& device_ids = {});

// The contents of a file (a test failure, and "", when it cannot be read).
std::string ReadFileOrFail(const std::string& path);

// What one PJRT_LoadedExecutable_Execute call gave back.
struct ExecuteResult {
  ErrorInfo error;
  // [device][output]; empty when the call failed.
  std::vector<std::vector<PJRT_Buffer*>> outputs;
  // One per device when events were requested and the call succeeded.
  std::vector<PJRT_Event*> events;
};

// Fixture: the plugin's table and a client with `devices` devices.
class PluginTest : public ::testing::Test {
 protected:
  explicit PluginTest(int devices = 1) : device_count_(devices) {}
  void SetUp() override;
  void TearDown() override;

  // Creates another client (the caller destroys it with DestroyClient).
  PJRT_Client* CreateClient(int devices);
  void DestroyClient(PJRT_Client* client);

  std::vector<PJRT_Device*> Devices(PJRT_Client* client = nullptr);
  std::vector<PJRT_Memory*> Memories(PJRT_Device* device);
  PJRT_Memory* DefaultMemory(PJRT_Device* device);
  std::string MemoryKind(PJRT_Memory* memory);

  // BufferFromHostBuffer on `device` (or `memory` when given); awaits and
  // destroys the done event. Fails the test on error.
  PJRT_Buffer* Upload(const void* data, PJRT_Buffer_Type type,
                      const std::vector<int64_t>& dims, PJRT_Device* device,
                      PJRT_Memory* memory = nullptr,
                      PJRT_HostBufferSemantics semantics =
                          PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                      const std::vector<int64_t>* byte_strides = nullptr);
  PJRT_Buffer* UploadF32(const std::vector<float>& values,
                         const std::vector<int64_t>& dims,
                         PJRT_Device* device = nullptr);
  // PJRT_Client_CreateErrorBuffer: an f32 buffer of `dims` on device 0's
  // default memory holding only `code` and `message` (what a failed
  // upstream computation leaves). Fails the test on error.
  PJRT_Buffer* ErrorBufferF32(PJRT_Error_Code code, const std::string& message,
                              const std::vector<int64_t>& dims);

  // ToHostBuffer with no host layout into a vector of the needed size;
  // awaits the event.
  std::vector<uint8_t> Download(PJRT_Buffer* buffer);
  std::vector<float> DownloadF32(PJRT_Buffer* buffer);

  // PJRT_Client_Compile of `code` in `format` with serialized `options` on
  // `client` (the fixture's when null). Returns the error; *executable
  // gets the result (null on error).
  ErrorInfo TryCompile(std::string_view code, const std::string& options,
                       PJRT_LoadedExecutable** executable,
                       std::string_view format = "mlir",
                       PJRT_Client* client = nullptr);
  // As TryCompile; fails the test (and returns null) on error.
  PJRT_LoadedExecutable* Compile(
      std::string_view code, const std::string& options = JaxCompileOptions(),
      PJRT_Client* client = nullptr);
  // LoadedExecutable_GetExecutable (the caller destroys the result).
  PJRT_Executable* GetExecutable(PJRT_LoadedExecutable* loaded);
  void DestroyExecutable(PJRT_Executable* executable);
  void DestroyLoadedExecutable(PJRT_LoadedExecutable* loaded);
  // Executable_NumOutputs through GetExecutable, as jaxlib asks before
  // every Execute.
  size_t NumOutputs(PJRT_LoadedExecutable* loaded);

  // One Execute: `arguments` holds one argument list per device;
  // `execute_device` (optional) selects the single-device path. Asks for
  // device_complete_events when `events` is true.
  ExecuteResult Execute(PJRT_LoadedExecutable* loaded,
                        const std::vector<std::vector<PJRT_Buffer*>>& arguments,
                        PJRT_Device* execute_device = nullptr,
                        const std::vector<int64_t>& non_donatable = {},
                        bool events = true);
  // Execute on one device (execute_device when given), awaiting the
  // completion event; fails the test on any error. Returns the outputs.
  std::vector<PJRT_Buffer*> ExecuteAndAwait(
      PJRT_LoadedExecutable* loaded, const std::vector<PJRT_Buffer*>& arguments,
      PJRT_Device* execute_device = nullptr);
  // ToHostBuffer with no host layout; returns the error of the call or of
  // its event instead of failing the test.
  ErrorInfo TryDownload(PJRT_Buffer* buffer, std::vector<uint8_t>* bytes);
  bool IsDeleted(PJRT_Buffer* buffer);
  void DestroyBuffers(const std::vector<PJRT_Buffer*>& buffers);

  // Awaits and destroys `event`, returning its status.
  ErrorInfo AwaitAndDestroy(PJRT_Event* event);
  void DestroyBuffer(PJRT_Buffer* buffer);
  void DestroyEvent(PJRT_Event* event);

  const PJRT_Api* api_ = nullptr;
  PJRT_Client* client_ = nullptr;
  int device_count_;
};

}  // namespace kiln::testing

// Asserts that a PJRT call returned no error.
#define PJRT_ASSERT_OK(api, expr)                  \
  do {                                             \
    ::kiln::testing::ErrorInfo kiln_info_ =        \
        ::kiln::testing::TakeError((api), (expr)); \
    ASSERT_EQ(kiln_info_.code, PJRT_Error_Code_OK) \
        << ::kiln::testing::Describe(kiln_info_);  \
  } while (0)
#define PJRT_EXPECT_OK(api, expr)                  \
  do {                                             \
    ::kiln::testing::ErrorInfo kiln_info_ =        \
        ::kiln::testing::TakeError((api), (expr)); \
    EXPECT_EQ(kiln_info_.code, PJRT_Error_Code_OK) \
        << ::kiln::testing::Describe(kiln_info_);  \
  } while (0)

#endif  // KILN_TESTS_PJRT_PLUGIN_HARNESS_H_
