// PJRT_LoadedExecutable_Execute and the executable's lifetime through the
// loaded plugin: donation, errors that reach the caller through events,
// threads sharing a client, deleted executables, and serialization.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

// out = a + b; argument 0 may be donated to output 0.
constexpr char kAliasedAdd[] = R"mlir(
func.func public @main(%arg0: tensor<4xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";

// The same with jax's newer spelling: a donor the compiler pairs with an
// output of the same type.
constexpr char kDonorAdd[] = R"mlir(
func.func public @main(%arg0: tensor<4xf32> {jax.buffer_donor = true}, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";

// out = a * b + b, nothing donated.
constexpr char kMultiplyAdd[] = R"mlir(
func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %arg0, %arg1 : tensor<4xf32>
  %1 = stablehlo.add %0, %arg1 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
)mlir";

const std::vector<float> kA = {1, 2, 3, 4};
const std::vector<float> kB = {0.5f, -1, 10, 100};
// a + b by hand.
const std::vector<float> kSum = {1.5f, 1, 13, 104};

class ExecuteTest : public PluginTest {
 protected:
  // Runs `loaded` on (a, b) with `non_donatable`; returns the output.
  PJRT_Buffer* RunOnce(PJRT_LoadedExecutable* loaded, PJRT_Buffer* a,
                       PJRT_Buffer* b,
                       const std::vector<int64_t>& non_donatable = {}) {
    ExecuteResult result = Execute(loaded, {{a, b}}, nullptr, non_donatable);
    EXPECT_EQ(result.error.code, PJRT_Error_Code_OK) << Describe(result.error);
    if (result.error.code != PJRT_Error_Code_OK) return nullptr;
    for (PJRT_Event* event : result.events) {
      ErrorInfo done = AwaitAndDestroy(event);
      EXPECT_EQ(done.code, PJRT_Error_Code_OK) << Describe(done);
    }
    return result.outputs[0][0];
  }

  void IncreaseExternalReferences(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args);
    args.buffer = buffer;
    PJRT_EXPECT_OK(api_,
                   api_->PJRT_Buffer_IncreaseExternalReferenceCount(&args));
  }
  void DecreaseExternalReferences(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
    args.buffer = buffer;
    PJRT_EXPECT_OK(api_,
                   api_->PJRT_Buffer_DecreaseExternalReferenceCount(&args));
  }

  std::string Serialize(PJRT_LoadedExecutable* loaded) {
    PJRT_Executable* executable = GetExecutable(loaded);
    auto args = KILN_ARGS(PJRT_Executable_Serialize_Args);
    args.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_Serialize(&args));
    std::string bytes;
    if (args.serialized_bytes != nullptr) {
      bytes.assign(args.serialized_bytes, args.serialized_bytes_size);
    }
    if (args.serialized_executable_deleter != nullptr) {
      args.serialized_executable_deleter(args.serialized_executable);
    }
    DestroyExecutable(executable);
    return bytes;
  }

  ErrorInfo Deserialize(const std::string& bytes,
                        PJRT_LoadedExecutable** loaded) {
    auto args = KILN_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
    args.client = client_;
    args.serialized_executable = bytes.data();
    args.serialized_executable_size = bytes.size();
    ErrorInfo info =
        TakeError(api_, api_->PJRT_Executable_DeserializeAndLoad(&args));
    *loaded = args.loaded_executable;
    if (info.code != PJRT_Error_Code_OK) {
      EXPECT_EQ(args.loaded_executable, nullptr);
    }
    return info;
  }

  std::string Fingerprint(PJRT_LoadedExecutable* loaded) {
    PJRT_Executable* executable = GetExecutable(loaded);
    auto args = KILN_ARGS(PJRT_Executable_Fingerprint_Args);
    args.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_Fingerprint(&args));
    std::string fingerprint(args.executable_fingerprint,
                            args.executable_fingerprint_size);
    DestroyExecutable(executable);
    return fingerprint;
  }

  // The status a buffer's ready event ends with.
  ErrorInfo ReadyStatus(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_ReadyEvent_Args);
    args.buffer = buffer;
    PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_ReadyEvent(&args));
    return AwaitAndDestroy(args.event);
  }
};

class ExecuteFourDevicesTest : public ExecuteTest {
 protected:
  ExecuteFourDevicesTest() { device_count_ = 4; }
};

// --- Donation

