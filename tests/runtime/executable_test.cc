#include "runtime/executable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "runtime/client.h"
#include "runtime/device.h"
#include "runtime/transfer.h"
#include "support/test_support.h"

namespace kiln::runtime {
namespace {

Shape MakeShape(DType dtype, std::vector<int64_t> dims) {
  auto shape = Shape::Make(dtype, dims);
  EXPECT_TRUE(shape.ok());
  return *shape;
}

class ExecutableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto client = Client::Create({4});
    ASSERT_TRUE(client.ok());
    client_ = std::move(*client);
  }

  Device* device(int i) const { return client_->devices()[i]; }

  std::shared_ptr<Buffer> F32(const std::vector<float>& values,
                              std::vector<int64_t> dims, int on = 0) {
    auto shape = Shape::Make(DType::kF32, dims);
    EXPECT_TRUE(shape.ok());
    auto transfer =
        TransferFromHost(values.data(), *shape, std::nullopt,
                         HostBufferSemantics::kImmutableOnlyDuringCall,
                         device(on)->default_memory_space());
    EXPECT_TRUE(transfer.ok()) << transfer.status().ToString();
    return transfer->buffer;
  }

  // The buffer's elements once it is ready (or its error).
  template <typename T>
  StatusOr<std::vector<T>> Read(const std::shared_ptr<Buffer>& buffer) {
    std::vector<T> out(buffer->shape().element_count());
    ASSIGN_OR_RETURN(auto done,
                     TransferToHost(buffer, out.data(), out.size() * sizeof(T),
                                    std::nullopt));
    RETURN_IF_ERROR(done->Await());
    return out;
  }

  StatusOr<std::shared_ptr<Executable>> Compile(const std::string& text,
                                                CompileSpec spec = {}) {
    return Executable::Compile(*client_, text, spec);
  }

  std::unique_ptr<Client> client_;
};

constexpr char kAddMul[] = R"(
module @add_mul {
  func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %a = stablehlo.add %x, %y : tensor<4xf32>
    %m = stablehlo.multiply %x, %y : tensor<4xf32>
    return %a, %m : tensor<4xf32>, tensor<4xf32>
  }
})";

TEST_F(ExecutableTest, CompilesAndDescribesTheProgram) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(kAddMul));
  EXPECT_EQ(executable->name(), "add_mul");
  EXPECT_EQ(executable->num_replicas(), 1);
  ASSERT_EQ(executable->addressable_devices().size(), 1u);
  EXPECT_EQ(executable->addressable_devices()[0], device(0));
  ASSERT_EQ(executable->parameters().size(), 2u);
  ASSERT_EQ(executable->outputs().size(), 2u);
  EXPECT_EQ(executable->outputs()[1].shape.ToString(), "f32[4]");
  EXPECT_EQ(executable->outputs()[0].memory_kind, MemoryKind::kDevice);
  // 4 adds and 4 multiplies.
  EXPECT_EQ(executable->cost().flops, 8);
  EXPECT_TRUE(executable->runs_inline());
  EXPECT_EQ(executable->memory_stats().argument_bytes, 32);
  EXPECT_EQ(executable->memory_stats().output_bytes, 32);
  // The same program and spec give the same fingerprint; another spec not.
  ASSERT_OK_AND_ASSIGN(auto again, Compile(kAddMul));
  EXPECT_EQ(again->fingerprint(), executable->fingerprint());
  CompileSpec on_two;
  on_two.device_assignment = {2};
  ASSERT_OK_AND_ASSIGN(auto elsewhere, Compile(kAddMul, on_two));
  EXPECT_NE(elsewhere->fingerprint(), executable->fingerprint());
  EXPECT_EQ(elsewhere->addressable_devices()[0], device(2));
}

