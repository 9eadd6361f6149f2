// PyTorch/XLA's use of a PJRT plugin, replayed against libpjrt_kiln.so
// (shared/reference/pjrt-c-api-notes.md, sections 4 and 6, torch_xla):
// Initialize right after load, uploads through Device_DefaultMemory with
// kImmutableUntilTransferCompletes, a compile of "hlo" (torch_xla's
// default, which Kiln refuses) and of "mlir" (XLA_STABLEHLO_COMPILE=1)
// with num_replicas = device count, GetCompiledMemoryStats and
// OptimizedProgram after every compile, execution per device with the
// returned events awaited, and the persistent cache's Serialize /
// DeserializeAndLoad, GetCompileOptions and Client_Load.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ir/operation.h"
#include "parse/parse.h"
#include "parse/hlo_builder.h"
#include "plugin_harness.h"
#include "proto/xla_compile_options.pb.h"
#include "proto/xla_hlo.pb.h"

namespace kiln::testing {
namespace {

constexpr int kDevices = 2;

// f(a, b) = (a * b + a, sum(a * b + a)).
constexpr char kTorchProgram[] = R"mlir(
module @SyncTensorsGraph.12 {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<4xf32>
    %1 = stablehlo.add %0, %arg0 : tensor<4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %1, %2 : tensor<4xf32>, tensor<f32>
  }
}
)mlir";

// Inputs of device d: a = (1, 2, 3, 4) + d, b = (10, 20, 30, 40).
std::vector<float> InputA(int d) {
  return {1.0f + d, 2.0f + d, 3.0f + d, 4.0f + d};
}
const std::vector<float> kB = {10, 20, 30, 40};

// The expected outputs, computed on the host element by element. For d = 0:
// (11, 42, 93, 164) and 310.
std::vector<float> ExpectedProduct(int d) {
  std::vector<float> a = InputA(d), out;
  for (int i = 0; i < 4; ++i) out.push_back(a[i] * kB[i] + a[i]);
  return out;
}
float ExpectedSum(int d) {
  float sum = 0;
  for (float v : ExpectedProduct(d)) sum += v;
  return sum;
}

class TorchReplayTest : public PluginTest {
 protected:
  TorchReplayTest() : PluginTest(kDevices) {}

  void SetUp() override {
    api_ = LoadPlugin();
    ASSERT_NE(api_, nullptr);
    // torch_xla initializes the plugin right after loading it, before
    // creating its client.
    auto init = KILN_ARGS(PJRT_Plugin_Initialize_Args);
    PJRT_ASSERT_OK(api_, api_->PJRT_Plugin_Initialize(&init));
    client_ = CreateClient(kDevices);
    ASSERT_NE(client_, nullptr);
    devices_ = Devices();
    ASSERT_EQ(devices_.size(), static_cast<size_t>(kDevices));
  }

  // torch_xla's TransferToDevice: the device's default memory
  // (dereferenced unconditionally), kImmutableUntilTransferCompletes.
  PJRT_Buffer* UploadAsTorch(const std::vector<float>& values,
                             PJRT_Device* device) {
    PJRT_Memory* memory = DefaultMemory(device);
    EXPECT_NE(memory, nullptr);
    if (memory == nullptr) return nullptr;
    return Upload(values.data(), PJRT_Buffer_Type_F32,
                  {static_cast<int64_t>(values.size())}, nullptr, memory,
                  PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes);
  }

  // After every compile torch_xla reads the memory statistics (tolerated
  // when failing) and the optimized program (GetHloModules; throws when
  // failing).
  void AfterCompileAsTorch(PJRT_LoadedExecutable* loaded) {
    PJRT_Executable* executable = GetExecutable(loaded);
    ASSERT_NE(executable, nullptr);
    auto stats = KILN_ARGS(PJRT_Executable_GetCompiledMemoryStats_Args);
    stats.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_GetCompiledMemoryStats(&stats));
    // Arguments: two f32[4] (32 bytes); outputs: f32[4] and f32[] (20).
    EXPECT_EQ(stats.argument_size_in_bytes, 32);
    EXPECT_EQ(stats.output_size_in_bytes, 20);
    EXPECT_GE(stats.temp_size_in_bytes, 0);
    EXPECT_GE(stats.generated_code_size_in_bytes, 0);