TEST_F(ExecuteTest, AliasedInputIsDonated) {
  PJRT_LoadedExecutable* loaded = Compile(kAliasedAdd);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  PJRT_Buffer* out = RunOnce(loaded, a, b);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(DownloadF32(out), kSum);
  EXPECT_TRUE(IsDeleted(a)) << "the donated input must read as deleted";
  EXPECT_FALSE(IsDeleted(b));
  // Reading the donated input is an error, not stale data.
  std::vector<uint8_t> bytes;
  EXPECT_EQ(TryDownload(a, &bytes).code, PJRT_Error_Code_FAILED_PRECONDITION);
  DestroyBuffers({a, b, out});
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, BufferDonorIsDonated) {
  PJRT_LoadedExecutable* loaded = Compile(kDonorAdd);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  PJRT_Buffer* out = RunOnce(loaded, a, b);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(DownloadF32(out), kSum);
  EXPECT_TRUE(IsDeleted(a));
  EXPECT_FALSE(IsDeleted(b));
  DestroyBuffers({a, b, out});
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, ModuleLevelInputOutputAliasIsDonated) {
  // XLA's importers write the aliases on the module: parameter 1 may alias
  // output 1 (of two).
  constexpr char kModuleAlias[] = R"mlir(
module @jit_g attributes {mhlo.input_output_alias = [{alias = {kind = "may_alias", parameter_index = array<i64>, parameter_number = 1 : i64}, output_index = array<i64: 1>}]} {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    %1 = stablehlo.multiply %arg0, %arg1 : tensor<4xf32>
    return %0, %1 : tensor<4xf32>, tensor<4xf32>
  }
}
)mlir";
  PJRT_LoadedExecutable* loaded = Compile(kModuleAlias);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  std::vector<PJRT_Buffer*> out = ExecuteAndAwait(loaded, {a, b});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(DownloadF32(out[0]), kSum);
  // a * b by hand: 0.5, -2, 30, 400.
  EXPECT_EQ(DownloadF32(out[1]), (std::vector<float>{0.5f, -2, 30, 400}));
  EXPECT_FALSE(IsDeleted(a));
  EXPECT_TRUE(IsDeleted(b));
  DestroyBuffers(out);
  DestroyBuffers({a, b});
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, BufferDonatedAndPassedAgainIsAnError) {
  PJRT_LoadedExecutable* loaded = Compile(kAliasedAdd);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* a = UploadF32(kA, {4});
  // Argument 0 (donated) and argument 1 are the same buffer: donating it
  // would free what argument 1 still reads. XLA refuses such a call, and so
  // does Kiln, without touching the buffer.
  ExecuteResult refused = Execute(loaded, {{a, a}}, nullptr, {});
  EXPECT_EQ(refused.error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(refused.error.message.find(
                "argument 0 is donated and also passed as argument 1"),
            std::string::npos)
      << refused.error.message;
  EXPECT_FALSE(IsDeleted(a));
  EXPECT_EQ(DownloadF32(a), kA);
  // Marked non-donatable, the same call reads the buffer twice.
  PJRT_Buffer* out = RunOnce(loaded, a, a, /*non_donatable=*/{0});
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(DownloadF32(out), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_FALSE(IsDeleted(a));
  DestroyBuffers({a, out});
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, NonDonatableInputIsKept) {
  PJRT_LoadedExecutable* loaded = Compile(kAliasedAdd);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  PJRT_Buffer* out = RunOnce(loaded, a, b, /*non_donatable=*/{0});
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(DownloadF32(out), kSum);
  EXPECT_FALSE(IsDeleted(a));
  // The kept input still holds its values, and running again works.
  EXPECT_EQ(DownloadF32(a), kA);
  PJRT_Buffer* again = RunOnce(loaded, a, b, {0});
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(DownloadF32(again), kSum);
  EXPECT_EQ(DownloadF32(out), kSum) << "outputs must not share storage";
  DestroyBuffers({a, b, out, again});
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, InputWithExternalReferencesIsNotDonated) {
  PJRT_LoadedExecutable* loaded = Compile(kAliasedAdd);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  // A framework holds a zero-copy view of `a` (numpy, DLPack).
  IncreaseExternalReferences(a);
  PJRT_Buffer* out = RunOnce(loaded, a, b);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(DownloadF32(out), kSum);
  EXPECT_FALSE(IsDeleted(a));
  EXPECT_EQ(DownloadF32(a), kA) << "the viewed input was overwritten";
  DecreaseExternalReferences(a);
  DestroyBuffers({a, b, out});
  DestroyLoadedExecutable(loaded);
}

// --- Asynchrony

// out = (N * a, m . I ... . I) with N = 200 iterations of a 128x128 matmul
// by the identity: slow enough (about 0.8 GFLOP) to still be running when
// the caller does its next step, and reading `a` in every iteration.
constexpr char kSlowAccumulate[] = R"mlir(
func.func public @main(%a: tensor<4xf32>, %m: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> (tensor<4xf32>, tensor<128x128xf32>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<4xf32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<200> : tensor<i32>
  %r:3 = stablehlo.while(%i = %i0, %acc = %zero, %x = %m) : tensor<i32>, tensor<4xf32>, tensor<128x128xf32>
  cond {
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %next = stablehlo.add %i, %one : tensor<i32>
    %sum = stablehlo.add %acc, %a : tensor<4xf32>
    %y = stablehlo.dot_general %x, %eye, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
    stablehlo.return %next, %sum, %y : tensor<i32>, tensor<4xf32>, tensor<128x128xf32>
  }
  return %r#1, %r#2 : tensor<4xf32>, tensor<128x128xf32>
}
)mlir";

class SlowProgramTest : public ExecuteTest {
 protected:
  void SetUp() override {
    ExecuteTest::SetUp();
    if (HasFatalFailure()) return;
    slow_ = Compile(kSlowAccumulate);
    ASSERT_NE(slow_, nullptr);
    std::vector<float> eye(128 * 128, 0.0f), m(128 * 128);
    for (int i = 0; i < 128; ++i) eye[i * 128 + i] = 1;
    for (int i = 0; i < 128 * 128; ++i) m[i] = static_cast<float>(i % 13);
    m_values_ = m;
    eye_ = UploadF32(eye, {128, 128});
    m_ = UploadF32(m, {128, 128});
  }
  void TearDown() override {
    DestroyBuffers({eye_, m_});
    if (slow_ != nullptr) DestroyLoadedExecutable(slow_);
    ExecuteTest::TearDown();
  }
  // 200 * a, exact in f32 for small integers.
  static std::vector<float> Times200(const std::vector<float>& a) {
    std::vector<float> out;
    for (float v : a) out.push_back(200 * v);
    return out;
  }
  bool IsReady(PJRT_Event* event) {
    auto args = KILN_ARGS(PJRT_Event_IsReady_Args);
    args.event = event;
    PJRT_EXPECT_OK(api_, api_->PJRT_Event_IsReady(&args));
    return args.is_ready;
  }

  PJRT_LoadedExecutable* slow_ = nullptr;
  PJRT_Buffer* eye_ = nullptr;
  PJRT_Buffer* m_ = nullptr;
  std::vector<float> m_values_;
};

TEST_F(SlowProgramTest, ExecuteReturnsBeforeTheRunEnds) {
  PJRT_Buffer* a = UploadF32({1, 2, 3, 4}, {4});
  ExecuteResult result = Execute(slow_, {{a, m_, eye_}});
  ASSERT_EQ(result.error.code, PJRT_Error_Code_OK) << Describe(result.error);
  // The outputs exist at once, pending.
  EXPECT_FALSE(IsReady(result.events[0]))
      << "Execute waited for a run of about a GFLOP";
  auto ready = KILN_ARGS(PJRT_Buffer_ReadyEvent_Args);
  ready.buffer = result.outputs[0][0];
  PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_ReadyEvent(&ready));
  EXPECT_FALSE(IsReady(ready.event));
  EXPECT_EQ(AwaitAndDestroy(ready.event).code, PJRT_Error_Code_OK);
  EXPECT_EQ(AwaitAndDestroy(result.events[0]).code, PJRT_Error_Code_OK);
  EXPECT_EQ(DownloadF32(result.outputs[0][0]), Times200({1, 2, 3, 4}));
  EXPECT_EQ(DownloadF32(result.outputs[0][1]), m_values_);
  DestroyBuffers(result.outputs[0]);
  DestroyBuffer(a);
}

TEST_F(SlowProgramTest, DestroyingTheExecutableDuringARunIsSafe) {
  PJRT_Buffer* a = UploadF32({1, 2, 3, 4}, {4});
  ExecuteResult result = Execute(slow_, {{a, m_, eye_}});
  ASSERT_EQ(result.error.code, PJRT_Error_Code_OK) << Describe(result.error);
  DestroyLoadedExecutable(slow_);
  slow_ = nullptr;
  EXPECT_EQ(AwaitAndDestroy(result.events[0]).code, PJRT_Error_Code_OK);
  EXPECT_EQ(DownloadF32(result.outputs[0][0]), Times200({1, 2, 3, 4}));
  DestroyBuffers(result.outputs[0]);
  DestroyBuffer(a);
}

TEST_F(SlowProgramTest, DonationWaitsForEarlierReaders) {
  PJRT_LoadedExecutable* donating = Compile(kAliasedAdd);
  ASSERT_NE(donating, nullptr);
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  // The slow run reads `a` in each of its 200 iterations; the tiny run
  // right after donates `a` to its output. Writing that output into a's
  // bytes while the slow run still reads them would change its result.
  ExecuteResult slow = Execute(slow_, {{a, m_, eye_}});
  ASSERT_EQ(slow.error.code, PJRT_Error_Code_OK) << Describe(slow.error);
  PJRT_Buffer* out = RunOnce(donating, a, b);
  ASSERT_NE(out, nullptr);
  EXPECT_TRUE(IsDeleted(a));
  EXPECT_EQ(AwaitAndDestroy(slow.events[0]).code, PJRT_Error_Code_OK);
  EXPECT_EQ(DownloadF32(slow.outputs[0][0]), Times200(kA));
  EXPECT_EQ(DownloadF32(out), kSum);
  DestroyBuffers(slow.outputs[0]);
  DestroyBuffers({a, b, out});
  DestroyLoadedExecutable(donating);
}

TEST_F(ExecuteTest, InputsStillBeingUploadedAreAwaited) {
  PJRT_LoadedExecutable* loaded = Compile(R"mlir(
func.func public @main(%arg0: tensor<1048576xf32>, %arg1: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %0 = stablehlo.multiply %arg0, %arg1 : tensor<1048576xf32>
  %1 = stablehlo.add %0, %arg1 : tensor<1048576xf32>
  return %1 : tensor<1048576xf32>
}
)mlir");
  ASSERT_NE(loaded, nullptr);
  constexpr int64_t kCount = 1 << 20;
  std::vector<float> a(kCount), b(kCount), expected(kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    a[i] = static_cast<float>(i % 1000);
    b[i] = static_cast<float>(i % 7) - 3;
    expected[i] = a[i] * b[i] + b[i];
  }
  // Copies on the device queue: the buffers are pending when Execute is
  // called, and the host data must stay until the done events fire.
  std::vector<PJRT_Event*> done;
  std::vector<PJRT_Buffer*> inputs;
  for (const std::vector<float>* values : {&a, &b}) {
    int64_t dims[1] = {kCount};
    auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = client_;
    args.data = values->data();
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims;
    args.num_dims = 1;
    args.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
    args.device = Devices()[0];
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    done.push_back(args.done_with_host_buffer);
    inputs.push_back(args.buffer);
  }
  PJRT_Buffer* out = RunOnce(loaded, inputs[0], inputs[1]);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(DownloadF32(out), expected);
  for (PJRT_Event* event : done) {
    EXPECT_EQ(AwaitAndDestroy(event).code, PJRT_Error_Code_OK);
  }
  DestroyBuffers(inputs);
  DestroyBuffer(out);
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, OutputsLiveInTheDefaultMemory) {
  PJRT_LoadedExecutable* loaded = Compile(kMultiplyAdd);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  PJRT_Buffer* out = RunOnce(loaded, a, b);
  ASSERT_NE(out, nullptr);
  auto memory = KILN_ARGS(PJRT_Buffer_Memory_Args);
  memory.buffer = out;
  PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_Memory(&memory));
  EXPECT_EQ(memory.memory, DefaultMemory(Devices()[0]));
  EXPECT_EQ(MemoryKind(memory.memory), "device");
  auto type = KILN_ARGS(PJRT_Buffer_ElementType_Args);
  type.buffer = out;
  PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_ElementType(&type));
  EXPECT_EQ(type.type, PJRT_Buffer_Type_F32);
  auto dims = KILN_ARGS(PJRT_Buffer_Dimensions_Args);
  dims.buffer = out;
  PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_Dimensions(&dims));
  EXPECT_EQ(std::vector<int64_t>(dims.dims, dims.dims + dims.num_dims),
            std::vector<int64_t>{4});
  DestroyBuffers({a, b, out});
  DestroyLoadedExecutable(loaded);
}

