// Reductions along the innermost dimension (exec/kernels/reduce.cc) keep
// 16 partial results combined by a fixed tree: the result is that order's,
// on every machine and vector width, and at least as accurate as the
// sequential sum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "exec/kernels/element.h"
#include "exec/kernels/reduce.h"
#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;

std::string RowReduceProgram(const std::string& type, const std::string& op,
                             const std::string& init) {
  return R"(
func.func @main(%x: tensor<3x1000x)" +
         type + R"(>) -> tensor<3x)" + type + R"(> {
  %z = stablehlo.constant dense<)" +
         init + R"(> : tensor<)" + type + R"(>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.)" +
         op + R"( across dimensions = [1] : (tensor<3x1000x)" + type +
         R"(>, tensor<)" + type + R"(>) -> tensor<3x)" + type + R"(>
  return %r : tensor<3x)" +
         type + R"(>
})";
}

// The order the kernel documents: lanes j = i mod 16 over whole groups of
// 16, a halving tree over the lanes, then the remaining elements in order.
float LaneOrderSum(const float* x, int n) {
  float lanes[16];
  for (int j = 0; j < 16; ++j) lanes[j] = x[j];
  int i = 16;
  for (; i + 16 <= n; i += 16) {
    for (int j = 0; j < 16; ++j) lanes[j] += x[i + j];
  }
  for (int width = 8; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) lanes[j] += lanes[j + width];
  }
  float acc = 0.0f + lanes[0];
  for (; i < n; ++i) acc += x[i];
  return acc;
}

TEST(ReduceTest, RowSumsFollowTheDocumentedOrder) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-1000.0f, 1000.0f);
  std::vector<float> x(3000);
  for (float& v : x) v = uniform(rng);
  ASSERT_OK_AND_ASSIGN(
      auto out, RunText(RowReduceProgram("f32", "add", "0.0"),
                        {HostArray::Of(ElementType::kF32, {3, 1000}, x)}));
  std::vector<float> got = out[0].As<float>();
  for (int r = 0; r < 3; ++r) {
    double exact = 0, magnitude = 0;
    for (int i = 0; i < 1000; ++i) {
      exact += x[r * 1000 + i];
      magnitude += std::fabs(x[r * 1000 + i]);
    }
    EXPECT_EQ(got[r], LaneOrderSum(&x[r * 1000], 1000)) << r;
    // A tree of depth 4 over lanes of 62 terms: at most 66 roundings on
    // any path, each within 2^-24 of the partial sum.
    EXPECT_NEAR(got[r], exact, 66 * std::ldexp(1.0, -24) * magnitude) << r;
  }
}

TEST(ReduceTest, RowMaximumPropagatesNaNAndIntegerSumsWrap) {
  std::vector<float> x(3000, 1.0f);
  x[1500] = std::numeric_limits<float>::quiet_NaN();
  x[2999] = 7.0f;
  ASSERT_OK_AND_ASSIGN(
      auto out, RunText(RowReduceProgram("f32", "maximum", "0xFF800000"),
                        {HostArray::Of(ElementType::kF32, {3, 1000}, x)}));
  std::vector<float> got = out[0].As<float>();
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_TRUE(std::isnan(got[1]));
  EXPECT_EQ(got[2], 7.0f);

  std::vector<int8_t> small(3000, 100);
  ASSERT_OK_AND_ASSIGN(
      auto sums, RunText(RowReduceProgram("i8", "add", "0"),
                         {HostArray::Of(ElementType::kI8, {3, 1000}, small)}));
  // 100 * 1000 = 100000 = 160 (mod 256) = -96 as i8, whatever the order.
  for (int8_t v : sums[0].As<int8_t>()) EXPECT_EQ(v, -96);
}

