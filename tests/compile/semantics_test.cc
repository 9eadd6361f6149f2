// Semantics the spec pins down, checked through whole programs. Expected
// values are worked out by hand from the spec's definitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <typeinfo>

#include "exec/kernels/element.h"
#include "exec/kernels/sort.h"
#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;

TEST(SemanticsTest, IntegerDivisionByZeroAndOverflow) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<4xi32>, tensor<4xi32>, tensor<2xui32>) {
  %a = stablehlo.constant dense<[7, -7, -2147483648, 5]> : tensor<4xi32>
  %b = stablehlo.constant dense<[0, 0, -1, -2]> : tensor<4xi32>
  %q = stablehlo.divide %a, %b : tensor<4xi32>
  %r = stablehlo.remainder %a, %b : tensor<4xi32>
  %c = stablehlo.constant dense<[7, 9]> : tensor<2xui32>
  %z = stablehlo.constant dense<[0, 4]> : tensor<2xui32>
  %u = stablehlo.divide %c, %z : tensor<2xui32>
  return %q, %r, %u : tensor<4xi32>, tensor<4xi32>, tensor<2xui32>
})"));
  EXPECT_EQ(
      out[0].As<int32_t>(),
      (std::vector<int32_t>{-1, -1, std::numeric_limits<int32_t>::min(), -2}));
  EXPECT_EQ(out[1].As<int32_t>(), (std::vector<int32_t>{7, -7, 0, 1}));
  EXPECT_EQ(out[2].As<uint32_t>(), (std::vector<uint32_t>{0xFFFFFFFFu, 2}));
}

TEST(SemanticsTest, ShiftsPastTheBitWidth) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<3xi32>, tensor<2xi32>, tensor<2xi32>, tensor<1xi4>) {
  %one = stablehlo.constant dense<1> : tensor<3xi32>
  %by = stablehlo.constant dense<[31, 32, -1]> : tensor<3xi32>
  %l = stablehlo.shift_left %one, %by : tensor<3xi32>
  %neg = stablehlo.constant dense<[-8, 8]> : tensor<2xi32>
  %far = stablehlo.constant dense<[40, 40]> : tensor<2xi32>
  %a = stablehlo.shift_right_arithmetic %neg, %far : tensor<2xi32>
  %lg = stablehlo.shift_right_logical %neg, %far : tensor<2xi32>
  %x = stablehlo.constant dense<-8> : tensor<1xi4>
  %s = stablehlo.constant dense<1> : tensor<1xi4>
  %y = stablehlo.shift_right_logical %x, %s : tensor<1xi4>
  return %l, %a, %lg, %y : tensor<3xi32>, tensor<2xi32>, tensor<2xi32>, tensor<1xi4>
})"));
  EXPECT_EQ(out[0].As<int32_t>(),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 0, 0}));
  EXPECT_EQ(out[1].As<int32_t>(), (std::vector<int32_t>{-1, 0}));
  EXPECT_EQ(out[2].As<int32_t>(), (std::vector<int32_t>{0, 0}));
  // 1000b >> 1 = 0100b = 4 in i4.
  EXPECT_EQ(out[3].As<int8_t>(), (std::vector<int8_t>{4}));
}

TEST(SemanticsTest, MaximumAndMinimumPropagateNaNAndOrderZeros) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<3xf32>, tensor<3xf32>) {
  %a = stablehlo.constant dense<[0x7FC00000, 1.0, -0.0]> : tensor<3xf32>
  %b = stablehlo.constant dense<[1.0, 0x7FC00000, 0.0]> : tensor<3xf32>
  %mx = stablehlo.maximum %a, %b : tensor<3xf32>
  %mn = stablehlo.minimum %a, %b : tensor<3xf32>
  return %mx, %mn : tensor<3xf32>, tensor<3xf32>
})"));
  std::vector<float> mx = out[0].As<float>(), mn = out[1].As<float>();
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]));
  EXPECT_FALSE(std::signbit(mx[2]));
  EXPECT_TRUE(std::signbit(mn[2]));
}

// The same rules over arrays that cross the vector loops' ends, for f32 and
// f64 (whose loops run branch-free on the bits): a NaN operand is the
// result (a's where both are, payload and all), of equal values +0 wins
// the maximum and -0 the minimum, in either order. Expected values from
// those rules written out here.
TEST(SemanticsTest, VectorMaximumAndMinimumKeepNaNPayloadsAndZeroOrder) {
  auto check = [](auto zero, const std::string& type) {
    using T = decltype(zero);
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    const T nan_a = std::bit_cast<T>(
        static_cast<U>(std::bit_cast<U>(std::numeric_limits<T>::quiet_NaN()) | 5));
    const T nan_b = std::bit_cast<T>(
        static_cast<U>(std::bit_cast<U>(std::numeric_limits<T>::quiet_NaN()) | 9));
    const T special[] = {T(0), T(-0.0), nan_a, nan_b, T(1.5), T(-1.5),
                         std::numeric_limits<T>::infinity(),
                         -std::numeric_limits<T>::infinity()};
    std::vector<T> a, b;
    for (T x : special) {
      for (T y : special) {
        a.push_back(x);
        b.push_back(y);
      }
    }
    std::mt19937 rng(12);
    std::uniform_int_distribution<int> pick(-3, 3);
    while (a.size() < 1027) {
      a.push_back(T(pick(rng)) * T(0.5));
      b.push_back(T(pick(rng)) * T(0.5));
    }
    const int64_t n = static_cast<int64_t>(a.size());
    const std::string t = "tensor<" + std::to_string(n) + "x" + type + ">";
    ASSERT_OK_AND_ASSIGN(
        auto out,
        RunText("func.func @main(%a: " + t + ", %b: " + t + ") -> (" + t +
                    ", " + t + ") {\n  %mx = stablehlo.maximum %a, %b : " + t +
                    "\n  %mn = stablehlo.minimum %a, %b : " + t +
                    "\n  return %mx, %mn : " + t + ", " + t + "\n}",
                {HostArray::Of(ElementType(type == "f32" ? ElementType::kF32
                                                         : ElementType::kF64),
                               {n}, a),
                 HostArray::Of(ElementType(type == "f32" ? ElementType::kF32
                                                         : ElementType::kF64),
                               {n}, b)}));
    std::vector<T> mx = out[0].template As<T>(), mn = out[1].template As<T>();
    int wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      T want_max, want_min;
      if (a[i] != a[i]) {
        want_max = want_min = a[i];
      } else if (b[i] != b[i]) {
        want_max = want_min = b[i];
      } else if (a[i] == b[i]) {
        want_max = std::signbit(a[i]) ? b[i] : a[i];
        want_min = std::signbit(a[i]) ? a[i] : b[i];
      } else {
        want_max = a[i] > b[i] ? a[i] : b[i];
        want_min = a[i] < b[i] ? a[i] : b[i];
      }
      wrong += std::bit_cast<U>(mx[i]) != std::bit_cast<U>(want_max);
      wrong += std::bit_cast<U>(mn[i]) != std::bit_cast<U>(want_min);
    }
    EXPECT_EQ(wrong, 0) << type;
  };
  check(0.0f, "f32");
  check(0.0, "f64");
}

// clamp(lo, x, hi) = min(max(x, lo), hi) with maximum's and minimum's NaN
// and signed-zero rules, for every shape of bound the kernel has a loop
// for: scalar bounds that are neither NaN nor zero (two compares), scalar
// bounds of zero or NaN, array bounds, and one of each; over a length that
// crosses the vector loops' ends, with the bounds' broadcasts fused into
// the clamp's run (read as scalars) or not.
TEST(SemanticsTest, ClampIsMaximumThenMinimumForEveryShapeOfBound) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // An independent model of IEEE maximum and minimum.
  auto maximum = [](float a, float b) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == 0 && b == 0) return std::signbit(a) ? b : a;
    return a > b ? a : b;
  };
  auto minimum = [](float a, float b) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == 0 && b == 0) return std::signbit(a) ? a : b;
    return a < b ? a : b;
  };
  auto same = [](float a, float b) {
    return std::isnan(a)
               ? std::isnan(b)
               : std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
  };
  const std::vector<float> special = {nan,  -0.0f, 0.0f,  -1.0f, 1.0f, 2.5f,
                                      -inf, inf,   -3.0f, 0.5f,  3.0f};
  constexpr int64_t kCount = 211;
  std::vector<float> x(kCount), lo_array(kCount), hi_array(kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    x[i] = special[i % special.size()] * (i % 3 == 0 ? 1.0f : 0.75f);
    lo_array[i] = special[(i / 3) % special.size()];
    hi_array[i] = special[(i / 7) % special.size()];
  }
  const std::string t = "tensor<" + std::to_string(kCount) + "xf32>";
  auto scalar = [](float v) {
    if (std::isnan(v)) return std::string("0x7FC00000");
    char text[32];
    std::snprintf(text, sizeof(text), "%.9g", v);
    return std::string(text);
  };
  const std::vector<std::pair<float, float>> scalar_bounds = {
      {-1.0f, 2.5f}, {0.0f, 2.5f}, {-1.0f, -0.0f},
      {3.0f, -1.0f}, {nan, 1.0f},  {-inf, inf}};
  for (auto [lo, hi] : scalar_bounds) {
    for (int form = 0; form < 4; ++form) {
      // form 0: both bounds rank-0 scalars; 1: both broadcast to the
      // operand's shape; 2: lo an array, hi broadcast; 3: lo broadcast, hi
      // an array.
      std::string text = "func.func @main(%x: " + t + ", %la: " + t +
                         ", %ha: " + t + ") -> " + t + " {\n";
      text += "  %ls = stablehlo.constant dense<" + scalar(lo) +
              "> : tensor<f32>\n";
      text += "  %hs = stablehlo.constant dense<" + scalar(hi) +
              "> : tensor<f32>\n";
      text +=
          "  %lb = stablehlo.broadcast_in_dim %ls, dims = [] : "
          "(tensor<f32>) -> " +
          t + "\n";
      text +=
          "  %hb = stablehlo.broadcast_in_dim %hs, dims = [] : "
          "(tensor<f32>) -> " +
          t + "\n";
      text += "  %z = stablehlo.negate %x : " + t + "\n";
      const char* bounds[] = {"%ls, %z, %hs", "%lb, %z, %hb", "%la, %z, %hb",
                              "%lb, %z, %ha"};
      std::string operand_types[] = {"(tensor<f32>, " + t + ", tensor<f32>)",
                                     "(" + t + ", " + t + ", " + t + ")",
                                     "(" + t + ", " + t + ", " + t + ")",
                                     "(" + t + ", " + t + ", " + t + ")"};
      text += "  %c = stablehlo.clamp " + std::string(bounds[form]) + " : " +
              operand_types[form] + " -> " + t + "\n";
      text += "  return %c : " + t + "\n}";
      ASSERT_OK_AND_ASSIGN(
          auto out,
          RunText(text,
                  {HostArray::Of(ElementType::kF32, {kCount}, x),
                   HostArray::Of(ElementType::kF32, {kCount}, lo_array),
                   HostArray::Of(ElementType::kF32, {kCount}, hi_array)}));
      std::vector<float> got = out[0].As<float>();
      for (int64_t i = 0; i < kCount; ++i) {
        float z = -x[i];
        float l = form == 2 ? lo_array[i] : lo;
        float h = form == 3 ? hi_array[i] : hi;
        float want = minimum(maximum(z, l), h);
        EXPECT_TRUE(same(got[i], want))
            << "form " << form << " bounds " << lo << ", " << hi << " at " << i
            << ": clamp(" << l << ", " << z << ", " << h << ") = " << got[i]
            << ", want " << want;
      }
    }
  }
}

