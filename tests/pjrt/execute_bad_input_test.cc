// Bad input to PJRT_Client_Compile and PJRT_LoadedExecutable_Execute: each
// case is answered with INVALID_ARGUMENT and a message that names the
// problem, no executable or output is handed out, and nothing leaks (these
// tests also run under ASan).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "plugin_harness.h"
#include "proto/xla_compile_options.pb.h"

namespace kiln::testing {
namespace {

// out = a + b for two f32[4].
constexpr char kAdd[] = R"mlir(
func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Whether `message` mentions any of `words` (case-insensitive).
::testing::AssertionResult MentionsAny(const std::string& message,
                                       const std::vector<std::string>& words) {
  std::string lower = Lower(message);
  for (const std::string& word : words) {
    if (lower.find(Lower(word)) != std::string::npos) {
      return ::testing::AssertionSuccess();
    }
  }
  std::string list;
  for (const std::string& word : words) list += " '" + word + "'";
  return ::testing::AssertionFailure()
         << "\"" << message << "\" mentions none of" << list;
}

class ExecuteBadInputTest : public PluginTest {
 protected:
  void SetUp() override {
    PluginTest::SetUp();
    if (HasFatalFailure()) return;
    loaded_ = Compile(kAdd);
    ASSERT_NE(loaded_, nullptr);
    a_ = UploadF32({1, 2, 3, 4}, {4});
    b_ = UploadF32({5, 6, 7, 8}, {4});
  }
  void TearDown() override {
    DestroyBuffers({a_, b_});
    if (loaded_ != nullptr) DestroyLoadedExecutable(loaded_);
    PluginTest::TearDown();
  }

  // Execute with raw arguments; checks that nothing was written to the
  // outputs or events on failure.
  ErrorInfo RawExecute(PJRT_Buffer* const* const* argument_lists,
                       size_t num_devices, size_t num_args,
                       bool with_outputs = true,
                       PJRT_Device* execute_device = nullptr,
                       PJRT_LoadedExecutable* loaded = nullptr) {
    std::vector<std::vector<PJRT_Buffer*>> outputs(
        std::max<size_t>(num_devices, 1),
        std::vector<PJRT_Buffer*>(4, nullptr));
    std::vector<PJRT_Buffer**> output_lists;
    for (auto& list : outputs) output_lists.push_back(list.data());
    std::vector<PJRT_Event*> events(std::max<size_t>(num_devices, 1), nullptr);
    auto options = KILN_ARGS(PJRT_ExecuteOptions);
    auto args = KILN_ARGS(PJRT_LoadedExecutable_Execute_Args);
    args.executable = loaded == nullptr ? loaded_ : loaded;
    args.options = &options;
    args.argument_lists = argument_lists;
    args.num_devices = num_devices;
    args.num_args = num_args;
    args.output_lists = with_outputs ? output_lists.data() : nullptr;
    args.device_complete_events = events.data();
    args.execute_device = execute_device;
    ErrorInfo info =
        TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
    if (info.code != PJRT_Error_Code_OK) {
      for (const auto& list : outputs) {
        for (PJRT_Buffer* buffer : list) EXPECT_EQ(buffer, nullptr);
      }
      for (PJRT_Event* event : events) EXPECT_EQ(event, nullptr);
    } else {
      // Not expected by these tests; release what came back.
      for (auto& list : outputs) {
        for (PJRT_Buffer* buffer : list) {
          if (buffer != nullptr) DestroyBuffer(buffer);
        }
      }
      for (PJRT_Event* event : events) {
        if (event != nullptr) AwaitAndDestroy(event);
      }
    }
    return info;
  }

  ErrorInfo ExecuteWith(std::vector<PJRT_Buffer*> arguments) {
    PJRT_Buffer* const* list = arguments.data();
    return RawExecute(&list, 1, arguments.size());
  }

  PJRT_LoadedExecutable* loaded_ = nullptr;
  PJRT_Buffer* a_ = nullptr;
  PJRT_Buffer* b_ = nullptr;
};

// --- Execute

TEST_F(ExecuteBadInputTest, WrongArgumentCount) {
  ErrorInfo info = ExecuteWith({a_});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"argument"}));
  EXPECT_TRUE(MentionsAny(info.message, {"2"}));
  info = ExecuteWith({a_, b_, a_});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"argument"}));
}

