// f64 exponentials, logarithms, tanh and the logistic function written so
// that the compiler vectorizes them, as fast_math.h does for f32: no calls,
// no tables, selects instead of branches, and no conversion between double
// and a 64-bit integer (AVX2 has none; x86-64-v4 does), whose work is done
// on the bits instead:
//   - an integral double k below 2^51 in magnitude is the low bits of
//     k + 1.5 * 2^52, so k as an integer is that sum's bits less the
//     constant's, and 2^k is (k + 1023) shifted into the exponent field;
//   - a small non-negative integer j as a double is the double whose bits
//     are 2^52's with j in the low bits, less 2^52.
// The series are evaluated in explicit fused multiply-adds (std::fma): one
// instruction in the AVX2 and AVX-512 versions of a kernel, a call in the
// baseline one, the same bits in all three.
// The reference these replace is glibc's (correctly rounded or within an
// ulp); tests/exec/fast_math_f64_test.cc holds each function within its
// stated ulps of the value computed in long double over the whole range.
//
// Reductions: e^x = 2^n e^r with n the integer nearest x / ln 2 and
// |r| <= ln(2)/2, ln 2 split into a leading part of 32 bits (n times it is
// exact for every n that occurs) and the rest; e^r - 1 is its Taylor series
// to r^13 (truncation below 2^-57 relative). ln x = e ln 2 + ln m with m in
// [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m - 1) / (m + 1), as an odd
// series to s^23 (|s| <= 0.1716: truncation below 2^-55 relative).
#ifndef KILN_EXEC_KERNELS_FAST_MATH_F64_H_
#define KILN_EXEC_KERNELS_FAST_MATH_F64_H_

#include <bit>
#include <cmath>
#include <cstdint>

#include "exec/kernels/fast_math.h"  // KILN_FAST_MATH

