// Loop fusion (compile/fuse_elementwise.cc, exec/fusion.h): fused plans
// give the bits the unfused plan gives (the same kernels, one op at a
// time over whole arrays), on sizes that cross tiles and thread shares;
// values no one else reads take no memory; views that read a value of the
// run end the run; and a large splat constant is never expanded.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "base/strings.h"
#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;

compile::CompileOptions Unfused() {
  compile::CompileOptions options;
  options.fuse_elementwise = false;
  return options;
}

std::vector<float> RandomFloats(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> values(count);
  for (float& v : values) v = normal(rng);
  return values;
}

// Compiles `text` fused and unfused, runs both on `inputs`, and expects
// the same bytes in every output; returns the fused plan.
std::unique_ptr<exec::Plan> ExpectFusedMatchesUnfused(
    const std::string& text, const std::vector<HostArray>& inputs) {
  auto fused = CompileText(text);
  auto unfused = CompileText(text, Unfused());
  EXPECT_TRUE(fused.ok()) << fused.status().ToString();
  EXPECT_TRUE(unfused.ok()) << unfused.status().ToString();
  if (!fused.ok() || !unfused.ok()) return nullptr;
  auto got = RunPlan(**fused, inputs);
  auto want = RunPlan(**unfused, inputs);
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(want.ok()) << want.status().ToString();
  if (!got.ok() || !want.ok()) return nullptr;
  EXPECT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size() && i < want->size(); ++i) {
    EXPECT_TRUE((*got)[i].bytes == (*want)[i].bytes) << "output " << i;
  }
  return std::move(fused).value();
}

// 3 tiles and a bit per thread share on two cores, and not a multiple of
// any vector width.
constexpr int64_t kOdd = 3 * 1024 * 37 + 13;

TEST(FusionTest, ElementwiseChainMatchesUnfusedAndAnIndependentLoop) {
  std::string n = std::to_string(kOdd);
  std::string t = "tensor<" + n + "xf32>";
  std::string text = R"(
func.func @main(%x: )" +
                     t + R"(, %y: )" + t + R"() -> ()" + t + ", " + t +
                     R"() {
  %c = stablehlo.constant dense<1.5> : tensor<f32>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> )" +
                     t +
                     R"(
  %a = stablehlo.multiply %x, %cb : )" +
                     t + R"(
  %b = stablehlo.add %a, %y : )" +
                     t + R"(
  %e = stablehlo.exponential %b : )" +
                     t + R"(
  %l = stablehlo.log_plus_one %e : )" +
                     t + R"(
  %th = stablehlo.tanh %l : )" +
                     t + R"(
  %cmp = stablehlo.compare GT, %th, %a : ()" +
                     t + ", " + t + R"() -> tensor<)" + n + R"(xi1>
  %s = stablehlo.select %cmp, %th, %b : tensor<)" +
                     n + R"(xi1>, )" + t + R"(
  return %s, %b : )" +
                     t + ", " + t + R"(
})";
  std::vector<float> x = RandomFloats(kOdd, 1), y = RandomFloats(kOdd, 2);
  std::vector<HostArray> inputs = {HostArray::Of(ElementType::kF32, {kOdd}, x),
                                   HostArray::Of(ElementType::kF32, {kOdd}, y)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  // One fused step; %b is returned, so it is written, the rest are not.
  EXPECT_EQ(plan->main().steps.size(), 1u);
  EXPECT_EQ(plan->arena_bytes(), 0);
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<float> s = out[0].As<float>(), b = out[1].As<float>();
  for (int64_t i = 0; i < kOdd; i += 101) {
    double a = x[i] * 1.5f;
    double bb = static_cast<float>(a) + y[i];
    double th = std::tanh(std::log1p(std::exp(bb)));
    double want = th > a ? th : bb;
    EXPECT_FLOAT_EQ(b[i], static_cast<float>(bb)) << i;
    EXPECT_NEAR(s[i], want, 1e-5 * (1 + std::fabs(want))) << i;
  }
}