TEST_F(ExecuteBadInputTest, WrongShape) {
  PJRT_Buffer* three = UploadF32({1, 2, 3}, {3});
  ErrorInfo info = ExecuteWith({a_, three});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"argument 1", "parameter 1", "#1"}));
  EXPECT_TRUE(MentionsAny(info.message, {"shape", "dimension", "[3]", "<3x"}));
  PJRT_Buffer* matrix = UploadF32({1, 2, 3, 4}, {2, 2});
  info = ExecuteWith({matrix, b_});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"argument 0", "parameter 0", "#0"}));
  DestroyBuffers({three, matrix});
}

TEST_F(ExecuteBadInputTest, WrongElementType) {
  int32_t ints[4] = {1, 2, 3, 4};
  PJRT_Buffer* s32 = Upload(ints, PJRT_Buffer_Type_S32, {4}, Devices()[0]);
  ErrorInfo info = ExecuteWith({a_, s32});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"argument 1", "parameter 1", "#1"}));
  EXPECT_TRUE(MentionsAny(info.message, {"s32", "i32", "int32", "type"}));
  DestroyBuffer(s32);
}

TEST_F(ExecuteBadInputTest, DeletedInput) {
  PJRT_Buffer* doomed = UploadF32({1, 2, 3, 4}, {4});
  auto remove = KILN_ARGS(PJRT_Buffer_Delete_Args);
  remove.buffer = doomed;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_Delete(&remove));
  ErrorInfo info = ExecuteWith({a_, doomed});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"deleted"}));
  DestroyBuffer(doomed);
}

TEST_F(ExecuteBadInputTest, NullInput) {
  ErrorInfo info = ExecuteWith({a_, nullptr});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"null"}));
}

TEST_F(ExecuteBadInputTest, BufferOfAnotherClient) {
  PJRT_Client* other = CreateClient(1);
  ASSERT_NE(other, nullptr);
  float values[4] = {1, 2, 3, 4};
  int64_t dims[1] = {4};
  auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  upload.client = other;
  upload.data = values;
  upload.type = PJRT_Buffer_Type_F32;
  upload.dims = dims;
  upload.num_dims = 1;
  upload.host_buffer_semantics =
      PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  upload.device = Devices(other)[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload));
  AwaitAndDestroy(upload.done_with_host_buffer);
  ErrorInfo info = ExecuteWith({a_, upload.buffer});
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(
      info.message, {"another client", "other client", "different client"}));
  DestroyBuffer(upload.buffer);
  DestroyClient(other);
}

TEST_F(ExecuteBadInputTest, InputOnAnotherDevice) {
  PJRT_Client* two = CreateClient(2);
  ASSERT_NE(two, nullptr);
  // A 1x1 executable assigned to device 0 of a two-device client, given an
  // input that lives on device 1.
  PJRT_LoadedExecutable* loaded = Compile(kAdd, JaxCompileOptions(), two);
  ASSERT_NE(loaded, nullptr);
  std::vector<PJRT_Device*> devices = Devices(two);
  std::vector<PJRT_Buffer*> inputs;
  for (PJRT_Device* device : devices) {
    float values[4] = {1, 2, 3, 4};
    int64_t dims[1] = {4};
    auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    upload.client = two;
    upload.data = values;
    upload.type = PJRT_Buffer_Type_F32;
    upload.dims = dims;
    upload.num_dims = 1;
    upload.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    upload.device = device;
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload));
    AwaitAndDestroy(upload.done_with_host_buffer);
    inputs.push_back(upload.buffer);
  }
  std::vector<PJRT_Buffer*> arguments = {inputs[0], inputs[1]};
  PJRT_Buffer* const* list = arguments.data();
  ErrorInfo info = RawExecute(&list, 1, 2, true, nullptr, loaded);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"device"}));
  DestroyBuffers(inputs);
  DestroyLoadedExecutable(loaded);
  DestroyClient(two);
}

