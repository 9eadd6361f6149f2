// The plan as the runtime uses it: arguments and outputs, donation,
// dynamic shapes, buffer reuse, concurrent runs, cancellation and errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "compile/buffer_planner.h"
#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;

constexpr char kChain[] = R"(
func.func @main(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %a = stablehlo.add %x, %x : tensor<65536xf32>
  %b = stablehlo.multiply %a, %x : tensor<65536xf32>
  %c = stablehlo.subtract %b, %a : tensor<65536xf32>
  %d = stablehlo.add %c, %b : tensor<65536xf32>
  %e = stablehlo.multiply %d, %c : tensor<65536xf32>
  %f = stablehlo.add %e, %x : tensor<65536xf32>
  return %f : tensor<65536xf32>
})";

TEST(PlanTest, ReusesDeadBuffers) {
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(kChain));
  // Five intermediates of 256 KiB each, but at most three are live at once.
  EXPECT_LE(plan->arena_bytes(), 3 * 65536 * 4);
  std::vector<float> x(65536);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  ASSERT_OK_AND_ASSIGN(
      auto out, RunPlan(*plan, {HostArray::Of(ElementType::kF32, {65536}, x)}));
  std::vector<float> got = out[0].As<float>();
  for (size_t i = 0; i < x.size(); i += 977) {
    float a = x[i] + x[i], b = a * x[i], c = b - a, d = c + b, e = d * c;
    EXPECT_EQ(got[i], e + x[i]) << i;
  }
}

TEST(PlanTest, RunsConcurrentlyFromSeveralThreads) {
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(kChain));
  std::vector<std::thread> threads;
  std::vector<float> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> x(65536, static_cast<float>(t));
      auto out = RunPlan(*plan, {HostArray::Of(ElementType::kF32, {65536}, x)});
      results[t] = out.ok() ? (*out)[0].As<float>()[100] : -1.0f;
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) {
    float v = static_cast<float>(t), a = v + v, b = a * v, c = b - a, d = c + b;
    EXPECT_EQ(results[t], d * c + v) << t;
  }
}

TEST(PlanTest, DonationIsSafeWhenTheOutputReusesTheArgument) {
  // The output aliases argument 0, which is still read after the output's
  // value exists; the plan must finish those reads first.
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%x: tensor<4xi32> {tf.aliasing_output = 0 : i32}) -> (tensor<4xi32>, tensor<4xi32>) {
  %a = stablehlo.add %x, %x : tensor<4xi32>
  %b = stablehlo.multiply %a, %x : tensor<4xi32>
  return %a, %b : tensor<4xi32>, tensor<4xi32>
})"));
  ASSERT_EQ(plan->output_aliases().size(), 2u);
  EXPECT_EQ(plan->output_aliases()[0], 0);
  EXPECT_EQ(plan->output_aliases()[1], -1);
  // An allocator that hands the donated argument's memory to output 0.
  std::vector<int32_t> x = {1, 2, 3, 4};
  struct Donating : exec::OutputAllocator {
    void* donated;
    std::vector<int32_t> other = std::vector<int32_t>(4);
    StatusOr<void*> Allocate(int index, const exec::ValueSpec&) override {
      return index == 0 ? donated : static_cast<void*>(other.data());
    }
  } allocator;
  allocator.donated = x.data();
  std::vector<const void*> args = {x.data()};
  ASSERT_OK(exec::Execute(*plan, args, allocator).status());
  EXPECT_EQ(x, (std::vector<int32_t>{2, 4, 6, 8}));
  EXPECT_EQ(allocator.other, (std::vector<int32_t>{2, 8, 18, 32}));
}

// Hands output `index` the donated argument's memory, the others their
// own buffers.
struct DonatingAllocator : exec::OutputAllocator {
  int donated_output = 0;
  void* donated = nullptr;
  std::vector<std::vector<std::byte>> others;
  StatusOr<void*> Allocate(int index, const exec::ValueSpec& spec) override {
    if (index == donated_output) return donated;
    others.emplace_back(spec.shape.byte_size());
    return static_cast<void*>(others.back().data());
  }
};