// Complex products fuse each part's multiply-add, bit for bit the same in
// the vector body and the scalar tail of every version of the kernel
// (kernels/vectorize.h): written as std::complex's a * b, the AVX2 and
// AVX-512 versions once fused them into multiply-add-subtract instructions
// and the scalar code did not, and about half of the complex128 products
// below differed in the last bit. The expected values are computed here.
TEST(SemanticsTest, ComplexProductsFuseEachPartInEveryElement) {
  constexpr int64_t kCount = 1000;
  std::mt19937 rng(31);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::vector<std::complex<double>> a(kCount), b(kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    a[i] = {normal(rng), normal(rng)};
    b[i] = {normal(rng), normal(rng)};
  }
  std::vector<std::complex<float>> af(a.begin(), a.end()),
      bf(b.begin(), b.end());
  const std::string t128 = "tensor<1000xcomplex<f64>>",
                    t64 = "tensor<1000xcomplex<f32>>";
  ASSERT_OK_AND_ASSIGN(
      auto out,
      RunText("func.func @main(%a: " + t128 + ", %b: " + t128 + ", %c: " + t64 +
                  ", %d: " + t64 + ") -> (" + t128 + ", " + t64 +
                  ") {\n  %p = stablehlo.multiply %a, %b : " + t128 +
                  "\n  %q = stablehlo.multiply %c, %d : " + t64 +
                  "\n  return %p, %q : " + t128 + ", " + t64 + "\n}",
              {HostArray::Of(ElementType::kC128, {kCount}, a),
               HostArray::Of(ElementType::kC128, {kCount}, b),
               HostArray::Of(ElementType::kC64, {kCount}, af),
               HostArray::Of(ElementType::kC64, {kCount}, bf)}));
  std::vector<std::complex<double>> p = out[0].As<std::complex<double>>();
  std::vector<std::complex<float>> q = out[1].As<std::complex<float>>();
  int differ128 = 0, differ64 = 0;
  for (int64_t i = 0; i < kCount; ++i) {
    // Each part with one fused multiply-add, as XLA:CPU computes it
    // (elementwise_ops.h, ComplexProduct).
    auto product = [](auto x, auto y) {
      return decltype(x)(std::fma(x.real(), y.real(), -(x.imag() * y.imag())),
                         std::fma(x.real(), y.imag(), x.imag() * y.real()));
    };
    std::complex<double> want = product(a[i], b[i]);
    std::complex<float> want64 = product(af[i], bf[i]);
    differ128 += std::memcmp(&want, &p[i], sizeof(want)) != 0;
    differ64 += std::memcmp(&want64, &q[i], sizeof(want64)) != 0;
  }
  EXPECT_EQ(differ128, 0);
  EXPECT_EQ(differ64, 0);
}

TEST(SemanticsTest, ConvertFloatToIntegerSaturatesAndMapsNaNToZero) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<5xi32>, tensor<3xui8>) {
  %f = stablehlo.constant dense<[0x7FC00000, 1.0e10, -1.0e10, 3.7, -3.7]> : tensor<5xf32>
  %i = stablehlo.convert %f : (tensor<5xf32>) -> tensor<5xi32>
  %g = stablehlo.constant dense<[-1.0, 300.0, 254.9]> : tensor<3xf32>
  %u = stablehlo.convert %g : (tensor<3xf32>) -> tensor<3xui8>
  return %i, %u : tensor<5xi32>, tensor<3xui8>
})"));
  EXPECT_EQ(out[0].As<int32_t>(),
            (std::vector<int32_t>{0, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min(), 3, -3}));
  EXPECT_EQ(out[1].As<uint8_t>(), (std::vector<uint8_t>{0, 255, 254}));
}

TEST(SemanticsTest, ConvertToBf16AndF8RoundsToNearestEven) {
  // 1 + 2^-8 lies halfway between bf16 1.0 and 1 + 2^-7: ties to even
  // (1.0, bits 0x3F80). 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd)
  // and 1 + 2^-6 (even): 0x3F82. In f8E4M3FN (3 mantissa bits), 1.0625 is
  // halfway between 1.0 (0x38) and 1.125 (0x39): 0x38; 1.1875 between
  // 1.125 and 1.25 (0x3A): 0x3A.
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<2xbf16>, tensor<2xf8E4M3FN>) {
  %f = stablehlo.constant dense<[1.00390625, 1.01171875]> : tensor<2xf32>
  %b = stablehlo.convert %f : (tensor<2xf32>) -> tensor<2xbf16>
  %g = stablehlo.constant dense<[1.0625, 1.1875]> : tensor<2xf32>
  %e = stablehlo.convert %g : (tensor<2xf32>) -> tensor<2xf8E4M3FN>
  return %b, %e : tensor<2xbf16>, tensor<2xf8E4M3FN>
})"));
  EXPECT_EQ(out[0].As<uint16_t>(), (std::vector<uint16_t>{0x3F80, 0x3F82}));
  EXPECT_EQ(out[1].As<uint8_t>(), (std::vector<uint8_t>{0x38, 0x3A}));
}

TEST(SemanticsTest, CompareTotalOrderOrdersNaNsAndZeros) {
  // -NaN < -inf < -0 < +0 < +inf < +NaN under TOTALORDER.
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<5xi1>, tensor<2xi1>) {
  %a = stablehlo.constant dense<[0xFFC00000, 0xFF800000, -0.0, 0.0, 0x7F800000]> : tensor<5xf32>
  %b = stablehlo.constant dense<[0xFF800000, -0.0, 0.0, 0x7F800000, 0x7FC00000]> : tensor<5xf32>
  %lt = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  %n = stablehlo.constant dense<[0x7FC00000, -0.0]> : tensor<2xf32>
  %m = stablehlo.constant dense<[0x7FC00000, 0.0]> : tensor<2xf32>
  %eq = stablehlo.compare EQ, %n, %m, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %lt, %eq : tensor<5xi1>, tensor<2xi1>
})"));
  EXPECT_EQ(out[0].As<uint8_t>(), (std::vector<uint8_t>{1, 1, 1, 1, 1}));
  // IEEE comparison: NaN != NaN, -0 == +0.
  EXPECT_EQ(out[1].As<uint8_t>(), (std::vector<uint8_t>{0, 1}));
}

TEST(SemanticsTest, EmptyReductionGivesTheInitValue) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> tensor<3xf32> {
  %x = stablehlo.constant dense<> : tensor<3x0xf32>
  %init = stablehlo.constant dense<5.0> : tensor<f32>
  %r = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [1] : (tensor<3x0xf32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
})"));
  EXPECT_EQ(out[0].As<float>(), (std::vector<float>{5, 5, 5}));
}

TEST(SemanticsTest, GatherClampsAndScatterSkipsOutOfBoundsIndices) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<2x2xi32>, tensor<5xi32>) {
  %operand = stablehlo.constant dense<[0, 10, 20, 30, 40]> : tensor<5xi32>
  %idx = stablehlo.constant dense<[[-3], [4]]> : tensor<2x1xi32>
  %g = "stablehlo.gather"(%operand, %idx) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1], start_index_map = [0], index_vector_dim = 1>,
    slice_sizes = array<i64: 2>, indices_are_sorted = false
  } : (tensor<5xi32>, tensor<2x1xi32>) -> tensor<2x2xi32>
  %sidx = stablehlo.constant dense<[[1], [4], [-1]]> : tensor<3x1xi32>
  %upd = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>
  %s = "stablehlo.scatter"(%operand, %sidx, %upd) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %sum = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %sum : tensor<i32>
  }) {
    scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
    indices_are_sorted = false, unique_indices = false
  } : (tensor<5xi32>, tensor<3x1xi32>, tensor<3x2xi32>) -> tensor<5xi32>
  return %g, %s : tensor<2x2xi32>, tensor<5xi32>
})"));
  // Starts clamp to [0, 3]: -3 -> 0, 4 -> 3.
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{0, 10, 30, 40}));
  // Only the window at 1 fits ([1, 3)); windows at 4 and -1 are skipped.
  EXPECT_EQ(out[1].As<int32_t>(), (std::vector<int32_t>{0, 11, 22, 30, 40}));
}

// Gathers run their windows over the cores in chunks: rows (one memcpy
// each) and strided columns, with indices in range, below it and past it
// (clamped), each window landing where the spec puts it.
TEST(SemanticsTest, GatheredRowsAndColumnsLandInPlaceAcrossChunks) {
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%x: tensor<512x64xf32>, %i: tensor<3000x1xi32>)
    -> (tensor<3000x64xf32>, tensor<64x3000xf32>) {
  %rows = "stablehlo.gather"(%x, %i) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 64>, indices_are_sorted = false
  } : (tensor<512x64xf32>, tensor<3000x1xi32>) -> tensor<3000x64xf32>
  %xt = stablehlo.transpose %x, dims = [1, 0] : (tensor<512x64xf32>) -> tensor<64x512xf32>
  %columns = "stablehlo.gather"(%xt, %i) {
    dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>,
    slice_sizes = array<i64: 64, 1>, indices_are_sorted = false
  } : (tensor<64x512xf32>, tensor<3000x1xi32>) -> tensor<64x3000xf32>
  return %rows, %columns : tensor<3000x64xf32>, tensor<64x3000xf32>
})"));
  std::vector<float> x(512 * 64);
  for (size_t e = 0; e < x.size(); ++e) x[e] = static_cast<float>(e);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> pick(-40, 551);
  std::vector<int32_t> indices(3000);
  for (int32_t& index : indices) index = pick(rng);
  ASSERT_OK_AND_ASSIGN(
      auto out,
      RunPlan(*plan, {HostArray::Of(ElementType::kF32, {512, 64}, x),
                      HostArray::Of(ElementType::kI32, {3000, 1}, indices)}));
  std::vector<float> rows = out[0].As<float>(), columns = out[1].As<float>();
  int wrong = 0;
  for (int n = 0; n < 3000; ++n) {
    int row = std::clamp(indices[n], 0, 511);
    for (int c = 0; c < 64; ++c) {
      wrong += rows[n * 64 + c] != x[row * 64 + c];
      wrong += columns[c * 3000 + n] != x[row * 64 + c];
    }
  }
  EXPECT_EQ(wrong, 0);
}