TEST_F(ExecuteBadInputTest, WrongNumberOfDevices) {
  std::vector<PJRT_Buffer*> arguments = {a_, b_};
  PJRT_Buffer* const* lists[2] = {arguments.data(), arguments.data()};
  ErrorInfo info = RawExecute(lists, 2, 2);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"device"}));
  EXPECT_TRUE(MentionsAny(info.message, {"2"}));
  info = RawExecute(lists, 0, 2);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"device"}));
}

TEST_F(ExecuteBadInputTest, ExecuteDeviceWithSeveralArgumentLists) {
  std::vector<PJRT_Buffer*> arguments = {a_, b_};
  PJRT_Buffer* const* lists[2] = {arguments.data(), arguments.data()};
  ErrorInfo info = RawExecute(lists, 2, 2, true, Devices()[0]);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"device"}));
}

TEST_F(ExecuteBadInputTest, ExecuteDeviceOfAnotherClient) {
  PJRT_Client* other = CreateClient(1);
  ASSERT_NE(other, nullptr);
  std::vector<PJRT_Buffer*> arguments = {a_, b_};
  PJRT_Buffer* const* list = arguments.data();
  ErrorInfo info = RawExecute(&list, 1, 2, true, Devices(other)[0]);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(
      info.message, {"another client", "other client", "different client"}));
  DestroyClient(other);
}

TEST_F(ExecuteBadInputTest, NullOutputLists) {
  std::vector<PJRT_Buffer*> arguments = {a_, b_};
  PJRT_Buffer* const* list = arguments.data();
  ErrorInfo info = RawExecute(&list, 1, 2, /*with_outputs=*/false);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"output_lists"}));
}

TEST_F(ExecuteBadInputTest, NullArgumentLists) {
  ErrorInfo info = RawExecute(nullptr, 1, 2);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"argument_lists"}));
}

TEST_F(ExecuteBadInputTest, NullExecutable) {
  auto args = KILN_ARGS(PJRT_LoadedExecutable_Execute_Args);
  ErrorInfo info = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"executable"}));
}

TEST_F(ExecuteBadInputTest, WrongHandleKindAsExecutable) {
  // A buffer handle where an executable is expected.
  auto args = KILN_ARGS(PJRT_LoadedExecutable_Execute_Args);
  args.executable = reinterpret_cast<PJRT_LoadedExecutable*>(a_);
  ErrorInfo info = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"PJRT_LoadedExecutable"}));
}

TEST_F(ExecuteBadInputTest, NonDonatableIndexOutOfRange) {
  std::vector<PJRT_Buffer*> arguments = {a_, b_};
  ExecuteResult result = Execute(loaded_, {arguments}, nullptr, {5});
  EXPECT_EQ(result.error.code, PJRT_Error_Code_INVALID_ARGUMENT)
      << Describe(result.error);
  EXPECT_TRUE(MentionsAny(result.error.message, {"non_donatable"}));
  result = Execute(loaded_, {arguments}, nullptr, {-1});
  EXPECT_EQ(result.error.code, PJRT_Error_Code_INVALID_ARGUMENT)
      << Describe(result.error);
}

TEST_F(ExecuteBadInputTest, SendCallbacksAreUnimplemented) {
  std::vector<PJRT_Buffer*> arguments = {a_, b_};
  PJRT_Buffer* const* list = arguments.data();
  PJRT_Buffer* outputs[1] = {nullptr};
  PJRT_Buffer** output_list = outputs;
  PJRT_SendCallbackInfo* no_callbacks[1] = {nullptr};
  auto options = KILN_ARGS(PJRT_ExecuteOptions);
  options.send_callbacks = no_callbacks;
  options.num_send_ops = 1;
  auto args = KILN_ARGS(PJRT_LoadedExecutable_Execute_Args);
  args.executable = loaded_;
  args.options = &options;
  args.argument_lists = &list;
  args.num_devices = 1;
  args.num_args = 2;
  args.output_lists = &output_list;
  ErrorInfo info = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED) << Describe(info);
  EXPECT_EQ(outputs[0], nullptr);
}