int CountSteps(const exec::Plan& plan, const std::string& where_prefix) {
  int count = 0;
  for (const exec::Step& step : plan.main().steps) {
    count += step.where.rfind(where_prefix, 0) == 0;
  }
  return count;
}

TEST(PlanTest, DonatedOutputIsComputedInPlaceWhenItsStepReadsLast) {
  // An SGD update: the new weights are computed straight into the output
  // the donated weights may hand their memory to (no copy at the return),
  // reading each weight element just before writing its new value.
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%w: tensor<4x3xf32> {tf.aliasing_output = 0 : i32}, %x: tensor<2x4xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>) {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %g = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %lr = stablehlo.constant dense<0.5> : tensor<4x3xf32>
  %step = stablehlo.multiply %lr, %g : tensor<4x3xf32>
  %new = stablehlo.subtract %w, %step : tensor<4x3xf32>
  return %new, %y : tensor<4x3xf32>, tensor<2x3xf32>
})"));
  EXPECT_EQ(plan->output_aliases(), (std::vector<int>{0, -1}));
  EXPECT_EQ(CountSteps(*plan, "func.return"), 0) << "a copy at the return";
  std::vector<float> w(12), x(8);
  for (int i = 0; i < 12; ++i) w[i] = 0.25f * static_cast<float>(i - 5);
  for (int i = 0; i < 8; ++i) x[i] = 0.5f * static_cast<float>(3 - i);
  // Expected, computed here with the same f32 operations in the same order.
  float y[2][3] = {}, want[12];
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 4; ++k) y[r][c] += x[r * 4 + k] * w[k * 3 + c];
  for (int k = 0; k < 4; ++k) {
    for (int c = 0; c < 3; ++c) {
      float g = 0;
      for (int r = 0; r < 2; ++r) g += x[r * 4 + k] * y[r][c];
      want[k * 3 + c] = w[k * 3 + c] - 0.5f * g;
    }
  }
  DonatingAllocator allocator;
  allocator.donated = w.data();
  std::vector<const void*> args = {w.data(), x.data()};
  ASSERT_OK(exec::Execute(*plan, args, allocator).status());
  for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(w[i], want[i]) << i;
}

TEST(PlanTest, DonatedArgumentIsScatteredIntoInPlace) {
  // `w.at[i].add(u)` of a donated w: the scatter writes into the output
  // the argument hands its memory to, with no copy of w at the return; the
  // gather before it reads w first.
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%w: tensor<6xf32> {tf.aliasing_output = 0 : i32}, %i: tensor<2x1xi32>) -> (tensor<6xf32>, tensor<2xf32>) {
  %g = "stablehlo.gather"(%w, %i) <{dimension_numbers = #stablehlo.gather<
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
      slice_sizes = array<i64: 1>}> : (tensor<6xf32>, tensor<2x1xi32>) -> tensor<2xf32>
  %u = stablehlo.multiply %g, %g : tensor<2xf32>
  %new = "stablehlo.scatter"(%w, %i, %u) <{scatter_dimension_numbers =
      #stablehlo.scatter<inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<6xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<6xf32>
  return %new, %g : tensor<6xf32>, tensor<2xf32>
})"));
  EXPECT_EQ(plan->output_aliases(), (std::vector<int>{0, -1}));
  EXPECT_EQ(CountSteps(*plan, "func.return"), 0) << "a copy at the return";
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  std::vector<int32_t> i = {4, 1};
  DonatingAllocator allocator;
  allocator.donated = w.data();
  std::vector<const void*> args = {w.data(), i.data()};
  ASSERT_OK(exec::Execute(*plan, args, allocator).status());
  EXPECT_EQ(w, (std::vector<float>{1, 2 + 4, 3, 4, 5 + 25, 6}));
  std::vector<float> gathered(2);
  std::memcpy(gathered.data(), allocator.others[0].data(), 8);
  EXPECT_EQ(gathered, (std::vector<float>{5, 2}));
}