// Broadcast scalars inside a run are read as one element
// (ElementwiseKernel::WithScalarInput) on either side of a binary op, a
// compare and a select's values, in f32 and f64; one broadcast is also
// read element by element (by negate, which has no scalar form), so its
// tile is filled in full.
TEST(FusionTest, BroadcastScalarsAreReadAsScalars) {
  for (const char* type : {"f32", "f64"}) {
    std::string n = std::to_string(kOdd);
    std::string t = "tensor<" + n + "x" + type + ">";
    std::string s = std::string("tensor<") + type + ">";
    std::string b = "tensor<" + n + "xi1>";
    auto broadcast = [&](const std::string& name, const std::string& value) {
      return "  %" + name + "0 = stablehlo.constant dense<" + value +
             "> : " + s + "\n  %" + name + " = stablehlo.broadcast_in_dim %" +
             name + "0, dims = [] : (" + s + ") -> " + t + "\n";
    };
    std::string text = "func.func @main(%x: " + t + ") -> " + t + " {\n" +
                       broadcast("two", "2.0") + broadcast("half", "0.5") +
                       broadcast("zero", "0.0") + R"(
  %a = stablehlo.subtract %two, %x : )" +
                       t + R"(
  %d = stablehlo.divide %a, %half : )" +
                       t + R"(
  %q = stablehlo.divide %two, %d : )" +
                       t + R"(
  %lt = stablehlo.compare LT, %q, %zero : ()" +
                       t + ", " + t + ") -> " + b + R"(
  %gt = stablehlo.compare GT, %half, %x : ()" +
                       t + ", " + t + ") -> " + b + R"(
  %s1 = stablehlo.select %lt, %zero, %q : )" +
                       b + ", " + t + R"(
  %s2 = stablehlo.select %gt, %s1, %two : )" +
                       b + ", " + t + R"(
  %m = stablehlo.negate %half : )" +
                       t + R"(
  %r = stablehlo.add %s2, %m : )" +
                       t + R"(
  return %r : )" + t + R"(
})";
    std::vector<float> x = RandomFloats(kOdd, 11);
    HostArray input = HostArray::Of(ElementType::kF32, {kOdd}, x);
    std::vector<double> x64(x.begin(), x.end());
    if (std::string(type) == "f64") {
      input = HostArray::Of(ElementType::kF64, {kOdd}, x64);
    }
    auto plan = ExpectFusedMatchesUnfused(text, {input});
    ASSERT_NE(plan, nullptr) << type;
    EXPECT_EQ(plan->main().steps.size(), 1u) << type;
    ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, {input}));
    for (int64_t i = 0; i < kOdd; i += 97) {
      // In double for both types: every step below is exact in f32 too
      // except the divisions, which the tolerance covers.
      double q = 2.0 / ((2.0 - x64[i]) / 0.5);
      double s1 = q < 0 ? 0.0 : q;
      double want = (0.5 > x64[i] ? s1 : 2.0) - 0.5;
      double got = std::string(type) == "f64" ? out[0].As<double>()[i]
                                              : out[0].As<float>()[i];
      EXPECT_NEAR(got, want, 1e-6 * (1 + std::fabs(want))) << type << " " << i;
    }
  }
}

// Runs of f32 add, subtract, multiply and divide, each reading the one
// before, become arithmetic chains (exec/kernels/arithmetic_chain.h) with
// the unfused bits: a Horner polynomial as JAX writes erf's (scalar
// coefficients, the argument as an array), r on either side of subtract
// and divide, r times r, and a value read after the chain, which ends the
// chain there and is written.
TEST(FusionTest, ArithmeticChainsGiveTheUnfusedBits) {
  std::string n = std::to_string(kOdd);
  std::string t = "tensor<" + n + "xf32>";
  auto splat = [&](const std::string& name, const std::string& value) {
    return "  %" + name + " = stablehlo.constant dense<" + value + "> : " + t +
           "\n";
  };
  std::string text = "func.func @main(%x: " + t + ", %y: " + t + ") -> (" + t +
                     ", " + t + ") {\n" + splat("c0", "7.8538615e-05") +
                     splat("c1", "-8.0101937e-04") +
                     splat("c2", "5.1883277e-03") +
                     splat("c3", "-2.6853813e-02") + splat("one", "1.0") + R"(
  %x2 = stablehlo.multiply %x, %x : )" +
                     t + R"(
  %p0 = stablehlo.multiply %c0, %x2 : )" +
                     t + R"(
  %p1 = stablehlo.add %p0, %c1 : )" +
                     t + R"(
  %p2 = stablehlo.multiply %p1, %x2 : )" +
                     t + R"(
  %p3 = stablehlo.add %p2, %c2 : )" +
                     t + R"(
  %p4 = stablehlo.multiply %p3, %x2 : )" +
                     t + R"(
  %p5 = stablehlo.add %p4, %c3 : )" +
                     t + R"(
  %q0 = stablehlo.subtract %one, %p5 : )" +
                     t + R"(
  %q1 = stablehlo.divide %y, %q0 : )" +
                     t + R"(
  %q2 = stablehlo.multiply %q1, %q1 : )" +
                     t + R"(
  %q3 = stablehlo.divide %q2, %x : )" +
                     t + R"(
  %q4 = stablehlo.subtract %q3, %y : )" +
                     t + R"(
  %r0 = stablehlo.add %q4, %x : )" +
                     t + R"(
  %r1 = stablehlo.multiply %r0, %c2 : )" +
                     t + R"(
  %r2 = stablehlo.subtract %r1, %q4 : )" +
                     t + R"(
  return %r2, %p3 : )" +
                     t + ", " + t + R"(
})";
  std::vector<float> x = RandomFloats(kOdd, 13), y = RandomFloats(kOdd, 14);
  std::vector<HostArray> inputs = {HostArray::Of(ElementType::kF32, {kOdd}, x),
                                   HostArray::Of(ElementType::kF32, {kOdd}, y)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->main().steps.size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<float> got = out[0].As<float>(), p3 = out[1].As<float>();
  for (int64_t i = 0; i < kOdd; i += 89) {
    // The same operations one at a time in float, as the spec defines them.
    float x2 = x[i] * x[i];
    float p = 7.8538615e-05f * x2;
    p = p + -8.0101937e-04f;
    p = p * x2;
    p = p + 5.1883277e-03f;
    EXPECT_EQ(p3[i], p) << i;
    p = p * x2;
    p = p + -2.6853813e-02f;
    float q = 1.0f - p;
    q = y[i] / q;
    q = q * q;
    q = q / x[i];
    q = q - y[i];
    float r = q + x[i];
    r = r * 5.1883277e-03f;
    r = r - q;
    EXPECT_EQ(got[i], r) << i;
  }
}