// A gather of columns (one strided window dimension, windows side by side
// in the output, which the kernel writes a row at a time) at no indices
// is an empty result, not a division by the zero windows.
TEST(SemanticsTest, AColumnGatherAtNoIndicesIsEmpty) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> tensor<4x0xf32> {
  %x = stablehlo.constant dense<1.0> : tensor<4x5xf32>
  %i = stablehlo.constant dense<0> : tensor<0x1xi32>
  %g = "stablehlo.gather"(%x, %i) {
    dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>,
    slice_sizes = array<i64: 4, 1>, indices_are_sorted = false
  } : (tensor<4x5xf32>, tensor<0x1xi32>) -> tensor<4x0xf32>
  return %g : tensor<4x0xf32>
})"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].As<float>().empty());
}

// JAX's gathers in mode="fill" (jnp.take's default): a select of the
// gather, NaN (or an integer's minimum) where the in-bounds mask is false,
// with the mask computed from the indices as JAX does. The gather writes
// the fill value itself (GatherParams::masked): no select step is left,
// and the values match the unfused plan (a gather and a select) and a
// loop here, for contiguous rows and for strided columns.
TEST(SemanticsTest, FillModeGathersWriteTheFillValueWithTheWindows) {
  const std::string text = R"(
func.func @main(%x: tensor<512x64xf32>, %y: tensor<64x512xi32>, %i: tensor<3000xi32>)
    -> (tensor<3000x64xf32>, tensor<64x3000xi32>) {
  %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %min = stablehlo.constant dense<-2147483648> : tensor<i32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %last = stablehlo.constant dense<511> : tensor<i32>
  %zb = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<i32>) -> tensor<3000xi32>
  %lb = stablehlo.broadcast_in_dim %last, dims = [] : (tensor<i32>) -> tensor<3000xi32>
  %ge = stablehlo.compare GE, %i, %zb, SIGNED : (tensor<3000xi32>, tensor<3000xi32>) -> tensor<3000xi1>
  %le = stablehlo.compare LE, %i, %lb, SIGNED : (tensor<3000xi32>, tensor<3000xi32>) -> tensor<3000xi1>
  %ok = stablehlo.and %ge, %le : tensor<3000xi1>
  %i2 = stablehlo.reshape %i : (tensor<3000xi32>) -> tensor<3000x1xi32>
  %rows = "stablehlo.gather"(%x, %i2) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 64>, indices_are_sorted = false
  } : (tensor<512x64xf32>, tensor<3000x1xi32>) -> tensor<3000x64xf32>
  %okr = stablehlo.broadcast_in_dim %ok, dims = [0] : (tensor<3000xi1>) -> tensor<3000x64xi1>
  %nanb = stablehlo.broadcast_in_dim %nan, dims = [] : (tensor<f32>) -> tensor<3000x64xf32>
  %r = stablehlo.select %okr, %rows, %nanb : tensor<3000x64xi1>, tensor<3000x64xf32>
  %columns = "stablehlo.gather"(%y, %i2) {
    dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>,
    slice_sizes = array<i64: 64, 1>, indices_are_sorted = false
  } : (tensor<64x512xi32>, tensor<3000x1xi32>) -> tensor<64x3000xi32>
  %ok1 = stablehlo.reshape %ok : (tensor<3000xi1>) -> tensor<1x3000xi1>
  %okc = stablehlo.broadcast_in_dim %ok1, dims = [0, 1] : (tensor<1x3000xi1>) -> tensor<64x3000xi1>
  %minb = stablehlo.broadcast_in_dim %min, dims = [] : (tensor<i32>) -> tensor<64x3000xi32>
  %c = stablehlo.select %okc, %columns, %minb : tensor<64x3000xi1>, tensor<64x3000xi32>
  return %r, %c : tensor<3000x64xf32>, tensor<64x3000xi32>
})";
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(text));
  compile::CompileOptions unfused_options;
  unfused_options.fuse_elementwise = false;
  ASSERT_OK_AND_ASSIGN(auto unfused, CompileText(text, unfused_options));
  for (const exec::Step& step : plan->main().steps) {
    EXPECT_EQ(step.where.find("stablehlo.select"), std::string::npos)
        << step.where;
  }
  std::vector<float> x(512 * 64);
  std::vector<int32_t> y(64 * 512);
  for (size_t e = 0; e < x.size(); ++e) x[e] = static_cast<float>(e);
  for (size_t e = 0; e < y.size(); ++e) y[e] = static_cast<int32_t>(e) - 7;
  std::mt19937 rng(8);
  std::uniform_int_distribution<int32_t> pick(-40, 551);
  std::vector<int32_t> indices(3000);
  for (int32_t& index : indices) index = pick(rng);
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {512, 64}, x),
      HostArray::Of(ElementType::kI32, {64, 512}, y),
      HostArray::Of(ElementType::kI32, {3000}, indices)};
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  ASSERT_OK_AND_ASSIGN(auto want, RunPlan(*unfused, inputs));
  EXPECT_TRUE(out[0].bytes == want[0].bytes);
  EXPECT_TRUE(out[1].bytes == want[1].bytes);
  std::vector<float> rows = out[0].As<float>();
  std::vector<int32_t> columns = out[1].As<int32_t>();
  int wrong = 0, filled = 0;
  for (int n = 0; n < 3000; ++n) {
    const bool in_bounds = indices[n] >= 0 && indices[n] <= 511;
    filled += !in_bounds;
    for (int c = 0; c < 64; ++c) {
      if (in_bounds) {
        wrong += rows[n * 64 + c] != x[indices[n] * 64 + c];
        wrong += columns[c * 3000 + n] != y[c * 512 + indices[n]];
      } else {
        wrong += !std::isnan(rows[n * 64 + c]);
        wrong += columns[c * 3000 + n] != std::numeric_limits<int32_t>::min();
      }
    }
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(filled, 100);  // the picks reach 40 past each end
}

// A scatter with a known combiner whose window rows are contiguous (an
// embedding's gradient: rows of updates added into rows of a table)
// combines a row at a time. Each element still takes its updates in the
// order of the updates: with repeated indices (float sums, whose order
// shows in the bits) and out-of-range ones (skipped), the result is the
// bits of the per-element body calls that an unused op in the body
// forces, and within rounding of sums computed here.
TEST(SemanticsTest, ScatterAddsWholeRowsInTheUpdatesOrder) {
  auto program = [](bool generic) {
    return std::string(
               "func.func @main(%t: tensor<10x3x8xf32>, %i: tensor<50x1xi32>, "
               "%u: tensor<50x3x8xf32>) -> tensor<10x3x8xf32> {\n"
               "  %r = \"stablehlo.scatter\"(%t, %i, %u) "
               "<{scatter_dimension_numbers = #stablehlo.scatter<"
               "update_window_dims = [1, 2], inserted_window_dims = [0], "
               "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> "
               "({\n"
               "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
               "    %s = stablehlo.add %a, %b : tensor<f32>\n") +
           (generic ? "    %unused = stablehlo.multiply %a, %b : tensor<f32>\n"
                    : "") +
           "    stablehlo.return %s : tensor<f32>\n"
           "  }) : (tensor<10x3x8xf32>, tensor<50x1xi32>, tensor<50x3x8xf32>) "
           "-> tensor<10x3x8xf32>\n"
           "  return %r : tensor<10x3x8xf32>\n}\n";
  };
  std::vector<float> table(10 * 3 * 8), updates(50 * 3 * 8);
  for (size_t k = 0; k < table.size(); ++k) table[k] = 0.1f * k;
  for (size_t k = 0; k < updates.size(); ++k) {
    updates[k] = 1.0f / (1.0f + k) * ((k % 3) ? 1e4f : 1e-4f);
  }
  std::vector<int32_t> indices(50);
  for (int k = 0; k < 50; ++k) indices[k] = (k * 7) % 12 - 1;  // -1..10
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {10, 3, 8}, table),
      HostArray::Of(ElementType::kI32, {50, 1}, indices),
      HostArray::Of(ElementType::kF32, {50, 3, 8}, updates)};
  ASSERT_OK_AND_ASSIGN(auto got, RunText(program(false), inputs));
  ASSERT_OK_AND_ASSIGN(auto want, RunText(program(true), inputs));
  EXPECT_TRUE(got[0].bytes == want[0].bytes);
  std::vector<double> sums(table.begin(), table.end());
  for (int k = 0; k < 50; ++k) {
    if (indices[k] < 0 || indices[k] >= 10) continue;
    for (int e = 0; e < 24; ++e)
      sums[indices[k] * 24 + e] += updates[k * 24 + e];
  }
  std::vector<float> result = got[0].As<float>();
  for (size_t e = 0; e < sums.size(); ++e) {
    EXPECT_NEAR(result[e], sums[e], 1e-6 * (1 + std::fabs(sums[e]))) << e;
  }
}