TEST(PlanTest, AnUpdateOfScratchThatDiesThereTakesItsMemory) {
  // %b dies at the dynamic_update_slice that makes %c: %c takes %b's
  // memory (the arena holds one 64 KiB array, not two), while %d, which
  // reads %c after %e updates it, keeps its own.
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%x: tensor<16384xf32>, %u: tensor<4xf32>, %k: tensor<i32>) -> (tensor<16384xf32>, tensor<16384xf32>) {
  %b = stablehlo.multiply %x, %x : tensor<16384xf32>
  %c = stablehlo.dynamic_update_slice %b, %u, %k : (tensor<16384xf32>, tensor<4xf32>, tensor<i32>) -> tensor<16384xf32>
  %e = stablehlo.dynamic_update_slice %c, %u, %k : (tensor<16384xf32>, tensor<4xf32>, tensor<i32>) -> tensor<16384xf32>
  %d = stablehlo.add %c, %x : tensor<16384xf32>
  return %e, %d : tensor<16384xf32>, tensor<16384xf32>
})"));
  std::vector<float> x(16384), u = {-1, -2, -3, -4};
  for (int k = 0; k < 16384; ++k) x[k] = 0.5f * static_cast<float>(k % 7);
  int32_t at = 16382;  // clamped to 16380
  ASSERT_OK_AND_ASSIGN(
      auto out, RunPlan(*plan, {HostArray::Of(ElementType::kF32, {16384}, x),
                                HostArray::Of(ElementType::kF32, {4}, u),
                                HostArray::Of(ElementType::kI32, {},
                                              std::vector<int32_t>{at})}));
  std::vector<float> c(16384), d(16384);
  for (int k = 0; k < 16384; ++k) c[k] = x[k] * x[k];
  for (int k = 0; k < 4; ++k) c[16380 + k] = u[k];
  for (int k = 0; k < 16384; ++k) d[k] = c[k] + x[k];
  EXPECT_EQ(out[0].As<float>(), c);
  EXPECT_EQ(out[1].As<float>(), d);
  // %c is read after %e is made, so %e cannot take %c's memory: the arena
  // holds %c; %b shares it.
  EXPECT_EQ(plan->arena_bytes(), 16384 * 4);
}

TEST(PlanTest, DonatedOutputIsCopiedWhenTheArgumentIsReadAsAWhole) {
  // %new reads %w transposed (a view over the whole argument, which may be
  // fused with the write) and %w is returned too: both must see the
  // argument as it came, so the output is written by a copy at the end.
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%w: tensor<3x3xf32> {tf.aliasing_output = 0 : i32}) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %new = stablehlo.add %t, %w : tensor<3x3xf32>
  %same = stablehlo.transpose %t, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %new, %same : tensor<3x3xf32>, tensor<3x3xf32>
})"));
  std::vector<float> w = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<float> original = w;
  DonatingAllocator allocator;
  allocator.donated = w.data();
  std::vector<const void*> args = {w.data()};
  ASSERT_OK(exec::Execute(*plan, args, allocator).status());
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(w[r * 3 + c], original[c * 3 + r] + original[r * 3 + c]);
    }
  }
  std::vector<float> same(9);
  std::memcpy(same.data(), allocator.others[0].data(), 36);
  EXPECT_EQ(same, original);
}

TEST(PlanTest, ModuleLevelInputOutputAliasDonates) {
  // XLA's importers write donation on the module, not on the argument:
  // output 1 may reuse argument 1, and nothing is said about argument 0.
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
module attributes {mhlo.input_output_alias = [{alias = {kind = "may_alias", parameter_index = array<i64>, parameter_number = 1 : i64}, output_index = array<i64: 1>}]} {
  func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %a = stablehlo.add %x, %y : tensor<4xf32>
    %b = stablehlo.multiply %x, %y : tensor<4xf32>
    return %a, %b : tensor<4xf32>, tensor<4xf32>
  }
})"));
  EXPECT_EQ(plan->output_aliases(), (std::vector<int>{-1, 1}));
}