// --- Outputs that are not fresh results

// Returns a constant, an argument unchanged, and the same sum twice.
constexpr char kPassThrough[] = R"mlir(
func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %cst = stablehlo.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
  %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
  return %cst, %arg0, %0, %0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
)mlir";

TEST_F(ExecuteTest, OutputsAreIndependentBuffers) {
  PJRT_LoadedExecutable* pass = Compile(kPassThrough);
  PJRT_LoadedExecutable* donating = Compile(kAliasedAdd);
  ASSERT_NE(pass, nullptr);
  ASSERT_NE(donating, nullptr);
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  std::vector<PJRT_Buffer*> out = ExecuteAndAwait(pass, {a, b});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(DownloadF32(out[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(DownloadF32(out[1]), kA);
  EXPECT_EQ(DownloadF32(out[2]), kSum);
  EXPECT_EQ(DownloadF32(out[3]), kSum);
  // Donating each output to a run that writes into it must change nothing
  // else: not the program's constant, not the argument it came from, not
  // the other copy of the same value.
  std::vector<PJRT_Buffer*> results;
  for (int i : {0, 1, 2}) {
    PJRT_Buffer* written = RunOnce(donating, out[i], b);
    ASSERT_NE(written, nullptr);
    EXPECT_TRUE(IsDeleted(out[i]));
    results.push_back(written);
  }
  EXPECT_EQ(DownloadF32(a), kA) << "the argument changed";
  EXPECT_EQ(DownloadF32(out[3]), kSum) << "the twin output changed";
  // (1, 2, 3, 4) + b, a + b, (a + b) + b by hand.
  EXPECT_EQ(DownloadF32(results[0]), (std::vector<float>{1.5f, 1, 13, 104}));
  EXPECT_EQ(DownloadF32(results[1]), kSum);
  EXPECT_EQ(DownloadF32(results[2]), (std::vector<float>{2, 0, 23, 204}));
  // A second run still returns the constant as written in the program.
  std::vector<PJRT_Buffer*> again = ExecuteAndAwait(pass, {a, b});
  ASSERT_EQ(again.size(), 4u);
  EXPECT_EQ(DownloadF32(again[0]), (std::vector<float>{1, 2, 3, 4}));
  // Deleting the argument leaves the output that equals it readable.
  auto remove = KILN_ARGS(PJRT_Buffer_Delete_Args);
  remove.buffer = a;
  PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_Delete(&remove));
  EXPECT_EQ(DownloadF32(again[1]), kA);
  DestroyBuffers(out);
  DestroyBuffers(again);
  DestroyBuffers(results);
  DestroyBuffers({a, b});
  DestroyLoadedExecutable(pass);
  DestroyLoadedExecutable(donating);
}

TEST_F(ExecuteTest, EmptyAndScalarValues) {
  // No arguments; a zero-element output, a scalar, a predicate.
  PJRT_LoadedExecutable* loaded = Compile(R"mlir(
func.func public @main(%arg0: tensor<0xf32>, %arg1: tensor<i32>) -> (tensor<0xf32>, tensor<i32>, tensor<2xi1>) {
  %0 = stablehlo.negate %arg0 : tensor<0xf32>
  %1 = stablehlo.multiply %arg1, %arg1 : tensor<i32>
  %c = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  return %0, %1, %c : tensor<0xf32>, tensor<i32>, tensor<2xi1>
}
)mlir");
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* empty = UploadF32({}, {0});
  int32_t seven = 7;
  PJRT_Buffer* scalar = Upload(&seven, PJRT_Buffer_Type_S32, {}, Devices()[0]);
  std::vector<PJRT_Buffer*> out = ExecuteAndAwait(loaded, {empty, scalar});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(Download(out[0]).empty());
  std::vector<uint8_t> squared = Download(out[1]);
  ASSERT_EQ(squared.size(), 4u);
  int32_t value = 0;
  std::memcpy(&value, squared.data(), 4);
  EXPECT_EQ(value, 49);
  EXPECT_EQ(Download(out[2]), (std::vector<uint8_t>{1, 0}));
  DestroyBuffers(out);
  DestroyBuffers({empty, scalar});
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, ProgramWithoutOutputs) {
  PJRT_LoadedExecutable* loaded = Compile(R"mlir(
func.func public @main(%arg0: tensor<4xf32>) {
  return
}
)mlir");
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(NumOutputs(loaded), 0u);
  PJRT_Buffer* a = UploadF32(kA, {4});
  ExecuteResult result = Execute(loaded, {{a}});
  ASSERT_EQ(result.error.code, PJRT_Error_Code_OK) << Describe(result.error);
  ASSERT_EQ(result.events.size(), 1u);
  EXPECT_EQ(AwaitAndDestroy(result.events[0]).code, PJRT_Error_Code_OK);
  DestroyBuffer(a);
  DestroyLoadedExecutable(loaded);
}

// --- Errors at run time

TEST_F(ExecuteTest, ErrorOfAnInputReachesTheOutputs) {
  PJRT_LoadedExecutable* loaded = Compile(kMultiplyAdd);
  ASSERT_NE(loaded, nullptr);
  // An input that holds only an error (what a failed upstream computation
  // leaves): the run fails at run time, and the caller learns it through
  // the outputs' events and ToHostBuffer, not through Execute.
  const std::string message = "upstream step failed";
  PJRT_Buffer* error_buffer =
      ErrorBufferF32(PJRT_Error_Code_ABORTED, message, {4});
  ASSERT_NE(error_buffer, nullptr);
  PJRT_Buffer* b = UploadF32(kB, {4});
  ExecuteResult result = Execute(loaded, {{error_buffer, b}});
  ASSERT_EQ(result.error.code, PJRT_Error_Code_OK)
      << "Execute is asynchronous; it should not report input errors itself: "
      << Describe(result.error);
  ASSERT_EQ(result.events.size(), 1u);
  ErrorInfo complete = AwaitAndDestroy(result.events[0]);
  EXPECT_EQ(complete.code, PJRT_Error_Code_ABORTED) << Describe(complete);
  PJRT_Buffer* out = result.outputs[0][0];
  ErrorInfo ready = ReadyStatus(out);
  EXPECT_EQ(ready.code, PJRT_Error_Code_ABORTED) << Describe(ready);
  EXPECT_NE(ready.message.find(message), std::string::npos) << ready.message;
  std::vector<uint8_t> bytes;
  ErrorInfo download = TryDownload(out, &bytes);
  EXPECT_EQ(download.code, PJRT_Error_Code_ABORTED) << Describe(download);
  EXPECT_NE(download.message.find(message), std::string::npos)
      << download.message;
  // The executable is unharmed: a good run right after succeeds.
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* good = RunOnce(loaded, a, b);
  ASSERT_NE(good, nullptr);
  // a * b + b by hand: 0.5+0.5, -2-1, 30+10, 400+100.
  EXPECT_EQ(DownloadF32(good), (std::vector<float>{1, -3, 40, 500}));
  DestroyBuffers({error_buffer, b, out, a, good});
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, ErrorPropagatesThroughAChainOfExecutions) {
  PJRT_LoadedExecutable* loaded = Compile(kMultiplyAdd);
  ASSERT_NE(loaded, nullptr);
  const std::string message = "bad input";
  PJRT_Buffer* error_buffer =
      ErrorBufferF32(PJRT_Error_Code_DATA_LOSS, message, {4});
  ASSERT_NE(error_buffer, nullptr);
  PJRT_Buffer* b = UploadF32(kB, {4});
  // Three steps queued without waiting, each reading the previous output.
  std::vector<PJRT_Buffer*> owned = {error_buffer, b};
  PJRT_Buffer* current = error_buffer;
  for (int step = 0; step < 3; ++step) {
    ExecuteResult result = Execute(loaded, {{current, b}}, nullptr, {}, false);
    ASSERT_EQ(result.error.code, PJRT_Error_Code_OK) << Describe(result.error);
    current = result.outputs[0][0];
    owned.push_back(current);
  }
  std::vector<uint8_t> bytes;
  ErrorInfo download = TryDownload(current, &bytes);
  EXPECT_EQ(download.code, PJRT_Error_Code_DATA_LOSS) << Describe(download);
  EXPECT_NE(download.message.find(message), std::string::npos)
      << download.message;
  DestroyBuffers(owned);
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, OutputTooLargeForMemoryFailsCleanly) {
  // 2^20 x 2^20 x 32 f32 = 2^47 bytes (128 TiB): no machine holds the
  // output. Wherever Kiln notices (compile, Execute or the run), the
  // caller gets RESOURCE_EXHAUSTED and nothing crashes.
  constexpr char kHuge[] = R"mlir(
func.func public @main(%arg0: tensor<f32>) -> tensor<1048576x1048576x32xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<f32>) -> tensor<1048576x1048576x32xf32>
  return %0 : tensor<1048576x1048576x32xf32>
}
)mlir";
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo compile = TryCompile(kHuge, JaxCompileOptions(), &loaded);
  if (compile.code != PJRT_Error_Code_OK) {
    EXPECT_EQ(compile.code, PJRT_Error_Code_RESOURCE_EXHAUSTED)
        << Describe(compile);
    return;
  }
  float one = 1;
  PJRT_Buffer* scalar = Upload(&one, PJRT_Buffer_Type_F32, {}, Devices()[0]);
  ExecuteResult result = Execute(loaded, {{scalar}});
  if (result.error.code != PJRT_Error_Code_OK) {
    EXPECT_EQ(result.error.code, PJRT_Error_Code_RESOURCE_EXHAUSTED)
        << Describe(result.error);
  } else {
    ErrorInfo complete = AwaitAndDestroy(result.events[0]);
    EXPECT_EQ(complete.code, PJRT_Error_Code_RESOURCE_EXHAUSTED)
        << Describe(complete);
    ErrorInfo ready = ReadyStatus(result.outputs[0][0]);
    EXPECT_EQ(ready.code, PJRT_Error_Code_RESOURCE_EXHAUSTED)
        << Describe(ready);
    DestroyBuffers(result.outputs[0]);
  }
  DestroyBuffer(scalar);
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, UnknownCustomCallFailsAtCompileTime) {
  constexpr char kUnknownTarget[] = R"mlir(
func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @kiln_test_no_such_target(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo info = TryCompile(kUnknownTarget, JaxCompileOptions(), &loaded);
  EXPECT_TRUE(info.code == PJRT_Error_Code_UNIMPLEMENTED ||
              info.code == PJRT_Error_Code_INVALID_ARGUMENT)
      << Describe(info);
  EXPECT_NE(info.message.find("kiln_test_no_such_target"), std::string::npos)
      << info.message;
  EXPECT_EQ(loaded, nullptr);
}

TEST_F(SlowProgramTest, ExecuteFromAnOutputCallback) {
  // A framework may dispatch the next step from the callback of the last
  // one's output; the callback runs on the device's thread.
  PJRT_LoadedExecutable* next = Compile(kMultiplyAdd);
  ASSERT_NE(next, nullptr);
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  ExecuteResult slow = Execute(slow_, {{a, m_, eye_}});
  ASSERT_EQ(slow.error.code, PJRT_Error_Code_OK) << Describe(slow.error);
  using Self = std::remove_pointer_t<decltype(this)>;
  struct State {
    Self* test;
    PJRT_LoadedExecutable* next;
    PJRT_Buffer* a;
    PJRT_Buffer* b;
    ExecuteResult result;
    std::atomic<bool> done{false};
  };
  State state{this, next, a, b, {}};
  auto ready = KILN_ARGS(PJRT_Buffer_ReadyEvent_Args);
  ready.buffer = slow.outputs[0][0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_ReadyEvent(&ready));
  auto on_ready = KILN_ARGS(PJRT_Event_OnReady_Args);
  on_ready.event = ready.event;
  on_ready.user_arg = &state;
  on_ready.callback = [](PJRT_Error* error, void* user_arg) {
    auto* s = static_cast<State*>(user_arg);
    TakeError(s->test->api_, error);
    s->result = s->test->Execute(s->next, {{s->a, s->b}});
    s->done.store(true);
  };
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_OnReady(&on_ready));
  while (!state.done.load()) std::this_thread::yield();
  DestroyEvent(ready.event);
  ASSERT_EQ(state.result.error.code, PJRT_Error_Code_OK)
      << Describe(state.result.error);
  EXPECT_EQ(AwaitAndDestroy(state.result.events[0]).code, PJRT_Error_Code_OK);
  // a * b + b by hand: 0.5+0.5, -2-1, 30+10, 400+100.
  EXPECT_EQ(DownloadF32(state.result.outputs[0][0]),
            (std::vector<float>{1, -3, 40, 500}));
  EXPECT_EQ(AwaitAndDestroy(slow.events[0]).code, PJRT_Error_Code_OK);
  DestroyBuffers(state.result.outputs[0]);
  DestroyBuffers(slow.outputs[0]);
  DestroyBuffers({a, b});
  DestroyLoadedExecutable(next);
}