// A program of few flops that moves many bytes (a sort, here of 64 Ki
// elements) goes on the device's queue: run on the caller's thread, its
// parallel loops gave that thread a team of its own beside the queue's
// (exec/parallel.h, SerialScope), which made every later run on the queue
// slower. The same sort of 16 elements still runs inline.
TEST_F(ExecutableTest, AProgramThatMovesManyBytesDoesNotRunInline) {
  auto sort = [](int n) {
    std::string t = "tensor<" + std::to_string(n) + "xf32>";
    return "func.func @main(%x: " + t + ") -> " + t +
           " {\n  %s = \"stablehlo.sort\"(%x) ({\n  ^bb0(%a: tensor<f32>, "
           "%b: tensor<f32>):\n    %lt = stablehlo.compare LT, %a, %b : "
           "(tensor<f32>, tensor<f32>) -> tensor<i1>\n    stablehlo.return "
           "%lt : tensor<i1>\n  }) {dimension = 0 : i64} : (" +
           t + ") -> " + t + "\n  return %s : " + t + "\n}";
  };
  ASSERT_OK_AND_ASSIGN(auto large, Compile(sort(1 << 16)));
  EXPECT_LT(large->cost().flops, 1000);
  EXPECT_FALSE(large->runs_inline());
  ASSERT_OK_AND_ASSIGN(auto small, Compile(sort(16)));
  EXPECT_TRUE(small->runs_inline());
  // Both sort.
  for (auto* executable : {large.get(), small.get()}) {
    const int n = executable == large.get() ? 1 << 16 : 16;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7919) % n);
    ExecuteRequest request;
    request.position = 0;
    request.arguments = {F32(x, {n}, 0)};
    ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
    ASSERT_OK_AND_ASSIGN(auto out, Read<float>(result.outputs[0]));
    std::sort(x.begin(), x.end());
    EXPECT_EQ(out, x);
  }
}

// The number of threads in this process.
int CountThreads() {
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++count;
  }
  return count;
}

// A dense f32 constant as MLIR text, its bytes in hex.
std::string HexConstant(const std::vector<float>& values) {
  std::string text = "dense<\"0x";
  const char* digits = "0123456789ABCDEF";
  for (float v : values) {
    unsigned char bytes[4];
    std::memcpy(bytes, &v, 4);
    for (unsigned char byte : bytes) {
      text += digits[byte >> 4];
      text += digits[byte & 15];
    }
  }
  return text + "\">";
}