// A bias broadcast along rows, a transpose of an argument and a round trip
// through bf16, read element by element by the chain: `rows` x `columns`.
std::string BiasTransposeConvertChain(int rows, int columns) {
  std::string text = R"(
func.func @main(%x: tensor<300x257xf32>, %bias: tensor<257xf32>,
                %w: tensor<257x300xf32>) -> tensor<300x257xf32> {
  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<257xf32>) -> tensor<300x257xf32>
  %wt = stablehlo.transpose %w, dims = [1, 0] : (tensor<257x300xf32>) -> tensor<300x257xf32>
  %a = stablehlo.add %x, %bb : tensor<300x257xf32>
  %h = stablehlo.convert %a : (tensor<300x257xf32>) -> tensor<300x257xbf16>
  %f = stablehlo.convert %h : (tensor<300x257xbf16>) -> tensor<300x257xf32>
  %m = stablehlo.multiply %f, %wt : tensor<300x257xf32>
  %i = stablehlo.iota dim = 0 : tensor<300x257xf32>
  %r = stablehlo.add %m, %i : tensor<300x257xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<4.0> : tensor<f32>
  %c = stablehlo.clamp %z, %r, %one : (tensor<f32>, tensor<300x257xf32>, tensor<f32>) -> tensor<300x257xf32>
  return %c : tensor<300x257xf32>
})";
  for (auto [from, to] : {std::pair<std::string, int>{"300x257", 0},
                          {"257x300", 1},
                          {"257", 2}}) {
    std::string shape = to == 0   ? StrCat(rows, "x", columns)
                        : to == 1 ? StrCat(columns, "x", rows)
                                  : StrCat(columns);
    for (size_t at = text.find("<" + from + "x"); at != std::string::npos;
         at = text.find("<" + from + "x", at + 1)) {
      text.replace(at + 1, from.size(), shape);
    }
  }
  return text;
}

std::unique_ptr<exec::Plan> FuseBiasTransposeConvertChain(int rows,
                                                          int columns) {
  std::vector<float> x = RandomFloats(rows * columns, 3);
  std::vector<float> bias = RandomFloats(columns, 4);
  std::vector<float> w = RandomFloats(columns * rows, 5);
  return ExpectFusedMatchesUnfused(
      BiasTransposeConvertChain(rows, columns),
      {HostArray::Of(ElementType::kF32, {rows, columns}, x),
       HostArray::Of(ElementType::kF32, {columns}, bias),
       HostArray::Of(ElementType::kF32, {columns, rows}, w)});
}

TEST(FusionTest, BroadcastTransposeAndConvertJoinTheRun) {
  // 60 x 129 f32: the transpose's source fits a core's first-level cache.
  auto plan = FuseBiasTransposeConvertChain(60, 129);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->main().steps.size(), 1u);
}

TEST(FusionTest, ALargeTransposeRunsAloneBeforeTheRun) {
  // 300 x 257 f32: the transpose copies its squares whole on its own
  // (exec::ElementwiseKernel::runs_well_in_tiles); the rest is one run.
  auto plan = FuseBiasTransposeConvertChain(300, 257);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->main().steps.size(), 2u);
}

TEST(FusionTest, PerChannelStepsBetweenARunRunBeforeIt) {
  // Batch norm as JAX writes it: the per-channel multiplier (64 elements)
  // is computed between the subtraction of the mean and the
  // multiplication, both over the whole activation. The small steps run
  // first and the activation is read and written once, in one fused step.
  std::string text = R"(
func.func @main(%x: tensor<4x9x9x64xf32>, %mean: tensor<64xf32>,
                %var: tensor<64xf32>, %scale: tensor<64xf32>,
                %shift: tensor<64xf32>) -> (tensor<4x9x9x64xf32>, tensor<64xf32>) {
  %mb = stablehlo.broadcast_in_dim %mean, dims = [3] : (tensor<64xf32>) -> tensor<4x9x9x64xf32>
  %d = stablehlo.subtract %x, %mb : tensor<4x9x9x64xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<64xf32>
  %ve = stablehlo.add %var, %eps : tensor<64xf32>
  %r = stablehlo.rsqrt %ve : tensor<64xf32>
  %k = stablehlo.multiply %scale, %r : tensor<64xf32>
  %kb = stablehlo.broadcast_in_dim %k, dims = [3] : (tensor<64xf32>) -> tensor<4x9x9x64xf32>
  %p = stablehlo.multiply %d, %kb : tensor<4x9x9x64xf32>
  %sb = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<64xf32>) -> tensor<4x9x9x64xf32>
  %y = stablehlo.add %p, %sb : tensor<4x9x9x64xf32>
  %z = stablehlo.constant dense<0.0> : tensor<4x9x9x64xf32>
  %relu = stablehlo.maximum %y, %z : tensor<4x9x9x64xf32>
  return %relu, %k : tensor<4x9x9x64xf32>, tensor<64xf32>
})";
  std::vector<float> x = RandomFloats(4 * 9 * 9 * 64, 21);
  std::vector<float> mean = RandomFloats(64, 22), scale = RandomFloats(64, 23),
                     shift = RandomFloats(64, 24), var = RandomFloats(64, 25);
  for (float& v : var) v = std::fabs(v) + 0.5f;
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {4, 9, 9, 64}, x),
      HostArray::Of(ElementType::kF32, {64}, mean),
      HostArray::Of(ElementType::kF32, {64}, var),
      HostArray::Of(ElementType::kF32, {64}, scale),
      HostArray::Of(ElementType::kF32, {64}, shift)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  int over_activation = 0;
  std::string steps;
  for (const exec::Step& step : plan->main().steps) {
    steps += step.where + "\n";
    if (step.where.find("stablehlo.subtract") != std::string::npos) {
      ++over_activation;
      EXPECT_NE(step.where.find("stablehlo.maximum"), std::string::npos)
          << steps;
    }
  }
  EXPECT_EQ(over_activation, 1) << steps;
  // Against a loop written here (rsqrt as 1 / sqrt: within a few ulp).
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<float> got = out[0].As<float>();
  for (size_t i = 0; i < x.size(); i += 11) {
    size_t c = i % 64;
    float k = scale[c] / std::sqrt(var[c] + 1.0e-5f);
    float want = std::max((x[i] - mean[c]) * k + shift[c], 0.0f);
    EXPECT_NEAR(got[i], want, 1e-5f * (1.0f + std::fabs(want))) << i;
  }
}

