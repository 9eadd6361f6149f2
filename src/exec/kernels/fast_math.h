// f32 transcendental functions written so that the compiler vectorizes
// them: no calls, no table lookups, no branches the compiler cannot turn
// into selects. They are the fast tier of the f32 elementwise kernels; the
// reference tier evaluates the same functions in double and rounds once
// (elementwise_ops.h), and tests/exec/fast_math_test.cc holds the two
// within a few units in the last place over the whole f32 range.
//
// The constants are derived here, not taken from a table: ln 2 is split
// into a part with 16 significant bits (so n * ln2_hi is exact for the
// exponents that occur) and the rest; polynomials are truncated Taylor
// series, long enough that their truncation error is below half an ulp
// on the reduced ranges.
#ifndef KILN_EXEC_KERNELS_FAST_MATH_H_
#define KILN_EXEC_KERNELS_FAST_MATH_H_

#include <bit>
#include <cstdint>

// Every function here is forced inline: they vectorize only inside the
// kernel's loop, and GCC, left to itself, calls the longer ones (erf, erfc)
// out of line from kernels that instantiate many ops, one element a call.
#if defined(__GNUC__) || defined(__clang__)
#define KILN_FAST_MATH inline __attribute__((always_inline))
#else
#define KILN_FAST_MATH inline
#endif

namespace kiln::exec::fast {

inline constexpr float kLn2Hi = 0.693145751953125f;          // 16 bits of ln 2
inline constexpr float kLn2Lo = 1.42860682030941723212e-6f;  // ln 2 - kLn2Hi
inline constexpr float kLog2E = 1.44269504088896340736f;
// Adding and subtracting 1.5 * 2^23 rounds a float of magnitude below
// 2^22 to the nearest integer (ties to even), in any vector width.
inline constexpr float kRoundMagic = 12582912.0f;

// e^r for |r| <= ln(2)/2: Taylor series to r^7 (truncation below 2^-28).
KILN_FAST_MATH float ExpReduced(float r) {
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  return p * r + 1.0f;
}

// 2^n as a float for integral n in [-126, 127].
KILN_FAST_MATH float Pow2(int32_t n) {
  return std::bit_cast<float>(static_cast<uint32_t>(n + 127) << 23);
}

// e^x = 2^n e^r for n the integer (held in a float, |n| <= 150) nearest
// x / ln 2.
KILN_FAST_MATH float ExpWithExponent(float x, float n) {
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = ExpReduced(r);
  // 2^n in two factors, each a normal float, so that results in the
  // subnormal range and just below overflow come out right.
  int32_t ni = static_cast<int32_t>(n);
  int32_t half = ni >> 1;
  return p * Pow2(half) * Pow2(ni - half);
}

KILN_FAST_MATH float NearestExponent(float x) {
  return (x * kLog2E + kRoundMagic) - kRoundMagic;
}

// e^x for x in [-104, 89], not NaN: Exp without the clamps, for callers
// whose argument is in range by construction (the same bits as Exp there).
KILN_FAST_MATH float ExpInRange(float x) {
  return ExpWithExponent(x, NearestExponent(x));
}

// e^x. Overflows to +inf past 88.72, reaches subnormals and then 0 below
// -87.3; NaN stays NaN.
KILN_FAST_MATH float Exp(float x) {
  // Clamping keeps n within [-150, 129]; a NaN passes through (comparisons
  // with NaN are false).
  float clamped = x < -104.0f ? -104.0f : x;
  clamped = clamped > 89.0f ? 89.0f : clamped;
  float n = NearestExponent(clamped);
  n = x != x ? 0.0f : n;  // keeps the conversion in ExpWithExponent defined
  return ExpWithExponent(clamped, n);
}

// e^x - 1, accurate near 0.
KILN_FAST_MATH float Expm1(float x) {
  float ax = x < 0 ? -x : x;
  // |x| <= 1/2: Taylor series to x^9 without the leading 1 (truncation
  // below 2^-28 relative); past it e^x - 1 loses at most a bit or two.
  float p = 1.0f / 362880.0f;
  p = p * x + 1.0f / 40320.0f;
  p = p * x + 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  float small = (p * x) * x + x;
  float large = Exp(x) - 1.0f;
  float result = ax <= 0.5f ? small : large;
  return x == 0.0f ? x : result;  // keeps the sign of zero
}

// ln x: x = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s) with
// s = (m - 1) / (m + 1), |s| <= 0.1716, as an odd series to s^11.
KILN_FAST_MATH float Log(float x) {
  // Subnormals are scaled into the normal range first.
  bool subnormal = x < 1.17549435e-38f;
  float scaled = subnormal ? x * 8388608.0f : x;  // 2^23
  uint32_t bits = std::bit_cast<uint32_t>(scaled);
  int32_t e = static_cast<int32_t>(bits >> 23) - 127 - (subnormal ? 23 : 0);
  float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f800000u);
  bool above = m > 1.41421356f;
  m = above ? m * 0.5f : m;
  e = above ? e + 1 : e;
  float f = m - 1.0f;
  float s = f / (m + 1.0f);
  float s2 = s * s;
  float q = 2.0f / 11.0f;
  q = q * s2 + 2.0f / 9.0f;
  q = q * s2 + 2.0f / 7.0f;
  q = q * s2 + 2.0f / 5.0f;
  q = q * s2 + 2.0f / 3.0f;
  // ln m = 2s + s * s2 * q, written around f so that m near 1 keeps every
  // bit: 2s = f - s f.
  float log_m = f - s * f + s * s2 * q;
  float fe = static_cast<float>(e);
  float result = fe * kLn2Hi + (log_m + fe * kLn2Lo);
  // Edges: ln 0 = -inf, ln of a negative or NaN = NaN, ln inf = inf.
  constexpr float kInf = __builtin_inff();
  result = x == 0.0f ? -kInf : result;
  result = x < 0.0f || x != x ? __builtin_nanf("") : result;
  result = x == kInf ? kInf : result;
  return result;
}

