// Reductions along the innermost dimension (exec/kernels/reduce.cc) keep
// 16 partial results combined by a fixed tree: the result is that order's,
// on every machine and vector width, and at least as accurate as the
// sequential sum.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;

std::string RowReduceProgram(const std::string& type, const std::string& op,
                             const std::string& init) {
  return R"(
func.func @main(%x: tensor<3x1000x)" + type + R"(>) -> tensor<3x)" + type + R"(> {
  %z = stablehlo.constant dense<)" + init + R"(> : tensor<)" + type + R"(>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.)" + op +
         R"( across dimensions = [1] : (tensor<3x1000x)" + type + R"(>, tensor<)" +
         type + R"(>) -> tensor<3x)" + type + R"(>
  return %r : tensor<3x)" + type + R"(>
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

}  // namespace
}  // namespace kiln::testing