TEST_F(ExecuteBadInputTest, ExecutableOfAnotherClient) {
  PJRT_Client* other = CreateClient(1);
  ASSERT_NE(other, nullptr);
  PJRT_LoadedExecutable* foreign = Compile(kAdd, JaxCompileOptions(), other);
  ASSERT_NE(foreign, nullptr);
  std::vector<PJRT_Buffer*> arguments = {a_, b_};
  PJRT_Buffer* const* list = arguments.data();
  ErrorInfo info = RawExecute(&list, 1, 2, true, nullptr, foreign);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(
      info.message, {"another client", "other client", "different client"}));
  DestroyLoadedExecutable(foreign);
  DestroyClient(other);
}

// A caller built against an older header passes smaller structs: the
// fields past its struct_size are absent (execute_device, and the options
// added since non_donatable_input_indices).
TEST_F(ExecuteBadInputTest, OlderCallersSmallerStructs) {
  std::vector<PJRT_Buffer*> arguments = {a_, b_};
  PJRT_Buffer* const* list = arguments.data();
  PJRT_Buffer* output = nullptr;
  PJRT_Buffer** output_list = &output;
  PJRT_Event* complete = nullptr;
  auto options = KILN_ARGS(PJRT_ExecuteOptions);
  options.struct_size = offsetof(PJRT_ExecuteOptions, context);
  // Garbage past the caller's size must not be read.
  std::memset(&options.context, 0xab,
              sizeof(options) - offsetof(PJRT_ExecuteOptions, context));
  auto args = KILN_ARGS(PJRT_LoadedExecutable_Execute_Args);
  args.struct_size =
      offsetof(PJRT_LoadedExecutable_Execute_Args, execute_device);
  args.executable = loaded_;
  args.options = &options;
  args.argument_lists = &list;
  args.num_devices = 1;
  args.num_args = 2;
  args.output_lists = &output_list;
  args.device_complete_events = &complete;
  args.execute_device = reinterpret_cast<PJRT_Device*>(uintptr_t{0xdead});
  PJRT_ASSERT_OK(api_, api_->PJRT_LoadedExecutable_Execute(&args));
  ASSERT_NE(output, nullptr);
  EXPECT_EQ(AwaitAndDestroy(complete).code, PJRT_Error_Code_OK);
  EXPECT_EQ(DownloadF32(output), (std::vector<float>{6, 8, 10, 12}));
  DestroyBuffer(output);
}

// --- Compile

class CompileBadInputTest : public PluginTest {};

TEST_F(CompileBadInputTest, GarbageCompileOptions) {
  // Not a protobuf: field 0 and an unterminated varint.
  std::string garbage("\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11);
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo info = TryCompile(kAdd, garbage, &loaded);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(
      MentionsAny(info.message, {"compile options", "CompileOptionsProto"}));
  EXPECT_EQ(loaded, nullptr);
}

// JAX's `compiler_options`: names XLA does not have are refused with XLA's
// words, values of the wrong type too; XLA's own options are accepted.
TEST_F(CompileBadInputTest, CompilerOptionsAreCheckedByName) {
  auto compile_with = [&](const std::string& name,
                          const xla::OptionOverrideProto& value) {
    xla::CompileOptionsProto proto;
    proto.ParseFromString(JaxCompileOptions(1, 1, true, {}));
    (*proto.mutable_env_option_overrides())[name] = value;
    PJRT_LoadedExecutable* loaded = nullptr;
    ErrorInfo info = TryCompile(kAdd, proto.SerializeAsString(), &loaded);
    if (loaded != nullptr) DestroyLoadedExecutable(loaded);
    return info;
  };
  xla::OptionOverrideProto text;
  text.set_string_field("invalid_value");
  ErrorInfo unknown = compile_with("invalid_key", text);
  EXPECT_EQ(unknown.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(unknown.message.find("No such compile option: 'invalid_key'"),
            std::string::npos)
      << unknown.message;
  ErrorInfo wrong_type = compile_with("xla_embed_ir_in_executable", text);
  EXPECT_EQ(wrong_type.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(wrong_type.message.find("is not a valid bool value."),
            std::string::npos)
      << wrong_type.message;

  xla::OptionOverrideProto flag;
  flag.set_bool_field(true);
  EXPECT_EQ(compile_with("xla_embed_ir_in_executable", flag).code,
            PJRT_Error_Code_OK);
  xla::OptionOverrideProto effort;
  effort.set_double_field(0.5);
  EXPECT_EQ(compile_with("exec_time_optimization_effort", effort).code,
            PJRT_Error_Code_OK);
  EXPECT_EQ(compile_with("exec_time_compilation_effort", effort).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  text.set_string_field("true");
  EXPECT_EQ(compile_with("xla_cpu_enable_fast_math", text).code,
            PJRT_Error_Code_OK);
}

TEST_F(CompileBadInputTest, MoreReplicasThanDevices) {
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo info = TryCompile(kAdd, JaxCompileOptions(4, 1), &loaded);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"device"}));
  EXPECT_EQ(loaded, nullptr);
}

TEST_F(CompileBadInputTest, AssignmentToADeviceThatDoesNotExist) {
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo info =
      TryCompile(kAdd, JaxCompileOptions(1, 1, false, {7}), &loaded);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"7"}));
  EXPECT_EQ(loaded, nullptr);
}