// ln(1 + x), accurate near 0: ln u corrected by the rounding error of
// u = 1 + x.
KILN_FAST_MATH float Log1p(float x) {
  float u = 1.0f + x;
  float correction = u == 0.0f ? 0.0f : (x - (u - 1.0f)) / u;
  float result = Log(u) + correction;
  // Where u rounded to 1, ln(1 + x) = x to float precision.
  result = u == 1.0f ? x : result;
  // u = inf (x = inf or x large): ln u without correction.
  return u == __builtin_inff() ? Log(u) : result;
}

// e^y - 1 for y in [0, 18], without branches: y = n ln 2 + r with
// |r| <= ln(2)/2, e^r - 1 as a Taylor series to r^8 without its leading 1
// (truncation below 2^-30 relative), and e^y - 1 = 2^n (e^r - 1) +
// (2^n - 1), where the scaling is exact and 2^n - 1 is exact up to n = 24;
// one rounding in the sum. Where n = 0 (y below ln(2)/2) it is the series
// itself, accurate to the last bit near 0, which Expm1 gets from a branch
// of its own.
KILN_FAST_MATH float Expm1Moderate(float y) {
  float n = NearestExponent(y);
  float r = y - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float q = 1.0f / 40320.0f;
  q = q * r + 1.0f / 5040.0f;
  q = q * r + 1.0f / 720.0f;
  q = q * r + 1.0f / 120.0f;
  q = q * r + 1.0f / 24.0f;
  q = q * r + 1.0f / 6.0f;
  q = q * r + 0.5f;
  float p = (q * r) * r + r;  // e^r - 1
  float scale = Pow2(static_cast<int32_t>(n));
  return scale * p + (scale - 1.0f);
}

// tanh x = u / (u + 2) with u = e^(2|x|) - 1, signed. u comes from
// Expm1Moderate, one exponential's work; Expm1's select between a series
// and an exponential cost both, and tanh 1.9 times as much.
KILN_FAST_MATH float Tanh(float x) {
  float ax = x < 0 ? -x : x;
  // A NaN is clamped too (`!(ax <= 9)`), which keeps the exponent's
  // conversion defined; its result is the NaN itself.
  float u = Expm1Moderate(2.0f * (!(ax <= 9.0f) ? 9.0f : ax));
  float t = u / (u + 2.0f);
  t = ax > 9.0f ? 1.0f : t;  // tanh rounds to 1 past 9.01
  t = x < 0 ? -t : t;
  return x != x || x == 0.0f ? x : t;  // NaN, and zeros keep their sign
}

// 1 / (1 + e^-x), through e^-|x| so that neither side overflows.
KILN_FAST_MATH float Logistic(float x) {
  float ax = x < 0 ? -x : x;
  float e = Exp(-ax);
  float positive = 1.0f / (1.0f + e);
  float negative = e / (1.0f + e);
  float result = x < 0 ? negative : positive;
  return x != x ? x : result;
}