// Float maximum and minimum take a compare-and-select path while a row
// has no NaN (exec/kernels/row_reducer.h); it must give what the rules of
// the exact path give: the NaN wherever it lies (lanes or tail), +0 over
// -0 for the maximum and -0 over +0 for the minimum, infinities, and the
// extreme of random rows, against a loop written here with those rules.
TEST(ReduceTest, RowMaximumAndMinimumKeepTheirZeroAndNaNRules) {
  constexpr int kRows = 3, kLength = 1000;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto rows_of = [&](auto fill) {
    std::vector<float> x(kRows * kLength);
    for (int r = 0; r < kRows; ++r) fill(&x[r * kLength], r);
    return x;
  };
  auto run = [&](const std::string& op, const std::string& init,
                 const std::vector<float>& x) {
    auto out = RunText(RowReduceProgram("f32", op, init),
                       {HostArray::Of(ElementType::kF32, {kRows, kLength}, x)});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? (*out)[0].As<float>() : std::vector<float>(kRows);
  };
  const std::string kMaxInit = "0xFF800000", kMinInit = "0x7F800000";

  // Zeros of both signs: the maximum is +0 if any +0 is present, the
  // minimum -0 if any -0 is; one sign alone stays. Row 0 has +0 only in
  // a lane, row 1 only in the tail (the last 8 of 1000), row 2 has none.
  std::vector<float> zeros = rows_of([&](float* row, int r) {
    for (int i = 0; i < kLength; ++i) row[i] = -0.0f;
    if (r == 0) row[37] = 0.0f;
    if (r == 1) row[kLength - 3] = 0.0f;
  });
  std::vector<float> max = run("maximum", kMaxInit, zeros);
  EXPECT_EQ(max[0], 0.0f);
  EXPECT_FALSE(std::signbit(max[0]));
  EXPECT_FALSE(std::signbit(max[1]));
  EXPECT_TRUE(std::signbit(max[2]));
  for (float& v : zeros) v = -v;  // now +0 everywhere but one -0
  std::vector<float> min = run("minimum", kMinInit, zeros);
  EXPECT_TRUE(std::signbit(min[0]));
  EXPECT_TRUE(std::signbit(min[1]));
  EXPECT_FALSE(std::signbit(min[2]));

  // A NaN in a lane, in the tail, or none (with infinities).
  std::vector<float> special = rows_of([&](float* row, int r) {
    for (int i = 0; i < kLength; ++i) row[i] = static_cast<float>(i % 97);
    if (r == 0) row[500] = nan;
    if (r == 1) row[kLength - 1] = nan;
    if (r == 2) row[123] = inf, row[321] = -inf;
  });
  max = run("maximum", kMaxInit, special);
  min = run("minimum", kMinInit, special);
  EXPECT_TRUE(std::isnan(max[0]) && std::isnan(max[1]));
  EXPECT_TRUE(std::isnan(min[0]) && std::isnan(min[1]));
  EXPECT_EQ(max[2], inf);
  EXPECT_EQ(min[2], -inf);

  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 100.0f);
  std::vector<float> random = rows_of([&](float* row, int) {
    for (int i = 0; i < kLength; ++i) row[i] = normal(rng);
  });
  max = run("maximum", kMaxInit, random);
  min = run("minimum", kMinInit, random);
  for (int r = 0; r < kRows; ++r) {
    const float* row = &random[r * kLength];
    EXPECT_EQ(max[r], *std::max_element(row, row + kLength)) << r;
    EXPECT_EQ(min[r], *std::min_element(row, row + kLength)) << r;
  }
}

// JAX's argmax and argmin (a reduce of values and their iota with JAX's
// reducer body) run as a typed kernel (exec::MakeArgReduceKernel) rather
// than by calling the body per element. Its results are the body's: the
// same program with one unused op in the body, which the match refuses,
// runs the generic path, and both must give the same bits, values and
// indices, over rows with NaNs, ties, zeros of both signs and infinities,
// along the last dimension (rows split over the cores) and the first
// (accumulated row by row). The indices are also checked against the
// first occurrence computed here, NaN counting as the extreme.
TEST(ReduceTest, ArgmaxAndArgminRunTypedWithTheBodysResults) {
  constexpr int64_t kRows = 300, kColumns = 517;
  auto program = [](bool max, int64_t dimension, bool dead_op) {
    const std::string in = "tensor<300x517xf32>", idx = "tensor<300x517xi32>";
    const std::string out = dimension == 1 ? "300" : "517";
    return std::string("func.func @main(%x: ") + in + ") -> (tensor<" + out +
           "xf32>, tensor<" + out + "xi32>) {\n" +
           "  %zero = stablehlo.constant dense<0> : tensor<i32>\n" +
           "  %init = stablehlo.constant dense<" +
           (max ? "0xFF800000" : "0x7F800000") + "> : tensor<f32>\n" +
           "  %iota = stablehlo.iota dim = " + std::to_string(dimension) +
           " : " + idx + "\n" +
           "  %r:2 = stablehlo.reduce(%x init: %init), (%iota init: %zero) "
           "across dimensions = [" +
           std::to_string(dimension) + "] : (" + in + ", " + idx +
           ", tensor<f32>, tensor<i32>) -> (tensor<" + out + "xf32>, tensor<" +
           out + "xi32>)\n" +
           "    reducer(%a: tensor<f32>, %x2: tensor<f32>) (%ai: tensor<i32>, "
           "%xi: tensor<i32>) {\n" +
           "      %1 = stablehlo.compare " + (max ? "GT" : "LT") +
           ", %a, %x2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n" +
           "      %2 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, "
           "tensor<f32>) -> tensor<i1>\n" +
           "      %3 = stablehlo.or %1, %2 : tensor<i1>\n" +
           "      %4 = stablehlo.compare EQ, %a, %x2, FLOAT : (tensor<f32>, "
           "tensor<f32>) -> tensor<i1>\n" +
           "      %5 = stablehlo.compare LT, %ai, %xi, SIGNED : (tensor<i32>, "
           "tensor<i32>) -> tensor<i1>\n" +
           "      %6 = stablehlo.and %4, %5 : tensor<i1>\n" +
           "      %7 = stablehlo.or %3, %6 : tensor<i1>\n" +
           (dead_op ? "      %8 = stablehlo.add %a, %x2 : tensor<f32>\n" : "") +
           "      %9 = stablehlo.select %3, %a, %x2 : tensor<i1>, "
           "tensor<f32>\n" +
           "      %10 = stablehlo.select %7, %ai, %xi : tensor<i1>, "
           "tensor<i32>\n" +
           "      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>\n" +
           "    }\n" + "  return %r#0, %r#1 : tensor<" + out +
           "xf32>, tensor<" + out + "xi32>\n}\n";
  };
  std::mt19937 rng(23);
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<float> x(kRows * kColumns);
  // Few distinct values, so that ties are everywhere.
  for (float& v : x) v = static_cast<float>(small(rng));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < kRows; r += 7)
    x[r * kColumns + (r * 13) % kColumns] = nan;
  for (int64_t r = 3; r < kRows; r += 11)
    x[r * kColumns + (r * 5) % kColumns] = inf;
  for (int64_t r = 5; r < kRows; r += 13)
    x[r * kColumns + (r * 3) % kColumns] = -inf;
  for (int64_t i = 1; i < kRows * kColumns; i += 29) {
    if (x[i] == 0.0f) x[i] = -0.0f;
  }
  const HostArray input =
      HostArray::Of(ElementType::kF32, {kRows, kColumns}, x);
  for (bool max : {true, false}) {
    for (int64_t dimension : {1, 0}) {
      SCOPED_TRACE(std::string(max ? "argmax" : "argmin") + " along " +
                   std::to_string(dimension));
      ASSERT_OK_AND_ASSIGN(auto plan,
                           CompileText(program(max, dimension, false)));
      int typed = 0;
      for (const exec::Step& step : plan->main().steps) {
        typed += exec::IsArgReduceKernel(*step.kernel);
      }
      EXPECT_EQ(typed, 1);
      ASSERT_OK_AND_ASSIGN(auto generic_plan,
                           CompileText(program(max, dimension, true)));
      for (const exec::Step& step : generic_plan->main().steps) {
        EXPECT_FALSE(exec::IsArgReduceKernel(*step.kernel));
      }
      ASSERT_OK_AND_ASSIGN(auto got, RunPlan(*plan, {input}));
      ASSERT_OK_AND_ASSIGN(auto want, RunPlan(*generic_plan, {input}));
      EXPECT_TRUE(got[0].bytes == want[0].bytes);
      EXPECT_TRUE(got[1].bytes == want[1].bytes);
      std::vector<int32_t> indices = got[1].As<int32_t>();
      const int64_t results = dimension == 1 ? kRows : kColumns;
      const int64_t length = dimension == 1 ? kColumns : kRows;
      for (int64_t o = 0; o < results; ++o) {
        int64_t best = 0;
        auto at = [&](int64_t k) {
          return dimension == 1 ? x[o * kColumns + k] : x[k * kColumns + o];
        };
        for (int64_t k = 1; k < length; ++k) {
          const float b = at(best), c = at(k);
          if (std::isnan(b)) break;
          if (std::isnan(c) || (max ? c > b : c < b)) best = k;
        }
        ASSERT_EQ(indices[o], best) << o;
      }
    }
  }
}