    // Two calls: the size (code null), then the bytes.
    auto program = KILN_ARGS(PJRT_Program);
    auto size = KILN_ARGS(PJRT_Executable_OptimizedProgram_Args);
    size.executable = executable;
    size.program = &program;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_OptimizedProgram(&size));
    EXPECT_EQ(std::string(program.format, program.format_size), "mlir");
    EXPECT_GT(program.code_size, 0u);
    std::string code(program.code_size, '\0');
    program.code = code.data();
    auto fill = KILN_ARGS(PJRT_Executable_OptimizedProgram_Args);
    fill.executable = executable;
    fill.program = &program;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_OptimizedProgram(&fill));
    EXPECT_EQ(program.code_size, code.size());
    EXPECT_EQ(std::string(program.format, program.format_size), "mlir");
    // The text is a StableHLO module Kiln's own parser reads back, with
    // the entry's signature.
    auto module = parse::ParseModule(code, "optimized_program");
    ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << code;
    const ir::Operation* entry = (*module)->EntryFunction();
    ASSERT_NE(entry, nullptr) << code;
    ir::Type type = ir::func::FunctionType(*entry);
    EXPECT_EQ(type.inputs().size(), 2u) << code;
    EXPECT_EQ(type.results().size(), 2u) << code;
    DestroyExecutable(executable);
  }

  // torch_xla's non-sharded ExecuteSharded: one call per device with
  // execute_device, each future (completion event) awaited. Checks the
  // outputs of every device.
  void ExecuteAsTorch(PJRT_LoadedExecutable* loaded) {
    for (int d = 0; d < kDevices; ++d) {
      SCOPED_TRACE("device " + std::to_string(d));
      std::vector<PJRT_Buffer*> arguments = {
          UploadAsTorch(InputA(d), devices_[d]),
          UploadAsTorch(kB, devices_[d])};
      ExecuteResult result = Execute(loaded, {arguments}, devices_[d]);
      ASSERT_EQ(result.error.code, PJRT_Error_Code_OK)
          << Describe(result.error);
      ASSERT_EQ(result.events.size(), 1u);
      ErrorInfo done = AwaitAndDestroy(result.events[0]);
      EXPECT_EQ(done.code, PJRT_Error_Code_OK) << Describe(done);
      ASSERT_EQ(result.outputs.size(), 1u);
      ASSERT_EQ(result.outputs[0].size(), 2u);
      for (PJRT_Buffer* output : result.outputs[0]) {
        auto device = KILN_ARGS(PJRT_Buffer_Device_Args);
        device.buffer = output;
        PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_Device(&device));
        EXPECT_EQ(device.device, devices_[d]);
      }
      EXPECT_EQ(DownloadF32(result.outputs[0][0]), ExpectedProduct(d));
      EXPECT_EQ(DownloadF32(result.outputs[0][1]),
                std::vector<float>{ExpectedSum(d)});
      DestroyBuffers(result.outputs[0]);
      DestroyBuffers(arguments);
    }
  }

  std::vector<PJRT_Device*> devices_;
};