TEST(FusionTest, AViewOfAValueOfTheRunEndsTheRun) {
  // The transpose reads %a whole, so %a must be complete first: the run
  // ends before it, and %a is written to memory. (64 x 64, small enough
  // for the transpose to join the next run.)
  std::string text = R"(
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = stablehlo.add %x, %x : tensor<64x64xf32>
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = stablehlo.multiply %t, %x : tensor<64x64xf32>
  return %b : tensor<64x64xf32>
})";
  std::vector<float> x = RandomFloats(64 * 64, 6);
  auto plan = ExpectFusedMatchesUnfused(
      text, {HostArray::Of(ElementType::kF32, {64, 64}, x)});
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->main().steps.size(), 2u);
  ASSERT_OK_AND_ASSIGN(
      auto out,
      RunPlan(*plan, {HostArray::Of(ElementType::kF32, {64, 64}, x)}));
  std::vector<float> b = out[0].As<float>();
  for (int i = 0; i < 64; i += 7) {
    for (int j = 0; j < 64; j += 5) {
      EXPECT_EQ(b[i * 64 + j], (x[j * 64 + i] + x[j * 64 + i]) * x[i * 64 + j]);
    }
  }
}

TEST(FusionTest, LoopBodiesAreFused) {
  std::string text = R"(
func.func @main(%x: tensor<5000xf32>) -> tensor<5000xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<5000xf32>
    cond {
      %n = stablehlo.constant dense<4> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %h = stablehlo.constant dense<0.5> : tensor<5000xf32>
      %m = stablehlo.multiply %v, %h : tensor<5000xf32>
      %s = stablehlo.sine %m : tensor<5000xf32>
      %a = stablehlo.add %s, %v : tensor<5000xf32>
      stablehlo.return %next, %a : tensor<i32>, tensor<5000xf32>
    }
  return %r#1 : tensor<5000xf32>
})";
  std::vector<float> x = RandomFloats(5000, 7);
  auto plan = ExpectFusedMatchesUnfused(
      text, {HostArray::Of(ElementType::kF32, {5000}, x)});
  ASSERT_NE(plan, nullptr);
  ASSERT_OK_AND_ASSIGN(
      auto out, RunPlan(*plan, {HostArray::Of(ElementType::kF32, {5000}, x)}));
  std::vector<float> got = out[0].As<float>();
  for (int i = 0; i < 5000; i += 97) {
    float v = x[i];
    for (int k = 0; k < 4; ++k) {
      v = static_cast<float>(std::sin(static_cast<double>(v * 0.5f))) + v;
    }
    EXPECT_EQ(got[i], v) << i;
  }
}

// JAX's portable artifacts define every splat constant of a function at
// its top, far from their readers. A reader that is elementwise reads the
// scalar itself, so the broadcast is dropped and never takes memory: the
// arena holds the reduction's 128 floats, not the 512 KiB constant.
TEST(FusionTest, ABroadcastScalarDefinedFarFromItsReadersIsNeverWritten) {
  std::string text = R"(
func.func @main(%x: tensor<128x1024xf32>) -> tensor<128x1024xf32> {
  %c = stablehlo.constant dense<1.5> : tensor<128x1024xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<128x1024xf32>, tensor<f32>) -> tensor<128xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<128xf32>) -> tensor<128x1024xf32>
  %m = stablehlo.multiply %x, %c : tensor<128x1024xf32>
  %s = stablehlo.subtract %c, %rb : tensor<128x1024xf32>
  %y = stablehlo.add %m, %s : tensor<128x1024xf32>
  return %y : tensor<128x1024xf32>
})";
  std::vector<float> x = RandomFloats(128 * 1024, 12);
  HostArray input = HostArray::Of(ElementType::kF32, {128, 1024}, x);
  auto plan = ExpectFusedMatchesUnfused(text, {input});
  ASSERT_NE(plan, nullptr);
  EXPECT_LE(plan->arena_bytes(), 4096);
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, {input}));
  std::vector<float> got = out[0].As<float>();
  for (int row = 0; row < 128; row += 7) {
    double sum = 0;
    for (int k = 0; k < 1024; ++k) sum += x[row * 1024 + k];
    for (int k = 0; k < 1024; k += 101) {
      double want = x[row * 1024 + k] * 1.5 + (1.5 - sum);
      EXPECT_NEAR(got[row * 1024 + k], want, 1e-3 * (1 + std::fabs(sum)))
          << row << " " << k;
    }
  }
}

