// Complex tan and expm1 against independent formulas and XLA's values at the
// edges of the complex plane (what jax's FunctionAccuracyTest checks).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>

#include "exec/kernels/elementwise_ops.h"

namespace kiln::exec::ops {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ComplexMathTest, TanMatchesSinOverCosInsideThePlane) {
  for (double x : {-3.0, -1.2, -0.3, 0.0, 0.7, 1.5, 2.9}) {
    for (double y : {-8.0, -1.0, -0.01, 0.0, 0.5, 3.0, 15.0}) {
      c128 z(x, y);
      c128 expected = std::sin(z) / std::cos(z);
      c128 got = ComplexTan(z);
      EXPECT_NEAR(got.real(), expected.real(), 1e-12 * (1 + std::abs(expected)))
          << x << " " << y;
      EXPECT_NEAR(got.imag(), expected.imag(), 1e-12 * (1 + std::abs(expected)))
          << x << " " << y;
    }
  }
}

TEST(ComplexMathTest, TanAtTheEdgesOfThePlane) {
  // Large |y|: tanh rounds to +-1, the real part underflows to zero.
  c128 far = ComplexTan(c128(1.0, 3.4e38));
  EXPECT_EQ(far.imag(), 1.0);
  EXPECT_EQ(far.real(), 0.0);
  EXPECT_EQ(ComplexTan(c128(2.0, -kInf)).imag(), -1.0);
  // Infinite real part: NaN, except with an infinite imaginary part.
  c128 undefined = ComplexTan(c128(-kInf, 0.0));
  EXPECT_TRUE(std::isnan(undefined.real()) && std::isnan(undefined.imag()));
  c128 corner = ComplexTan(c128(-kInf, kInf));
  EXPECT_EQ(corner.real(), 0.0);
  EXPECT_EQ(corner.imag(), 1.0);
  c128 nan_y = ComplexTan(c128(1.0, std::nan("")));
  EXPECT_TRUE(std::isnan(nan_y.real()) && std::isnan(nan_y.imag()));
}

TEST(ComplexMathTest, Expm1KeepsAZeroImaginaryPartExact) {
  c128 big = ComplexExpm1(c128(800.0, 0.0));
  EXPECT_EQ(big.real(), kInf);
  EXPECT_EQ(big.imag(), 0.0);
  // Near zero expm1 keeps the digits exp(z) - 1 would lose.
  c128 small = ComplexExpm1(c128(1e-10, 1e-10));
  EXPECT_NEAR(small.real(), 1e-10, 1e-20);
  EXPECT_NEAR(small.imag(), 1e-10 * (1 + 1e-10), 1e-24);  // e^x sin y
  c128 z(0.3, -2.0);
  c128 expected = std::exp(z) - 1.0;
  EXPECT_NEAR(ComplexExpm1(z).real(), expected.real(), 1e-14);
  EXPECT_NEAR(ComplexExpm1(z).imag(), expected.imag(), 1e-14);
}

}  // namespace
}  // namespace kiln::exec::ops