// A reduce_window that is a prefix scan (JAX's cumsum, cummax, ... on CPU:
// the window spans the dimension with all but one element of low padding)
// runs as a scan, in the order the window walk combines: the same bits as
// the per-element body calls of the generic path, which an unused op in
// the body forces. Along the last dimension and a middle one, sums of
// floats and wrapping integers, and maximum with NaNs and zeros of both
// signs; a scan from the high end (padding high), which is no prefix
// scan, keeps the window walk.
// The argmax of a mask (i1 values, UNSIGNED compares: what jnp.select and
// jnp.piecewise reduce their conditions with) runs typed too: before, it
// called the body per element, 3 us each (jax.scipy.special.gamma of 1 Mi
// f32 took 0.76 s). Its results are the body's and the first true index.
TEST(ReduceTest, ArgmaxOfAMaskRunsTypedWithTheBodysResults) {
  constexpr int64_t kRows = 3, kColumns = 1000;
  auto program = [](int64_t dimension, bool dead_op) {
    const std::string in = "tensor<3x1000xi1>", idx = "tensor<3x1000xi32>";
    const std::string out = dimension == 1 ? "3" : "1000";
    return std::string("func.func @main(%x: ") + in + ") -> tensor<" + out +
           "xi32> {\n" +
           "  %zero = stablehlo.constant dense<0> : tensor<i32>\n" +
           "  %false = stablehlo.constant dense<false> : tensor<i1>\n" +
           "  %iota = stablehlo.iota dim = " + std::to_string(dimension) +
           " : " + idx + "\n" +
           "  %r:2 = stablehlo.reduce(%x init: %false), (%iota init: %zero) "
           "across dimensions = [" + std::to_string(dimension) + "] : (" +
           in + ", " + idx + ", tensor<i1>, tensor<i32>) -> (tensor<" + out +
           "xi1>, tensor<" + out + "xi32>)\n" +
           "    reducer(%a: tensor<i1>, %b: tensor<i1>) (%ai: tensor<i32>, "
           "%bi: tensor<i32>) {\n" +
           "      %1 = stablehlo.compare GT, %a, %b, UNSIGNED : (tensor<i1>, "
           "tensor<i1>) -> tensor<i1>\n" +
           "      %2 = stablehlo.compare NE, %a, %a, UNSIGNED : (tensor<i1>, "
           "tensor<i1>) -> tensor<i1>\n" +
           "      %3 = stablehlo.or %1, %2 : tensor<i1>\n" +
           "      %4 = stablehlo.compare EQ, %a, %b, UNSIGNED : (tensor<i1>, "
           "tensor<i1>) -> tensor<i1>\n" +
           "      %5 = stablehlo.compare LT, %ai, %bi, SIGNED : (tensor<i32>, "
           "tensor<i32>) -> tensor<i1>\n" +
           "      %6 = stablehlo.and %4, %5 : tensor<i1>\n" +
           "      %7 = stablehlo.or %3, %6 : tensor<i1>\n" +
           (dead_op ? "      %8 = stablehlo.and %a, %b : tensor<i1>\n" : "") +
           "      %9 = stablehlo.select %3, %a, %b : tensor<i1>, tensor<i1>\n" +
           "      %10 = stablehlo.select %7, %ai, %bi : tensor<i1>, "
           "tensor<i32>\n" +
           "      stablehlo.return %9, %10 : tensor<i1>, tensor<i32>\n" +
           "    }\n" + "  return %r#1 : tensor<" + out + "xi32>\n}\n";
  };
  std::mt19937 rng(5);
  std::bernoulli_distribution sparse(0.2);
  std::vector<uint8_t> x(kRows * kColumns);
  for (uint8_t& v : x) v = sparse(rng) ? 1 : 0;
  const HostArray input =
      HostArray::Of<uint8_t>(ElementType::kI1, {kRows, kColumns}, x);
  for (int64_t dimension : {0, 1}) {
    SCOPED_TRACE("along " + std::to_string(dimension));
    ASSERT_OK_AND_ASSIGN(auto plan, CompileText(program(dimension, false)));
    int typed = 0;
    for (const exec::Step& step : plan->main().steps) {
      typed += exec::IsArgReduceKernel(*step.kernel);
    }
    EXPECT_EQ(typed, 1);
    ASSERT_OK_AND_ASSIGN(auto generic_plan,
                         CompileText(program(dimension, true)));
    ASSERT_OK_AND_ASSIGN(auto got, RunPlan(*plan, {input}));
    ASSERT_OK_AND_ASSIGN(auto want, RunPlan(*generic_plan, {input}));
    EXPECT_TRUE(got[0].bytes == want[0].bytes);
    std::vector<int32_t> indices = got[0].As<int32_t>();
    const int64_t results = dimension == 1 ? kRows : kColumns;
    const int64_t length = dimension == 1 ? kColumns : kRows;
    for (int64_t o = 0; o < results; ++o) {
      int32_t first = 0;  // no true element: index 0, as JAX's argmax
      for (int64_t k = 0; k < length; ++k) {
        const int64_t at = dimension == 1 ? o * kColumns + k : k * kColumns + o;
        if (x[at]) {
          first = static_cast<int32_t>(k);
          break;
        }
      }
      EXPECT_EQ(indices[o], first) << o;
    }
  }
}