// JAX's random bits: 32-bit integer ops by broadcast constants (scalar
// forms of the integer kernels, shifts in the type's own width), a
// rotation, shifts by amounts past the width (32 and, read as unsigned,
// -1), an arithmetic shift of negative values, and a bitcast to f32 that
// the run goes through (the bitcast is the operand's memory, not a copy):
// one fused step whose values match the unfused plan and a loop here.
TEST(FusionTest, IntegerHashBitsAndTheirBitcastStayInOneRun) {
  std::string n = std::to_string(kOdd);
  std::string u = "tensor<" + n + "xui32>";
  std::string i = "tensor<" + n + "xi32>";
  std::string f = "tensor<" + n + "xf32>";
  auto splat = [&](const std::string& name, const std::string& value,
                   const std::string& type, const std::string& scalar) {
    return "  %" + name + "0 = stablehlo.constant dense<" + value +
           "> : " + scalar + "\n  %" + name +
           " = stablehlo.broadcast_in_dim %" + name + "0, dims = [] : (" +
           scalar + ") -> " + type + "\n";
  };
  std::string text = "func.func @main(%x: " + u + ", %y: " + u + ") -> (" + f +
                     ", " + u + ", " + i + ") {\n" +
                     splat("k", "466688986", u, "tensor<ui32>") +
                     splat("c13", "13", u, "tensor<ui32>") +
                     splat("c19", "19", u, "tensor<ui32>") +
                     splat("c32", "32", u, "tensor<ui32>") +
                     splat("c9", "9", u, "tensor<ui32>") +
                     splat("one", "1065353216", u, "tensor<ui32>") +
                     splat("s33", "33", i, "tensor<i32>") +
                     splat("sm1", "-1", i, "tensor<i32>") + R"(
  %a = stablehlo.add %x, %k : )" +
                     u + R"(
  %b = stablehlo.add %a, %y : )" +
                     u + R"(
  %l = stablehlo.shift_left %y, %c13 : )" +
                     u + R"(
  %r = stablehlo.shift_right_logical %y, %c19 : )" +
                     u + R"(
  %rot = stablehlo.or %l, %r : )" +
                     u + R"(
  %h = stablehlo.xor %b, %rot : )" +
                     u + R"(
  %far = stablehlo.shift_left %h, %c32 : )" +
                     u + R"(
  %h2 = stablehlo.xor %h, %far : )" +
                     u + R"(
  %m = stablehlo.shift_right_logical %h2, %c9 : )" +
                     u + R"(
  %o = stablehlo.or %m, %one : )" +
                     u + R"(
  %fl = stablehlo.bitcast_convert %o : ()" +
                     u + ") -> " + f + R"(
  %s = stablehlo.bitcast_convert %h : ()" +
                     u + ") -> " + i + R"(
  %sa = stablehlo.shift_right_arithmetic %s, %s33 : )" +
                     i + R"(
  %sb = stablehlo.shift_right_arithmetic %s, %sm1 : )" +
                     i + R"(
  %sc = stablehlo.add %sa, %sb : )" +
                     i + R"(
  return %fl, %h, %sc : )" +
                     f + ", " + u + ", " + i + R"(
})";
  std::mt19937 rng(21);
  std::vector<uint32_t> x(kOdd), y(kOdd);
  for (uint32_t& v : x) v = rng();
  for (uint32_t& v : y) v = rng();
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kUI32, {kOdd}, x),
      HostArray::Of(ElementType::kUI32, {kOdd}, y)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->main().steps.size(), 1u);
  EXPECT_EQ(plan->arena_bytes(), 0);
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<float> fl = out[0].As<float>();
  std::vector<uint32_t> h = out[1].As<uint32_t>();
  std::vector<int32_t> sc = out[2].As<int32_t>();
  for (int64_t e = 0; e < kOdd; ++e) {
    uint32_t rot = (y[e] << 13) | (y[e] >> 19);
    uint32_t want_h = (x[e] + 466688986u + y[e]) ^ rot;
    ASSERT_EQ(h[e], want_h) << e;
    // Shifting left by 32 gives 0, so h2 = h.
    uint32_t bits = (want_h >> 9) | 1065353216u;
    float want_f;
    std::memcpy(&want_f, &bits, sizeof(want_f));
    ASSERT_EQ(fl[e], want_f) << e;
    ASSERT_TRUE(fl[e] >= 1.0f && fl[e] < 2.0f) << e;
    // Both arithmetic shifts are past the width: each gives the sign.
    int32_t sign = static_cast<int32_t>(want_h) < 0 ? -1 : 0;
    ASSERT_EQ(sc[e], 2 * sign) << e;
  }
}

TEST(FusionTest, LargeSplatConstantsStayOneElement) {
  // 4 Mi elements: 16 MiB if expanded; the plan holds one f32 of it.
  std::string text = R"(
func.func @main(%x: tensor<4194304xf32>) -> tensor<4194304xf32> {
  %c = stablehlo.constant dense<2.5> : tensor<4194304xf32>
  %m = stablehlo.multiply %x, %c : tensor<4194304xf32>
  return %m : tensor<4194304xf32>
})";
  std::vector<float> x = RandomFloats(4194304, 8);
  auto plan = ExpectFusedMatchesUnfused(
      text, {HostArray::Of(ElementType::kF32, {4194304}, x)});
  ASSERT_NE(plan, nullptr);
  int64_t constant_bytes = 0;
  for (const auto& constant : plan->constants()) {
    constant_bytes += static_cast<int64_t>(constant.size());
  }
  EXPECT_LE(constant_bytes, 64);
  EXPECT_EQ(plan->arena_bytes(), 0);
  ASSERT_OK_AND_ASSIGN(
      auto out,
      RunPlan(*plan, {HostArray::Of(ElementType::kF32, {4194304}, x)}));
  std::vector<float> got = out[0].As<float>();
  for (size_t i = 0; i < x.size(); i += 4099) EXPECT_EQ(got[i], x[i] * 2.5f);
}