TEST_F(ExecuteFourDevicesTest, DeserializeWithOverriddenOptions) {
  // A one-device executable loaded again as four replicas (the options a
  // framework passes when it reuses a cache entry for another placement).
  PJRT_LoadedExecutable* loaded = Compile(kMultiplyAdd);
  ASSERT_NE(loaded, nullptr);
  std::string bytes = Serialize(loaded);
  DestroyLoadedExecutable(loaded);
  std::string options = JaxCompileOptions(4, 1);
  auto args = KILN_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
  args.client = client_;
  args.serialized_executable = bytes.data();
  args.serialized_executable_size = bytes.size();
  args.overridden_serialized_compile_options = options.data();
  args.overridden_serialized_compile_options_size = options.size();
  PJRT_ASSERT_OK(api_, api_->PJRT_Executable_DeserializeAndLoad(&args));
  ASSERT_NE(args.loaded_executable, nullptr);
  auto devices = KILN_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args);
  devices.executable = args.loaded_executable;
  PJRT_EXPECT_OK(api_,
                 api_->PJRT_LoadedExecutable_AddressableDevices(&devices));
  EXPECT_EQ(devices.num_addressable_devices, 4u);
  DestroyLoadedExecutable(args.loaded_executable);
}

// --- Several devices

TEST_F(ExecuteFourDevicesTest, ReplicaIdsDifferPerDevice) {
  PJRT_LoadedExecutable* loaded = Compile(R"mlir(
func.func public @main(%arg0: tensor<ui32>) -> tensor<ui32> {
  %0 = stablehlo.replica_id : tensor<ui32>
  %1 = stablehlo.add %0, %arg0 : tensor<ui32>
  return %1 : tensor<ui32>
}
)mlir",
                                          JaxCompileOptions(4, 1));
  ASSERT_NE(loaded, nullptr);
  auto logical =
      KILN_ARGS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args);
  logical.executable = loaded;
  PJRT_EXPECT_OK(
      api_, api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&logical));
  ASSERT_EQ(logical.num_addressable_device_logical_ids, 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(logical.addressable_device_logical_ids[r].replica, r);
    EXPECT_EQ(logical.addressable_device_logical_ids[r].partition, 0);
  }
  std::vector<PJRT_Device*> devices = Devices();
  std::vector<std::vector<PJRT_Buffer*>> arguments;
  uint32_t hundred = 100;
  for (PJRT_Device* device : devices) {
    arguments.push_back({Upload(&hundred, PJRT_Buffer_Type_U32, {}, device)});
  }
  ExecuteResult result = Execute(loaded, arguments);
  ASSERT_EQ(result.error.code, PJRT_Error_Code_OK) << Describe(result.error);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(AwaitAndDestroy(result.events[r]).code, PJRT_Error_Code_OK);
    std::vector<uint8_t> bytes = Download(result.outputs[r][0]);
    uint32_t value = 0;
    ASSERT_EQ(bytes.size(), 4u);
    std::memcpy(&value, bytes.data(), 4);
    EXPECT_EQ(value, 100u + r) << "replica " << r;
    DestroyBuffers(result.outputs[r]);
    DestroyBuffers(arguments[r]);
  }
  DestroyLoadedExecutable(loaded);
}