// jax's jit over arrays sharded across two devices: num_partitions 2 and
// arguments split in halves, which only an SPMD partitioner can run (each
// device gets an f32[2] shard of the f32[4] the program names). Without
// one, the compile must say so, rather than succeed and fail every
// Execute over shapes.
class CompileTwoDevicesTest : public PluginTest {
 protected:
  CompileTwoDevicesTest() : PluginTest(2) {}
};

TEST_F(CompileTwoDevicesTest, ShardedProgramsArePartitioned) {
  // x[i] + reverse(x)[i]: each partition holds half of x and half of the
  // result, and the reverse needs the other half (an all_gather).
  constexpr char kSharded[] = R"mlir(
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> (tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) {
    %r = stablehlo.reverse %arg0, dims = [0] : tensor<4xf32>
    %0 = stablehlo.add %arg0, %r : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";
  // The same with Shardy's attributes (jax's default partitioner), its
  // mesh op in the generic form; device order reversed.
  constexpr char kShardy[] = R"mlir(
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2], device_ids=[1, 0]>, sym_name = "mesh"}> : () -> ()
  func.func public @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %r = stablehlo.reverse %arg0, dims = [0] : tensor<4xf32>
    %0 = stablehlo.add %arg0, %r : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";
  // x = [1, 2, 3, 4]: x + reverse(x) = [5, 5, 5, 5] scaled by position:
  // use x = [1, 2, 4, 8] -> [9, 6, 6, 9].
  struct Case {
    const char* program;
    std::vector<std::vector<float>> shards;  // per device
  };
  for (const Case& c :
       {Case{kSharded, {{1, 2}, {4, 8}}}, Case{kShardy, {{4, 8}, {1, 2}}}}) {
    SCOPED_TRACE(c.program);
    PJRT_LoadedExecutable* loaded = Compile(c.program, JaxCompileOptions(1, 2));
    ASSERT_NE(loaded, nullptr);
    std::vector<PJRT_Device*> devices = Devices();
    std::vector<std::vector<PJRT_Buffer*>> arguments = {
        {UploadF32(c.shards[0], {2}, devices[0])},
        {UploadF32(c.shards[1], {2}, devices[1])}};
    ExecuteResult result = Execute(loaded, arguments);
    ASSERT_EQ(result.error.code, PJRT_Error_Code_OK) << Describe(result.error);
    for (int d = 0; d < 2; ++d) {
      EXPECT_EQ(AwaitAndDestroy(result.events[d]).code, PJRT_Error_Code_OK);
      // Both layouts give device d the same half of [9, 6, 6, 9] as of x.
      std::vector<float> expected = c.shards[d][0] == 1
                                        ? std::vector<float>{9, 6}
                                        : std::vector<float>{6, 9};
      EXPECT_EQ(DownloadF32(result.outputs[d][0]), expected);
      DestroyBuffers(result.outputs[d]);
      DestroyBuffers(arguments[d]);
    }
    DestroyLoadedExecutable(loaded);
  }
}

TEST_F(CompileTwoDevicesTest, UnevenShardingsAreRefused) {
  constexpr char kUneven[] = R"mlir(
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<5xf32> {
    return %arg0 : tensor<5xf32>
  }
}
)mlir";
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo info = TryCompile(kUneven, JaxCompileOptions(1, 2), &loaded);
  EXPECT_EQ(info.code, PJRT_Error_Code_UNIMPLEMENTED) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"argument 0"}));
  EXPECT_TRUE(MentionsAny(info.message, {"equal tiles"}));
  EXPECT_EQ(loaded, nullptr);
  if (loaded != nullptr) DestroyLoadedExecutable(loaded);
}