TEST(FusionTest, SoftmaxReducesItsProducersWithoutWritingThem) {
  // Rows of 3000 (two producer chunks, 2048 and 952, and not a multiple
  // of the 16 lanes). exp(x - max) is read by the sum and the division, so
  // it is written; the squares that only the second sum reads are
  // computed row by row into it and never written.
  std::string text = R"(
func.func @main(%x: tensor<64x3000xf32>) -> (tensor<64x3000xf32>, tensor<64xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<64x3000xf32>, tensor<f32>) -> tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x3000xf32>
  %d = stablehlo.subtract %x, %mb : tensor<64x3000xf32>
  %e = stablehlo.exponential %d : tensor<64x3000xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x3000xf32>, tensor<f32>) -> tensor<64xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x3000xf32>
  %p = stablehlo.divide %e, %sb : tensor<64x3000xf32>
  %sq = stablehlo.multiply %d, %d : tensor<64x3000xf32>
  %v = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x3000xf32>, tensor<f32>) -> tensor<64xf32>
  return %p, %v : tensor<64x3000xf32>, tensor<64xf32>
})";
  std::vector<float> x = RandomFloats(64 * 3000, 9);
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {64, 3000}, x)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  auto unfused = CompileText(text, Unfused());
  ASSERT_TRUE(unfused.ok());
  EXPECT_LT(plan->main().steps.size(), (*unfused)->main().steps.size());
  EXPECT_LT(plan->arena_bytes(), (*unfused)->arena_bytes());
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<float> p = out[0].As<float>(), v = out[1].As<float>();
  for (int r = 0; r < 64; r += 9) {
    double max = -INFINITY, sum = 0, squares = 0;
    for (int i = 0; i < 3000; ++i) max = std::max<double>(max, x[r * 3000 + i]);
    for (int i = 0; i < 3000; ++i) {
      double d = x[r * 3000 + i] - max;
      sum += std::exp(d);
      squares += d * d;
    }
    EXPECT_NEAR(p[r * 3000 + 17], std::exp(x[r * 3000 + 17] - max) / sum, 1e-6);
    EXPECT_NEAR(v[r], squares, 1e-4 * squares);
  }
}

TEST(FusionTest, AReducedValueThatIsReadLaterIsWrittenAsItIsReduced) {
  // Softmax as jax.nn.softmax writes it after a scaling: %s is read by the
  // maximum and by the subtraction, %e by the sum and the division. Each
  // reduction takes its producer and writes the value as it reduces it:
  // three steps over the scores instead of five. Rows of 100 (several
  // rows per producer call, 97 rows not a multiple of them, and no whole
  // number of 16 lanes).
  std::string text = R"(
func.func @main(%x: tensor<97x100xf32>) -> tensor<97x100xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %eight = stablehlo.constant dense<8.0> : tensor<97x100xf32>
  %s = stablehlo.divide %x, %eight : tensor<97x100xf32>
  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<97x100xf32>, tensor<f32>) -> tensor<97xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<97xf32>) -> tensor<97x100xf32>
  %d = stablehlo.subtract %s, %mb : tensor<97x100xf32>
  %e = stablehlo.exponential %d : tensor<97x100xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<97x100xf32>, tensor<f32>) -> tensor<97xf32>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<97xf32>) -> tensor<97x100xf32>
  %p = stablehlo.divide %e, %sb : tensor<97x100xf32>
  return %p : tensor<97x100xf32>
})";
  std::vector<float> x = RandomFloats(97 * 100, 12);
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {97, 100}, x)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  int over_scores = 0, reducing = 0;
  std::string steps;
  for (const exec::Step& step : plan->main().steps) {
    steps += step.where + "\n";
    bool reduces = step.where.find("stablehlo.reduce") != std::string::npos;
    if (reduces || step.where.find("stablehlo.divide") != std::string::npos) {
      ++over_scores;
    }
    if (reduces) {
      ++reducing;
      // Each reduction runs with the step that computes its operand.
      EXPECT_EQ(step.where.rfind("fusion of", 0), 0u) << steps;
    }
  }
  EXPECT_EQ(reducing, 2) << steps;
  EXPECT_EQ(over_scores, 3) << steps;
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<float> p = out[0].As<float>();
  for (int r = 0; r < 97; r += 4) {
    double max = -INFINITY, sum = 0;
    for (int i = 0; i < 100; ++i)
      max = std::max<double>(max, x[r * 100 + i] / 8.0);
    for (int i = 0; i < 100; ++i) sum += std::exp(x[r * 100 + i] / 8.0 - max);
    for (int i = 0; i < 100; i += 13) {
      EXPECT_NEAR(p[r * 100 + i], std::exp(x[r * 100 + i] / 8.0 - max) / sum,
                  1e-6);
    }
  }
}

