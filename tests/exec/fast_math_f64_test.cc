// The vectorizable f64 functions (exec/kernels/fast_math_f64.h) against
// the same functions evaluated in long double (x87's 64-bit significand,
// eleven bits more than double: enough to tell a thousandth of an ulp),
// in fractions of an ulp of the correctly rounded result. Inputs: a
// million doubles of random bits (every exponent as often, both signs,
// subnormals, infinities and NaNs among them), a million uniform over the
// range where the function is neither constant nor overflowing, and the
// edge values, which must come out exactly as the C library gives them.
#include "exec/kernels/fast_math_f64.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace kiln::exec {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// |got - exact| in units of the last place of exact rounded to double.
double UlpError(double got, long double exact) {
  double rounded = static_cast<double>(exact);
  if (got == rounded) return 0.0;
  double magnitude = std::fabs(rounded);
  double ulp = magnitude == 0.0 ? std::numeric_limits<double>::denorm_min()
                                : std::nextafter(magnitude, kInf) - magnitude;
  if (std::isinf(magnitude)) {  // past the largest double
    ulp = std::nextafter(std::numeric_limits<double>::max(), 0.0);
    ulp = std::numeric_limits<double>::max() - ulp;
  }
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) /
                             ulp);
}

struct Sweep {
  double worst_ulps = 0;
  double worst_input = 0;
  int64_t mismatched_specials = 0;
  double first_special = 0;
};

// The fast functions are forced inline, which a call through a function
// pointer is not: they are passed wrapped in a lambda.
#define FAST(name) [](double x) { return fast::name(x); }

template <typename Fast, typename Exact>
Sweep SweepInputs(Fast fast, Exact exact, double low, double high) {
  std::vector<double> inputs;
  std::mt19937_64 random(20261207);
  for (int i = 0; i < 1000000; ++i) {
    inputs.push_back(std::bit_cast<double>(random()));
  }
  std::uniform_real_distribution<double> uniform(low, high);
  for (int i = 0; i < 1000000; ++i) inputs.push_back(uniform(random));
  Sweep sweep;
  for (double x : inputs) {
    long double want = exact(static_cast<long double>(x));
    double want_double = static_cast<double>(want);
    double got = fast(x);
    if (std::isnan(want_double) || std::isinf(want_double) || std::isnan(got) ||
        std::isinf(got)) {
      bool same =
          (std::isnan(want_double) && std::isnan(got)) || want_double == got;
      if (!same && sweep.mismatched_specials++ == 0) sweep.first_special = x;
      continue;
    }
    double ulps = UlpError(got, want);
    if (ulps > sweep.worst_ulps) {
      sweep.worst_ulps = ulps;
      sweep.worst_input = x;
    }
  }
  return sweep;
}

void ExpectWithin(const Sweep& sweep, double ulps) {
  EXPECT_LE(sweep.worst_ulps, ulps)
      << "worst at x = " << sweep.worst_input << " (bits 0x" << std::hex
      << std::bit_cast<uint64_t>(sweep.worst_input) << ")";
  EXPECT_EQ(sweep.mismatched_specials, 0)
      << "an infinity or NaN differs first at x = " << sweep.first_special;
}

TEST(FastMathF64Test, ExpIsWithinAnUlp) {
  ExpectWithin(
      SweepInputs(
          FAST(ExpF64), [](long double x) { return expl(x); }, -746, 710),
      1.0);
}

TEST(FastMathF64Test, Expm1IsWithinAnUlpAndAHalf) {
  ExpectWithin(
      SweepInputs(
          FAST(Expm1F64), [](long double x) { return expm1l(x); }, -40, 710),
      1.5);
  ExpectWithin(
      SweepInputs(
          FAST(Expm1F64), [](long double x) { return expm1l(x); }, -1, 1),
      1.5);
}

TEST(FastMathF64Test, LogIsWithinAnUlp) {
  ExpectWithin(SweepInputs(
                   FAST(LogF64), [](long double x) { return logl(x); }, 0, 4),
               1.0);
}

TEST(FastMathF64Test, Log1pIsWithinAnUlpAndAHalf) {
  ExpectWithin(
      SweepInputs(
          FAST(Log1pF64), [](long double x) { return log1pl(x); }, -1, 3),
      1.5);
}

TEST(FastMathF64Test, TanhIsWithinTwoAndAHalfUlps) {
  ExpectWithin(
      SweepInputs(
          FAST(TanhF64), [](long double x) { return tanhl(x); }, -20, 20),
      2.5);
}

TEST(FastMathF64Test, LogisticIsWithinTwoAndAHalfUlps) {
  ExpectWithin(
      SweepInputs(
          FAST(LogisticF64),
          [](long double x) { return 1.0L / (1.0L + expl(-x)); }, -40, 40),
      2.5);
}

TEST(FastMathF64Test, EdgesAreTheLibrarysOwn) {
  const double kNaN = std::numeric_limits<double>::quiet_NaN();
  const double kDenormMin = std::numeric_limits<double>::denorm_min();
  for (double x :
       {0.0, -0.0, kInf, -kInf, 1.0, -1.0, 709.782712893384, 709.7827128933841,
        -708.3964185322641, -745.1332191019411, -745.1332191019412, kDenormMin,
        -kDenormMin, 1e-310, std::numeric_limits<double>::min(),
        std::numeric_limits<double>::max(), 20.0, 20.5, -38.5}) {
    SCOPED_TRACE(x);
    EXPECT_EQ(fast::ExpF64(x), std::exp(x));
    if (std::fabs(x) < 1e-300 || std::isinf(x) || x == -38.5) {
      EXPECT_EQ(fast::Expm1F64(x), std::expm1(x));
      EXPECT_EQ(std::signbit(fast::Expm1F64(x)), std::signbit(std::expm1(x)));
    }
    if (x <= 0.0 || std::isinf(x) || x == 1.0) {
      double want = std::log(x);
      double got = fast::LogF64(x);
      EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want)));
    }
    if (std::fabs(x) >= 20.0 || x == 0.0 || std::fabs(x) < 1e-300) {
      EXPECT_EQ(fast::TanhF64(x), std::tanh(x));
      EXPECT_EQ(std::signbit(fast::TanhF64(x)), std::signbit(x));
    }
  }
  EXPECT_EQ(fast::Log1pF64(-1.0), -kInf);
  EXPECT_TRUE(std::isnan(fast::Log1pF64(-2.0)));
  EXPECT_EQ(fast::Log1pF64(kInf), kInf);
  EXPECT_EQ(std::signbit(fast::Log1pF64(-0.0)), true);
  EXPECT_EQ(fast::Log1pF64(1e-300), 1e-300);
  EXPECT_EQ(fast::LogisticF64(-kInf), 0.0);
  EXPECT_EQ(fast::LogisticF64(kInf), 1.0);
  EXPECT_EQ(fast::LogisticF64(0.0), 0.5);
  for (double nan : {kNaN, -kNaN}) {
    EXPECT_TRUE(std::isnan(fast::ExpF64(nan)));
    EXPECT_TRUE(std::isnan(fast::Expm1F64(nan)));
    EXPECT_TRUE(std::isnan(fast::LogF64(nan)));
    EXPECT_TRUE(std::isnan(fast::Log1pF64(nan)));
    EXPECT_TRUE(std::isnan(fast::TanhF64(nan)));
    EXPECT_TRUE(std::isnan(fast::LogisticF64(nan)));
  }
}

}  // namespace
}  // namespace kiln::exec