// e^x in double for x in [-745, 709]: the same reduction with ln 2 split
// at 32 bits and a Taylor series to r^9 (truncation below 2^-32, enough
// for the f32 results it serves).
KILN_FAST_MATH double ExpDouble(double x) {
  constexpr double kLog2EDouble = 1.4426950408889634;
  constexpr double kLn2HiDouble = 0.6931471803691238;  // 32 bits of ln 2
  constexpr double kLn2LoDouble = 1.9082149292705877e-10;
  constexpr double kRoundMagicDouble = 6755399441055744.0;  // 1.5 * 2^52
  double n = (x * kLog2EDouble + kRoundMagicDouble) - kRoundMagicDouble;
  double r = x - n * kLn2HiDouble - n * kLn2LoDouble;
  double p = 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  auto ni = static_cast<int64_t>(n);
  return p * std::bit_cast<double>(static_cast<uint64_t>(ni + 1023) << 52);
}

// sin and cos of an f32 x with |x| <= kSinCosLimit, in double and rounded
// once. x = k pi/2 + r with k the integer nearest x 2/pi and |r| <= pi/4:
// pi/2 is split into its leading 33 bits and the rest, so that k pi/2's
// leading part is exact for every k below 2^20 and r keeps about 80 bits
// of pi/2 (r near 0 for x near a multiple of pi/2 keeps its relative
// accuracy). sin r and cos r are Taylor series to r^13 and r^12
// (truncation below 2^-36), and k mod 4 picks one of them and its sign.
// k's low bits are read from the rounding sum's mantissa, so no version
// needs a vector conversion from double to integer. Beyond the limit (and
// for inf and NaN) kernels call the reference instead (elementwise_ops.h).
inline constexpr float kSinCosLimit = 1048576.0f;  // 2^20

KILN_FAST_MATH double SinCosInRange(float x, bool cosine) {
  constexpr double kTwoOverPi = 0.6366197723675814;
  constexpr double kPiOverTwoHi = 1.5707963267341256;  // 33 bits
  constexpr double kPiOverTwoLo = 6.077100506506192e-11;
  constexpr double kRoundMagicDouble = 6755399441055744.0;  // 1.5 * 2^52
  double xd = x;
  double rounded = xd * kTwoOverPi + kRoundMagicDouble;
  double k = rounded - kRoundMagicDouble;
  double r = (xd - k * kPiOverTwoHi) - k * kPiOverTwoLo;
  // cos x = sin(x + pi/2): one quadrant on.
  uint64_t quadrant =
      std::bit_cast<uint64_t>(rounded) + (cosine ? uint64_t{1} : uint64_t{0});
  double r2 = r * r;
  double sp = -1.0 / 6227020800.0;  // -1/13!
  sp = sp * r2 + 1.0 / 39916800.0;
  sp = sp * r2 - 1.0 / 362880.0;
  sp = sp * r2 + 1.0 / 5040.0;
  sp = sp * r2 - 1.0 / 120.0;
  sp = sp * r2 + 1.0 / 6.0;
  double sine = r - (r * r2) * sp;
  double cp = 1.0 / 479001600.0;  // 1/12!
  cp = cp * r2 - 1.0 / 3628800.0;
  cp = cp * r2 + 1.0 / 40320.0;
  cp = cp * r2 - 1.0 / 720.0;
  cp = cp * r2 + 1.0 / 24.0;
  double cosine_r = 1.0 - r2 * (0.5 - r2 * cp);
  double v = (quadrant & 1) ? cosine_r : sine;
  v = (quadrant & 2) ? -v : v;
  // sin(-0) is -0, which the series turns into +0 (-0 - -0).
  return !cosine && x == 0.0f ? double{x} : v;
}

// ln x in double for a positive normal x: x = m 2^e with m in
// [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m - 1) / (m + 1), as an odd
// series to s^17 (|s| <= 0.1716: truncation below 2^-44 relative).
KILN_FAST_MATH double LogDouble(double x) {
  constexpr double kLn2Double = 0.6931471805599453;
  uint64_t bits = std::bit_cast<uint64_t>(x);
  int64_t e = static_cast<int64_t>(bits >> 52) - 1023;
  double m =
      std::bit_cast<double>((bits & 0x000fffffffffffffu) | 0x3ff0000000000000u);
  bool above = m > 1.4142135623730951;
  m = above ? m * 0.5 : m;
  e = above ? e + 1 : e;
  double f = m - 1.0;
  double s = f / (m + 1.0);
  double s2 = s * s;
  double q = 2.0 / 17.0;
  q = q * s2 + 2.0 / 15.0;
  q = q * s2 + 2.0 / 13.0;
  q = q * s2 + 2.0 / 11.0;
  q = q * s2 + 2.0 / 9.0;
  q = q * s2 + 2.0 / 7.0;
  q = q * s2 + 2.0 / 5.0;
  q = q * s2 + 2.0 / 3.0;
  // 2s = f - s f, so that m near 1 keeps every bit.
  double log_m = f - s * f + s * s2 * q;
  return static_cast<double>(e) * kLn2Double + log_m;
}