TEST(FusionTest, ASmallerRunDoesNotStepOverALargerStep) {
  // Layer norm as JAX writes it: after the variance, the subtraction of
  // the mean over the whole input comes before the per-row steps (add the
  // epsilon, rsqrt). The per-row run must not take the subtraction out of
  // the whole-input run that follows it: the output is one fused step
  // that subtracts, scales and shifts.
  std::string text = R"(
func.func @main(%x: tensor<64x768xf32>, %scale: tensor<768xf32>) -> tensor<64x768xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<768.0> : tensor<64xf32>
  %eps = stablehlo.constant dense<1.0e-6> : tensor<64xf32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x768xf32>, tensor<f32>) -> tensor<64xf32>
  %mean = stablehlo.divide %sum, %n : tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<64xf32>) -> tensor<64x768xf32>
  %c = stablehlo.subtract %x, %mb : tensor<64x768xf32>
  %sq = stablehlo.multiply %c, %c : tensor<64x768xf32>
  %ss = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x768xf32>, tensor<f32>) -> tensor<64xf32>
  %var = stablehlo.divide %ss, %n : tensor<64xf32>
  %mb2 = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<64xf32>) -> tensor<64x768xf32>
  %c2 = stablehlo.subtract %x, %mb2 : tensor<64x768xf32>
  %ve = stablehlo.add %var, %eps : tensor<64xf32>
  %r = stablehlo.rsqrt %ve : tensor<64xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<64xf32>) -> tensor<64x768xf32>
  %y = stablehlo.multiply %c2, %rb : tensor<64x768xf32>
  %sb = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<768xf32>) -> tensor<64x768xf32>
  %z = stablehlo.multiply %y, %sb : tensor<64x768xf32>
  return %z : tensor<64x768xf32>
})";
  std::vector<float> x = RandomFloats(64 * 768, 13);
  std::vector<float> scale = RandomFloats(768, 14);
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {64, 768}, x),
      HostArray::Of(ElementType::kF32, {768}, scale)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  std::string steps;
  for (const exec::Step& step : plan->main().steps) steps += step.where + "\n";
  const exec::Step& last = plan->main().steps.back();
  EXPECT_NE(last.where.find("stablehlo.subtract"), std::string::npos) << steps;
  EXPECT_NE(last.where.find("stablehlo.multiply"), std::string::npos) << steps;
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<float> z = out[0].As<float>();
  for (int r = 0; r < 64; r += 5) {
    double mean = 0, var = 0;
    for (int i = 0; i < 768; ++i) mean += x[r * 768 + i];
    mean /= 768;
    for (int i = 0; i < 768; ++i) {
      var += (x[r * 768 + i] - mean) * (x[r * 768 + i] - mean);
    }
    var /= 768;
    for (int i = 0; i < 768; i += 31) {
      double want = (x[r * 768 + i] - mean) / std::sqrt(var + 1e-6) * scale[i];
      EXPECT_NEAR(z[r * 768 + i], want, 1e-5 * (1 + std::fabs(want))) << r;
    }
  }
}

// The product of `a` (n x n) and `b`, in double.
std::vector<double> Product(const std::vector<double>& a,
                            const std::vector<double>& b, int n) {
  std::vector<double> c(n * n, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < n; ++k) {
      for (int j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
    }
  }
  return c;
}

// An elementwise step writes its output into the memory of a scratch
// input that dies at it: the tanh between two products needs no array of
// its own (the unfused plan, which writes nothing in place, needs two).
TEST(FusionTest, AnElementwiseStepWritesOverAnInputThatDiesThere) {
  std::string text = R"(
func.func @main(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %a = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %b = stablehlo.tanh %a : tensor<128x128xf32>
  %c = stablehlo.dot_general %b, %x, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  return %c : tensor<128x128xf32>
})";
  constexpr int kN = 128;
  std::vector<float> x = RandomFloats(kN * kN, 21);
  for (float& v : x) v *= 0.05f;
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {kN, kN}, x)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  auto unfused = CompileText(text, Unfused());
  ASSERT_TRUE(unfused.ok());
  EXPECT_EQ((*unfused)->arena_bytes(), 2 * kN * kN * 4);
  EXPECT_EQ(plan->arena_bytes(), kN * kN * 4);
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<double> xd(x.begin(), x.end());
  std::vector<double> b = Product(xd, xd, kN);
  for (double& v : b) v = std::tanh(v);
  std::vector<double> want = Product(b, xd, kN);
  std::vector<float> c = out[0].As<float>();
  for (int i = 0; i < kN * kN; i += 37) {
    EXPECT_NEAR(c[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
  }
}

// In a fused step the nodes run in turn over each tile: an output written
// before the dying input's last read (tanh's, before the square reads %p)
// keeps memory of its own, and the last reader's output (the square,
// which reads %p twice) takes the input's memory.
TEST(FusionTest, AFusedOutputWrittenBeforeItsInputsLastReadKeepsItsOwnMemory) {
  std::string text = R"(
func.func @main(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %p = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %q = stablehlo.tanh %p : tensor<128x128xf32>
  %r = stablehlo.multiply %p, %p : tensor<128x128xf32>
  %s = stablehlo.dot_general %q, %r, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  return %s : tensor<128x128xf32>
})";
  constexpr int kN = 128;
  std::vector<float> x = RandomFloats(kN * kN, 22);
  for (float& v : x) v *= 0.05f;
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {kN, kN}, x)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  auto unfused = CompileText(text, Unfused());
  ASSERT_TRUE(unfused.ok());
  EXPECT_EQ((*unfused)->arena_bytes(), 3 * kN * kN * 4);
  EXPECT_EQ(plan->arena_bytes(), 2 * kN * kN * 4);
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<double> xd(x.begin(), x.end());
  std::vector<double> p = Product(xd, xd, kN), q = p, r = p;
  for (double& v : q) v = std::tanh(v);
  for (double& v : r) v = v * v;
  std::vector<double> want = Product(q, r, kN);
  std::vector<float> s = out[0].As<float>();
  for (int i = 0; i < kN * kN; i += 37) {
    EXPECT_NEAR(s[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
  }
}

// A loop value computed from itself element by element (a fori_loop's
// c * 0.99 + 0.01) is written into the loop's own array: one array of
// state, not two that trade places every iteration.
TEST(FusionTest, AnElementwiseLoopUpdateWritesOverItsState) {
  std::string text = R"(
func.func @main(%x: tensor<64x1000xf32>) -> tensor<64x1000xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %c = %x) : tensor<i32>, tensor<64x1000xf32>
    cond {
      %n = stablehlo.constant dense<7> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %k = stablehlo.constant dense<0.99> : tensor<64x1000xf32>
      %b = stablehlo.constant dense<0.01> : tensor<64x1000xf32>
      %m = stablehlo.multiply %c, %k : tensor<64x1000xf32>
      %a = stablehlo.add %m, %b : tensor<64x1000xf32>
      stablehlo.return %next, %a : tensor<i32>, tensor<64x1000xf32>
    }
  return %r#1 : tensor<64x1000xf32>
})";
  constexpr int64_t kCount = 64 * 1000;
  std::vector<float> x = RandomFloats(kCount, 31);
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {64, 1000}, x)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  EXPECT_LT(plan->arena_bytes(), 2 * kCount * 4);
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<float> got = out[0].As<float>();
  for (int64_t e = 0; e < kCount; e += 7) {
    float want = x[e];
    for (int it = 0; it < 7; ++it) want = want * 0.99f + 0.01f;
    EXPECT_EQ(got[e], want) << e;
  }
}