// max and min reduces of f16 and bf16 compute in f32 (exact both ways):
// the bits of the body called per element (the same program with a dead
// op in the body, which no matcher takes), over rows with NaNs, zeros of
// both signs and infinities, and each row's maximum or minimum computed
// here.
TEST(ReduceTest, NarrowFloatMaxAndMinReduceInF32WithTheBodysBits) {
  using exec::BF16ToFloat;
  using exec::FloatToBF16;
  using exec::FloatToHalf;
  using exec::HalfToFloat;
  constexpr int64_t kRows = 37, kColumns = 301;
  auto program = [](const std::string& t, bool max, bool dead_op) {
    const std::string in = "tensor<37x301x" + t + ">";
    const std::string op = max ? "maximum" : "minimum";
    return "func.func @main(%x: " + in + ") -> tensor<37x" + t + "> {\n" +
           "  %init = stablehlo.constant dense<" +
           (max ? "0xFC00" : "0x7C00") + "> : tensor<" + t + ">\n" +
           "  %r = stablehlo.reduce(%x init: %init) across dimensions = [1] "
           ": (" + in + ", tensor<" + t + ">) -> tensor<37x" + t + ">\n" +
           "    reducer(%a: tensor<" + t + ">, %b: tensor<" + t + ">) {\n" +
           (dead_op ? "      %d = stablehlo.add %a, %b : tensor<" + t + ">\n"
                    : "") +
           "      %m = stablehlo." + op + " %a, %b : tensor<" + t + ">\n" +
           "      stablehlo.return %m : tensor<" + t + ">\n" +
           "    }\n  return %r : tensor<37x" + t + ">\n}\n";
  };
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-40, 40);
  std::vector<uint16_t> x(kRows * kColumns);
  for (uint16_t& v : x) {
    v = FloatToHalf(static_cast<float>(small(rng)) / 8);
  }
  for (int64_t r = 0; r < kRows; r += 5) x[r * kColumns + r] = 0x7E00;  // NaN
  for (int64_t r = 1; r < kRows; r += 6) x[r * kColumns + 2 * r] = 0x7C00;
  for (int64_t r = 2; r < kRows; r += 7) x[r * kColumns + 3 * r] = 0xFC00;
  for (int64_t i = 0; i < kRows * kColumns; i += 13) {
    if ((x[i] & 0x7fff) == 0) x[i] = 0x8000;  // -0
  }
  // The f16 values' bf16 counterparts (the same numbers, where they fit).
  std::vector<uint16_t> xb(x.size());
  for (size_t i = 0; i < x.size(); ++i) xb[i] = FloatToBF16(HalfToFloat(x[i]));
  for (const std::string t : {"f16", "bf16"}) {
    const bool half = t == "f16";
    const std::vector<uint16_t>& data = half ? x : xb;
    const HostArray input = HostArray::Of<uint16_t>(
        half ? ElementType::kF16 : ElementType::kBF16, {kRows, kColumns},
        data);
    auto value = [&](uint16_t bits) {
      return half ? HalfToFloat(bits) : BF16ToFloat(bits);
    };
    for (bool max : {true, false}) {
      SCOPED_TRACE(t + (max ? " max" : " min"));
      ASSERT_OK_AND_ASSIGN(auto plan, CompileText(program(t, max, false)));
      ASSERT_OK_AND_ASSIGN(auto generic, CompileText(program(t, max, true)));
      ASSERT_OK_AND_ASSIGN(auto got, RunPlan(*plan, {input}));
      ASSERT_OK_AND_ASSIGN(auto want, RunPlan(*generic, {input}));
      EXPECT_TRUE(got[0].bytes == want[0].bytes);
      std::vector<uint16_t> result = got[0].As<uint16_t>();
      for (int64_t r = 0; r < kRows; ++r) {
        float best = max ? -INFINITY : INFINITY;
        bool nan = false;
        for (int64_t c = 0; c < kColumns; ++c) {
          const float v = value(data[r * kColumns + c]);
          nan = nan || std::isnan(v);
          if (max ? v > best : v < best) best = v;
        }
        const float got_value = value(result[r]);
        if (nan) {
          EXPECT_TRUE(std::isnan(got_value)) << r;
        } else {
          EXPECT_EQ(got_value, best) << r;
        }
      }
    }
  }
}