// Whether f32 b is an integer, and whether an odd one, in float and
// without a conversion to an integer type (so that a loop of mixed float
// and double comparisons does not stop GCC 12's vectorizer): below 2^23 in
// magnitude, adding and subtracting 2^23 rounds |b| (or |b|/2) to an
// integer, which equals it only if it was one; every float of 2^23 or more
// is an integer, and of 2^24 or more an even one.
KILN_FAST_MATH bool IsIntegral(float b) {
  constexpr float kRound = 8388608.0f;  // 2^23
  float m = b < 0 ? -b : b;
  return (m >= kRound) | (((m + kRound) - kRound) == m);
}
KILN_FAST_MATH bool IsOddIntegral(float b) {
  constexpr float kRound = 8388608.0f;  // 2^23
  float m = b < 0 ? -b : b;
  float half = m * 0.5f;  // exact, and below 2^23 where m is below 2^24
  return (m < 2.0f * kRound) & IsIntegral(b) &
         (((half + kRound) - kRound) != half);
}

// a^b for f32 a > 0 finite and b finite, as e^(b ln a) in double (ln a to
// about 2^-44, e^t to 2^-32 relative) rounded once to f32: within an ulp of
// the reference. b ln a is clamped to [-120, 100], past which the f32
// result is 0 or inf anyway. ops::Power (elementwise_ops.h) takes negative
// bases to integer exponents from it too, signed; the rest (zero bases,
// negative ones to fractions, infinities, NaN) from the reference.
KILN_FAST_MATH float PowPositive(float a, float b) {
  double t = static_cast<double>(b) * LogDouble(static_cast<double>(a));
  t = t < -120.0 ? -120.0 : t;
  t = t > 100.0 ? 100.0 : t;
  return static_cast<float>(ExpDouble(t));
}

// erf x / x = P(x^2) on |x| <= 1, and erfc x = e^(-x^2) R(1/x) on
// [1, 10.1]: polynomials fitted here by least squares in relative error on
// Chebyshev nodes against erf and erfc evaluated to 30 digits (relative
// fit error below 1.4e-9 for P, 5.6e-9 for R). R is evaluated in double,
// where its alternating coefficients lose nothing.
// In float for erf; in double for erfc = 1 - erf, where the subtraction
// would magnify a float's rounding up to 5 times near |x| = 1.
template <typename T>
KILN_FAST_MATH T ErfSmall(T x) {
  T t = x * x;
  T p = T(7.898202138e-05);
  p = p * t - T(8.024351373e-04);
  p = p * t + T(5.190053212e-03);
  p = p * t - T(2.685480830e-02);
  p = p * t + T(1.128361242e-01);
  p = p * t - T(3.761262884e-01);
  p = p * t + T(1.128379167e+00);
  return x * p;
}

// R(1/ax), erfc's factor beside e^(-ax^2) for ax in [1, 10.1].
template <typename T>
KILN_FAST_MATH T ErfcLargeFactor(T ax) {
  T u = T(1) / ax;
  T r = T(8.19785186273580824e-02);
  r = r * u - T(5.27161757284243970e-01);
  r = r * u + T(1.45268168712516532e+00);
  r = r * u - T(2.16488717968880406e+00);
  r = r * u + T(1.69249775530578717e+00);
  r = r * u - T(2.47049253265604535e-01);
  r = r * u - T(8.27763696080567546e-01);
  r = r * u + T(7.52313561963397937e-01);
  r = r * u - T(7.77160489474895272e-02);
  r = r * u - T(2.70477631673791130e-01);
  r = r * u - T(1.07707474076337438e-03);
  r = r * u + T(5.64245966817497169e-01);
  r = r * u - T(1.26959191224344741e-06);
  return r;
}