TEST_F(TorchReplayTest, HloProgramsCompileAndComeBackAsHlo) {
  // torch_xla's default: a serialized HloModuleProto. Here f32[4] x ->
  // (x + x,), built with the proto API.
  testing::HloModuleBuilder m("SyncTensorsGraph.3");
  auto entry = m.Computation("main");
  auto f32 = testing::ArrayShape(xla::F32, {4});
  int64_t x = entry.Parameter(0, f32);
  int64_t sum = entry.Add("add", f32, {x, x}).id();
  entry.Add("tuple", testing::TupleShape({f32}), {sum});
  xla::HloModuleProto& proto = m.Finish(entry);
  for (const char* format : {"hlo", "hlo_with_config"}) {
    SCOPED_TRACE(format);
    std::string bytes;
    if (std::string(format) == "hlo") {
      bytes = proto.SerializeAsString();
    } else {
      xla::HloModuleProtoWithConfig with_config;
      *with_config.mutable_hlo_module() = proto;
      bytes = with_config.SerializeAsString();
    }
    PJRT_LoadedExecutable* loaded = nullptr;
    ErrorInfo info =
        TryCompile(bytes, JaxCompileOptions(kDevices, 1), &loaded, format);
    ASSERT_EQ(info.code, 0) << Describe(info);
    ASSERT_NE(loaded, nullptr);
    // OptimizedProgram gives the HLO back, with the entry layout XLA needs.
    PJRT_Executable* executable = GetExecutable(loaded);
    PJRT_Program program = KILN_ARGS(PJRT_Program);
    auto size = KILN_ARGS(PJRT_Executable_OptimizedProgram_Args);
    size.executable = executable;
    size.program = &program;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_OptimizedProgram(&size));
    EXPECT_EQ(std::string(program.format, program.format_size),
              "hlo_with_config");
    std::string code(program.code_size, '\0');
    program.code = code.data();
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_OptimizedProgram(&size));
    xla::HloModuleProtoWithConfig back;
    ASSERT_TRUE(back.ParseFromString(code));
    EXPECT_EQ(back.hlo_module().name(), "SyncTensorsGraph.3");
    DestroyExecutable(executable);
    DestroyLoadedExecutable(loaded);
  }
}

TEST_F(TorchReplayTest, BadHloProgramsAreErrorsNamingTheProblem) {
  testing::HloModuleBuilder m("bad");
  auto entry = m.Computation("main");
  int64_t x = entry.Parameter(0, testing::ArrayShape(xla::F32, {4}));
  entry.Add("send", testing::ArrayShape(xla::F32, {4}), {x});
  struct Case {
    std::string bytes;
    PJRT_Error_Code code;
    std::string message;
  };
  std::vector<Case> cases = {
      {m.Finish(entry).SerializeAsString(), PJRT_Error_Code_UNIMPLEMENTED,
       "HLO opcode 'send' is not supported"},
      {std::string("\x0a\x04main", 6), PJRT_Error_Code_INVALID_ARGUMENT,
       "no entry computation"},
      {std::string("\xff\xfe\xfd", 3), PJRT_Error_Code_INVALID_ARGUMENT,
       "not a serialized xla.HloModuleProto"},
  };
  for (const Case& c : cases) {
    PJRT_LoadedExecutable* loaded = nullptr;
    ErrorInfo info =
        TryCompile(c.bytes, JaxCompileOptions(kDevices, 1), &loaded, "hlo");
    EXPECT_EQ(info.code, c.code) << Describe(info);
    EXPECT_NE(info.message.find(c.message), std::string::npos) << info.message;
    EXPECT_EQ(loaded, nullptr);
  }
}

TEST_F(TorchReplayTest, StableHloCompileAndPerDeviceExecution) {
  // XLA_STABLEHLO_COMPILE=1; non-sharded: num_replicas = device count,
  // num_partitions 1.
  PJRT_LoadedExecutable* loaded =
      Compile(kTorchProgram, JaxCompileOptions(kDevices, 1));
  ASSERT_NE(loaded, nullptr);
  ASSERT_NO_FATAL_FAILURE(AfterCompileAsTorch(loaded));
  ExecuteAsTorch(loaded);
  // The same executable again (a cached graph runs many steps).
  ExecuteAsTorch(loaded);
  DestroyLoadedExecutable(loaded);
}