// Compiling folds a dot of two constants (1 MiB in, 64 KiB out) by running
// its oneDNN primitive on the compiling thread. Inside exec::SerialScope that
// thread's OpenMP thread count is 1, so the primitive starts no team of
// threads there: a second team on the same cores made every later run
// slower (exec/parallel.h). The compile runs on a thread of its own, which
// has no team yet, and counts the process's threads before it ends.
TEST_F(ExecutableTest, FoldingAConstantDotStartsNoThreadsWhereItCompiles) {
  if (std::thread::hardware_concurrency() < 2) {
    GTEST_SKIP() << "one core: OpenMP would start no team here anyway";
  }
  constexpr int kM = 128, kK = 1000, kN = 128;
  // Multiples of 1/64 below 1: every sum of products is exact in f32, so
  // the reference below is the dot whatever the order of its additions.
  std::vector<float> a(kM * kK), b(kK * kN);
  for (size_t i = 0; i < a.size(); ++i) a[i] = ((i * 37) % 101 - 50.0f) / 64;
  for (size_t i = 0; i < b.size(); ++i) b[i] = ((i * 53) % 89 - 44.0f) / 64;
  const std::string text =
      "func.func @main(%y: tensor<128x128xf32>) -> tensor<128x128xf32> {\n"
      "  %a = stablehlo.constant " +
      HexConstant(a) +
      " : tensor<128x1000xf32>\n"
      "  %b = stablehlo.constant " +
      HexConstant(b) +
      " : tensor<1000x128xf32>\n"
      "  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
      "(tensor<128x1000xf32>, tensor<1000x128xf32>) -> tensor<128x128xf32>\n"
      "  %r = stablehlo.add %d, %y : tensor<128x128xf32>\n"
      "  return %r : tensor<128x128xf32>\n}";
  StatusOr<std::shared_ptr<Executable>> compiled =
      Status(StatusCode::kUnknown, "not compiled");
  int started = -1;
  std::thread([&] {
    int before = CountThreads();
    compiled = Compile(text);
    started = CountThreads() - before;
  }).join();
  ASSERT_OK(compiled.status());
  EXPECT_EQ(started, 0);
  // The dot was folded: its result is a constant of the plan beside a and b.
  EXPECT_EQ((*compiled)->memory_stats().constant_bytes,
            int64_t{4} * (kM * kK + kK * kN + kM * kN));
  ExecuteRequest request;
  request.position = 0;
  request.arguments = {F32(std::vector<float>(kM * kN, 1.0f), {kM, kN})};
  ASSERT_OK_AND_ASSIGN(ExecuteResult result, (*compiled)->Execute(request));
  ASSERT_OK_AND_ASSIGN(auto out, Read<float>(result.outputs[0]));
  int wrong = 0;
  for (int i = 0; i < kM; ++i) {
    for (int j = 0; j < kN; ++j) {
      float sum = 1.0f;
      for (int k = 0; k < kK; ++k) sum += a[i * kK + k] * b[k * kN + j];
      wrong += out[i * kN + j] != sum;
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST_F(ExecutableTest, ExecutesAndOutputsBecomeReady) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(kAddMul));
  ExecuteRequest request;
  request.position = 0;
  request.arguments = {F32({1, 2, 3, 4}, {4}), F32({10, 20, 30, 40}, {4})};
  ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
  ASSERT_EQ(result.outputs.size(), 2u);
  EXPECT_OK(result.done->Await());
  ASSERT_OK_AND_ASSIGN(auto sum, Read<float>(result.outputs[0]));
  ASSERT_OK_AND_ASSIGN(auto product, Read<float>(result.outputs[1]));
  EXPECT_EQ(sum, (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(product, (std::vector<float>{10, 40, 90, 160}));
  EXPECT_EQ(result.outputs[0]->device(), device(0));
}

TEST_F(ExecutableTest, BadRequestsAreRejectedBeforeAnythingStarts) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(kAddMul));
  auto x = F32({1, 2, 3, 4}, {4});
  ExecuteRequest request;
  request.position = 0;
  request.arguments = {x};
  EXPECT_EQ(executable->CheckRequest(request).code(),
            StatusCode::kInvalidArgument);  // one argument of two
  request.arguments = {x, F32({1, 2}, {2})};
  Status wrong_shape = executable->CheckRequest(request);
  EXPECT_EQ(wrong_shape.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_shape.message().find("f32[2]"), std::string::npos)
      << wrong_shape.ToString();
  request.arguments = {x, F32({1, 2, 3, 4}, {4}, /*on=*/1)};
  EXPECT_EQ(executable->CheckRequest(request).code(),
            StatusCode::kInvalidArgument);  // on another device
  auto deleted = F32({1, 2, 3, 4}, {4});
  deleted->Delete();
  request.arguments = {x, deleted};
  EXPECT_EQ(executable->Execute(request).status().code(),
            StatusCode::kInvalidArgument);
  request.arguments = {x, x};
  request.position = 3;  // the executable has one device
  EXPECT_EQ(executable->CheckRequest(request).code(),
            StatusCode::kInvalidArgument);
}

TEST_F(ExecutableTest, OneDeviceProgramRunsOnAnyNamedDevice) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(kAddMul));
  ExecuteRequest request;
  request.device = device(3);
  request.arguments = {F32({1, 1, 1, 1}, {4}, 3), F32({2, 2, 2, 2}, {4}, 3)};
  ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
  EXPECT_EQ(result.outputs[0]->device(), device(3));
  ASSERT_OK_AND_ASSIGN(auto sum, Read<float>(result.outputs[0]));
  EXPECT_EQ(sum, (std::vector<float>{3, 3, 3, 3}));
}

constexpr char kDonating[] = R"(
func.func @main(%x: tensor<4xf32> {tf.aliasing_output = 0 : i32}, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = stablehlo.add %x, %y : tensor<4xf32>
  return %a : tensor<4xf32>
})";