// Gathers and scatters of single elements (v[i], jnp.take_along_axis,
// x.at[i].add(u), segment_sum) step their offsets along the batch space's
// last dimension and run typed: over a 2-D batch space (rows carrying into
// the dimension before), with batching dimensions, with indices out of
// range (gathers clamp, scatters skip) and repeated (scatters apply in the
// updates' order), each result matches a loop here; the scatter's sums are
// the bits of the per-element body calls an unused op in the body forces.
TEST(SemanticsTest, SingleElementGathersAndScattersMatchALoop) {
  auto program = [](bool generic) {
    return std::string(R"(
func.func @main(%v: tensor<1000xf32>, %i: tensor<37x53x1xi32>, %x: tensor<37x61xf32>,
                %u: tensor<37x53xf32>) -> (tensor<37x53xf32>, tensor<37x53xf32>, tensor<1000xf32>, tensor<37x61xf32>) {
  %g = "stablehlo.gather"(%v, %i) {
    dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>,
    slice_sizes = array<i64: 1>, indices_are_sorted = false
  } : (tensor<1000xf32>, tensor<37x53x1xi32>) -> tensor<37x53xf32>
  %t = "stablehlo.gather"(%x, %i) {
    dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>,
    slice_sizes = array<i64: 1, 1>, indices_are_sorted = false
  } : (tensor<37x61xf32>, tensor<37x53x1xi32>) -> tensor<37x53xf32>
  %s = "stablehlo.scatter"(%v, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
)") + (generic ? "    %unused = stablehlo.multiply %a, %b : tensor<f32>\n" : "") + R"(
    stablehlo.return %sum : tensor<f32>
  }) {
    scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>,
    indices_are_sorted = false, unique_indices = false
  } : (tensor<1000xf32>, tensor<37x53x1xi32>, tensor<37x53xf32>) -> tensor<1000xf32>
  %r = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) {
    scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>,
    indices_are_sorted = false, unique_indices = false
  } : (tensor<37x61xf32>, tensor<37x53x1xi32>, tensor<37x53xf32>) -> tensor<37x61xf32>
  return %g, %t, %s, %r : tensor<37x53xf32>, tensor<37x53xf32>, tensor<1000xf32>, tensor<37x61xf32>
})";
  };
  std::mt19937 rng(11);
  std::vector<float> v(1000), x(37 * 61), u(37 * 53);
  for (size_t e = 0; e < v.size(); ++e) v[e] = 0.5f * e;
  for (size_t e = 0; e < x.size(); ++e) x[e] = -0.25f * e;
  std::uniform_real_distribution<float> value(-1e3f, 1e3f);
  for (float& e : u) e = value(rng);
  // Mostly in range of both operands (0..60), some past either end, many
  // repeated.
  std::uniform_int_distribution<int32_t> pick(-5, 65);
  std::vector<int32_t> indices(37 * 53);
  for (int32_t& index : indices) index = pick(rng);
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {1000}, v),
      HostArray::Of(ElementType::kI32, {37, 53, 1}, indices),
      HostArray::Of(ElementType::kF32, {37, 61}, x),
      HostArray::Of(ElementType::kF32, {37, 53}, u)};
  ASSERT_OK_AND_ASSIGN(auto got, RunText(program(false), inputs));
  ASSERT_OK_AND_ASSIGN(auto generic, RunText(program(true), inputs));
  std::vector<float> gathered(37 * 53), taken(37 * 53);
  std::vector<float> summed = v, replaced = x;
  for (int r = 0; r < 37; ++r) {
    for (int c = 0; c < 53; ++c) {
      const int n = r * 53 + c, index = indices[n];
      gathered[n] = v[std::clamp(index, 0, 999)];
      taken[n] = x[r * 61 + std::clamp(index, 0, 60)];
      if (index >= 0 && index < 1000) summed[index] += u[n];
      if (index >= 0 && index < 61) replaced[r * 61 + index] = u[n];
    }
  }
  EXPECT_EQ(got[0].As<float>(), gathered);
  EXPECT_EQ(got[1].As<float>(), taken);
  EXPECT_EQ(got[2].As<float>(), summed);  // the same order of additions
  EXPECT_TRUE(got[2].bytes == generic[2].bytes);
  EXPECT_EQ(got[3].As<float>(), replaced);
}

// A reduce over dimensions of size one is body(init, x) per element (an
// elementwise op, not a reduction of rows of one): an init that is not
// the identity still counts, for sums, maxima and logical ands; and a
// broadcast that only adds dimensions of one (an alias of its operand)
// keeps the values in place.
TEST(SemanticsTest, ReducesOverDimensionsOfOneApplyTheBodyToTheInit) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<3xi1>, tensor<1x2x1x3xf32>) {
  %x = stablehlo.constant dense<[[[1.5], [-2.0], [0.25]], [[4.0], [-0.0], [7.0]]]> : tensor<2x3x1xf32>
  %k = stablehlo.constant dense<[[[1], [9], [-4]], [[3], [2], [8]]]> : tensor<2x3x1xi32>
  %b = stablehlo.constant dense<[[true], [false], [true]]> : tensor<3x1xi1>
  %five = stablehlo.constant dense<5.0> : tensor<f32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %t = stablehlo.constant dense<true> : tensor<i1>
  %s = stablehlo.reduce(%x init: %five) applies stablehlo.add across dimensions = [2] : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3xf32>
  %m = stablehlo.reduce(%k init: %three) applies stablehlo.maximum across dimensions = [2] : (tensor<2x3x1xi32>, tensor<i32>) -> tensor<2x3xi32>
  %a = stablehlo.reduce(%b init: %t) applies stablehlo.and across dimensions = [1] : (tensor<3x1xi1>, tensor<i1>) -> tensor<3xi1>
  %r = stablehlo.broadcast_in_dim %s, dims = [1, 3] : (tensor<2x3xf32>) -> tensor<1x2x1x3xf32>
  return %s, %m, %a, %r : tensor<2x3xf32>, tensor<2x3xi32>, tensor<3xi1>, tensor<1x2x1x3xf32>
})"));
  const std::vector<float> sums = {6.5f, 3.0f, 5.25f, 9.0f, 5.0f, 12.0f};
  EXPECT_EQ(out[0].As<float>(), sums);
  EXPECT_EQ(out[1].As<int32_t>(), (std::vector<int32_t>{3, 9, 3, 3, 3, 8}));
  EXPECT_EQ(out[2].As<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(out[3].As<float>(), sums);
}

// Transposes of the last two dimensions copy whole rows in tiles (the
// output's rows run along the source): every element lands where a loop
// here puts it, for each element size, for sizes no tile divides, across
// the ranges the cores split the output into (which start mid-row), and
// for a batch of matrices whose planes the tiles must not cross.
TEST(SemanticsTest, TransposesInTilesPutEveryElementInPlace) {
  struct Case {
    std::string type;
    ElementType element;
    int bytes;
  };
  for (const Case& c : {Case{"i8", ElementType::kI8, 1},
                        Case{"i16", ElementType::kI16, 2},
                        Case{"i32", ElementType::kI32, 4},
                        Case{"i64", ElementType::kI64, 8}}) {
    const std::string in2 = "tensor<300x517x" + c.type + ">";
    const std::string out2 = "tensor<517x300x" + c.type + ">";
    const std::string in3 = "tensor<5x67x130x" + c.type + ">";
    const std::string out3 = "tensor<5x130x67x" + c.type + ">";
    const std::string text =
        "func.func @main(%x: " + in2 + ", %y: " + in3 + ") -> (" + out2 +
        ", " + out3 + ") {\n  %t = stablehlo.transpose %x, dims = [1, 0] : (" +
        in2 + ") -> " + out2 + "\n  %u = stablehlo.transpose %y, dims = [0, 2, 1] : (" +
        in3 + ") -> " + out3 + "\n  return %t, %u : " + out2 + ", " + out3 +
        "\n}";
    // Distinct small values in every element size: the position's low
    // bits, then its higher ones.
    auto fill = [&](int64_t count) {
      std::vector<uint8_t> bytes(count * c.bytes);
      for (int64_t e = 0; e < count; ++e) {
        for (int b = 0; b < c.bytes; ++b) {
          bytes[e * c.bytes + b] = static_cast<uint8_t>((e >> (8 * b)) + 3 * b);
        }
      }
      return bytes;
    };
    std::vector<uint8_t> x = fill(300 * 517), y = fill(5 * 67 * 130);
    ASSERT_OK_AND_ASSIGN(
        auto out, RunText(text, {HostArray::Of(c.element, {300, 517}, x),
                                 HostArray::Of(c.element, {5, 67, 130}, y)}));
    int wrong = 0;
    for (int i = 0; i < 517; ++i) {
      for (int j = 0; j < 300; ++j) {
        wrong += std::memcmp(&out[0].bytes[(i * 300 + j) * c.bytes],
                             &x[(j * 517 + i) * c.bytes], c.bytes) != 0;
      }
    }
    for (int b = 0; b < 5; ++b) {
      for (int i = 0; i < 130; ++i) {
        for (int j = 0; j < 67; ++j) {
          wrong += std::memcmp(
                       &out[1].bytes[((b * 130 + i) * 67 + j) * c.bytes],
                       &y[((b * 67 + j) * 130 + i) * c.bytes], c.bytes) != 0;
        }
      }
    }
    EXPECT_EQ(wrong, 0) << c.type;
  }
}

TEST(SemanticsTest, SortIsStableWithAnyComparator) {
  // Sort by key parity only: evens before odds, ties keep their order.
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<6xi32>, tensor<6xi32>) {
  %k = stablehlo.constant dense<[5, 2, 3, 8, 1, 4]> : tensor<6xi32>
  %v = stablehlo.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi32>
  %r:2 = "stablehlo.sort"(%k, %v) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<i32>):
    %two = stablehlo.constant dense<2> : tensor<i32>
    %pa = stablehlo.remainder %a, %two : tensor<i32>
    %pb = stablehlo.remainder %b, %two : tensor<i32>
    %lt = stablehlo.compare LT, %pa, %pb, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<6xi32>, tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>)
  return %r#0, %r#1 : tensor<6xi32>, tensor<6xi32>
})"));
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{2, 8, 4, 5, 3, 1}));
  EXPECT_EQ(out[1].As<int32_t>(), (std::vector<int32_t>{1, 3, 5, 0, 2, 4}));
}