// --- Threads

TEST_F(ExecuteFourDevicesTest, EightThreadsOnFourDevices) {
  std::vector<PJRT_Device*> devices = Devices();
  ASSERT_EQ(devices.size(), 4u);
  // Odd threads share one portable executable (execute_device chooses the
  // device); even threads compile their own, assigned to their device.
  PJRT_LoadedExecutable* shared =
      Compile(kMultiplyAdd, JaxCompileOptions(1, 1, /*portable=*/true));
  ASSERT_NE(shared, nullptr);
  constexpr int kThreads = 8, kIterations = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      PJRT_Device* device = devices[t % 4];
      PJRT_LoadedExecutable* loaded = shared;
      PJRT_Device* execute_device = device;
      if (t % 2 == 0) {
        loaded = Compile(kMultiplyAdd, JaxCompileOptions(1, 1, false, {t % 4}));
        execute_device = nullptr;
        if (loaded == nullptr) {
          ++failures;
          return;
        }
      }
      for (int i = 0; i < kIterations; ++i) {
        // Values unique to the thread and step: a = t + i + (0, 1, 2, 3),
        // b = (1, 2, 3, 4); a * b + b computed here on the host.
        std::vector<float> a, b = {1, 2, 3, 4}, expected;
        for (int k = 0; k < 4; ++k) {
          a.push_back(static_cast<float>(t + i + k));
          expected.push_back(a[k] * b[k] + b[k]);
        }
        PJRT_Buffer* in_a = UploadF32(a, {4}, device);
        PJRT_Buffer* in_b = UploadF32(b, {4}, device);
        std::vector<PJRT_Buffer*> out =
            ExecuteAndAwait(loaded, {in_a, in_b}, execute_device);
        if (out.size() != 1 || DownloadF32(out[0]) != expected) ++failures;
        DestroyBuffers(out);
        DestroyBuffers({in_a, in_b});
      }
      if (loaded != shared) DestroyLoadedExecutable(loaded);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  DestroyLoadedExecutable(shared);
}