// erfc for ax in [1, 10.1]; Erfc evaluates it in double, Erf in float.
template <typename T>
KILN_FAST_MATH T ErfcTail(T ax) {
  if constexpr (sizeof(T) == sizeof(double)) {
    return ExpDouble(-ax * ax) * ErfcLargeFactor(ax);
  } else {
    return ExpInRange(-ax * ax) * ErfcLargeFactor(ax);
  }
}

// erf needs erfc only to its absolute error: 1 - erfc in float is within
// an ulp of erf, since erfc x <= 0.16 on [1, 4] gives its error to a
// result four times larger. Past 4, erf rounds to 1 in float.
//
// Erf, Erfc and ErfcSingle each select between two branches: F(x) is x
// for a NaN, else FSmall(x) for |x| < 1, else FLarge(x). A vectorized loop
// evaluates both for every element and selects; a kernel may instead
// evaluate each only for the elements that take it (kernels/two_branch.h),
// with the same bits. So FLarge must be defined for every input, NaN
// included: it clamps its argument into range (`!(ax <= limit)`), which
// keeps its exponent conversion defined (the compile fuzzer's UBSan find).
KILN_FAST_MATH float ErfLarge(float x) {
  float ax = x < 0 ? -x : x;
  float large = 1.0f - ErfcTail(!(ax <= 4.0f) ? 4.0f : (ax < 1.0f ? 1.0f : ax));
  large = ax > 4.0f ? 1.0f : large;
  return x < 0 ? -large : large;
}

KILN_FAST_MATH float Erf(float x) {
  float ax = x < 0 ? -x : x;
  float result = ax < 1.0f ? ErfSmall(x) : ErfLarge(x);
  return x != x ? x : result;
}

KILN_FAST_MATH float ErfcSmall(float x) {
  return static_cast<float>(1.0 - ErfSmall(static_cast<double>(x)));
}

KILN_FAST_MATH float ErfcLarge(float x) {
  float ax = x < 0 ? -x : x;
  // Past 10.1 erfc underflows to 0 (and 2 for large negative x).
  double big = ErfcTail(!(ax <= 10.1f) ? 10.1 : (ax < 1.0f ? 1.0 : double{ax}));
  big = ax > 10.1f ? 0.0 : big;
  return static_cast<float>(x < 0 ? 2.0 - big : big);
}

KILN_FAST_MATH float Erfc(float x) {
  float ax = x < 0 ? -x : x;
  float result = ax < 1.0f ? ErfcSmall(x) : ErfcLarge(x);
  return x != x ? x : result;
}

// erfc evaluated in float throughout: the rebuilt form of a program's own
// float expansion of erfc (JAX's decomposition of chlo.erfc, which
// compile/recover_erfc.h recognizes), so it answers to that expansion's
// accuracy rather than Erfc's. It is the same two branches, each cheaper
// than Erfc's double ones: 1 - erf for |x| < 1 (as the expansion, within
// 9 ulps near 1, where the subtraction magnifies erf's rounding),
// and e^(-x^2) R(1/x) beyond, where x^2 is split into its rounded value
// and that rounding's error (Dekker's product), so that e^(-x^2) keeps its
// precision up to where erfc underflows; the expansion rounds x^2 first
// and loses about x^2/2 ulps there.
KILN_FAST_MATH float ErfcSingleSmall(float x) { return 1.0f - ErfSmall(x); }

KILN_FAST_MATH float ErfcSingleLarge(float x) {
  float ax = x < 0 ? -x : x;
  // Past 10.05 erfc underflows to 0 (and 2 for large negative x). A NaN is
  // clamped into the range, so that the exponent's conversion stays
  // defined.
  float c = !(ax <= 10.05f) ? 10.05f : (ax < 1.0f ? 1.0f : ax);
  float split = c * 4097.0f;  // 2^12 + 1: c's upper 12 bits in c_hi
  float c_hi = split - (split - c);
  float c_lo = c - c_hi;
  float square = c * c;
  float square_error =
      ((c_hi * c_hi - square) + 2.0f * c_hi * c_lo) + c_lo * c_lo;
  float big = ExpInRange(-square) * (1.0f - square_error) * ErfcLargeFactor(c);
  big = ax > 10.05f ? 0.0f : big;
  return x < 0 ? 2.0f - big : big;
}

KILN_FAST_MATH float ErfcSingle(float x) {
  float ax = x < 0 ? -x : x;
  float result = ax < 1.0f ? ErfcSingleSmall(x) : ErfcSingleLarge(x);
  return x != x ? x : result;
}

}  // namespace kiln::exec::fast

#endif  // KILN_EXEC_KERNELS_FAST_MATH_H_