// jnp.sort's float comparator (canonicalize -0 to +0 and every NaN to a
// positive NaN, then compare in total order) runs as a known comparator
// rather than a region call per comparison. Over rows with NaNs of both
// signs, zeros of both signs, infinities and repeats, with a payload that
// shows the order among equal keys, it gives the bits of the same
// comparator with one unused op added, which the match refuses.
TEST(SemanticsTest, JaxFloatSortComparatorKeepsItsOrder) {
  auto program = [](const std::string& direction, bool generic) {
    return std::string(
               "func.func @main(%k: tensor<20x64xf32>, %v: tensor<20x64xi32>) "
               "-> (tensor<20x64xf32>, tensor<20x64xi32>) {\n"
               "  %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n"
               "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
               "  %r:2 = \"stablehlo.sort\"(%k, %v) ({\n"
               "  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: "
               "tensor<i32>):\n"
               "    %1 = stablehlo.compare EQ, %a, %zero, FLOAT : "
               "(tensor<f32>, "
               "tensor<f32>) -> tensor<i1>\n"
               "    %2 = stablehlo.select %1, %zero, %a : tensor<i1>, "
               "tensor<f32>\n"
               "    %3 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, "
               "tensor<f32>) -> tensor<i1>\n"
               "    %4 = stablehlo.select %3, %nan, %2 : tensor<i1>, "
               "tensor<f32>\n"
               "    %5 = stablehlo.compare EQ, %b, %zero, FLOAT : "
               "(tensor<f32>, "
               "tensor<f32>) -> tensor<i1>\n"
               "    %6 = stablehlo.select %5, %zero, %b : tensor<i1>, "
               "tensor<f32>\n"
               "    %7 = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f32>, "
               "tensor<f32>) -> tensor<i1>\n"
               "    %8 = stablehlo.select %7, %nan, %6 : tensor<i1>, "
               "tensor<f32>\n") +
           (generic ? "    %unused = stablehlo.add %a, %b : tensor<f32>\n"
                    : "") +
           "    %9 = stablehlo.compare " + direction +
           ", %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
           "    stablehlo.return %9 : tensor<i1>\n"
           "  }) {dimension = 1 : i64, is_stable = true} : (tensor<20x64xf32>, "
           "tensor<20x64xi32>) -> (tensor<20x64xf32>, tensor<20x64xi32>)\n"
           "  return %r#0, %r#1 : tensor<20x64xf32>, tensor<20x64xi32>\n}\n";
  };
  std::mt19937 rng(31);
  std::uniform_int_distribution<int> pick(0, 9);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float choices[10] = {nan,  -nan, 0.0f,  -0.0f, inf,
                             -inf, 1.5f, -2.0f, 1.5f,  3.0f};
  std::vector<float> keys(20 * 64);
  for (float& k : keys) k = choices[pick(rng)];
  std::vector<int32_t> payload(20 * 64);
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = static_cast<int32_t>(i);
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {20, 64}, keys),
      HostArray::Of(ElementType::kI32, {20, 64}, payload)};
  for (const std::string direction : {"LT", "GT"}) {
    SCOPED_TRACE(direction);
    for (bool generic : {false, true}) {
      ASSERT_OK_AND_ASSIGN(auto plan, CompileText(program(direction, generic)));
      int known = 0;
      for (const exec::Step& step : plan->main().steps) {
        known += exec::SortsByKnownComparator(*step.kernel);
      }
      EXPECT_EQ(known, generic ? 0 : 1);
    }
    ASSERT_OK_AND_ASSIGN(auto got, RunText(program(direction, false), inputs));
    ASSERT_OK_AND_ASSIGN(auto want, RunText(program(direction, true), inputs));
    EXPECT_TRUE(got[0].bytes == want[0].bytes);
    EXPECT_EQ(got[1].As<int32_t>(), want[1].As<int32_t>());
    // Ascending: finite and infinite values in order, every NaN last.
    if (direction == "LT") {
      std::vector<float> row = got[0].As<float>();
      for (int r = 0; r < 20; ++r) {
        for (int i = 1; i < 64; ++i) {
          const float a = row[r * 64 + i - 1], b = row[r * 64 + i];
          if (std::isnan(b)) continue;
          EXPECT_FALSE(std::isnan(a)) << r << " " << i;
          EXPECT_LE(a, b) << r << " " << i;
        }
      }
    }
  }
}

// lax.top_k arrives as a chlo.top_k composite; Kiln selects the k largest
// with the top_k kernel instead of inlining the decomposition, which sorts
// the whole dimension. Both give the same values and indices (ties in
// index order, NaNs of positive sign first, +0 before -0), over rows with
// repeats, NaNs of both signs and zeros of both signs.
TEST(SemanticsTest, TopKCompositeSelectsWhatItsDecompositionSorts) {
  const std::string decomposition = R"(
func.func private @chlo.top_k.impl(%x: tensor<40x300xf32>) -> (tensor<40x7xf32>, tensor<40x7xi32>) {
  %iota = stablehlo.iota dim = 1 : tensor<40x300xi32>
  %s:2 = "stablehlo.sort"(%x, %iota) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %gt = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %gt : tensor<i1>
  }) : (tensor<40x300xf32>, tensor<40x300xi32>) -> (tensor<40x300xf32>, tensor<40x300xi32>)
  %v = stablehlo.slice %s#0 [0:40, 0:7] : (tensor<40x300xf32>) -> tensor<40x7xf32>
  %i = stablehlo.slice %s#1 [0:40, 0:7] : (tensor<40x300xi32>) -> tensor<40x7xi32>
  return %v, %i : tensor<40x7xf32>, tensor<40x7xi32>
}
)";
  const std::string composite = R"(
func.func @main(%x: tensor<40x300xf32>) -> (tensor<40x7xf32>, tensor<40x7xi32>) {
  %r:2 = stablehlo.composite "chlo.top_k" %x {composite_attributes = {k = 7 : i64}, decomposition = @chlo.top_k.impl, version = 1 : i32} : (tensor<40x300xf32>) -> (tensor<40x7xf32>, tensor<40x7xi32>)
  return %r#0, %r#1 : tensor<40x7xf32>, tensor<40x7xi32>
}
)";
  const std::string direct = R"(
func.func @main(%x: tensor<40x300xf32>) -> (tensor<40x7xf32>, tensor<40x7xi32>) {
  %r:2 = func.call @chlo.top_k.impl(%x) : (tensor<40x300xf32>) -> (tensor<40x7xf32>, tensor<40x7xi32>)
  return %r#0, %r#1 : tensor<40x7xf32>, tensor<40x7xi32>
}
)";
  std::mt19937 rng(37);
  std::uniform_int_distribution<int> pick(0, 7);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float choices[8] = {nan, -nan, 0.0f, -0.0f, 2.5f, 2.5f, -1.0f, 7.0f};
  std::vector<float> x(40 * 300);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = (i % 5 == 0) ? choices[pick(rng)]
                        : static_cast<float>(static_cast<int>(rng() % 50));
  }
  std::vector<HostArray> inputs = {
      HostArray::Of(ElementType::kF32, {40, 300}, x)};
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(composite + decomposition));
  int sorts = 0;
  for (const exec::Step& step : plan->main().steps) {
    sorts += step.where.find("stablehlo.sort") != std::string::npos;
  }
  EXPECT_EQ(sorts, 0);
  ASSERT_OK_AND_ASSIGN(auto got, RunPlan(*plan, inputs));
  ASSERT_OK_AND_ASSIGN(auto want, RunText(direct + decomposition, inputs));
  EXPECT_TRUE(got[0].bytes == want[0].bytes);
  EXPECT_EQ(got[1].As<int32_t>(), want[1].As<int32_t>());
}

// The same for integers: i32 rows of many repeats (ties in index order)
// and ui64 rows whose values pass 2^63 (ordered as unsigned).
TEST(SemanticsTest, TopKCompositeOfIntegersSelectsWhatItsDecompositionSorts) {
  for (const std::string type : {"i32", "ui64"}) {
    const std::string compare = type == "i32" ? "SIGNED" : "UNSIGNED";
    const std::string t = "tensor<40x300x" + type + ">";
    const std::string r = "tensor<40x7x" + type + ">";
    const std::string decomposition = R"(
func.func private @chlo.top_k.impl(%x: )" +
                                      t + R"() -> ()" + r +
                                      R"(, tensor<40x7xi32>) {
  %iota = stablehlo.iota dim = 1 : tensor<40x300xi32>
  %s:2 = "stablehlo.sort"(%x, %iota) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<)" + type + R"(>, %b: tensor<)" +
                                      type +
                                      R"(>, %c: tensor<i32>, %d: tensor<i32>):
    %gt = stablehlo.compare GT, %a, %b, )" +
                                      compare + R"( : (tensor<)" + type +
                                      ">, tensor<" + type + R"(>) -> tensor<i1>
    stablehlo.return %gt : tensor<i1>
  }) : ()" + t + R"(, tensor<40x300xi32>) -> ()" +
                                      t +
                                      R"(, tensor<40x300xi32>)
  %v = stablehlo.slice %s#0 [0:40, 0:7] : ()" +
                                      t + ") -> " + r + R"(
  %i = stablehlo.slice %s#1 [0:40, 0:7] : (tensor<40x300xi32>) -> tensor<40x7xi32>
  return %v, %i : )" + r + R"(, tensor<40x7xi32>
}
)";
    const std::string composite = "func.func @main(%x: " + t + ") -> (" + r +
                                  R"(, tensor<40x7xi32>) {
  %r:2 = stablehlo.composite "chlo.top_k" %x {composite_attributes = {k = 7 : i64}, decomposition = @chlo.top_k.impl, version = 1 : i32} : ()" +
                                  t + ") -> (" + r + R"(, tensor<40x7xi32>)
  return %r#0, %r#1 : )" + r + R"(, tensor<40x7xi32>
}
)";
    const std::string direct = "func.func @main(%x: " + t + ") -> (" + r +
                               R"(, tensor<40x7xi32>) {
  %r:2 = func.call @chlo.top_k.impl(%x) : ()" +
                               t + ") -> (" + r + R"(, tensor<40x7xi32>)
  return %r#0, %r#1 : )" + r + R"(, tensor<40x7xi32>
}
)";
    std::mt19937_64 rng(41);
    HostArray input;
    if (type == "i32") {
      std::vector<int32_t> x(40 * 300);
      for (int32_t& v : x) v = static_cast<int32_t>(rng() % 13) - 6;
      input = HostArray::Of(ElementType::kI32, {40, 300}, x);
    } else {
      std::vector<uint64_t> x(40 * 300);
      for (uint64_t& v : x) v = (rng() % 9) << 61 | (rng() % 3);
      input = HostArray::Of(ElementType::kUI64, {40, 300}, x);
    }
    ASSERT_OK_AND_ASSIGN(auto got, RunText(composite + decomposition, {input}));
    ASSERT_OK_AND_ASSIGN(auto want, RunText(direct + decomposition, {input}));
    EXPECT_TRUE(got[0].bytes == want[0].bytes) << type;
    EXPECT_EQ(got[1].As<int32_t>(), want[1].As<int32_t>()) << type;
  }
}