TEST_F(ExecuteFourDevicesTest, EightThreadsQueueingOnFourDevices) {
  // A program large enough (2 * 16^3 flops) to run on the devices' queues
  // rather than on the calling thread; each thread queues several runs
  // before reading any of them back.
  constexpr char kMatmul[] = R"mlir(
func.func public @main(%arg0: tensor<16x16xf32>, %arg1: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %1 = stablehlo.add %0, %arg1 : tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
}
)mlir";
  std::vector<PJRT_Device*> devices = Devices();
  ASSERT_EQ(devices.size(), 4u);
  PJRT_LoadedExecutable* shared =
      Compile(kMatmul, JaxCompileOptions(1, 1, /*portable=*/true));
  ASSERT_NE(shared, nullptr);
  constexpr int kThreads = 8, kIterations = 6, kInFlight = 4;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      PJRT_Device* device = devices[t % 4];
      for (int i = 0; i < kIterations; ++i) {
        // a = small integers (exact in f32), b = identity + t; then
        // a . b + b = a + t * rowsum(a) + b, computed here in doubles.
        std::vector<float> a(256), b(256);
        for (int r = 0; r < 16; ++r) {
          for (int c = 0; c < 16; ++c) {
            a[r * 16 + c] = static_cast<float>((r + c + i) % 7);
            b[r * 16 + c] = static_cast<float>((r == c ? 1 : 0) + t);
          }
        }
        std::vector<float> expected(256);
        for (int r = 0; r < 16; ++r) {
          for (int c = 0; c < 16; ++c) {
            double sum = 0;
            for (int k = 0; k < 16; ++k) sum += a[r * 16 + k] * b[k * 16 + c];
            expected[r * 16 + c] = static_cast<float>(sum + b[r * 16 + c]);
          }
        }
        PJRT_Buffer* in_a = UploadF32(a, {16, 16}, device);
        PJRT_Buffer* in_b = UploadF32(b, {16, 16}, device);
        std::vector<PJRT_Buffer*> outputs;
        std::vector<PJRT_Event*> events;
        for (int k = 0; k < kInFlight; ++k) {
          ExecuteResult result = Execute(shared, {{in_a, in_b}}, device);
          if (result.error.code != PJRT_Error_Code_OK) {
            ++failures;
            continue;
          }
          outputs.push_back(result.outputs[0][0]);
          events.push_back(result.events[0]);
        }
        for (PJRT_Event* event : events) {
          if (AwaitAndDestroy(event).code != PJRT_Error_Code_OK) ++failures;
        }
        for (PJRT_Buffer* out : outputs) {
          if (DownloadF32(out) != expected) ++failures;
        }
        DestroyBuffers(outputs);
        DestroyBuffers({in_a, in_b});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  DestroyLoadedExecutable(shared);
}