TEST_F(ExecutableTest, DonatedArgumentIsDeletedAndItsStorageReused) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(kDonating));
  EXPECT_EQ(executable->output_aliases(), std::vector<int>{0});
  auto x = F32({1, 2, 3, 4}, {4});
  ASSERT_OK_AND_ASSIGN(auto storage, x->AcquireStorage());
  const void* bytes = storage->data();
  storage.reset();
  ExecuteRequest request;
  request.position = 0;
  request.arguments = {x, F32({1, 1, 1, 1}, {4})};
  ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
  EXPECT_TRUE(x->IsDeleted());
  ASSERT_OK_AND_ASSIGN(auto out, result.outputs[0]->AcquireStorage());
  EXPECT_EQ(out->data(), bytes);
  ASSERT_OK_AND_ASSIGN(auto sum, Read<float>(result.outputs[0]));
  EXPECT_EQ(sum, (std::vector<float>{2, 3, 4, 5}));
}

TEST_F(ExecutableTest, NonDonatableAndExternallyReferencedArgumentsStay) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(kDonating));
  auto y = F32({1, 1, 1, 1}, {4});
  {
    auto x = F32({1, 2, 3, 4}, {4});
    ExecuteRequest request;
    request.position = 0;
    request.arguments = {x, y};
    request.non_donatable = {0};
    ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
    EXPECT_FALSE(x->IsDeleted());
    ASSERT_OK_AND_ASSIGN(auto kept, Read<float>(x));
    EXPECT_EQ(kept, (std::vector<float>{1, 2, 3, 4}));
    ASSERT_OK_AND_ASSIGN(auto sum, Read<float>(result.outputs[0]));
    EXPECT_EQ(sum, (std::vector<float>{2, 3, 4, 5}));
  }
  {
    auto x = F32({5, 6, 7, 8}, {4});
    ASSERT_OK(x->IncreaseExternalReferenceCount());
    ExecuteRequest request;
    request.position = 0;
    request.arguments = {x, y};
    ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
    EXPECT_FALSE(x->IsDeleted());
    ASSERT_OK_AND_ASSIGN(auto sum, Read<float>(result.outputs[0]));
    EXPECT_EQ(sum, (std::vector<float>{6, 7, 8, 9}));
    ASSERT_OK(x->DecreaseExternalReferenceCount());
  }
  {
    // Donated and passed again: refused (as XLA refuses it), untouched.
    auto x = F32({1, 2, 3, 4}, {4});
    ExecuteRequest request;
    request.position = 0;
    request.arguments = {x, x};
    StatusOr<ExecuteResult> refused = executable->Execute(request);
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_FALSE(x->IsDeleted());
    // Marked non-donatable, it is read twice.
    request.non_donatable = {0};
    ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
    EXPECT_FALSE(x->IsDeleted());
    ASSERT_OK_AND_ASSIGN(auto sum, Read<float>(result.outputs[0]));
    EXPECT_EQ(sum, (std::vector<float>{2, 4, 6, 8}));
  }
}

TEST_F(ExecutableTest, DonationWaitsForEarlierReaders) {
  // An earlier execution (queued behind a pending input) still reads x when
  // a second one donates it: the second must not write into x's bytes.
  ASSERT_OK_AND_ASSIGN(auto reader, Compile(R"(
func.func @main(%x: tensor<4xf32>, %gate: tensor<4xf32>) -> tensor<4xf32> {
  %a = stablehlo.add %x, %gate : tensor<4xf32>
  return %a : tensor<4xf32>
})"));
  ASSERT_OK_AND_ASSIGN(auto donor, Compile(kDonating));
  auto x = F32({1, 2, 3, 4}, {4});
  // A gate whose bytes are not final yet holds the first run back.
  ASSERT_OK_AND_ASSIGN(
      auto gate, Buffer::CreatePending(MakeShape(DType::kF32, {4}),
                                       device(0)->default_memory_space()));
  ExecuteRequest first;
  first.position = 0;
  first.arguments = {x, gate};
  ASSERT_OK_AND_ASSIGN(ExecuteResult early, reader->Execute(first));
  ExecuteRequest second;
  second.position = 0;
  second.arguments = {x, F32({100, 100, 100, 100}, {4})};
  ASSERT_OK_AND_ASSIGN(ExecuteResult late, donor->Execute(second));
  EXPECT_TRUE(x->IsDeleted());
  ASSERT_OK_AND_ASSIGN(auto late_sum, Read<float>(late.outputs[0]));
  EXPECT_EQ(late_sum, (std::vector<float>{101, 102, 103, 104}));
  // Now let the first run go: it still sees x's original values.
  ASSERT_OK_AND_ASSIGN(auto gate_storage, gate->AcquireStorage());
  std::vector<float> ones = {1, 1, 1, 1};
  std::memcpy(gate_storage->data(), ones.data(), 16);
  ASSERT_OK(gate->ready_event()->Set());
  ASSERT_OK_AND_ASSIGN(auto early_sum, Read<float>(early.outputs[0]));
  EXPECT_EQ(early_sum, (std::vector<float>{2, 3, 4, 5}));
}

TEST_F(ExecutableTest, ArgumentErrorsReachTheOutputs) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(kAddMul));
  auto failed = Buffer::CreateError(MakeShape(DType::kF32, {4}),
                                    device(0)->default_memory_space(),
                                    InternalError("the producer failed"));
  ExecuteRequest request;
  request.position = 0;
  request.arguments = {F32({1, 2, 3, 4}, {4}), failed};
  ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
  Status status = result.done->Await();
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(Read<float>(result.outputs[1]).status().code(),
            StatusCode::kInternal);
}