TEST(PlanTest, DynamicShapesRefineFromArgumentTypesAndDimensionValues) {
  std::string text = R"(
func.func @main(%n: tensor<i64>, %x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %0 = stablehlo.convert %n : (tensor<i64>) -> tensor<i32>
  %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %2 = stablehlo.constant dense<2> : tensor<1xi32>
  %3 = stablehlo.concatenate %1, %2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %4 = stablehlo.dynamic_iota %3, dim = 0 : (tensor<2xi32>) -> tensor<?x2xf32>
  %5 = stablehlo.add %x, %4 : tensor<?x2xf32>
  return %5 : tensor<?x2xf32>
})";
  // Without concrete shapes the program cannot be compiled.
  EXPECT_FALSE(CompileText(text).ok());
  compile::CompileOptions options;
  options.argument_types = {ir::TensorOf({}, ElementType::kI64),
                            ir::TensorOf({3, 2}, ElementType::kF32)};
  int64_t three = 3;
  options.argument_values[0] =
      std::string(reinterpret_cast<const char*>(&three), 8);
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(text, options));
  ASSERT_EQ(plan->outputs()[0].shape.dims, (std::vector<int64_t>{3, 2}));
  ASSERT_OK_AND_ASSIGN(
      auto out,
      RunPlan(*plan,
              {HostArray::Of(ElementType::kI64, {}, std::vector<int64_t>{3}),
               HostArray::Of(ElementType::kF32, {3, 2},
                             std::vector<float>{1, 1, 1, 1, 1, 1})}));
  EXPECT_EQ(out[0].As<float>(), (std::vector<float>{1, 1, 2, 2, 3, 3}));
}

TEST(PlanTest, AnInfiniteLoopCanBeCancelled) {
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main() -> tensor<i64> {
  %i0 = stablehlo.constant dense<0> : tensor<i64>
  %r = stablehlo.while(%i = %i0) : tensor<i64>
  cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i64>
    %n = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %n : tensor<i64>
  }
  return %r : tensor<i64>
})"));
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel = true;
  });
  auto out = RunPlan(*plan, {}, &cancel);
  canceller.join();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled);
}

TEST(PlanTest, UnknownCustomCallTargetFailsCompilation) {
  auto plan = CompileText(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = stablehlo.custom_call @my_kernel(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
})");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find(
                "custom_call target \"my_kernel\" is not supported by Kiln"),
            std::string::npos)
      << plan.status().ToString();
}

// A declaration (a function without a body, valid MLIR) is never run:
// calling one is an error naming it (the compile fuzzer's find: lowering
// took the body of a body-less function), and a declared @main is no
// entry function.
TEST(PlanTest, DeclarationsAreNamedNotRun) {
  auto called = CompileText(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = call @external(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func private @external(%x: tensor<2xf32>) -> tensor<2xf32>
)");
  ASSERT_FALSE(called.ok());
  EXPECT_EQ(called.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(called.status().message().find(
                "@external is a declaration without a body"),
            std::string::npos)
      << called.status().ToString();
  auto declared = CompileText(R"(
func.func private @main(%x: tensor<2xf32>) -> tensor<2xf32>
)");
  ASSERT_FALSE(declared.ok());
  EXPECT_NE(declared.status().message().find("no entry function"),
            std::string::npos)
      << declared.status().ToString();
}

// A window attribute with the wrong number of entries is named in the
// error (the corpus's conv_general_dilated_1d_stride_2_odd_dynamic has two
// strides for one spatial dimension; the verifier lets dynamic_conv pass).
TEST(PlanTest, ConvolutionWindowOfTheWrongSizeIsNamed) {
  auto plan = CompileText(R"(
func.func @main(%x: tensor<1x8x16xf32>, %k: tensor<4x16x16xf32>) -> tensor<1x4x16xf32> {
  %p = stablehlo.constant dense<[[1, 1]]> : tensor<1x2xi32>
  %y = "stablehlo.dynamic_conv"(%x, %k, %p) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, window_strides = array<i64: 2, 2>} : (tensor<1x8x16xf32>, tensor<4x16x16xf32>, tensor<1x2xi32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
})");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find(
                "window_strides has 2 values for 1 spatial dimension"),
            std::string::npos)
      << plan.status().ToString();
}