TEST_F(TorchReplayTest, CompileOptionsComeBackAsGiven) {
  std::string options = JaxCompileOptions(kDevices, 1);
  PJRT_LoadedExecutable* loaded = Compile(kTorchProgram, options);
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  auto args = KILN_ARGS(PJRT_Executable_GetCompileOptions_Args);
  args.executable = executable;
  PJRT_EXPECT_OK(api_, api_->PJRT_Executable_GetCompileOptions(&args));
  xla::CompileOptionsProto proto;
  ASSERT_TRUE(proto.ParseFromArray(
      args.serialized_bytes, static_cast<int>(args.serialized_bytes_size)));
  EXPECT_EQ(proto.executable_build_options().num_replicas(), kDevices);
  EXPECT_EQ(proto.executable_build_options().num_partitions(), 1);
  const auto& assignment = proto.executable_build_options().device_assignment();
  EXPECT_EQ(assignment.replica_count(), kDevices);
  EXPECT_EQ(assignment.computation_count(), 1);
  ASSERT_NE(args.serialized_compile_options_deleter, nullptr);
  args.serialized_compile_options_deleter(args.serialized_compile_options);
  DestroyExecutable(executable);
  DestroyLoadedExecutable(loaded);
}

TEST_F(TorchReplayTest, PersistentCacheRoundTrip) {
  PJRT_LoadedExecutable* loaded =
      Compile(kTorchProgram, JaxCompileOptions(kDevices, 1));
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  auto serialize = KILN_ARGS(PJRT_Executable_Serialize_Args);
  serialize.executable = executable;
  PJRT_ASSERT_OK(api_, api_->PJRT_Executable_Serialize(&serialize));
  ASSERT_GT(serialize.serialized_bytes_size, 0u);
  std::string bytes(serialize.serialized_bytes,
                    serialize.serialized_bytes_size);
  ASSERT_NE(serialize.serialized_executable_deleter, nullptr);
  serialize.serialized_executable_deleter(serialize.serialized_executable);
  DestroyExecutable(executable);
  // The cache entry outlives the executable it came from.
  DestroyLoadedExecutable(loaded);

  auto deserialize = KILN_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
  deserialize.client = client_;
  deserialize.serialized_executable = bytes.data();
  deserialize.serialized_executable_size = bytes.size();
  PJRT_ASSERT_OK(api_, api_->PJRT_Executable_DeserializeAndLoad(&deserialize));
  ASSERT_NE(deserialize.loaded_executable, nullptr);
  ASSERT_NO_FATAL_FAILURE(AfterCompileAsTorch(deserialize.loaded_executable));
  ExecuteAsTorch(deserialize.loaded_executable);

  // Client_Load of the deserialized executable's unloaded half, with the
  // compile options it carries (torch_xla's cache path).
  PJRT_Executable* unloaded = GetExecutable(deserialize.loaded_executable);
  auto options = KILN_ARGS(PJRT_Executable_GetCompileOptions_Args);
  options.executable = unloaded;
  PJRT_ASSERT_OK(api_, api_->PJRT_Executable_GetCompileOptions(&options));
  std::string serialized_options(options.serialized_bytes,
                                 options.serialized_bytes_size);
  options.serialized_compile_options_deleter(
      options.serialized_compile_options);
  auto load = KILN_ARGS(PJRT_Client_Load_Args);
  load.client = client_;
  load.executable = unloaded;
  load.compile_options = serialized_options.data();
  load.compile_options_size = serialized_options.size();
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_Load(&load));
  ASSERT_NE(load.loaded_executable, nullptr);
  DestroyExecutable(unloaded);
  ExecuteAsTorch(load.loaded_executable);
  DestroyLoadedExecutable(load.loaded_executable);
  DestroyLoadedExecutable(deserialize.loaded_executable);
}

}  // namespace
}  // namespace kiln::testing