// --- Lifetime

TEST_F(ExecuteTest, ExecuteAfterDeleteFailsCleanly) {
  PJRT_LoadedExecutable* loaded = Compile(kMultiplyAdd);
  ASSERT_NE(loaded, nullptr);
  auto is_deleted = KILN_ARGS(PJRT_LoadedExecutable_IsDeleted_Args);
  is_deleted.executable = loaded;
  PJRT_EXPECT_OK(api_, api_->PJRT_LoadedExecutable_IsDeleted(&is_deleted));
  EXPECT_FALSE(is_deleted.is_deleted);
  auto remove = KILN_ARGS(PJRT_LoadedExecutable_Delete_Args);
  remove.executable = loaded;
  PJRT_EXPECT_OK(api_, api_->PJRT_LoadedExecutable_Delete(&remove));
  PJRT_EXPECT_OK(api_, api_->PJRT_LoadedExecutable_IsDeleted(&is_deleted));
  EXPECT_TRUE(is_deleted.is_deleted);
  // Deleting twice is harmless.
  PJRT_EXPECT_OK(api_, api_->PJRT_LoadedExecutable_Delete(&remove));

  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  ExecuteResult result = Execute(loaded, {{a, b}});
  EXPECT_NE(result.error.code, PJRT_Error_Code_OK);
  EXPECT_NE(result.error.message.find("deleted"), std::string::npos)
      << result.error.message;
  EXPECT_TRUE(result.outputs.empty());
  EXPECT_FALSE(IsDeleted(a));
  DestroyBuffers({a, b});
  // Destroy still works after Delete.
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecuteTest, ExecutableOutlivesItsLoadedExecutable) {
  PJRT_LoadedExecutable* loaded = Compile(kMultiplyAdd);
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  DestroyLoadedExecutable(loaded);
  auto outputs = KILN_ARGS(PJRT_Executable_NumOutputs_Args);
  outputs.executable = executable;
  PJRT_EXPECT_OK(api_, api_->PJRT_Executable_NumOutputs(&outputs));
  EXPECT_EQ(outputs.num_outputs, 1u);
  DestroyExecutable(executable);
}

