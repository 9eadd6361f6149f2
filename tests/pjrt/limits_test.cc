// Limits a host process can rely on: the client's memory limit, shapes too
// large to count, programs too deep or too long to recurse over, and runs
// that never end, stopped by destroying what they belong to.
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

class LimitsTest : public PluginTest {
 protected:
  // A client with the create options `options` (name, int64 value).
  ErrorInfo TryCreateClient(
      const std::vector<std::pair<std::string, int64_t>>& int_options,
      const std::vector<std::pair<std::string, std::string>>& string_options,
      PJRT_Client** client) {
    std::vector<PJRT_NamedValue> options;
    for (const auto& [name, value] : int_options) {
      PJRT_NamedValue option = KILN_ARGS(PJRT_NamedValue);
      option.name = name.c_str();
      option.name_size = name.size();
      option.type = PJRT_NamedValue_kInt64;
      option.int64_value = value;
      option.value_size = 1;
      options.push_back(option);
    }
    for (const auto& [name, value] : string_options) {
      PJRT_NamedValue option = KILN_ARGS(PJRT_NamedValue);
      option.name = name.c_str();
      option.name_size = name.size();
      option.type = PJRT_NamedValue_kString;
      option.string_value = value.c_str();
      option.value_size = value.size();
      options.push_back(option);
    }
    auto args = KILN_ARGS(PJRT_Client_Create_Args);
    args.create_options = options.data();
    args.num_options = options.size();
    ErrorInfo info = TakeError(api_, api_->PJRT_Client_Create(&args));
    *client = args.client;
    return info;
  }

  // BufferFromHostBuffer of `count` f32 zeros on `client`'s first device.
  ErrorInfo TryUpload(PJRT_Client* client, int64_t count, PJRT_Buffer** out) {
    return TryUploadValues(client, Devices(client)[0],
                           std::vector<float>(count, 0.0f), out);
  }

  // `values` as an f32 vector on `device` of `client`.
  PJRT_Buffer* UploadTo(PJRT_Client* client, PJRT_Device* device,
                        const std::vector<float>& values) {
    PJRT_Buffer* buffer = nullptr;
    ErrorInfo info = TryUploadValues(client, device, values, &buffer);
    EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
    return buffer;
  }

  ErrorInfo TryUploadValues(PJRT_Client* client, PJRT_Device* device,
                            const std::vector<float>& data, PJRT_Buffer** out) {
    std::vector<int64_t> dims = {static_cast<int64_t>(data.size())};
    auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = client;
    args.data = data.data();
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims.data();
    args.num_dims = 1;
    args.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    args.device = device;
    ErrorInfo info =
        TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    *out = args.buffer;
    if (args.done_with_host_buffer != nullptr) {
      AwaitAndDestroy(args.done_with_host_buffer);
    }
    return info;
  }

  int64_t BytesLimit(PJRT_Client* client) {
    auto stats = KILN_ARGS(PJRT_Device_MemoryStats_Args);
    stats.device = Devices(client)[0];
    PJRT_EXPECT_OK(api_, api_->PJRT_Device_MemoryStats(&stats));
    EXPECT_TRUE(stats.bytes_limit_is_set);
    return stats.bytes_limit;
  }
};

constexpr int64_t kLimit = 1 << 20;  // 1 MiB