// A loop value whose update reads the state whole (a transpose of it,
// fused into the same pass) keeps an array of its own: written over the
// state, the pass would read elements it had already overwritten.
TEST(FusionTest, ALoopUpdateThatReadsItsStateWholeKeepsItsOwnArray) {
  std::string text = R"(
func.func @main(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %c = %x) : tensor<i32>, tensor<256x256xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %h = stablehlo.constant dense<0.5> : tensor<256x256xf32>
      %m = stablehlo.multiply %c, %h : tensor<256x256xf32>
      %t = stablehlo.transpose %c, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
      %a = stablehlo.add %m, %t : tensor<256x256xf32>
      stablehlo.return %next, %a : tensor<i32>, tensor<256x256xf32>
    }
  return %r#1 : tensor<256x256xf32>
})";
  constexpr int kN = 256;
  std::vector<float> x = RandomFloats(kN * kN, 32);
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {kN, kN}, x)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<float> want = x, next(kN * kN);
  for (int it = 0; it < 3; ++it) {
    for (int i = 0; i < kN; ++i) {
      for (int j = 0; j < kN; ++j) {
        next[i * kN + j] = want[i * kN + j] * 0.5f + want[j * kN + i];
      }
    }
    want.swap(next);
  }
  std::vector<float> got = out[0].As<float>();
  for (int64_t e = 0; e < kN * kN; ++e) {
    ASSERT_EQ(got[e], want[e]) << e;
  }
}

// A loop value computed by a nested loop that reads the outer state
// inside its body (a capture, not an input of the nested loop's step)
// keeps an array of its own: written over the outer state, the nested
// loop would overwrite what its body reads.
TEST(FusionTest, ALoopValueANestedLoopComputesKeepsItsOwnArray) {
  std::string text = R"(
func.func @main(%x: tensor<3000xf32>) -> tensor<3000xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %c = %x) : tensor<i32>, tensor<3000xf32>
    cond {
      %n = stablehlo.constant dense<2> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %z = stablehlo.constant dense<0.0> : tensor<3000xf32>
      %inner:2 = stablehlo.while(%j = %zero, %d = %z) : tensor<i32>, tensor<3000xf32>
        cond {
          %m = stablehlo.constant dense<3> : tensor<i32>
          %lt2 = stablehlo.compare LT, %j, %m : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt2 : tensor<i1>
        } do {
          %one2 = stablehlo.constant dense<1> : tensor<i32>
          %j2 = stablehlo.add %j, %one2 : tensor<i32>
          %d2 = stablehlo.add %d, %c : tensor<3000xf32>
          stablehlo.return %j2, %d2 : tensor<i32>, tensor<3000xf32>
        }
      stablehlo.return %next, %inner#1 : tensor<i32>, tensor<3000xf32>
    }
  return %r#1 : tensor<3000xf32>
})";
  std::vector<float> x = RandomFloats(3000, 33);
  std::vector<HostArray> inputs = {HostArray::Of(ElementType::kF32, {3000}, x)};
  auto plan = ExpectFusedMatchesUnfused(text, inputs);
  ASSERT_NE(plan, nullptr);
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  std::vector<float> got = out[0].As<float>();
  for (int64_t e = 0; e < 3000; ++e) {
    float c = x[e];
    for (int outer = 0; outer < 2; ++outer) {
      float d = 0.0f;
      for (int inner = 0; inner < 3; ++inner) d = d + c;
      c = d;
    }
    ASSERT_EQ(got[e], c) << e;
  }
}

}  // namespace
}  // namespace kiln::testing