// --- Serialization

TEST_F(ExecuteTest, SerializedExecutableRunsAfterDeserialization) {
  PJRT_LoadedExecutable* loaded = Compile(kAliasedAdd);
  ASSERT_NE(loaded, nullptr);
  std::string bytes = Serialize(loaded);
  ASSERT_FALSE(bytes.empty());
  std::string fingerprint = Fingerprint(loaded);
  DestroyLoadedExecutable(loaded);

  PJRT_LoadedExecutable* restored = nullptr;
  ErrorInfo info = Deserialize(bytes, &restored);
  ASSERT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(Fingerprint(restored), fingerprint);
  EXPECT_EQ(NumOutputs(restored), 1u);
  // Same outputs, and the donation the program asks for still happens.
  PJRT_Buffer* a = UploadF32(kA, {4});
  PJRT_Buffer* b = UploadF32(kB, {4});
  PJRT_Buffer* out = RunOnce(restored, a, b);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(DownloadF32(out), kSum);
  EXPECT_TRUE(IsDeleted(a));
  // Serializing the restored executable gives a blob that loads again.
  std::string again = Serialize(restored);
  PJRT_LoadedExecutable* twice = nullptr;
  info = Deserialize(again, &twice);
  EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
  if (twice != nullptr) DestroyLoadedExecutable(twice);
  DestroyBuffers({a, b, out});
  DestroyLoadedExecutable(restored);
}

TEST_F(ExecuteTest, BlobsThatAreNotKilnsAreRefused) {
  PJRT_LoadedExecutable* loaded = Compile(kMultiplyAdd);
  ASSERT_NE(loaded, nullptr);
  std::string good = Serialize(loaded);
  DestroyLoadedExecutable(loaded);
  ASSERT_GT(good.size(), 8u);

  std::mt19937 random(20240517);
  std::string noise(good.size(), '\0');
  for (char& c : noise) c = static_cast<char>(random());
  std::string flipped = good;
  flipped[0] = static_cast<char>(flipped[0] ^ 0x5a);
  std::vector<std::pair<std::string, std::string>> blobs = {
      {"random bytes", noise},
      {"truncated to half", good.substr(0, good.size() / 2)},
      {"last byte missing", good.substr(0, good.size() - 1)},
      {"first byte changed", flipped},
      {"empty", ""},
      {"MLIR text", kMultiplyAdd},
  };
  for (const auto& [what, blob] : blobs) {
    SCOPED_TRACE(what);
    PJRT_LoadedExecutable* restored = nullptr;
    ErrorInfo info = Deserialize(blob, &restored);
    EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT) << Describe(info);
    EXPECT_FALSE(info.message.empty());
    if (restored != nullptr) DestroyLoadedExecutable(restored);
  }
}

}  // namespace
}  // namespace kiln::testing