TEST_F(LimitsTest, AllocationsPastTheMemoryLimitFailNamingTheRequestAndTheLimit) {
  PJRT_Client* client = nullptr;
  ErrorInfo created = TryCreateClient(
      {{"memory_limit_bytes", kLimit}, {"cpu_device_count", 2}}, {}, &client);
  ASSERT_EQ(created.code, PJRT_Error_Code_OK) << Describe(created);
  EXPECT_EQ(BytesLimit(client), kLimit);

  // 512 KiB fits; another 768 KiB would pass the limit, on either device:
  // the limit is the client's, shared by its devices.
  PJRT_Buffer* first = nullptr;
  ErrorInfo fits = TryUpload(client, 128 * 1024, &first);
  ASSERT_EQ(fits.code, PJRT_Error_Code_OK) << Describe(fits);
  PJRT_Buffer* second = nullptr;
  ErrorInfo refused = TryUpload(client, 192 * 1024, &second);
  EXPECT_EQ(refused.code, PJRT_Error_Code_RESOURCE_EXHAUSTED)
      << Describe(refused);
  EXPECT_NE(refused.message.find("f32[196608]"), std::string::npos)
      << refused.message;
  EXPECT_NE(refused.message.find("1048576 bytes"), std::string::npos)
      << refused.message;
  EXPECT_NE(refused.message.find("memory_limit_bytes"), std::string::npos)
      << refused.message;
  EXPECT_EQ(second, nullptr);

  // An execute whose output does not fit fails at the call, and starts
  // nothing.
  PJRT_LoadedExecutable* widen = nullptr;
  ErrorInfo compiled = TryCompile(
      "func.func @main(%x: tensor<131072xf32>) -> tensor<2x131072xf32> {\n"
      "  %b = stablehlo.broadcast_in_dim %x, dims = [1] : "
      "(tensor<131072xf32>) -> tensor<2x131072xf32>\n"
      "  return %b : tensor<2x131072xf32>\n"
      "}\n",
      JaxCompileOptions(), &widen, "mlir", client);
  ASSERT_EQ(compiled.code, PJRT_Error_Code_OK) << Describe(compiled);
  ExecuteResult run = Execute(widen, {{first}}, Devices(client)[0]);
  EXPECT_EQ(run.error.code, PJRT_Error_Code_RESOURCE_EXHAUSTED)
      << Describe(run.error);
  EXPECT_NE(run.error.message.find("output 0"), std::string::npos)
      << run.error.message;

  // Freed bytes go back to the budget.
  DestroyBuffer(first);
  ErrorInfo now_fits = TryUpload(client, 192 * 1024, &second);
  EXPECT_EQ(now_fits.code, PJRT_Error_Code_OK) << Describe(now_fits);
  DestroyBuffer(second);
  DestroyLoadedExecutable(widen);
  DestroyClient(client);
}

TEST_F(LimitsTest, MemoryLimitOptionIsCheckedAndAcceptsStrings) {
  PJRT_Client* client = nullptr;
  ErrorInfo zero = TryCreateClient({{"memory_limit_bytes", 0}}, {}, &client);
  EXPECT_EQ(zero.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(zero);
  EXPECT_NE(zero.message.find("memory_limit_bytes"), std::string::npos);
  // JAX_PJRT_CLIENT_CREATE_OPTIONS passes every value as a string.
  ErrorInfo text =
      TryCreateClient({}, {{"memory_limit_bytes", "1048576"}}, &client);
  ASSERT_EQ(text.code, PJRT_Error_Code_OK) << Describe(text);
  EXPECT_EQ(BytesLimit(client), kLimit);
  DestroyClient(client);
}

TEST_F(LimitsTest, ShapesWhoseSizesOverflowAreCompileErrors) {
  // 2^32 * 2^32 elements do not fit in 64 bits; 2^62 f32 elements do, but
  // their bytes do not.
  for (const char* type : {"tensor<4294967296x4294967296xf32>",
                           "tensor<4611686018427387904xf32>"}) {
    const std::string program = std::string("func.func @main(%x: ") + type +
                                ") -> " + type + " {\n  return %x : " + type +
                                "\n}\n";
    PJRT_LoadedExecutable* executable = nullptr;
    ErrorInfo error = TryCompile(program, JaxCompileOptions(), &executable);
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT)
        << type << ": " << Describe(error);
    EXPECT_EQ(executable, nullptr);
  }
}