TEST(SemanticsTest, WhileCarriesTokensAndSwapsValues) {
  // Three iterations of (i, a, b, token) -> (i + 1, b, a + b, token).
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<i64>, tensor<i64>, tensor<i64>) {
  %i0 = stablehlo.constant dense<0> : tensor<i64>
  %a0 = stablehlo.constant dense<1> : tensor<i64>
  %b0 = stablehlo.constant dense<1> : tensor<i64>
  %t0 = stablehlo.after_all : !stablehlo.token
  %r:4 = stablehlo.while(%i = %i0, %a = %a0, %b = %b0, %t = %t0) : tensor<i64>, tensor<i64>, tensor<i64>, !stablehlo.token
  cond {
    %three = stablehlo.constant dense<3> : tensor<i64>
    %c = stablehlo.compare LT, %i, %three : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i64>
    %n = stablehlo.add %i, %one : tensor<i64>
    %s = stablehlo.add %a, %b : tensor<i64>
    stablehlo.return %n, %b, %s, %t : tensor<i64>, tensor<i64>, tensor<i64>, !stablehlo.token
  }
  return %r#0, %r#1, %r#2 : tensor<i64>, tensor<i64>, tensor<i64>
})"));
  // (0,1,1) -> (1,1,2) -> (2,2,3) -> (3,3,5).
  EXPECT_EQ(out[0].As<int64_t>(), (std::vector<int64_t>{3}));
  EXPECT_EQ(out[1].As<int64_t>(), (std::vector<int64_t>{3}));
  EXPECT_EQ(out[2].As<int64_t>(), (std::vector<int64_t>{5}));
}

// The loop state moves by address (exec/kernels/control_flow.h): a result
// trades memory with its param after each iteration, and the cond reads the
// params where they are. Views of params and results (reshapes), a value
// returned unchanged, a constant returned (copied, not moved), a swapped
// pair, a nested loop reading the outer state, and repeated runs of one
// plan (which start from whatever addresses the last run left) must all
// see the state the spec gives.
TEST(SemanticsTest, WhileStateMovedByAddressKeepsItsValues) {
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%x0: tensor<2x2xf32>, %k0: tensor<2x2xf32>, %n: tensor<i64>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>, tensor<i64>,
        tensor<i64>) {
  %i0 = stablehlo.constant dense<0> : tensor<i64>
  %a0 = stablehlo.constant dense<1> : tensor<i64>
  %b0 = stablehlo.constant dense<2> : tensor<i64>
  %c0 = stablehlo.constant dense<33> : tensor<i64>
  %r:7 = stablehlo.while(%i = %i0, %x = %x0, %k = %k0, %a = %a0, %b = %b0, %m = %n,
                         %c = %c0)
      : tensor<i64>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>, tensor<i64>,
        tensor<i64>
  cond {
    %iv = stablehlo.reshape %i : (tensor<i64>) -> tensor<1xi64>
    %mv = stablehlo.reshape %m : (tensor<i64>) -> tensor<1xi64>
    %lt = stablehlo.compare LT, %iv, %mv : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi1>
    %go = stablehlo.reshape %lt : (tensor<1xi1>) -> tensor<i1>
    stablehlo.return %go : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i64>
    %next = stablehlo.add %i, %one : tensor<i64>
    %ones = stablehlo.constant dense<1.0> : tensor<4xf32>
    %xv = stablehlo.reshape %x : (tensor<2x2xf32>) -> tensor<4xf32>
    %zero = stablehlo.constant dense<0> : tensor<i64>
    %two = stablehlo.constant dense<2> : tensor<i64>
    %inner:2 = stablehlo.while(%j = %zero, %t = %ones) : tensor<i64>, tensor<4xf32>
    cond {
      %more = stablehlo.compare LT, %j, %two : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %more : tensor<i1>
    } do {
      %j1 = stablehlo.add %j, %one : tensor<i64>
      %t1 = stablehlo.add %t, %xv : tensor<4xf32>
      stablehlo.return %j1, %t1 : tensor<i64>, tensor<4xf32>
    }
    %kv = stablehlo.reshape %k : (tensor<2x2xf32>) -> tensor<4xf32>
    %xk = stablehlo.multiply %xv, %kv : tensor<4xf32>
    %y = stablehlo.add %xk, %inner#1 : tensor<4xf32>
    %ym = stablehlo.reshape %y : (tensor<4xf32>) -> tensor<2x2xf32>
    %seven = stablehlo.constant dense<7> : tensor<i64>
    stablehlo.return %next, %ym, %k, %b, %a, %m, %seven
        : tensor<i64>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>, tensor<i64>,
          tensor<i64>
  }
  return %r#1, %r#2, %r#3, %r#4, %r#0, %r#6
      : tensor<2x2xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>
})"));
  const std::vector<float> x0 = {0.5f, -1.25f, 2.0f, 0.125f};
  const std::vector<float> k = {0.75f, 1.5f, -0.5f, 2.0f};
  for (int64_t n : {3, 4, 0, 3, 1}) {
    SCOPED_TRACE(n);
    // The body in the program's order of operations, in float.
    std::vector<float> x = x0;
    for (int64_t i = 0; i < n; ++i) {
      for (size_t e = 0; e < x.size(); ++e) {
        float t = (1.0f + x[e]) + x[e];
        x[e] = x[e] * k[e] + t;
      }
    }
    ASSERT_OK_AND_ASSIGN(
        auto out, RunPlan(*plan, {HostArray::Of(ElementType::kF32, {2, 2}, x0),
                                  HostArray::Of(ElementType::kF32, {2, 2}, k),
                                  HostArray::Of(ElementType::kI64, {},
                                                std::vector<int64_t>{n})}));
    EXPECT_EQ(out[0].As<float>(), x);
    EXPECT_EQ(out[1].As<float>(), k);
    // (a, b) starts at (1, 2) and swaps every iteration.
    EXPECT_EQ(out[2].As<int64_t>(), (std::vector<int64_t>{n % 2 ? 2 : 1}));
    EXPECT_EQ(out[3].As<int64_t>(), (std::vector<int64_t>{n % 2 ? 1 : 2}));
    EXPECT_EQ(out[4].As<int64_t>(), (std::vector<int64_t>{n}));
    EXPECT_EQ(out[5].As<int64_t>(), (std::vector<int64_t>{n > 0 ? 7 : 33}));
  }
}

// A scan's stacked outputs: ys[i] = ys[i - 1] + 1, written by a
// dynamic_update_slice of the loop's own param. When nothing reads the old
// ys after the update, the update happens in place and the plan holds ys
// once (its param), not twice; when the body reads the old ys afterwards
// (`late_read`), it must not, and the sum it takes sees the old values.
std::string StackedOutputsLoop(bool late_read) {
  std::string late =
      late_read ? "%s1 = stablehlo.reduce(%ys init: %z) applies stablehlo.add "
                  "across dimensions = [0] : (tensor<1000xf32>, tensor<f32>) "
                  "-> tensor<f32>"
                : "%s1 = stablehlo.add %s, %z : tensor<f32>";
  return R"(
func.func @main() -> (tensor<1000xf32>, tensor<f32>) {
  %i0 = stablehlo.constant dense<0> : tensor<i64>
  %ys0 = stablehlo.constant dense<0.0> : tensor<1000xf32>
  %s0 = stablehlo.constant dense<0.0> : tensor<f32>
  %r:3 = stablehlo.while(%i = %i0, %ys = %ys0, %s = %s0)
      : tensor<i64>, tensor<1000xf32>, tensor<f32>
  cond {
    %n = stablehlo.constant dense<1000> : tensor<i64>
    %go = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %go : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i64>
    %zero = stablehlo.constant dense<0> : tensor<i64>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %f1 = stablehlo.constant dense<1.0> : tensor<1xf32>
    %prev_i = stablehlo.subtract %i, %one : tensor<i64>
    %at = stablehlo.maximum %prev_i, %zero : tensor<i64>
    %prev = stablehlo.dynamic_slice %ys, %at, sizes = [1]
        : (tensor<1000xf32>, tensor<i64>) -> tensor<1xf32>
    %first = stablehlo.compare EQ, %i, %zero : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %zeros = stablehlo.constant dense<0.0> : tensor<1xf32>
    %base = stablehlo.select %first, %zeros, %prev : tensor<i1>, tensor<1xf32>
    %y = stablehlo.add %base, %f1 : tensor<1xf32>
    %ys1 = stablehlo.dynamic_update_slice %ys, %y, %i
        : (tensor<1000xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1000xf32>
    )" + late +
         R"(
    %next = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %next, %ys1, %s1 : tensor<i64>, tensor<1000xf32>, tensor<f32>
  }
  return %r#1, %r#2 : tensor<1000xf32>, tensor<f32>
})";
}

TEST(SemanticsTest,
     StackedLoopOutputsUpdateInPlaceOnlyWhenNothingReadsThemLater) {
  std::vector<float> expected(1000);
  for (int k = 0; k < 1000; ++k) expected[k] = static_cast<float>(k + 1);
  const int64_t ys_bytes = 1000 * sizeof(float);
  for (bool late_read : {false, true}) {
    SCOPED_TRACE(late_read);
    ASSERT_OK_AND_ASSIGN(auto plan, CompileText(StackedOutputsLoop(late_read)));
    ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, {}));
    EXPECT_EQ(out[0].As<float>(), expected);
    // The last iteration sums ys before its update: 1 + ... + 999.
    EXPECT_EQ(out[1].As<float>(),
              (std::vector<float>{late_read ? 499500.0f : 0.0f}));
    if (late_read) {
      EXPECT_GE(plan->arena_bytes(), 2 * ys_bytes);
    } else {
      EXPECT_LT(plan->arena_bytes(), 2 * ys_bytes);
    }
  }
}

