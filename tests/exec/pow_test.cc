// f32 power (exec/kernels/elementwise_ops.h, ops::Power): a finite nonzero
// base to a finite exponent (an integer where the base is negative) is
// +-e^(b ln |a|) in double, within an ulp of the reference (std::pow in
// double, rounded once); and the binary kernels,
// which vectorize those arguments and call the reference for the rest,
// give every element what the element function gives, with either input
// a scalar, in and out of place.
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

float Reference(float a, float b) {
  return static_cast<float>(
      std::pow(static_cast<double>(a), static_cast<double>(b)));
}

TEST(PowTest, IsWithinAnUlpOfTheReference) {
  std::mt19937 random(11);
  std::uniform_int_distribution<uint32_t> positive_bits(1, 0x7f7fffffu);
  std::normal_distribution<float> exponent(0.0f, 4.0f);
  int64_t worst = 0;
  float worst_a = 0, worst_b = 0;
  auto check = [&](float a, float b) {
    int64_t d = UlpDistance(ops::Power::Apply(a, b, 0), Reference(a, b));
    if (d > worst) {
      worst = d;
      worst_a = a;
      worst_b = b;
    }
  };
  // Every positive magnitude (subnormals too) to exponents around 0, and
  // bases near 1 to large exponents (where b ln a's error counts most),
  // and results near overflow and underflow.
  for (int i = 0; i < 2000000; ++i) {
    check(std::bit_cast<float>(positive_bits(random)), exponent(random));
  }
  std::uniform_real_distribution<float> near_one(0.99f, 1.01f);
  std::uniform_real_distribution<float> large(-8000.0f, 8000.0f);
  for (int i = 0; i < 1000000; ++i) check(near_one(random), large(random));
  for (float b :
       {0.0f, -0.0f, 1.0f, 2.0f, 3.0f, 0.5f, -0.5f, -1.0f, 127.9f, -149.5f}) {
    for (float a : {2.0f, 0.5f, 1.0f, 3.0f, 10.0f, 1e-30f, 1e30f,
                    std::numeric_limits<float>::denorm_min()}) {
      check(a, b);
    }
  }
  // Negative bases to integers (odd ones negative), both sides of 2^23
  // and 2^24 where floats become integers and then even ones; to
  // fractions, NaN from the reference.
  std::uniform_int_distribution<int> integer(-40, 40);
  std::uniform_real_distribution<float> base(-3.0f, -0.25f);
  for (int i = 0; i < 200000; ++i) {
    check(base(random), static_cast<float>(integer(random)));
  }
  for (float b : {8388607.0f, 8388608.0f, 8388609.0f, 16777215.0f, 16777216.0f,
                  1e30f, -8388609.0f, -1e30f}) {
    for (float a : {-1.0f, -1.0000001f, -0.99999994f}) check(a, b);
  }
  EXPECT_TRUE(std::isnan(ops::Power::Apply(-2.0f, 0.5f, 0)));
  EXPECT_EQ(ops::Power::Apply(-2.0f, 3.0f, 0), -8.0f);
  EXPECT_EQ(ops::Power::Apply(-2.0f, -2.0f, 0), 0.25f);
  EXPECT_EQ(ops::Power::Apply(-1.0f, 8388609.0f, 0), -1.0f);
  EXPECT_EQ(ops::Power::Apply(-1.0f, 16777216.0f, 0), 1.0f);
  EXPECT_LE(worst, 1) << "at " << worst_a << " ^ " << worst_b;
  // Exact results stay exact.
  EXPECT_EQ(ops::Power::Apply(2.0f, 10.0f, 0), 1024.0f);
  EXPECT_EQ(ops::Power::Apply(9.0f, 0.5f, 0), 3.0f);
  EXPECT_EQ(ops::Power::Apply(5.0f, 0.0f, 0), 1.0f);
}

// The kernel of the f32 power over a and b (`scalar`: which input is one
// element, or -1), in place over a when asked.
std::vector<float> RunPower(const std::vector<float>& a,
                            const std::vector<float>& b, int scalar,
                            bool in_place) {
  const int64_t n = static_cast<int64_t>(scalar == 0 ? b.size() : a.size());
  auto kernel = MakeBinaryKernel(BinaryOp::kPower, ElementType::kF32, n, 32);
  auto* elementwise = dynamic_cast<ElementwiseKernel*>(kernel.get());
  EXPECT_NE(elementwise, nullptr);
  std::unique_ptr<ElementwiseKernel> scalar_form;
  if (scalar >= 0) {
    scalar_form = elementwise->WithScalarInput(scalar);
    EXPECT_NE(scalar_form, nullptr);
    elementwise = scalar_form.get();
  }
  std::vector<float> x = a, y = b, separate(n);
  float* out = in_place ? x.data() : separate.data();
  const std::byte* inputs[2] = {reinterpret_cast<const std::byte*>(x.data()),
                                reinterpret_cast<const std::byte*>(y.data())};
  std::byte* outputs[1] = {reinterpret_cast<std::byte*>(out)};
  elementwise->RunRange(inputs, outputs, 0, n);
  return in_place ? x : separate;
}

TEST(PowTest, KernelsGiveTheElementFunctionsBitsEverywhere) {
  const float kInf = std::numeric_limits<float>::infinity();
  const float kNaN = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 random(5);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  // Bases of both signs against integer and fractional exponents, zeros,
  // infinities and NaN in some chunks of 1024 only.
  std::vector<float> a(4100), b(4100);
  for (float& x : a) x = normal(random);
  for (float& y : b) y = normal(random);
  const float specials[] = {-2.0f, -0.5f, 0.0f, -0.0f, kInf, -kInf, kNaN};
  for (int k = 0; k < 7; ++k) {
    a[1030 + k] = specials[k];
    b[1030 + k] = 3.0f;
    a[3000 + k] = specials[k];
    b[3000 + k] = 0.5f;
    a[4090 + k] = 2.0f;
    b[4090 + k] = specials[k];
  }
  b[4099] = kInf;
  const std::vector<float> negative_base = {-3.0f};
  const std::vector<float> cube = {3.0f};
  struct Case {
    const char* name;
    std::vector<float> a, b;
    int scalar;
  };
  for (const Case& c : {Case{"arrays", a, b, -1}, Case{"x^3", a, cube, 1},
                        Case{"(-3)^y", negative_base, b, 0}}) {
    for (bool in_place : {false, true}) {
      if (in_place && c.scalar == 0) continue;  // a is one element
      std::vector<float> out = RunPower(c.a, c.b, c.scalar, in_place);
      int64_t mismatches = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        float x = c.a[c.scalar == 0 ? 0 : i];
        float y = c.b[c.scalar == 1 ? 0 : i];
        mismatches += std::bit_cast<uint32_t>(out[i]) !=
                      std::bit_cast<uint32_t>(ops::Power::Apply(x, y, 0));
      }
      EXPECT_EQ(mismatches, 0) << c.name << (in_place ? " in place" : "");
    }
  }
}

}  // namespace
}  // namespace kiln::exec