TEST_F(ExecutableTest,
       ScratchBeyondTheMemoryLimitFailsTheCallAndStartsNothing) {
  // The plan's scratch arena for a huge intermediate (the reduction keeps
  // its last dimension, so the broadcast is not fused into it as a row
  // reduction would fuse it: the intermediate exists) is more than the
  // client's memory limit (the machine's memory): the execute call fails,
  // naming the scratch, rather than a run failing later.
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(R"(
func.func @main(%x: tensor<f32>) -> tensor<64xf32> {
  %b = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<1048576x1048576x64xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%b init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<1048576x1048576x64xf32>, tensor<f32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
})"));
  ExecuteRequest request;
  request.position = 0;
  request.arguments = {F32({1}, {})};
  StatusOr<ExecuteResult> result = executable->Execute(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kResourceExhausted)
      << result.status().ToString();
  EXPECT_NE(result.status().message().find("scratch memory of main"),
            std::string_view::npos)
      << result.status().ToString();
}

TEST_F(ExecutableTest, RunTimeFailuresReachTheOutputs) {
  // A known custom call with operands it cannot take fails when the run
  // reaches it (as XLA decodes FFI arguments when the call runs): the run's
  // error reaches its event and its outputs.
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(R"(
func.func @main(%x: tensor<f32>) -> tensor<4xf32> {
  %r = stablehlo.custom_call @lapack_sgetrf_ffi(%x) : (tensor<f32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
})"));
  ExecuteRequest request;
  request.position = 0;
  request.arguments = {F32({1}, {})};
  ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
  Status status = result.done->Await();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("expects 1 operands and 3 results"),
            std::string_view::npos)
      << status.ToString();
  EXPECT_EQ(Read<float>(result.outputs[0]).status().code(), status.code());
}

TEST_F(ExecutableTest, ReplicasRunOnTheirDevicesWithTheirIds) {
  CompileSpec spec;
  spec.num_replicas = 4;
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(R"(
func.func @main(%x: tensor<2xui32>) -> tensor<2xui32> {
  %id = stablehlo.replica_id : tensor<ui32>
  %b = stablehlo.broadcast_in_dim %id, dims = [] : (tensor<ui32>) -> tensor<2xui32>
  %s = stablehlo.add %x, %b : tensor<2xui32>
  return %s : tensor<2xui32>
})",
                                                spec));
  ASSERT_EQ(executable->addressable_devices().size(), 4u);
  std::vector<ExecuteResult> results;
  for (int r = 0; r < 4; ++r) {
    std::vector<uint32_t> x = {10, 20};
    auto transfer = TransferFromHost(
        x.data(), MakeShape(DType::kU32, {2}), std::nullopt,
        HostBufferSemantics::kImmutableOnlyDuringCall,
        executable->addressable_devices()[r]->default_memory_space());
    ASSERT_OK(transfer.status());
    ExecuteRequest request;
    request.position = r;
    request.arguments = {transfer->buffer};
    ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
    results.push_back(std::move(result));
  }
  for (int r = 0; r < 4; ++r) {
    ASSERT_OK_AND_ASSIGN(auto out, Read<uint32_t>(results[r].outputs[0]));
    EXPECT_EQ(out, (std::vector<uint32_t>{10u + r, 20u + r})) << r;
    EXPECT_EQ(results[r].outputs[0]->device(),
              executable->addressable_devices()[r]);
  }
}