// An f16 or bf16 sum (a reduce, and JAX's cumsum: a reduce_window whose
// window covers the row's prefix) accumulates in f32, in the row's order,
// and rounds once: each result is the f32 prefix sum computed here,
// rounded to the narrow type.
TEST(ReduceTest, NarrowFloatSumsAccumulateInF32AndRoundOnce) {
  using exec::BF16ToFloat;
  using exec::FloatToBF16;
  using exec::FloatToHalf;
  using exec::HalfToFloat;
  constexpr int64_t kRows = 4, kColumns = 1000;
  const std::string cumsum =
      "func.func @main(%x: tensor<4x1000xT>) -> (tensor<4x1000xT>, "
      "tensor<4xT>) {\n"
      "  %zero = stablehlo.constant dense<0.0> : tensor<T>\n"
      "  %c = \"stablehlo.reduce_window\"(%x, %zero) <{padding = dense<[[0, "
      "0], [999, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, "
      "1000>}> ({\n"
      "  ^bb0(%a: tensor<T>, %b: tensor<T>):\n"
      "    %s = stablehlo.add %a, %b : tensor<T>\n"
      "    stablehlo.return %s : tensor<T>\n"
      "  }) : (tensor<4x1000xT>, tensor<T>) -> tensor<4x1000xT>\n"
      "  %r = stablehlo.reduce(%x init: %zero) applies stablehlo.add across "
      "dimensions = [1] : (tensor<4x1000xT>, tensor<T>) -> tensor<4xT>\n"
      "  return %c, %r : tensor<4x1000xT>, tensor<4xT>\n}\n";
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (const std::string t : {"f16", "bf16"}) {
    SCOPED_TRACE(t);
    const bool half = t == "f16";
    std::string text = cumsum;
    for (size_t at = text.find('T'); at != std::string::npos;
         at = text.find('T', at)) {
      // Only the element-type placeholders: "xT>" and "<T>".
      if ((text[at - 1] == 'x' || text[at - 1] == '<') && text[at + 1] == '>') {
        text.replace(at, 1, t);
        at += t.size();
      } else {
        ++at;
      }
    }
    std::vector<uint16_t> x(kRows * kColumns);
    for (uint16_t& v : x) {
      v = half ? FloatToHalf(uniform(rng)) : FloatToBF16(uniform(rng));
    }
    auto value = [&](uint16_t bits) {
      return half ? HalfToFloat(bits) : BF16ToFloat(bits);
    };
    auto narrow = [&](float f) {
      return half ? FloatToHalf(f) : FloatToBF16(f);
    };
    ASSERT_OK_AND_ASSIGN(auto plan, CompileText(text));
    ASSERT_OK_AND_ASSIGN(
        auto got,
        RunPlan(*plan, {HostArray::Of<uint16_t>(
                           half ? ElementType::kF16 : ElementType::kBF16,
                           {kRows, kColumns}, x)}));
    std::vector<uint16_t> prefix = got[0].As<uint16_t>();
    std::vector<uint16_t> total = got[1].As<uint16_t>();
    for (int64_t r = 0; r < kRows; ++r) {
      float sum = 0;
      for (int64_t c = 0; c < kColumns; ++c) {
        sum += value(x[r * kColumns + c]);
        ASSERT_EQ(prefix[r * kColumns + c], narrow(sum)) << r << ", " << c;
      }
      EXPECT_EQ(total[r], narrow(sum)) << r;
    }
  }
}

