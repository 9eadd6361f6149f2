// f32 sin and cos (exec/kernels/elementwise_ops.h): within fast::kSinCosLimit
// evaluated in double and rounded once, so within an ulp of the function;
// and the unary kernels, which vectorize that part and call the reference
// for the rest, give every element exactly what the element function
// gives, in and out of place. And f32 sqrt, whose instruction gives the
// reference's bits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "exec/kernels/elementwise.h"
#include "exec/kernels/elementwise_kernel.h"
#include "exec/kernels/elementwise_ops.h"
#include "support/test_support.h"

namespace kiln::exec {
namespace {

using ::kiln::testing::UlpDistance;

// The worst distance from the double function rounded to f32, over every
// 1009th bit pattern of magnitude up to the limit (about 2 million of them)
// and the edges of the range.
template <typename Op, typename Reference>
int64_t WorstUlps(Reference reference, float* worst_input) {
  int64_t worst = 0;
  auto check = [&](float x) {
    int64_t d =
        UlpDistance(Op::Apply(x, 0), static_cast<float>(reference(double{x})));
    if (d > worst) {
      worst = d;
      *worst_input = x;
    }
  };
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 1009) {
    float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::fabs(x) <= fast::kSinCosLimit) check(x);
  }
  for (float x : {0.0f, -0.0f, 1.5707964f, 3.1415927f, 4.712389f, 6.2831855f,
                  fast::kSinCosLimit, -fast::kSinCosLimit,
                  std::nextafter(fast::kSinCosLimit, 0.0f)}) {
    check(x);
  }
  return worst;
}

TEST(SinCosTest, SinIsWithinAnUlpWhereItIsVectorized) {
  float at = 0;
  EXPECT_LE(WorstUlps<ops::Sin>([](double x) { return std::sin(x); }, &at), 1)
      << "at " << at;
}

TEST(SinCosTest, CosIsWithinAnUlpWhereItIsVectorized) {
  float at = 0;
  EXPECT_LE(WorstUlps<ops::Cos>([](double x) { return std::cos(x); }, &at), 1)
      << "at " << at;
}

TEST(SinCosTest, ZerosKeepTheirSignAndEdgesAreTheReferences) {
  EXPECT_TRUE(std::signbit(ops::Sin::Apply(-0.0f, 0)));
  EXPECT_EQ(ops::Cos::Apply(-0.0f, 0), 1.0f);
  const float kInf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(ops::Sin::Apply(kInf, 0)));
  EXPECT_TRUE(std::isnan(ops::Cos::Apply(-kInf, 0)));
  EXPECT_TRUE(std::isnan(ops::Sin::Apply(std::nanf(""), 0)));
  EXPECT_EQ(ops::Sin::Apply(1e30f, 0),
            static_cast<float>(std::sin(static_cast<double>(1e30f))));
}

// f32 sqrt runs as the f32 instruction: the root of the f32 rounded to
// f32 is the root taken in double and rounded once, for every 257th bit
// pattern (about 17 million, both signs, subnormals, infinities and NaNs
// among them) and the edges.
TEST(SinCosTest, SqrtOfF32IsTheRootInDoubleRoundedOnce) {
  auto check = [](float x) {
    const float got = ops::Sqrt::Apply(x, 0);
    const float want = static_cast<float>(std::sqrt(static_cast<double>(x)));
    if (std::isnan(want)) return std::isnan(got);
    return std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(want);
  };
  int64_t wrong = 0;
  float first = 0;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 257) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (!check(x) && wrong++ == 0) first = x;
  }
  for (float x : {0.0f, -0.0f, 1.0f, 2.0f, std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::infinity(), -1.0f}) {
    if (!check(x) && wrong++ == 0) first = x;
  }
  EXPECT_EQ(wrong, 0) << "first at " << first;
}

// Runs the f32 kernel of `op` over `inputs` and returns its outputs.
std::vector<float> RunKernel(UnaryOp op, const std::vector<float>& inputs,
                             bool in_place) {
  const int64_t n = static_cast<int64_t>(inputs.size());
  auto kernel = MakeUnaryKernel(op, ElementType::kF32, n, 32);
  auto* elementwise = dynamic_cast<ElementwiseKernel*>(kernel.get());
  EXPECT_NE(elementwise, nullptr);
  std::vector<float> in = inputs;
  std::vector<float> separate(n);
  float* out = in_place ? in.data() : separate.data();
  const std::byte* in_address = reinterpret_cast<const std::byte*>(in.data());
  std::byte* out_address = reinterpret_cast<std::byte*>(out);
  elementwise->RunRange(&in_address, &out_address, 0, n);
  return in_place ? in : separate;
}

TEST(SinCosTest, KernelsGiveTheElementFunctionsBitsEverywhere) {
  const float kInf = std::numeric_limits<float>::infinity();
  std::mt19937 random(3);
  std::normal_distribution<float> normal(0.0f, 100.0f);
  // Mostly in range; an argument outside it in some chunks of 1024 only.
  std::vector<float> inputs(5000);
  for (float& x : inputs) x = normal(random);
  for (int64_t i : {7, 1500, 1501, 4999}) inputs[i] = 1e30f;
  inputs[2100] = kInf;
  inputs[2101] = -kInf;
  inputs[3000] = std::nanf("");
  inputs[3001] = -3e38f;
  inputs[3002] = fast::kSinCosLimit;
  inputs[3003] = -std::nextafter(fast::kSinCosLimit, kInf);
  inputs[3004] = -0.0f;
  for (UnaryOp op : {UnaryOp::kSin, UnaryOp::kCos}) {
    for (bool in_place : {false, true}) {
      std::vector<float> out = RunKernel(op, inputs, in_place);
      int64_t mismatches = 0;
      for (size_t i = 0; i < inputs.size(); ++i) {
        float expected = op == UnaryOp::kSin ? ops::Sin::Apply(inputs[i], 0)
                                             : ops::Cos::Apply(inputs[i], 0);
        mismatches += std::bit_cast<uint32_t>(out[i]) !=
                      std::bit_cast<uint32_t>(expected);
      }
      EXPECT_EQ(mismatches, 0)
          << UnaryOpName(op) << (in_place ? " in place" : "");
    }
  }
}

}  // namespace
}  // namespace kiln::exec