TEST_F(ExecutableTest, CollectivesAcrossDevicesRunAsLaunches) {
  CompileSpec spec;
  spec.num_replicas = 2;
  auto executable = Compile(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
})",
                            spec);
  ASSERT_OK(executable.status());
  // Its runs meet at the all_reduce (tests/runtime/collectives_test.cc).
  EXPECT_TRUE((*executable)->has_collectives());
  EXPECT_FALSE((*executable)->runs_inline());
}

TEST_F(ExecutableTest, AssignmentsAreChecked) {
  CompileSpec spec;
  spec.num_replicas = 2;
  spec.device_assignment = {1};
  EXPECT_EQ(Compile(kAddMul, spec).status().code(),
            StatusCode::kInvalidArgument);
  spec.device_assignment = {1, 1};
  EXPECT_EQ(Compile(kAddMul, spec).status().code(),
            StatusCode::kInvalidArgument);
  spec.device_assignment = {1, 9};
  EXPECT_EQ(Compile(kAddMul, spec).status().code(),
            StatusCode::kInvalidArgument);
  spec.device_assignment = {3, 1};
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(kAddMul, spec));
  EXPECT_EQ(executable->addressable_devices()[0], device(3));
  EXPECT_EQ(executable->addressable_devices()[1], device(1));
  CompileSpec portable;
  portable.portable = true;
  ASSERT_OK_AND_ASSIGN(auto anywhere, Compile(kAddMul, portable));
  EXPECT_TRUE(anywhere->addressable_devices().empty());
  portable.num_replicas = 2;
  EXPECT_EQ(Compile(kAddMul, portable).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(ExecutableTest, OutputsGoToTheMemoryTheProgramAsksFor) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(R"(
func.func @main(%x: tensor<2xf32> {mhlo.memory_kind = "pinned_host"}) -> (tensor<2xf32> {mhlo.memory_kind = "unpinned_host"}) {
  %a = stablehlo.add %x, %x : tensor<2xf32>
  return %a : tensor<2xf32>
})"));
  EXPECT_EQ(executable->parameters()[0].memory_kind, MemoryKind::kPinnedHost);
  EXPECT_EQ(executable->outputs()[0].memory_kind, MemoryKind::kUnpinnedHost);
  std::vector<float> x = {1.5f, 2.5f};
  auto transfer =
      TransferFromHost(x.data(), MakeShape(DType::kF32, {2}), std::nullopt,
                       HostBufferSemantics::kImmutableOnlyDuringCall,
                       device(0)->memory_space(MemoryKind::kPinnedHost));
  ASSERT_OK(transfer.status());
  ExecuteRequest request;
  request.position = 0;
  request.arguments = {transfer->buffer};
  ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
  EXPECT_EQ(result.outputs[0]->memory_space()->kind(),
            MemoryKind::kUnpinnedHost);
  ASSERT_OK_AND_ASSIGN(auto out, Read<float>(result.outputs[0]));
  EXPECT_EQ(out, (std::vector<float>{3, 5}));
}

TEST_F(ExecutableTest, ManyThreadsExecuteOnSeveralDevices) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(R"(
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = stablehlo.multiply %x, %x : tensor<1024xf32>
  %b = stablehlo.tanh %a : tensor<1024xf32>
  %c = stablehlo.add %b, %x : tensor<1024xf32>
  return %c : tensor<1024xf32>
})"));
  EXPECT_FALSE(executable->runs_inline());
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        float v = 0.01f * (t + i);
        ExecuteRequest request;
        request.device = device(t % 4);
        request.arguments = {F32(std::vector<float>(1024, v), {1024}, t % 4)};
        auto result = executable->Execute(request);
        if (!result.ok()) {
          ++failures[t];
          continue;
        }
        auto out = Read<float>(result->outputs[0]);
        if (!out.ok() ||
            std::abs((*out)[17] - (std::tanh(v * v) + v)) > 1e-6f) {
          ++failures[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[t], 0) << t;
}

}  // namespace
}  // namespace kiln::runtime