TEST(ReduceTest, PrefixScansRunAsScansWithTheWindowsBits) {
  auto program = [](const std::string& type, const std::string& op,
                    const std::string& init, int64_t dimension, bool generic,
                    bool from_high) {
    const std::string t = "tensor<6x37x50x" + type + ">";
    const int64_t size = dimension == 1 ? 37 : 50;
    std::string window = dimension == 1 ? "1, 37, 1" : "1, 1, 50";
    std::string pad = std::to_string(size - 1);
    std::string padding =
        dimension == 1 ? (from_high ? "[[0, 0], [0, " + pad + "], [0, 0]]"
                                    : "[[0, 0], [" + pad + ", 0], [0, 0]]")
                       : (from_high ? "[[0, 0], [0, 0], [0, " + pad + "]]"
                                    : "[[0, 0], [0, 0], [" + pad + ", 0]]");
    return "func.func @main(%x: " + t + ") -> " + t +
           " {\n"
           "  %init = stablehlo.constant dense<" +
           init + "> : tensor<" + type +
           ">\n"
           "  %r = \"stablehlo.reduce_window\"(%x, %init) <{padding = dense<" +
           padding +
           "> : tensor<3x2xi64>, window_dimensions = array<i64: " + window +
           ">}> ({\n"
           "  ^bb0(%a: tensor<" +
           type + ">, %b: tensor<" + type +
           ">):\n"
           "    %c = stablehlo." +
           op + " %a, %b : tensor<" + type + ">\n" +
           (generic ? "    %unused = stablehlo.subtract %a, %b : tensor<" +
                          type + ">\n"
                    : "") +
           "    stablehlo.return %c : tensor<" + type +
           ">\n"
           "  }) : (" +
           t + ", tensor<" + type + ">) -> " + t +
           "\n"
           "  return %r : " +
           t + "\n}\n";
  };
  const int64_t count = 6 * 37 * 50;
  std::mt19937 rng(29);
  std::normal_distribution<float> normal(0.0f, 10.0f);
  std::vector<float> floats(count);
  for (float& v : floats) v = normal(rng);
  std::vector<float> special = floats;
  for (int64_t i = 0; i < count; i += 97) {
    special[i] = std::numeric_limits<float>::quiet_NaN();
  }
  for (int64_t i = 5; i < count; i += 41) special[i] = (i % 2) ? 0.0f : -0.0f;
  std::vector<int32_t> ints(count);
  for (int64_t i = 0; i < count; ++i) {
    ints[i] = static_cast<int32_t>(rng()) | 0x40000000;  // sums wrap
  }
  struct Case {
    std::string type, op, init;
    HostArray input;
  };
  const std::vector<Case> cases = {
      {"f32", "add", "0.0",
       HostArray::Of(ElementType::kF32, {6, 37, 50}, floats)},
      {"f32", "maximum", "0xFF800000",
       HostArray::Of(ElementType::kF32, {6, 37, 50}, special)},
      {"i32", "add", "0", HostArray::Of(ElementType::kI32, {6, 37, 50}, ints)},
  };
  for (const Case& c : cases) {
    for (int64_t dimension : {int64_t{1}, int64_t{2}}) {
      for (bool from_high : {false, true}) {
        SCOPED_TRACE(c.type + " " + c.op + " along " +
                     std::to_string(dimension) +
                     (from_high ? " from the high end" : ""));
        ASSERT_OK_AND_ASSIGN(
            auto got,
            RunText(program(c.type, c.op, c.init, dimension, false, from_high),
                    {c.input}));
        ASSERT_OK_AND_ASSIGN(
            auto want,
            RunText(program(c.type, c.op, c.init, dimension, true, from_high),
                    {c.input}));
        EXPECT_TRUE(got[0].bytes == want[0].bytes);
      }
    }
  }
  // And the sum itself, along the last dimension, against a double sum
  // (a float scan rounds once per step).
  ASSERT_OK_AND_ASSIGN(
      auto sums,
      RunText(program("f32", "add", "0.0", 2, false, false), {cases[0].input}));
  std::vector<float> got = sums[0].As<float>();
  for (int64_t line = 0; line < 6 * 37; line += 5) {
    double sum = 0;
    for (int64_t i = 0; i < 50; ++i) {
      sum += floats[line * 50 + i];
      ASSERT_NEAR(got[line * 50 + i], sum, 1e-3) << line << " " << i;
    }
  }
}