// A buffer a fori_loop updates with `b.at[(7 * i) % n].set(b[i] + 1)`: a
// scatter of the loop's own param. When nothing reads the old buffer after
// the scatter, it updates the param in place (the plan holds the buffer
// once); when the body reads it afterwards (`late_read`, the sum of the
// old buffer), it must not.
std::string ScatteredLoopBuffer(bool late_read) {
  std::string late =
      late_read ? "%s1 = stablehlo.reduce(%b init: %z) applies stablehlo.add "
                  "across dimensions = [0] : (tensor<1000xf32>, tensor<f32>) "
                  "-> tensor<f32>"
                : "%s1 = stablehlo.add %s, %z : tensor<f32>";
  return R"(
func.func @main(%b0: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<f32>) {
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %s0 = stablehlo.constant dense<0.0> : tensor<f32>
  %r:3 = stablehlo.while(%i = %i0, %b = %b0, %s = %s0)
      : tensor<i32>, tensor<1000xf32>, tensor<f32>
  cond {
    %n = stablehlo.constant dense<1000> : tensor<i32>
    %go = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %go : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %seven = stablehlo.constant dense<7> : tensor<i32>
    %n = stablehlo.constant dense<1000> : tensor<i32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %f1 = stablehlo.constant dense<1.0> : tensor<f32>
    %old = stablehlo.dynamic_slice %b, %i, sizes = [1]
        : (tensor<1000xf32>, tensor<i32>) -> tensor<1xf32>
    %old0 = stablehlo.reshape %old : (tensor<1xf32>) -> tensor<f32>
    %new = stablehlo.add %old0, %f1 : tensor<f32>
    %i7 = stablehlo.multiply %i, %seven : tensor<i32>
    %at = stablehlo.remainder %i7, %n : tensor<i32>
    %index = stablehlo.reshape %at : (tensor<i32>) -> tensor<1xi32>
    %b1 = "stablehlo.scatter"(%b, %index, %new) <{indices_are_sorted = true,
        scatter_dimension_numbers = #stablehlo.scatter<
            inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>,
        unique_indices = true}> ({
    ^bb0(%x: tensor<f32>, %u: tensor<f32>):
      stablehlo.return %u : tensor<f32>
    }) : (tensor<1000xf32>, tensor<1xi32>, tensor<f32>) -> tensor<1000xf32>
    )" + late +
         R"(
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %b1, %s1 : tensor<i32>, tensor<1000xf32>, tensor<f32>
  }
  return %r#1, %r#2 : tensor<1000xf32>, tensor<f32>
})";
}

TEST(SemanticsTest,
     ScatteredLoopBuffersUpdateInPlaceOnlyWhenNothingReadsThemLater) {
  std::vector<float> start(1000);
  for (int k = 0; k < 1000; ++k) start[k] = static_cast<float>(k % 13);
  // The loop, computed here: the buffer, and the sum of the buffer as the
  // last iteration saw it before its update.
  std::vector<float> expected = start;
  float last_sum = 0.0f;
  for (int i = 0; i < 1000; ++i) {
    last_sum = 0.0f;
    for (float v : expected) last_sum += v;
    expected[(7 * i) % 1000] = expected[i] + 1.0f;
  }
  const int64_t buffer_bytes = 1000 * sizeof(float);
  for (bool late_read : {false, true}) {
    SCOPED_TRACE(late_read);
    ASSERT_OK_AND_ASSIGN(auto plan,
                         CompileText(ScatteredLoopBuffer(late_read)));
    ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, {HostArray::Of(ElementType::kF32, {1000}, start)}));
    EXPECT_EQ(out[0].As<float>(), expected);
    if (late_read) {
      // Summed in another order than here: compared within rounding.
      EXPECT_NEAR(out[1].As<float>()[0], last_sum, 1e-3f * last_sum);
      EXPECT_GE(plan->arena_bytes(), 2 * buffer_bytes);
    } else {
      EXPECT_EQ(out[1].As<float>(), (std::vector<float>{0.0f}));
      EXPECT_LT(plan->arena_bytes(), 2 * buffer_bytes);
    }
  }
}

// A loop inside a loop, the inner one updating a buffer in place, whose
// state lives in the inner while's output: each outer iteration enters
// the inner loop again (its output then holds the outer body's value) and
// the outer body reads the buffer after it. Against the loops run here.
// A cond that is one comparison of integer scalars is evaluated by the
// while kernel itself (exec::LoopCondition): every direction, signed and
// unsigned types of each width it takes, negative values and unsigned ones
// past the signed range, the bound a constant of the cond (JAX's form) or
// a loop value, counted against the same loop run here. A cond computing
// more than the compare (i + 1 < n, fused into one step) is not taken for
// i < n.
TEST(SemanticsTest, ScalarLoopConditionsCountAsTheCondRegion) {
  struct Row {
    const char* type;
    const char* direction;
    int64_t init, bound, delta;
    bool bound_in_cond;
    bool offset_in_cond;  // compares i + 1 with the bound
  };
  const Row rows[] = {
      {"i32", "LT", 0, 7, 1, true, false},
      {"i32", "LT", -5, 3, 1, false, false},
      {"i32", "LE", 0, 7, 1, true, false},
      {"i32", "GT", 7, 0, -1, false, false},
      {"i32", "GE", 7, 2, -1, true, false},
      {"i32", "NE", 0, 7, 1, false, false},
      {"i32", "EQ", 3, 3, 1, true, false},
      {"i32", "LT", 0, 7, 1, true, true},
      {"i64", "LT", -9000000000, -8999999990, 1, false, false},
      {"i8", "GT", 100, -100, -7, true, false},
      {"i16", "LE", -300, 300, 17, false, false},
      {"ui8", "LT", 200, 255, 5, true, false},
      {"ui16", "GE", 65535, 60000, -1000, false, false},
      {"ui32", "LT", 4294967290, 4294967295, 1, true, false},
      {"ui32", "GT", 4294967295, 2147483648, -300000000, false, false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(StrCat(row.type, " ", row.direction, " from ", row.init,
                        " to ", row.bound, " by ", row.delta,
                        row.offset_in_cond ? " (i + 1)" : ""));
    const std::string t = StrCat("tensor<", row.type, ">");
    // The delta as the type's own constant: unsigned steps down are
    // subtractions of its magnitude.
    const bool down = row.delta < 0;
    const int64_t magnitude = down ? -row.delta : row.delta;
    std::string lhs = "%i";
    std::string cond_prefix;
    if (row.offset_in_cond) {
      cond_prefix = StrCat("    %one = stablehlo.constant dense<1> : ", t,
                           "\n    %next = stablehlo.add %i, %one : ", t, "\n");
      lhs = "%next";
    }
    std::string bound = row.bound_in_cond
                            ? StrCat("    %b = stablehlo.constant dense<",
                                     row.bound, "> : ", t, "\n")
                            : "";
    std::string program = StrCat(
        "func.func @main() -> (", t, ", tensor<i64>) {\n",
        "  %i0 = stablehlo.constant dense<", row.init, "> : ", t, "\n",
        "  %n0 = stablehlo.constant dense<", row.bound, "> : ", t, "\n",
        "  %c0 = stablehlo.constant dense<0> : tensor<i64>\n",
        "  %r:3 = stablehlo.while(%i = %i0, %n = %n0, %c = %c0) : ", t, ", ", t,
        ", tensor<i64>\n", "  cond {\n", cond_prefix, bound,
        "    %p = stablehlo.compare ", row.direction, ", ", lhs, ", ",
        row.bound_in_cond ? "%b" : "%n", " : (", t, ", ", t,
        ") -> tensor<i1>\n", "    stablehlo.return %p : tensor<i1>\n",
        "  } do {\n", "    %d = stablehlo.constant dense<", magnitude,
        "> : ", t, "\n", "    %j = stablehlo.", down ? "subtract" : "add",
        " %i, %d : ", t, "\n",
        "    %one64 = stablehlo.constant dense<1> : tensor<i64>\n",
        "    %k = stablehlo.add %c, %one64 : tensor<i64>\n",
        "    stablehlo.return %j, %n, %k : ", t, ", ", t, ", tensor<i64>\n",
        "  }\n", "  return %r#0, %r#2 : ", t, ", tensor<i64>\n", "}\n");
    // The same loop here, in int64 (every value stays in the type's range).
    int64_t i = row.init, count = 0;
    auto holds = [&](int64_t a, int64_t b) {
      std::string d = row.direction;
      return d == "LT"   ? a < b
             : d == "LE" ? a <= b
             : d == "GT" ? a > b
             : d == "GE" ? a >= b
             : d == "NE" ? a != b
                         : a == b;
    };
    while (holds(row.offset_in_cond ? i + 1 : i, row.bound)) {
      i += row.delta;
      ++count;
    }
    ASSERT_OK_AND_ASSIGN(auto out, RunText(program));
    EXPECT_EQ(out[1].As<int64_t>(), (std::vector<int64_t>{count}));
    int64_t final_value = exec::LoadInt(
        out[0].shape.type,
        reinterpret_cast<const std::byte*>(out[0].bytes.data()), 0);
    EXPECT_EQ(final_value, i);
  }
}

TEST(SemanticsTest, NestedLoopsUpdatingABufferInPlaceKeepEveryIteration) {
  std::vector<float> b(100);
  for (int k = 0; k < 100; ++k) b[k] = 0.5f + static_cast<float>(k % 3);
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main(%b0: tensor<100xf32>) -> (tensor<100xf32>, tensor<f32>) {
  %j0 = stablehlo.constant dense<1> : tensor<i32>
  %s0 = stablehlo.constant dense<0.0> : tensor<f32>
  %r:3 = stablehlo.while(%j = %j0, %b = %b0, %s = %s0)
      : tensor<i32>, tensor<100xf32>, tensor<f32>
  cond {
    %n = stablehlo.constant dense<4> : tensor<i32>
    %go = stablehlo.compare LT, %j, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %go : tensor<i1>
  } do {
    %i0 = stablehlo.constant dense<0> : tensor<i32>
    %inner:2 = stablehlo.while(%i = %i0, %c = %b) : tensor<i32>, tensor<100xf32>
    cond {
      %m = stablehlo.constant dense<100> : tensor<i32>
      %go = stablehlo.compare LT, %i, %m : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %go : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %old = stablehlo.dynamic_slice %c, %i, sizes = [1]
          : (tensor<100xf32>, tensor<i32>) -> tensor<1xf32>
      %jf = stablehlo.convert %j : (tensor<i32>) -> tensor<f32>
      %jv = stablehlo.reshape %jf : (tensor<f32>) -> tensor<1xf32>
      %new = stablehlo.add %old, %jv : tensor<1xf32>
      %c1 = stablehlo.dynamic_update_slice %c, %new, %i
          : (tensor<100xf32>, tensor<1xf32>, tensor<i32>) -> tensor<100xf32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %c1 : tensor<i32>, tensor<100xf32>
    }
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %sum = stablehlo.reduce(%inner#1 init: %z) applies stablehlo.add
        across dimensions = [0] : (tensor<100xf32>, tensor<f32>) -> tensor<f32>
    %s1 = stablehlo.add %s, %sum : tensor<f32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j1 = stablehlo.add %j, %one : tensor<i32>
    stablehlo.return %j1, %inner#1, %s1 : tensor<i32>, tensor<100xf32>, tensor<f32>
  }
  return %r#1, %r#2 : tensor<100xf32>, tensor<f32>
})", {HostArray::Of(ElementType::kF32, {100}, b)}));
  // Outer iterations j = 1, 2, 3 each add j to every element, then sum
  // the buffer (every value a multiple of 0.5 below 2^20: exact sums).
  std::vector<float> want = b;
  float sums = 0.0f;
  for (int j = 1; j < 4; ++j) {
    for (float& v : want) v += static_cast<float>(j);
    for (float v : want) sums += v;
  }
  EXPECT_EQ(out[0].As<float>(), want);
  EXPECT_EQ(out[1].As<float>(), std::vector<float>{sums});
}

TEST(SemanticsTest, CaseWithOutOfRangeIndexRunsTheLastBranch) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> tensor<i32> {
  %index = stablehlo.constant dense<7> : tensor<i32>
  %r = "stablehlo.case"(%index) ({
    %a = stablehlo.constant dense<10> : tensor<i32>
    stablehlo.return %a : tensor<i32>
  }, {
    %b = stablehlo.constant dense<20> : tensor<i32>
    stablehlo.return %b : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  return %r : tensor<i32>
})"));
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{20}));
}