TEST_F(CompileTwoDevicesTest, ReplicatedShardingsRunOnEveryPartition) {
  // The same program with every value replicated: each partition computes
  // the whole result, so two partitions need no partitioner.
  constexpr char kReplicated[] = R"mlir(
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<4xf32> {mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";
  PJRT_LoadedExecutable* loaded = Compile(kReplicated, JaxCompileOptions(1, 2));
  ASSERT_NE(loaded, nullptr);
  std::vector<PJRT_Device*> devices = Devices();
  std::vector<std::vector<PJRT_Buffer*>> arguments = {
      {UploadF32({1, 2, 3, 4}, {4}, devices[0])},
      {UploadF32({1, 2, 3, 4}, {4}, devices[1])}};
  ExecuteResult result = Execute(loaded, arguments);
  ASSERT_EQ(result.error.code, PJRT_Error_Code_OK) << Describe(result.error);
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(AwaitAndDestroy(result.events[d]).code, PJRT_Error_Code_OK);
    EXPECT_EQ(DownloadF32(result.outputs[d][0]),
              (std::vector<float>{2, 4, 6, 8}));
    DestroyBuffers(result.outputs[d]);
    DestroyBuffers(arguments[d]);
  }
  DestroyLoadedExecutable(loaded);
}

TEST_F(CompileBadInputTest, NullProgram) {
  std::string options = JaxCompileOptions();
  auto args = KILN_ARGS(PJRT_Client_Compile_Args);
  args.client = client_;
  args.program = nullptr;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_Compile(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"program"}));
  EXPECT_EQ(args.executable, nullptr);
}

TEST_F(CompileBadInputTest, NullCodeWithSize) {
  std::string options = JaxCompileOptions();
  auto program = KILN_ARGS(PJRT_Program);
  program.code = nullptr;
  program.code_size = 10;
  program.format = "mlir";
  program.format_size = 4;
  auto args = KILN_ARGS(PJRT_Client_Compile_Args);
  args.client = client_;
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_Compile(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"code"}));
  EXPECT_EQ(args.executable, nullptr);
}

TEST_F(CompileBadInputTest, UnknownFormat) {
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo info = TryCompile(kAdd, JaxCompileOptions(), &loaded, "onnx");
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  // XLA's exact text, which its conformance test checks.
  EXPECT_EQ(info.message, "Unknown program format 'onnx'.");
  EXPECT_EQ(loaded, nullptr);
}

TEST_F(CompileBadInputTest, TextThatDoesNotParse) {
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo info =
      TryCompile("func.func @main( -> {", JaxCompileOptions(), &loaded);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_FALSE(info.message.empty());
  EXPECT_EQ(loaded, nullptr);
}

TEST_F(CompileBadInputTest, TruncatedBytecode) {
  // The bytecode magic and a version, then nothing.
  std::string truncated("ML\xEFR\x06", 5);
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo info = TryCompile(truncated, JaxCompileOptions(), &loaded);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_FALSE(info.message.empty());
  EXPECT_EQ(loaded, nullptr);
}

TEST_F(CompileBadInputTest, ProgramWithoutEntry) {
  constexpr char kNoMain[] = R"mlir(
func.func private @helper(%arg0: tensor<f32>) -> tensor<f32> {
  return %arg0 : tensor<f32>
}
)mlir";
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo info = TryCompile(kNoMain, JaxCompileOptions(), &loaded);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"main", "entry"}));
  EXPECT_EQ(loaded, nullptr);
}

TEST_F(CompileBadInputTest, ProgramThatFailsVerification) {
  // add of f32[4] and f32[3].
  constexpr char kBadTypes[] = R"mlir(
func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<3xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo info = TryCompile(kBadTypes, JaxCompileOptions(), &loaded);
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
  EXPECT_TRUE(MentionsAny(info.message, {"stablehlo.add"}));
  EXPECT_EQ(loaded, nullptr);
}

}  // namespace
}  // namespace kiln::testing