// A prefix scan whose body is no known combiner (lax.cumlogsumexp; here
// `a * 0.5 + b`, whose result depends on the order, beside an i32 sum in
// a variadic one) calls the body once per element, carrying result i - 1
// into result i: the same combination, in the same order, as the window
// walk, which starts each result from the init and combines elements 0 to
// i. Checked against that fold computed here (halving is exact, so the
// product rounds the same with or without a fused multiply-add), along
// the middle and the last dimension.
TEST(ReduceTest, PrefixScansWithARegionBodyFoldInTheWindowsOrder) {
  auto program = [](int64_t dimension) {
    const std::string t = "tensor<4x37x5xf32>", ti = "tensor<4x37x5xi32>";
    const std::string window = dimension == 1 ? "1, 37, 1" : "1, 1, 5";
    const std::string padding = dimension == 1
                                    ? "[[0, 0], [36, 0], [0, 0]]"
                                    : "[[0, 0], [0, 0], [4, 0]]";
    return "func.func @main(%x: " + t + ", %k: " + ti + ") -> (" + t + ", " +
           ti + ") {\n"
           "  %init = stablehlo.constant dense<1.5> : tensor<f32>\n"
           "  %zero = stablehlo.constant dense<7> : tensor<i32>\n"
           "  %r:2 = \"stablehlo.reduce_window\"(%x, %k, %init, %zero) "
           "<{padding = dense<" + padding + "> : tensor<3x2xi64>, "
           "window_dimensions = array<i64: " + window + ">}> ({\n"
           "  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, "
           "%bi: tensor<i32>):\n"
           "    %half = stablehlo.constant dense<0.5> : tensor<f32>\n"
           "    %h = stablehlo.multiply %a, %half : tensor<f32>\n"
           "    %c = stablehlo.add %h, %b : tensor<f32>\n"
           "    %s = stablehlo.add %ai, %bi : tensor<i32>\n"
           "    stablehlo.return %c, %s : tensor<f32>, tensor<i32>\n"
           "  }) : (" + t + ", " + ti + ", tensor<f32>, tensor<i32>) -> (" +
           t + ", " + ti + ")\n"
           "  return %r#0, %r#1 : " + t + ", " + ti + "\n}\n";
  };
  constexpr int64_t kCount = 4 * 37 * 5;
  std::mt19937 rng(31);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> x(kCount);
  std::vector<int32_t> k(kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    x[i] = normal(rng);
    k[i] = static_cast<int32_t>(rng() % 1000) - 500;
  }
  for (int64_t dimension : {int64_t{1}, int64_t{2}}) {
    SCOPED_TRACE("along " + std::to_string(dimension));
    ASSERT_OK_AND_ASSIGN(
        auto got, RunText(program(dimension),
                          {HostArray::Of(ElementType::kF32, {4, 37, 5}, x),
                           HostArray::Of(ElementType::kI32, {4, 37, 5}, k)}));
    const std::vector<float> values = got[0].As<float>();
    const std::vector<int32_t> sums = got[1].As<int32_t>();
    const int64_t length = dimension == 1 ? 37 : 5;
    const int64_t stride = dimension == 1 ? 5 : 1;
    for (int64_t at = 0; at < kCount; ++at) {
      const int64_t position = (at / stride) % length;
      const int64_t first = at - position * stride;
      float value = 1.5f;
      int32_t sum = 7;
      for (int64_t p = 0; p <= position; ++p) {
        value = value * 0.5f + x[first + p * stride];
        sum += k[first + p * stride];
      }
      ASSERT_EQ(values[at], value) << at;
      ASSERT_EQ(sums[at], sum) << at;
    }
  }
}

// Pooling (reduce_window with a known combiner, no dilation) runs as
// interval walks that combine contiguous rows; each result combines its
// window in row-major order from the init value, as a naive loop here
// does, so the bits agree: an NHWC max pool with padding on both sides
// (the channels are the contiguous rows) and a sum over an NCHW layout
// whose windows reach past the high edge (rows of one element).
// An NHWC max pool, 3x3 stride 2 with one element of padding on each
// side, against the naive loop.
void ExpectMaxPoolMatchesNaiveLoop(int64_t n, int64_t h, int64_t w, int64_t c,
                                   uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-10.0f, 10.0f);
  std::vector<float> x(n * h * w * c);
  for (float& v : x) v = uniform(rng);
  const int64_t oh = (h + 2 - 3) / 2 + 1, ow = (w + 2 - 3) / 2 + 1;
  std::string in = StrCat("tensor<", n, "x", h, "x", w, "x", c, "xf32>");
  std::string out = StrCat("tensor<", n, "x", oh, "x", ow, "x", c, "xf32>");
  ASSERT_OK_AND_ASSIGN(
      auto pooled,
      RunText(StrCat(R"(
func.func @main(%x: )",
                     in, ") -> ", out, R"( {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %r = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : ()",
                     in, ", tensor<f32>) -> ", out, R"(
  return %r : )",
                     out, "\n}"),
              {HostArray::Of(ElementType::kF32, {n, h, w, c}, x)}));
  std::vector<float> got = pooled[0].As<float>();
  int64_t bad = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        for (int64_t k = 0; k < c; ++k) {
          float want = -std::numeric_limits<float>::infinity();
          for (int64_t di = 0; di < 3; ++di) {
            for (int64_t dj = 0; dj < 3; ++dj) {
              int64_t y = i * 2 - 1 + di, z = j * 2 - 1 + dj;
              if (y < 0 || y >= h || z < 0 || z >= w) continue;
              want = std::max(want, x[((b * h + y) * w + z) * c + k]);
            }
          }
          if (got[((b * oh + i) * ow + j) * c + k] != want && ++bad <= 5) {
            ADD_FAILURE() << b << " " << i << " " << j << " " << k;
          }
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(ReduceTest, PoolingWindowsCombineInRowMajorOrder) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> uniform(-10.0f, 10.0f);
  const int64_t n = 2, h = 13, w = 11, c = 5;
  std::vector<float> x(n * h * w * c);
  for (float& v : x) v = uniform(rng);
  // Max, 3x3 stride 2, padding 1 low and high: 7x6 outputs.
  ExpectMaxPoolMatchesNaiveLoop(n, h, w, c, 12);
  // ResNet's stem pool, smaller: 3364 positions of 576 elements, which
  // split over the cores.
  ExpectMaxPoolMatchesNaiveLoop(4, 57, 57, 64, 13);
  // Sum over the last two dimensions of [2, 5, 13, 11] read as NCHW:
  // window 2x3, strides 2x1, padding (0, 1) rows and (1, 0) columns.
  ASSERT_OK_AND_ASSIGN(
      auto sums, RunText(R"(
func.func @main(%x: tensor<2x5x13x11xf32>) -> tensor<2x5x7x10xf32> {
  %init = stablehlo.constant dense<0.5> : tensor<f32>
  %r = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[0, 0], [0, 0], [0, 1], [1, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 3>, window_strides = array<i64: 1, 1, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x5x13x11xf32>, tensor<f32>) -> tensor<2x5x7x10xf32>
  return %r : tensor<2x5x7x10xf32>
})",
                         {HostArray::Of(ElementType::kF32, {n, c, h, w}, x)}));
  std::vector<float> sum = sums[0].As<float>();
  for (int64_t plane = 0; plane < n * c; ++plane) {
    for (int64_t i = 0; i < 7; ++i) {
      for (int64_t j = 0; j < 10; ++j) {
        float want = 0.5f;
        for (int64_t di = 0; di < 2; ++di) {
          for (int64_t dj = 0; dj < 3; ++dj) {
            int64_t y = i * 2 + di, z = j - 1 + dj;
            if (y >= h || z < 0 || z >= w) continue;
            want = want + x[(plane * h + y) * w + z];
          }
        }
        EXPECT_EQ(sum[(plane * 7 + i) * 10 + j], want)
            << plane << " " << i << " " << j;
      }
    }
  }
  // An integer sum along a width whose stride (3) passes its window (2),
  // with two padding elements low and one high: some window offsets start
  // past the first output position, and some positions hold one element.
  std::vector<int32_t> v(3 * 10 * 4);
  for (size_t e = 0; e < v.size(); ++e) v[e] = static_cast<int32_t>(e * 7 % 23);
  ASSERT_OK_AND_ASSIGN(
      auto ints, RunText(R"(
func.func @main(%x: tensor<3x10x4xi32>) -> tensor<3x4x4xi32> {
  %init = stablehlo.constant dense<100> : tensor<i32>
  %r = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[[0, 0], [2, 1], [0, 0]]> : tensor<3x2xi64>, window_dimensions = array<i64: 1, 2, 1>, window_strides = array<i64: 1, 3, 1>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) : (tensor<3x10x4xi32>, tensor<i32>) -> tensor<3x4x4xi32>
  return %r : tensor<3x4x4xi32>
})",
                         {HostArray::Of(ElementType::kI32, {3, 10, 4}, v)}));
  std::vector<int32_t> got = ints[0].As<int32_t>();
  for (int64_t b = 0; b < 3; ++b) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        int32_t want = 100;
        for (int64_t dj = 0; dj < 2; ++dj) {
          int64_t z = j * 3 - 2 + dj;
          if (z >= 0 && z < 10) want += v[(b * 10 + z) * 4 + k];
        }
        EXPECT_EQ(got[(b * 4 + j) * 4 + k], want) << b << " " << j << " " << k;
      }
    }
  }
}