TEST_F(LimitsTest, DeeplyNestedAndVeryLongProgramsAreHandledWithoutRecursingPerOp) {
  // Regions nested 100000 deep: an error, not a stack overflow.
  std::string deep = "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n";
  constexpr int kDepth = 100000;
  for (int i = 0; i < kDepth; ++i) deep += "\"test.wrap\"() ({\n";
  for (int i = 0; i < kDepth; ++i) deep += "}) : () -> ()\n";
  deep += "  return %x : tensor<f32>\n}\n";
  PJRT_LoadedExecutable* executable = nullptr;
  ErrorInfo nested = TryCompile(deep, JaxCompileOptions(), &executable);
  EXPECT_EQ(nested.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(nested);
  EXPECT_NE(nested.message.find("nesting deeper than"), std::string::npos)
      << nested.message;

  // A chain of 50000 ops, each using the one before: compiles and runs
  // (no pass may recurse along use-def chains).
  constexpr int kLength = 50000;
  std::string chain = "func.func @main(%v0: tensor<4xf32>) -> tensor<4xf32> {\n";
  chain += "  %one = stablehlo.constant dense<1.0> : tensor<4xf32>\n";
  for (int i = 1; i <= kLength; ++i) {
    chain += "  %v" + std::to_string(i) + " = stablehlo.add %v" +
             std::to_string(i - 1) + ", %one : tensor<4xf32>\n";
  }
  chain += "  return %v" + std::to_string(kLength) + " : tensor<4xf32>\n}\n";
  executable = Compile(chain);
  ASSERT_NE(executable, nullptr);
  PJRT_Buffer* input = UploadF32({0, 1, 2, 3}, {4});
  std::vector<PJRT_Buffer*> outputs = ExecuteAndAwait(executable, {input});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(DownloadF32(outputs[0]),
            (std::vector<float>{50000, 50001, 50002, 50003}));
  DestroyBuffers(outputs);
  DestroyBuffer(input);
  DestroyLoadedExecutable(executable);
}

// A loop whose condition never becomes false.
constexpr const char* kEndlessLoop =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %r = stablehlo.while(%v = %x) : tensor<4xf32>\n"
    "   cond {\n"
    "    %t = stablehlo.constant dense<true> : tensor<i1>\n"
    "    stablehlo.return %t : tensor<i1>\n"
    "  } do {\n"
    "    %one = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
    "    %w = stablehlo.add %v, %one : tensor<4xf32>\n"
    "    stablehlo.return %w : tensor<4xf32>\n"
    "  }\n"
    "  return %r : tensor<4xf32>\n"
    "}\n";

bool IsReady(const PJRT_Api* api, PJRT_Event* event) {
  auto args = KILN_ARGS(PJRT_Event_IsReady_Args);
  args.event = event;
  TakeError(api, api->PJRT_Event_IsReady(&args));
  return args.is_ready;
}

// Whether `event` fires within 20 s (a test failure, not a hang, when a
// run that should stop does not).
bool FiresSoon(const PJRT_Api* api, PJRT_Event* event) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!IsReady(api, event)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST_F(LimitsTest, AnEndlessLoopNobodyWaitsForStopsWhenItsExecutableIsDestroyed) {
  PJRT_LoadedExecutable* executable = Compile(kEndlessLoop);
  ASSERT_NE(executable, nullptr);
  PJRT_Buffer* input = UploadF32({0, 1, 2, 3}, {4});
  ExecuteResult run = Execute(executable, {{input}}, Devices()[0]);
  ASSERT_EQ(run.error.code, PJRT_Error_Code_OK) << Describe(run.error);
  // The call returned: the loop runs on the device's queue, not here.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(IsReady(api_, run.events[0]));

  // Its result still held, the run goes on when the executable goes (as
  // with XLA, a run does not depend on the executable's handle).
  PJRT_Executable* keep = GetExecutable(executable);
  DestroyLoadedExecutable(executable);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(IsReady(api_, run.events[0]));

  // With its output gone too, destroying the last handle cancels it.
  DestroyBuffers(run.outputs[0]);
  DestroyExecutable(keep);
  ASSERT_TRUE(FiresSoon(api_, run.events[0]))
      << "the run went on after its executable and outputs were destroyed";
  ErrorInfo done = AwaitAndDestroy(run.events[0]);
  EXPECT_EQ(done.code, PJRT_Error_Code_CANCELLED) << Describe(done);
  DestroyBuffer(input);
}

TEST_F(LimitsTest, DestroyingTheClientCancelsEveryRunInFlight) {
  PJRT_Client* client = CreateClient(2);
  ASSERT_NE(client, nullptr);
  PJRT_LoadedExecutable* executable = nullptr;
  ErrorInfo compiled =
      TryCompile(kEndlessLoop, JaxCompileOptions(), &executable, "mlir", client);
  ASSERT_EQ(compiled.code, PJRT_Error_Code_OK) << Describe(compiled);
  std::vector<PJRT_Device*> devices = Devices(client);
  std::vector<float> values = {0, 1, 2, 3};
  std::vector<PJRT_Event*> events;
  std::vector<PJRT_Buffer*> held;
  for (PJRT_Device* device : devices) {
    PJRT_Buffer* input = UploadTo(client, device, values);
    ExecuteResult run = Execute(executable, {{input}}, device);
    ASSERT_EQ(run.error.code, PJRT_Error_Code_OK) << Describe(run.error);
    events.push_back(run.events[0]);
    held.push_back(input);
    held.push_back(run.outputs[0][0]);
  }
  // The executable goes while the outputs are held (the runs go on), then
  // the outputs: nothing but the client's destruction stops the loops now.
  // It must return, and the runs end CANCELLED.
  DestroyLoadedExecutable(executable);
  DestroyBuffers(held);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (PJRT_Event* event : events) EXPECT_FALSE(IsReady(api_, event));
  DestroyClient(client);
  for (PJRT_Event* event : events) {
    ErrorInfo done = AwaitAndDestroy(event);
    EXPECT_EQ(done.code, PJRT_Error_Code_CANCELLED) << Describe(done);
  }
}

TEST_F(LimitsTest, ALaunchSomeDeviceNeverJoinsEndsWhenItsExecutableIsDestroyed) {
  PJRT_Client* client = CreateClient(2);
  ASSERT_NE(client, nullptr);
  PJRT_LoadedExecutable* executable = nullptr;
  ErrorInfo compiled = TryCompile(
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %s = \"stablehlo.all_reduce\"(%x) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %c = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %c : tensor<f32>\n"
      "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : "
      "(tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %s : tensor<4xf32>\n}\n",
      JaxCompileOptions(/*replicas=*/2), &executable, "mlir", client);
  ASSERT_EQ(compiled.code, PJRT_Error_Code_OK) << Describe(compiled);
  std::vector<float> values = {1, 2, 3, 4};
  PJRT_Device* device = Devices(client)[0];
  PJRT_Buffer* input = UploadTo(client, device, values);
  // Only replica 0 joins the launch; replica 1 never comes.
  ExecuteResult run = Execute(executable, {{input}}, device);
  ASSERT_EQ(run.error.code, PJRT_Error_Code_OK) << Describe(run.error);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(IsReady(api_, run.events[0]));
  DestroyLoadedExecutable(executable);
  ASSERT_TRUE(FiresSoon(api_, run.events[0]));
  ErrorInfo done = AwaitAndDestroy(run.events[0]);
  EXPECT_EQ(done.code, PJRT_Error_Code_CANCELLED) << Describe(done);
  EXPECT_NE(done.message.find("before every device joined"), std::string::npos)
      << done.message;
  std::vector<uint8_t> bytes;
  ErrorInfo read = TryDownload(run.outputs[0][0], &bytes);
  EXPECT_EQ(read.code, PJRT_Error_Code_CANCELLED) << Describe(read);
  DestroyBuffers(run.outputs[0]);
  DestroyBuffer(input);
  DestroyClient(client);
}

}  // namespace
}  // namespace kiln::testing