TEST(PlanTest, ShardingAnnotationsAreIdentities) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> tensor<2xf32> {
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{replicated}"} : (tensor<2xf32>) -> tensor<2xf32>
  %z = stablehlo.custom_call @SPMDFullToShardShape(%y) : (tensor<2xf32>) -> tensor<2xf32>
  return %z : tensor<2xf32>
})"));
  EXPECT_EQ(out[0].As<float>(), (std::vector<float>{1, 2}));
}

TEST(PlanTest, AShapeTooLargeForMemoryIsAnError) {
  auto out = RunText(R"(
func.func @main() -> tensor<4000000000000xf32> {
  %x = stablehlo.iota dim = 0 : tensor<4000000000000xf32>
  return %x : tensor<4000000000000xf32>
})");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted)
      << out.status().ToString();
  // Refused by size, before the allocator: under ASan, whose allocator
  // aborts on a 16 TB request, this test once died instead of failing.
  EXPECT_NE(out.status().message().find("more than this machine's memory"),
            std::string_view::npos)
      << out.status().ToString();
}

TEST(PlanTest, WrongArgumentCountIsAnError) {
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(kChain));
  auto out = RunPlan(*plan, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
}

TEST(BufferPlannerTest, OverlappingLifetimesGetDisjointBytes) {
  std::vector<compile::BufferRequest> requests = {
      {100, 0, 2}, {50, 1, 3}, {100, 3, 4}, {200, 5, 6}, {10, 2, 2}};
  compile::BufferPlan plan = compile::PlanBuffers(requests, 64);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % 64, 0);
    EXPECT_LE(plan.offsets[i] + requests[i].bytes, plan.total_bytes);
    for (size_t j = i + 1; j < requests.size(); ++j) {
      bool live_together = requests[i].first <= requests[j].last &&
                           requests[j].first <= requests[i].last;
      bool bytes_overlap =
          plan.offsets[i] < plan.offsets[j] + requests[j].bytes &&
          plan.offsets[j] < plan.offsets[i] + requests[i].bytes;
      EXPECT_FALSE(live_together && bytes_overlap) << i << " and " << j;
    }
  }
  // Request 3 (200 bytes, steps 5-6) outlives everything else and reuses
  // their space: the arena is smaller than the sum of the requests.
  EXPECT_LT(plan.total_bytes, 100 + 64 + 128 + 256 + 64);
}

TEST(BufferPlannerTest, ARequestTakesOverTheBlockOfOneThatDiesAtItsStep) {
  // 1 takes over 0 at step 2 (where 0 is read last), and 3 takes over 1
  // in turn; 2, live beside them, keeps bytes of its own; 4 asks for the
  // block of a request of another size and gets bytes of its own; 5 asks
  // for a block already taken over.
  std::vector<compile::BufferRequest> requests = {
      {100, 0, 2},   {100, 2, 4, 0}, {100, 1, 5},
      {90, 4, 6, 1}, {50, 5, 6, 2},  {100, 3, 3, 0}};
  compile::BufferPlan plan = compile::PlanBuffers(requests, 64);
  EXPECT_EQ(plan.offsets[1], plan.offsets[0]);
  EXPECT_EQ(plan.offsets[3], plan.offsets[0]);
  auto overlap = [&](size_t i, size_t j) {
    return plan.offsets[i] < plan.offsets[j] + requests[j].bytes &&
           plan.offsets[j] < plan.offsets[i] + requests[i].bytes;
  };
  EXPECT_FALSE(overlap(2, 0));
  EXPECT_FALSE(overlap(4, 2));
  EXPECT_FALSE(overlap(4, 3));
  EXPECT_FALSE(overlap(5, 1));
  EXPECT_FALSE(overlap(5, 2));
  // 0, 1 and 3 in one block, 2, 4 and 5 in others. At step 3 the chain's
  // block, 2 and 5 are live: 3 blocks of 128 (at step 5, 128 + 128 + 64).
  EXPECT_LE(plan.total_bytes, 4 * 128);
  EXPECT_EQ(plan.live_peak_bytes, 3 * 128);
}

}  // namespace
}  // namespace kiln::testing