// select_and_scatter whose select is a plain compare and whose scatter is
// a known combiner (a max pool's gradient) runs typed, batches over the
// cores. It must give the bits of the region calls, which an unused op in
// the select region forces: the same element selected on ties (GE keeps
// the first, LE too) and NaNs (a NaN compares false, so the candidate
// wins), and overlapping windows adding their sources in order.
TEST(ReduceTest, SelectAndScatterByACompareRunsTypedWithTheRegionsBits) {
  auto program = [](const std::string& direction, bool generic) {
    return StrCat(
        R"(
func.func @main(%x: tensor<3x9x8x4xf32>, %s: tensor<3x5x4x4xf32>) -> tensor<3x9x8x4xf32> {
  %init = stablehlo.constant dense<0.25> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%x, %s, %init) <{padding = dense<[[0, 0], [1, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
)",
        generic ? "    %unused = stablehlo.add %a, %b : tensor<f32>\n" : "",
        "    %c = stablehlo.compare ", direction,
        R"(, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) : (tensor<3x9x8x4xf32>, tensor<3x5x4x4xf32>, tensor<f32>) -> tensor<3x9x8x4xf32>
  return %r : tensor<3x9x8x4xf32>
})");
  };
  std::mt19937 rng(21);
  // Few distinct values, so windows hold ties; some NaNs.
  std::uniform_int_distribution<int> level(0, 5);
  std::vector<float> x(3 * 9 * 8 * 4);
  for (float& v : x) {
    int l = level(rng);
    v = l == 5 && rng() % 4 == 0 ? std::numeric_limits<float>::quiet_NaN()
                                 : static_cast<float>(l);
  }
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> source(3 * 5 * 4 * 4);
  for (float& v : source) v = uniform(rng);
  const std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {3, 9, 8, 4}, x),
      HostArray::Of(ElementType::kF32, {3, 5, 4, 4}, source)};
  for (const std::string direction : {"GE", "GT", "LE", "LT"}) {
    SCOPED_TRACE(direction);
    ASSERT_OK_AND_ASSIGN(auto typed,
                         RunText(program(direction, false), inputs));
    ASSERT_OK_AND_ASSIGN(auto called,
                         RunText(program(direction, true), inputs));
    EXPECT_EQ(typed[0].bytes, called[0].bytes);
    // Every source value lands once: the sum over the result is the inits
    // plus the sources (within rounding).
    double total = 0, expected = 0.25 * x.size();
    for (float v : typed[0].As<float>()) total += v;
    for (float v : source) expected += v;
    EXPECT_NEAR(total, expected, 1e-3);
  }
}

}  // namespace
}  // namespace kiln::testing