namespace kiln::exec::fast {

inline constexpr double kF64Log2E = 1.4426950408889634;
inline constexpr double kF64Ln2Hi = 6.93147180369123816490e-01;  // 32 bits
inline constexpr double kF64Ln2Lo = 1.90821492927058770002e-10;
// Adding and subtracting 1.5 * 2^52 rounds a double of magnitude below
// 2^51 to the nearest integer (ties to even).
inline constexpr double kF64RoundMagic = 6755399441055744.0;

// The integer nearest x (|x| < 2^51), as a double.
KILN_FAST_MATH double RoundToIntegerF64(double x) {
  return (x + kF64RoundMagic) - kF64RoundMagic;
}

// 2^k for an integral double k in [-1022, 1023].
KILN_FAST_MATH double Pow2F64(double k) {
  uint64_t integer = std::bit_cast<uint64_t>(k + kF64RoundMagic) -
                     std::bit_cast<uint64_t>(kF64RoundMagic);
  return std::bit_cast<double>((integer + 1023) << 52);
}

// (e^r - 1 - r) / r^2 for |r| <= ln(2)/2 (slightly more is fine): its
// Taylor series to r^11.
KILN_FAST_MATH double Expm1Tail(double r) {
  double q = 1.0 / 6227020800.0;  // 1/13!
  q = std::fma(q, r, 1.0 / 479001600.0);
  q = std::fma(q, r, 1.0 / 39916800.0);
  q = std::fma(q, r, 1.0 / 3628800.0);
  q = std::fma(q, r, 1.0 / 362880.0);
  q = std::fma(q, r, 1.0 / 40320.0);
  q = std::fma(q, r, 1.0 / 5040.0);
  q = std::fma(q, r, 1.0 / 720.0);
  q = std::fma(q, r, 1.0 / 120.0);
  q = std::fma(q, r, 1.0 / 24.0);
  q = std::fma(q, r, 1.0 / 6.0);
  return std::fma(q, r, 0.5);
}

// x = n ln 2 + r with n the integer nearest x / ln 2 (|x| below 2^20 or
// so), and e^r - 1 = hi + lo, where hi = x - n ln2_hi is exact and lo
// (the rest of ln 2 and the series past r) is below ln(2)^2 / 4 in
// magnitude: the sum's rounding is left to the caller, who adds it to
// something else.
struct ExpReduction {
  double n, hi, lo;
};
KILN_FAST_MATH ExpReduction ReduceExp(double x) {
  double n = RoundToIntegerF64(x * kF64Log2E);
  double hi = x - n * kF64Ln2Hi;  // exact (Sterbenz)
  double tail = -(n * kF64Ln2Lo);
  double r = hi + tail;
  return {n, hi, std::fma(r * r, Expm1Tail(r), tail)};
}

// c + hi + lo for |c| >= |hi| (or c = 0), rounded once but for lo's own
// rounding: Dekker's fast two-sum of c and hi (exact with the kernels'
// -ffp-contract=off), its error added to lo first. Every caller's c is 0
// or at least 1/2 in magnitude, and |hi| is at most ln(2)/2.
KILN_FAST_MATH double SumOfThree(double c, double hi, double lo) {
  double s = c + hi;
  double error = (c - s) + hi;
  return s + (error + lo);
}

// e^x. Overflows to +inf past 709.78, reaches subnormals below -708.4 and 0
// below -745.1; NaN stays NaN. Within an ulp (0.52 measured).
KILN_FAST_MATH double ExpF64(double x) {
  // The clamps keep n in [-1077, 1025] (a NaN passes through them and is
  // the result).
  double clamped = x < -746.0 ? -746.0 : x;
  clamped = clamped > 710.0 ? 710.0 : clamped;
  ExpReduction e = ReduceExp(clamped);
  double p = SumOfThree(1.0, e.hi, e.lo);  // e^r
  // 2^n in two factors, each a normal double, so that results just below
  // overflow and in the subnormal range come out right (the second
  // product is the only rounding there).
  double half = RoundToIntegerF64(e.n * 0.5);
  double result = (p * Pow2F64(half)) * Pow2F64(e.n - half);
  return x != x ? x : result;
}

// e^x - 1 for x not NaN, but for the sign of zero.
KILN_FAST_MATH double Expm1NotNaN(double x) {
  // Below -38, e^x - 1 rounds to -1; past 710 it overflows.
  double clamped = x < -38.0 ? -38.0 : x;
  clamped = clamped > 710.0 ? 710.0 : clamped;
  ExpReduction e = ReduceExp(clamped);
  const double n = e.n;
  // n < 0: (2^n - 1) + 2^n (e^r - 1), 2^n - 1 exact down to n = -53 and
  // the scaling exact.
  double scale = Pow2F64(n < 0.0 ? n : 0.0);
  double below = SumOfThree(scale - 1.0, scale * e.hi, scale * e.lo);
  // n >= 0: 2^n ((1 - 2^-n) + (e^r - 1)), 1 - 2^-n exact up to n = 53 and
  // 1 past it; 2^n in two factors as in ExpF64 (n reaches 1025).
  double inverse = Pow2F64(n > 60.0 ? -60.0 : (n > 0.0 ? -n : 0.0));
  double half = RoundToIntegerF64(n * 0.5);
  double sum = SumOfThree(1.0 - inverse, e.hi, e.lo);
  double at_or_above =
      (sum * Pow2F64(n < 0.0 ? 0.0 : half)) * Pow2F64(n < 0.0 ? 0.0 : n - half);
  return n < 0.0 ? below : at_or_above;
}

// e^y - 1 for y in [0, 40] (n <= 58, so 2^n is one normal factor).
KILN_FAST_MATH double Expm1NonNegative(double y) {
  ExpReduction e = ReduceExp(y);
  double sum = SumOfThree(1.0 - Pow2F64(-e.n), e.hi, e.lo);
  return sum * Pow2F64(e.n);
}

// e^x - 1, accurate near 0 (e^r - 1 itself below ln(2)/2 in magnitude).
// Within an ulp.
KILN_FAST_MATH double Expm1F64(double x) {
  double result = Expm1NotNaN(x);
  return x != x || x == 0.0 ? x : result;  // NaN, and zeros keep their sign
}

// ln x. ln 0 = -inf, ln of a negative or NaN = NaN, ln inf = inf. Within
// an ulp.
KILN_FAST_MATH double LogF64(double x) {
  constexpr double kTwo52 = 4503599627370496.0;
  constexpr double kSmallestNormal = 2.2250738585072014e-308;
  // Subnormals are scaled into the normal range first.
  bool subnormal = x < kSmallestNormal;
  double scaled = subnormal ? x * kTwo52 : x;
  uint64_t bits = std::bit_cast<uint64_t>(scaled);
  // The biased exponent (0 to 2047 for a non-negative x) as a double.
  double biased =
      std::bit_cast<double>((bits >> 52) | std::bit_cast<uint64_t>(kTwo52)) -
      kTwo52;
  double e = biased - (subnormal ? 1023.0 + 52.0 : 1023.0);
  double m =
      std::bit_cast<double>((bits & 0x000fffffffffffffu) | 0x3ff0000000000000u);
  bool above = m > 1.4142135623730951;
  m = above ? m * 0.5 : m;
  e = above ? e + 1.0 : e;
  double f = m - 1.0;  // exact
  double s = f / (m + 1.0);
  double s2 = s * s;
  double q = 2.0 / 23.0;
  q = std::fma(q, s2, 2.0 / 21.0);
  q = std::fma(q, s2, 2.0 / 19.0);
  q = std::fma(q, s2, 2.0 / 17.0);
  q = std::fma(q, s2, 2.0 / 15.0);
  q = std::fma(q, s2, 2.0 / 13.0);
  q = std::fma(q, s2, 2.0 / 11.0);
  q = std::fma(q, s2, 2.0 / 9.0);
  q = std::fma(q, s2, 2.0 / 7.0);
  q = std::fma(q, s2, 2.0 / 5.0);
  q = std::fma(q, s2, 2.0 / 3.0);
  // ln m = 2s + s s2 q and 2s = f - f^2/2 (1 - s), so ln m = f - (f^2/2 -
  // s (f^2/2 + s2 q)): f exact and the rest small, whose roundings count
  // for little (fdlibm's arrangement).
  double half_f2 = 0.5 * f * f;
  double result = e * kF64Ln2Hi -
                  ((half_f2 - (s * (half_f2 + s2 * q) + e * kF64Ln2Lo)) - f);
  constexpr double kInf = __builtin_inf();
  result = x == 0.0 ? -kInf : result;
  result = x < 0.0 || x != x ? __builtin_nan("") : result;
  result = x == kInf ? kInf : result;
  return result;
}

// ln(1 + x), accurate near 0: ln u corrected by the rounding error of
// u = 1 + x. Within two ulps.
KILN_FAST_MATH double Log1pF64(double x) {
  double u = 1.0 + x;
  double correction = u == 0.0 ? 0.0 : (x - (u - 1.0)) / u;
  double log_u = LogF64(u);
  double result = log_u + correction;
  // Where u rounded to 1, ln(1 + x) = x to double precision; u = inf
  // (x = inf or x large) takes ln u alone.
  result = u == 1.0 ? x : result;
  return u == __builtin_inf() ? log_u : result;
}

// tanh x = u / (u + 2) with u = e^(2|x|) - 1, signed; 1 past 20, where
// tanh rounds to 1. Within three ulps.
KILN_FAST_MATH double TanhF64(double x) {
  double ax = x < 0.0 ? -x : x;
  // A NaN is clamped too (`!(ax <= 20)`); its result is the NaN itself.
  double u = Expm1NonNegative(2.0 * (!(ax <= 20.0) ? 20.0 : ax));
  double t = u / (u + 2.0);
  t = ax > 20.0 ? 1.0 : t;
  t = x < 0.0 ? -t : t;
  return x != x || x == 0.0 ? x : t;  // NaN, and zeros keep their sign
}

// 1 / (1 + e^-x), through e^-|x| so that neither side overflows. Within two
// ulps.
KILN_FAST_MATH double LogisticF64(double x) {
  double ax = x < 0.0 ? -x : x;
  double e = ExpF64(-ax);
  double positive = 1.0 / (1.0 + e);
  double negative = e / (1.0 + e);
  double result = x < 0.0 ? negative : positive;
  return x != x ? x : result;
}

}  // namespace kiln::exec::fast

#endif  // KILN_EXEC_KERNELS_FAST_MATH_F64_H_
