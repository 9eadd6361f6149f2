// Loads libpjrt_kiln.so the way a framework does (dlopen, GetPjrtApi) and
// offers small helpers over the C API for Kiln's plugin tests.
#ifndef KILN_TESTS_PJRT_PLUGIN_HARNESS_H_
#define KILN_TESTS_PJRT_PLUGIN_HARNESS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
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

  // ToHostBuffer with no host layout into a vector of the needed size;
  // awaits the event.
  std::vector<uint8_t> Download(PJRT_Buffer* buffer);
  std::vector<float> DownloadF32(PJRT_Buffer* buffer);

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