TEST(SemanticsTest, ReducePrecisionRoundsAndOverflows) {
  // To e5m2: 1 + 2^-3 is halfway between 1.0 and 1.25 (ties to even:
  // 1.0); 1 + 3 * 2^-3 rounds to 1.5; 70000 overflows e5m2's range.
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> tensor<3xf32> {
  %x = stablehlo.constant dense<[1.125, 1.375, 70000.0]> : tensor<3xf32>
  %r = stablehlo.reduce_precision %x, format = e5m2 : tensor<3xf32>
  return %r : tensor<3xf32>
})"));
  std::vector<float> r = out[0].As<float>();
  EXPECT_EQ(r[0], 1.0f);
  EXPECT_EQ(r[1], 1.5f);
  EXPECT_TRUE(std::isinf(r[2]));
}

TEST(SemanticsTest, BitcastConvertSplitsWiderElements) {
  // 0x0102030405060708 as u64 splits into little-endian u16 pieces.
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> tensor<4xui16> {
  %x = stablehlo.constant dense<72623859790382856> : tensor<ui64>
  %r = stablehlo.bitcast_convert %x : (tensor<ui64>) -> tensor<4xui16>
  return %r : tensor<4xui16>
})"));
  EXPECT_EQ(out[0].As<uint16_t>(),
            (std::vector<uint16_t>{0x0708, 0x0506, 0x0304, 0x0102}));
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

// The examples of the spec's batch_norm_* sections.
TEST(SemanticsTest, BatchNormOpsFollowTheSpecExamples) {
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %x = stablehlo.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0], [1.0, 2.0]]]> : tensor<2x2x2xf32>
  %one = stablehlo.constant dense<1.0> : tensor<2xf32>
  %mean = stablehlo.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %g = stablehlo.constant dense<0.1> : tensor<2x2x2xf32>
  %inf = "stablehlo.batch_norm_inference"(%x, %one, %one, %mean, %one) {epsilon = 0.0 : f32, feature_index = 2 : i64} : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x2xf32>
  %tr:3 = "stablehlo.batch_norm_training"(%x, %one, %one) {epsilon = 0.0 : f32, feature_index = 2 : i64} : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %gr:3 = "stablehlo.batch_norm_grad"(%x, %one, %mean, %one, %g) {epsilon = 0.0 : f32, feature_index = 2 : i64} : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %inf, %tr#0, %tr#1, %tr#2, %gr#0, %gr#1, %gr#2 : tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>
})"));
  std::vector<float> normalized = {0, 0, 2, 2, 2, 2, 0, 0};
  EXPECT_EQ(out[0].As<float>(), normalized);
  EXPECT_EQ(out[1].As<float>(), normalized);
  EXPECT_EQ(out[2].As<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(out[3].As<float>(), (std::vector<float>{1, 1}));
  for (float v : out[4].As<float>()) EXPECT_NEAR(v, 0.0f, 1e-6);
  for (float v : out[5].As<float>()) EXPECT_NEAR(v, 0.0f, 1e-6);
  for (float v : out[6].As<float>()) EXPECT_NEAR(v, 0.4f, 1e-6);
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

TEST(SemanticsTest, EinsumContractsLabels) {
  // "ab,bc->ca": a transposed matrix product.
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<2x2xi32>, tensor<3x2xi32>) {
  %a = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %b = stablehlo.constant dense<[[1, 0], [0, 1], [1, 1]]> : tensor<3x2xi32>
  %c = "stablehlo.einsum"(%a, %b) {einsum_config = "ab,bc->ca"} : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
  %t = "stablehlo.unary_einsum"(%a) {einsum_config = "ab->ba"} : (tensor<2x3xi32>) -> tensor<3x2xi32>
  return %c, %t : tensor<2x2xi32>, tensor<3x2xi32>
})"));
  // a @ b = [[4, 5], [10, 11]]; transposed: [[4, 10], [5, 11]].
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{4, 10, 5, 11}));
  EXPECT_EQ(out[1].As<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

// A float power by the constant 2, 3 or 4 is lowered to multiplies, as
// XLA:CPU computes it: x * x, (x * x) * x, (x * x) * (x * x), bit for bit,
// with pow's values for signed zeros, infinities and NaN.
TEST(SemanticsTest, PowersByTwoThreeAndFourAreMultiplies) {
  // Special values, then normal samples: for some of those (x * x) * x is
  // not pow's correctly rounded cube, so a power kernel would not give
  // these bits.
  std::vector<float> x = {0.0f,       -0.0f,      1.5f,   -3.25f,
                          1e-30f,     -1e30f,     1e20f,  INFINITY,
                          -INFINITY,  NAN,        0.1f,   -7.0f};
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  while (x.size() < 1024) x.push_back(normal(rng));
  const std::string t = "tensor<1024xf32>";
  for (int n : {2, 3, 4}) {
    ASSERT_OK_AND_ASSIGN(
        auto out,
        RunText("func.func @main(%x: " + t + ") -> " + t +
                    " {\n  %c = stablehlo.constant dense<" + std::to_string(n) +
                    ".0> : tensor<f32>"
                    "\n  %b = stablehlo.broadcast_in_dim %c, dims = [] : "
                    "(tensor<f32>) -> " + t +
                    "\n  %p = stablehlo.power %x, %b : " + t +
                    "\n  return %p : " + t + "\n}",
                {HostArray::Of(ElementType::kF32, {1024}, x)}));
    std::vector<float> got = out[0].As<float>();
    for (size_t i = 0; i < x.size(); ++i) {
      const float square = x[i] * x[i];
      const float want = n == 2 ? square : n == 3 ? square * x[i] : square * square;
      EXPECT_EQ(std::memcmp(&got[i], &want, sizeof(float)), 0)
          << x[i] << " ^ " << n;
      const float reference = std::pow(x[i], static_cast<float>(n));
      if (std::isnan(reference) || std::isinf(reference) || reference == 0) {
        // The special values are pow's exactly, signs included.
        EXPECT_EQ(std::memcmp(&got[i], &reference, sizeof(float)), 0)
            << x[i] << " ^ " << n;
      }
    }
  }
}

// The same for f16 (the power constant an f16 one, as JAX writes
// `x ** 3.0` of f16): the multiplies run in f32, as f16 arithmetic does
// here, and round to f16 once; the power kernel took 100 times XLA:CPU's
// time for it. Expected values from the compiler's own _Float16.
TEST(SemanticsTest, NarrowFloatPowersByTwoThreeAndFourAreMultiplies) {
  std::vector<uint16_t> bits;
  std::mt19937 rng(6);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (float v : {0.0f, -0.0f, 1.5f, -3.25f, 65504.0f, INFINITY, -INFINITY,
                  NAN, 0.1f, -7.0f}) {
    _Float16 h = static_cast<_Float16>(v);
    uint16_t b;
    std::memcpy(&b, &h, 2);
    bits.push_back(b);
  }
  while (bits.size() < 512) {
    _Float16 h = static_cast<_Float16>(normal(rng));
    uint16_t b;
    std::memcpy(&b, &h, 2);
    bits.push_back(b);
  }
  const std::string t = "tensor<512xf16>";
  for (int n : {2, 3, 4}) {
    ASSERT_OK_AND_ASSIGN(
        auto out,
        RunText("func.func @main(%x: " + t + ") -> " + t +
                    " {\n  %c = stablehlo.constant dense<" + std::to_string(n) +
                    ".0> : tensor<f16>"
                    "\n  %b = stablehlo.broadcast_in_dim %c, dims = [] : "
                    "(tensor<f16>) -> " + t +
                    "\n  %p = stablehlo.power %x, %b : " + t +
                    "\n  return %p : " + t + "\n}",
                {HostArray::Of(ElementType::kF16, {512}, bits)}));
    // f16 products round so rarely apart from pow's that the values alone
    // would not show the power kernel: no step may run it.
    compile::CompileOptions unfused;
    unfused.fuse_elementwise = false;
    ASSERT_OK_AND_ASSIGN(
        auto plan,
        CompileText("func.func @main(%x: " + t + ") -> " + t +
                        " {\n  %c = stablehlo.constant dense<" +
                        std::to_string(n) + ".0> : tensor<f16>" +
                        "\n  %b = stablehlo.broadcast_in_dim %c, dims = [] : "
                        "(tensor<f16>) -> " + t +
                        "\n  %p = stablehlo.power %x, %b : " + t +
                        "\n  return %p : " + t + "\n}",
                    unfused));
    for (const exec::Step& step : plan->main().steps) {
      EXPECT_EQ(std::string(typeid(*step.kernel).name()).find("Power"),
                std::string::npos)
          << typeid(*step.kernel).name();
    }
    std::vector<uint16_t> got = out[0].As<uint16_t>();
    for (size_t i = 0; i < bits.size(); ++i) {
      _Float16 h;
      std::memcpy(&h, &bits[i], 2);
      const float x = static_cast<float>(h);
      const float square = x * x;
      const _Float16 want = static_cast<_Float16>(
          n == 2 ? square : n == 3 ? square * x : square * square);
      uint16_t want_bits;
      std::memcpy(&want_bits, &want, 2);
      if (std::isnan(x)) {
        EXPECT_EQ(got[i] & 0x7c00, 0x7c00) << "NaN ^ " << n;
        EXPECT_NE(got[i] & 0x03ff, 0) << "NaN ^ " << n;
      } else {
        EXPECT_EQ(got[i], want_bits) << x << " ^ " << n;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::testing
