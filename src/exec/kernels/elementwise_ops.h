// The scalar functions behind the elementwise kernels, one struct per op.
// `Apply` exists only for the types an op supports (its requires-clauses
// are the op's type table); a kernel is instantiated for exactly those.
// Internal to exec/kernels.
#ifndef KILN_EXEC_KERNELS_ELEMENTWISE_OPS_H_
#define KILN_EXEC_KERNELS_ELEMENTWISE_OPS_H_

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "exec/kernels/element.h"
#include "exec/kernels/fast_math.h"
#include "exec/kernels/fast_math_f64.h"
#include "exec/kernels/special_math.h"

namespace kiln::exec::ops {

template <typename T>
concept Int = kIsInt<T>;
template <typename T>
concept SignedInt = kIsInt<T> && std::is_signed_v<T>;
template <typename T>
concept Float = kIsFloat<T>;
template <typename T>
concept Complex = kIsComplex<T>;
template <typename T>
concept FloatOrComplex = kIsFloat<T> || kIsComplex<T>;
template <typename T>
concept Numeric = kIsInt<T> || kIsFloat<T> || kIsComplex<T>;
template <typename T>
concept BoolOrInt = std::is_same_v<T, bool> || kIsInt<T>;

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

// Integer arithmetic wraps (two's complement), as the spec's integer ops do.
template <Int T>
T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) +
                        static_cast<Unsigned<T>>(b));
}
template <Int T>
T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) -
                        static_cast<Unsigned<T>>(b));
}
template <Int T>
T WrapMul(T a, T b) {
  // Promote narrow types to unsigned int so the product cannot overflow int.
  using Wide =
      std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, Unsigned<T>>;
  return static_cast<T>(static_cast<Wide>(static_cast<Unsigned<T>>(a)) *
                        static_cast<Wide>(static_cast<Unsigned<T>>(b)));
}

// f32 transcendental functions are evaluated in double and rounded once;
// c64 ones in c128.
template <Float T, typename Fn>
T ViaDouble(T x, Fn fn) {
  return static_cast<T>(fn(static_cast<double>(x)));
}
template <Complex T, typename Fn>
T ViaComplex128(T x, Fn fn) {
  c128 r = fn(c128(x.real(), x.imag()));
  return T(static_cast<typename T::value_type>(r.real()),
           static_cast<typename T::value_type>(r.imag()));
}

#define KILN_FLOAT_FN(Name, expr_double)                         \
  struct Name {                                                  \
    template <Float T>                                           \
    static T Apply(T x, int) {                                   \
      return ViaDouble(x, [](double v) { return expr_double; }); \
    }                                                            \
  };
#define KILN_FLOAT_COMPLEX_FN(Name, expr_double, expr_complex)      \
  struct Name {                                                     \
    template <Float T>                                              \
    static T Apply(T x, int) {                                      \
      return ViaDouble(x, [](double v) { return expr_double; });    \
    }                                                               \
    template <Complex T>                                            \
    static T Apply(T x, int) {                                      \
      return ViaComplex128(x, [](c128 v) { return expr_complex; }); \
    }                                                               \
  };

// expm1 and log1p of complex numbers, accurate near zero.
inline c128 ComplexExpm1(c128 z) {
  double x = z.real(), y = z.imag();
  double half_sin = std::sin(y / 2);
  double cos_minus_one = -2.0 * half_sin * half_sin;
  double em1 = std::expm1(x);
  // y = 0 keeps the imaginary part exact (exp(x) may be infinite).
  double imag = y == 0 ? y : std::exp(x) * std::sin(y);
  return {em1 * std::cos(y) + cos_minus_one, imag};
}
// tan(x + iy) = (sin x cos x + i sinh y cosh y) / (cos^2 x + sinh^2 y): the
// denominator is 2 (cos 2x + cosh 2y) without its cancellation near the
// poles. Past |y| = 20 tanh(y) rounds to +-1 and the real part decays as
// 4 sin x cos x e^(-2|y|), which keeps cosh from overflowing. An infinite
// or NaN real part gives NaN in both parts, except tan(+-inf +- i inf) = +-i:
// XLA's values at the edges.
inline c128 ComplexTan(c128 z) {
  double x = z.real(), y = z.imag();
  if (!std::isfinite(x)) {
    if (std::isinf(y)) return {0.0, std::copysign(1.0, y)};
    double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan};
  }
  double s = std::sin(x), c = std::cos(x);
  if (std::fabs(y) > 20) {
    return {4 * s * c * std::exp(-2 * std::fabs(y)), std::copysign(1.0, y)};
  }
  double sh = std::sinh(y), ch = std::cosh(y);
  double den = c * c + sh * sh;
  return {s * c / den, sh * ch / den};
}
inline c128 ComplexLog1p(c128 z) {
  double x = z.real(), y = z.imag();
  double ax = std::fabs(x), ay = std::fabs(y);
  if (ax < 0.5 && ay < 0.5) {
    // |1+z|^2 - 1 = x (2 + x) + y^2, computed without cancellation.
    return {0.5 * std::log1p(x * (2.0 + x) + y * y), std::atan2(y, 1.0 + x)};
  }
  return std::log(c128(1.0 + x, y));
}
inline c128 ComplexLogistic(c128 z) { return 1.0 / (1.0 + std::exp(-z)); }
// exp(x + iy) = exp(x) (cos y + i sin y) without C99's special cases for
// infinite parts (an infinite y gives NaN, as the StableHLO reference does);
// y = 0 keeps the imaginary part exact.
inline c128 ComplexExp(c128 z) {
  double e = std::exp(z.real());
  if (z.imag() == 0) return {e, z.imag()};
  return {e * std::cos(z.imag()), e * std::sin(z.imag())};
}

// The same with vectorizable f32 and f64 versions (fast_math.h,
// fast_math_f64.h); complex numbers keep the double-precision reference,
// and f16 and bf16 (computed through f32 where the kernel converts) the
// double one.
#define KILN_FAST_FLOAT_COMPLEX_FN(Name, fast_f32, fast_f64, expr_double, \
                                   expr_complex)                          \
  struct Name {                                                           \
    static float Apply(float x, int) { return fast_f32(x); }              \
    static double Apply(double x, int) { return fast_f64(x); }            \
    template <Float T>                                                    \
    static T Apply(T x, int) {                                            \
      return ViaDouble(x, [](double v) { return expr_double; });          \
    }                                                                     \
    template <Complex T>                                                  \
    static T Apply(T x, int) {                                            \
      return ViaComplex128(x, [](c128 v) { return expr_complex; });       \
    }                                                                     \
  };

// sqrt is correctly rounded in f32 as in double, and the f64 root of an
// f32 rounded to f32 is the f32 root (53 >= 2 * 24 + 2 bits: rounding
// twice cannot differ), so f32 takes its own instruction, eight lanes at a
// time, with the same bits as the reference in double (1 Mi f32: 3x
// XLA:CPU's time through double; Adam and every norm take roots).
struct Sqrt {
  static float Apply(float x, int) { return std::sqrt(x); }
  template <Float T>
  static T Apply(T x, int) {
    return ViaDouble(x, [](double v) { return std::sqrt(v); });
  }
  template <Complex T>
  static T Apply(T x, int) {
    return ViaComplex128(x, [](c128 v) { return std::sqrt(v); });
  }
};
KILN_FLOAT_COMPLEX_FN(Rsqrt, 1.0 / std::sqrt(v), 1.0 / std::sqrt(v))
KILN_FLOAT_COMPLEX_FN(Cbrt, std::cbrt(v), std::exp(std::log(v) / 3.0))
KILN_FAST_FLOAT_COMPLEX_FN(Exp, fast::Exp, fast::ExpF64, std::exp(v),
                           ComplexExp(v))
KILN_FAST_FLOAT_COMPLEX_FN(Expm1, fast::Expm1, fast::Expm1F64, std::expm1(v),
                           ComplexExpm1(v))
KILN_FAST_FLOAT_COMPLEX_FN(Log, fast::Log, fast::LogF64, std::log(v),
                           std::log(v))
KILN_FAST_FLOAT_COMPLEX_FN(Log1p, fast::Log1p, fast::Log1pF64, std::log1p(v),
                           ComplexLog1p(v))
KILN_FAST_FLOAT_COMPLEX_FN(Logistic, fast::Logistic, fast::LogisticF64,
                           1.0 / (1.0 + std::exp(-v)), ComplexLogistic(v))
// sin and cos: f32 within fast::kSinCosLimit from fast::SinCosInRange,
// which kernels vectorize (`InRange`, `InRangeValue`: unary kernels in
// elementwise.cc, as Power's for binary ones), and beyond it (inf and NaN
// too) from the reference, a call.
template <bool kCosine>
struct SinOrCos {
  KILN_FAST_MATH static bool InRange(float x) {
    return (x < 0 ? -x : x) <= fast::kSinCosLimit;
  }
  // For arguments InRange; defined (and ignored) for the rest.
  KILN_FAST_MATH static float InRangeValue(float x) {
    return static_cast<float>(fast::SinCosInRange(x, kCosine));
  }
  static float Apply(float x, int) {
    if (InRange(x)) return InRangeValue(x);
    double v = x;
    return static_cast<float>(kCosine ? std::cos(v) : std::sin(v));
  }
  template <Float T>
  static T Apply(T x, int) {
    return ViaDouble(
        x, [](double v) { return kCosine ? std::cos(v) : std::sin(v); });
  }
  template <Complex T>
  static T Apply(T x, int) {
    return ViaComplex128(
        x, [](c128 v) { return kCosine ? std::cos(v) : std::sin(v); });
  }
};
struct Sin : SinOrCos<false> {};
struct Cos : SinOrCos<true> {};
KILN_FLOAT_COMPLEX_FN(Tan, std::tan(v), ComplexTan(v))
KILN_FAST_FLOAT_COMPLEX_FN(Tanh, fast::Tanh, fast::TanhF64, std::tanh(v),
                           std::tanh(v))
KILN_FLOAT_COMPLEX_FN(Acos, std::acos(v), std::acos(v))
KILN_FLOAT_COMPLEX_FN(Acosh, std::acosh(v), std::acosh(v))
KILN_FLOAT_COMPLEX_FN(Asin, std::asin(v), std::asin(v))
KILN_FLOAT_COMPLEX_FN(Asinh, std::asinh(v), std::asinh(v))
KILN_FLOAT_COMPLEX_FN(Atan, std::atan(v), std::atan(v))
KILN_FLOAT_COMPLEX_FN(Atanh, std::atanh(v), std::atanh(v))
KILN_FLOAT_COMPLEX_FN(Cosh, std::cosh(v), std::cosh(v))
// chlo.sinh as CHLO decomposes it, in the operand's precision (f32
// results match XLA's): |x| < 1 uses expm1, else e^(x + log 1/2) -
// e^(-x + log 1/2), which overflows only where sinh does.
struct Sinh {
  template <Float T>
  static T Apply(T x, int) {
    if (std::fabs(x) < T(1)) {
      T em1 = std::expm1(x);
      return T(0.5) * (em1 + em1 / (em1 + T(1)));
    }
    const T log_half = std::log(T(0.5));
    return std::exp(x + log_half) - std::exp(log_half - x);
  }
  template <Complex T>
  static T Apply(T x, int) {
    return ViaComplex128(x, [](c128 v) { return std::sinh(v); });
  }
};
// erf and erfc keep their double reference for f64 (fast_math.h).
// Their f32 forms name their branches for kernels/two_branch.h.
struct Erf {
  static float Apply(float x, int) { return fast::Erf(x); }
  struct Branches {
    KILN_FAST_MATH static float Small(float x) { return fast::ErfSmall(x); }
    KILN_FAST_MATH static float Large(float x) { return fast::ErfLarge(x); }
  };
  template <Float T>
  static T Apply(T x, int) {
    return ViaDouble(x, [](double v) { return std::erf(v); });
  }
};
struct Erfc {
  static float Apply(float x, int) { return fast::Erfc(x); }
  struct Branches {
    KILN_FAST_MATH static float Small(float x) { return fast::ErfcSmall(x); }
    KILN_FAST_MATH static float Large(float x) { return fast::ErfcLarge(x); }
  };
  template <Float T>
  static T Apply(T x, int) {
    return ViaDouble(x, [](double v) { return std::erfc(v); });
  }
};
// erfc at the accuracy of a float expansion of it (fast::ErfcSingle), for
// the erfc that compile/recover_erfc.h rebuilds from one; other types as
// Erfc.
struct ErfcSingle : Erfc {
  using Erfc::Apply;
  // Forced inline: GCC, left to itself, calls this one (the longest of the
  // float functions) out of line from the kernel's loop, one element a
  // call, and the loop stops being vectorized.
  KILN_FAST_MATH static float Apply(float x, int) {
    return fast::ErfcSingle(x);
  }
  struct Branches {
    KILN_FAST_MATH static float Small(float x) {
      return fast::ErfcSingleSmall(x);
    }
    KILN_FAST_MATH static float Large(float x) {
      return fast::ErfcSingleLarge(x);
    }
  };
};
KILN_FLOAT_FN(ErfInv, ::kiln::exec::ErfInv(v))
KILN_FLOAT_FN(Lgamma, ::kiln::exec::Lgamma(v))
KILN_FLOAT_FN(Digamma, ::kiln::exec::Digamma(v))
KILN_FLOAT_FN(BesselI1e, ::kiln::exec::BesselI1e(v))
KILN_FLOAT_FN(Ceil, std::ceil(v))
KILN_FLOAT_FN(Floor, std::floor(v))
KILN_FLOAT_FN(RoundAfz, std::round(v))
KILN_FLOAT_FN(RoundEven, std::nearbyint(v))
#undef KILN_FLOAT_FN
#undef KILN_FLOAT_COMPLEX_FN
#undef KILN_FAST_FLOAT_COMPLEX_FN

struct Abs {
  template <SignedInt T>
  static T Apply(T x, int) {
    return x < 0 ? WrapSub(T{0}, x) : x;
  }
  template <Float T>
  static T Apply(T x, int) {
    return std::fabs(x);
  }
  template <Complex T>
  static typename T::value_type Apply(T x, int) {
    if constexpr (sizeof(typename T::value_type) == sizeof(float)) {
      // A float's square is exact in double and cannot overflow or
      // underflow there: no hypot (a library call) is needed.
      // An infinite part makes the modulus infinite even beside a NaN,
      // as hypot's does.
      double re = x.real(), im = x.imag();
      double modulus = std::sqrt(re * re + im * im);
      return static_cast<float>(std::isinf(re) || std::isinf(im)
                                    ? std::numeric_limits<double>::infinity()
                                    : modulus);
    }
    return static_cast<typename T::value_type>(std::hypot(
        static_cast<double>(x.real()), static_cast<double>(x.imag())));
  }
};

struct Negate {
  template <Int T>
  static T Apply(T x, int) {
    return WrapSub(T{0}, x);
  }
  template <FloatOrComplex T>
  static T Apply(T x, int) {
    return -x;
  }
};

struct Not {
  template <BoolOrInt T>
  static T Apply(T x, int) {
    if constexpr (std::is_same_v<T, bool>) {
      return !x;
    } else {
      return static_cast<T>(~x);
    }
  }
};

struct Sign {
  template <Int T>
  static T Apply(T x, int) {
    if constexpr (std::is_signed_v<T>) {
      return x < 0 ? T(-1) : x > 0 ? T(1) : T(0);
    } else {
      return x > 0 ? T(1) : T(0);
    }
  }
  template <Float T>
  static T Apply(T x, int) {
    if (std::isnan(x) || x == 0) return x;
    return x < 0 ? T(-1) : T(1);
  }
  template <Complex T>
  static T Apply(T x, int) {
    using R = typename T::value_type;
    if (std::isnan(x.real()) || std::isnan(x.imag())) {
      return T(std::numeric_limits<R>::quiet_NaN(),
               std::numeric_limits<R>::quiet_NaN());
    }
    if (x == T(0)) return x;
    double magnitude = std::hypot(static_cast<double>(x.real()),
                                  static_cast<double>(x.imag()));
    return T(static_cast<R>(x.real() / magnitude),
             static_cast<R>(x.imag() / magnitude));
  }
};

struct IsFinite {
  template <Float T>
  static bool Apply(T x, int) {
    return std::isfinite(x);
  }
};
struct IsInf {
  template <Float T>
  static bool Apply(T x, int) {
    return std::isinf(x);
  }
};
struct IsNegInf {
  template <Float T>
  static bool Apply(T x, int) {
    return std::isinf(x) && x < 0;
  }
};
struct IsPosInf {
  template <Float T>
  static bool Apply(T x, int) {
    return std::isinf(x) && x > 0;
  }
};

struct Real {
  template <Float T>
  static T Apply(T x, int) {
    return x;
  }
  template <Complex T>
  static typename T::value_type Apply(T x, int) {
    return x.real();
  }
};
struct Imag {
  template <Float T>
  static T Apply(T, int) {
    return T(0);
  }
  template <Complex T>
  static typename T::value_type Apply(T x, int) {
    return x.imag();
  }
};
struct Conj {
  template <Float T>
  static T Apply(T x, int) {
    return x;
  }
  template <Complex T>
  static T Apply(T x, int) {
    return std::conj(x);
  }
};
struct Square {
  template <Int T>
  static T Apply(T x, int) {
    return WrapMul(x, x);
  }
  template <Float T>
  static T Apply(T x, int) {
    return x * x;
  }
  // (x + iy)^2 = (x - y)(x + y) + 2xy i, which overflows only where the
  // result does (CHLO's decomposition).
  // (x + iy)^2 = (x - y)(x + y) + 2xy i, which overflows only where the
  // result does; the real part is exactly 0 when |x| = |y| is finite.
  template <Complex T>
  static T Apply(T z, int) {
    using R = typename T::value_type;
    R x = z.real(), y = z.imag();
    R real = std::isfinite(x) && std::fabs(x) == std::fabs(y)
                 ? R(0)
                 : (x - y) * (x + y);
    return T(real, R(2) * (x * y));
  }
};

// The low `bits` bits of an integer, as an unsigned 64-bit value.
template <Int T>
uint64_t LowBits(T x, int bits) {
  uint64_t raw = static_cast<uint64_t>(static_cast<Unsigned<T>>(x));
  return bits >= 64 ? raw : raw & ((uint64_t{1} << bits) - 1);
}

struct Popcnt {
  template <Int T>
  static T Apply(T x, int bits) {
    return static_cast<T>(std::popcount(LowBits(x, bits)));
  }
};
struct Clz {
  template <Int T>
  static T Apply(T x, int bits) {
    uint64_t low = LowBits(x, bits);
    return static_cast<T>(std::countl_zero(low) - (64 - bits));
  }
};

// --- Binary
// ---------------------------------------------------------------------

struct Add {
  static bool Apply(bool a, bool b, int) { return a || b; }
  template <Int T>
  static T Apply(T a, T b, int) {
    return WrapAdd(a, b);
  }
  template <FloatOrComplex T>
  static T Apply(T a, T b, int) {
    return a + b;
  }
};
struct Subtract {
  template <Int T>
  static T Apply(T a, T b, int) {
    return WrapSub(a, b);
  }
  template <FloatOrComplex T>
  static T Apply(T a, T b, int) {
    return a - b;
  }
};
// A complex product as XLA:CPU computes it, without C's Annex G recovery
// of infinities from NaN results (std::complex's a * b checks every product
// for it), each part with one fused multiply-add: re = fma(ar, br, -ai bi),
// im = fma(ar, bi, ai br). Fused explicitly, the part is exactly rounded
// the same way in every version of a loop (the vector body, its scalar
// tail, the baseline version's call to fma), so no element's bits depend
// on where a chunk of the loop starts; GCC's vectorizer may turn the pair
// into multiply-add-subtract instructions, which round the same. (Written
// as a * b and inlined, the vector versions got multiply-add-subtract and
// the scalar ones did not: 1914 of 4096 complex128 products differed in
// the last bit; called out of line instead, 1 Mi complex64 products took
// 17 ms, XLA:CPU 1.3.)
template <typename T>
inline T ComplexProduct(T a, T b) {
  return T(std::fma(a.real(), b.real(), -(a.imag() * b.imag())),
           std::fma(a.real(), b.imag(), a.imag() * b.real()));
}

struct Multiply {
  static bool Apply(bool a, bool b, int) { return a && b; }
  template <Int T>
  static T Apply(T a, T b, int) {
    return WrapMul(a, b);
  }
  template <Float T>
  static T Apply(T a, T b, int) {
    return a * b;
  }
  template <Complex T>
  static T Apply(T a, T b, int) {
    return ComplexProduct(a, b);
  }
};
struct Divide {
  // Integer division truncates. Division by zero gives -1 (all bits set) and
  // INT_MIN / -1 gives INT_MIN, as XLA defines them.
  template <Int T>
  static T Apply(T a, T b, int) {
    if (b == 0) return static_cast<T>(-1);
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return a;
    }
    return static_cast<T>(a / b);
  }
  template <FloatOrComplex T>
  static T Apply(T a, T b, int) {
    return a / b;
  }
};
struct Remainder {
  // The sign of the result is the dividend's; x % 0 = x and
  // INT_MIN % -1 = 0, as XLA defines them.
  template <Int T>
  static T Apply(T a, T b, int) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return 0;
    }
    return static_cast<T>(a % b);
  }
  template <Float T>
  static T Apply(T a, T b, int) {
    return std::fmod(a, b);
  }
};

// IEEE-754 maximum/minimum: NaN propagates (the first operand's if both
// are NaN), -0 < +0. Complex numbers compare lexicographically (real, then
// imaginary part). The real forms are selects without early returns, so
// that the compiler vectorizes the loops that call them (with returns, GCC
// kept relu and clamp one element at a time).
// The bitwise and / or of two floats of one value: where a == b, the one
// with its sign bit clear / set (+0 and -0), else either (the same bits).
// As integer operations the maximum and minimum below stay branch-free and
// vectorize for double too: std::signbit of a double went through a
// general register, and max of 1 Mi f64 ran scalar at 6.7x XLA:CPU's time.
template <Float T>
inline T SignBitsAnd(T a, T b) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  return std::bit_cast<T>(static_cast<U>(std::bit_cast<U>(a) &
                                         std::bit_cast<U>(b)));
}
template <Float T>
inline T SignBitsOr(T a, T b) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  return std::bit_cast<T>(static_cast<U>(std::bit_cast<U>(a) |
                                         std::bit_cast<U>(b)));
}

struct Maximum {
  static bool Apply(bool a, bool b, int) { return a || b; }
  template <Int T>
  static T Apply(T a, T b, int) {
    return a > b ? a : b;
  }
  template <Float T>
  static T Apply(T a, T b, int) {
    T larger = a > b ? a : b;
    T result = a == b ? SignBitsAnd(a, b) : larger;
    result = b != b ? b : result;
    return a != a ? a : result;
  }
  template <Complex T>
  static T Apply(T a, T b, int) {
    if (std::isnan(a.real()) || std::isnan(a.imag())) return a;
    if (std::isnan(b.real()) || std::isnan(b.imag())) return b;
    if (a.real() != b.real()) return a.real() > b.real() ? a : b;
    return a.imag() >= b.imag() ? a : b;
  }
};
struct Minimum {
  static bool Apply(bool a, bool b, int) { return a && b; }
  template <Int T>
  static T Apply(T a, T b, int) {
    return a < b ? a : b;
  }
  template <Float T>
  static T Apply(T a, T b, int) {
    T smaller = a < b ? a : b;
    T result = a == b ? SignBitsOr(a, b) : smaller;
    result = b != b ? b : result;
    return a != a ? a : result;
  }
  template <Complex T>
  static T Apply(T a, T b, int) {
    if (std::isnan(a.real()) || std::isnan(a.imag())) return a;
    if (std::isnan(b.real()) || std::isnan(b.imag())) return b;
    if (a.real() != b.real()) return a.real() < b.real() ? a : b;
    return a.imag() <= b.imag() ? a : b;
  }
};

struct Power {
  // Integer power by squaring; negative exponents give 0 except for bases
  // 1 and -1 (as XLA defines them).
  template <Int T>
  static T Apply(T base, T exponent, int) {
    if constexpr (std::is_signed_v<T>) {
      if (exponent < 0) {
        if (base == 1) return 1;
        if (base == -1) return (exponent & 1) ? T(-1) : T(1);
        return 0;
      }
    }
    T result = 1;
    Unsigned<T> e = static_cast<Unsigned<T>>(exponent);
    while (e != 0) {
      if (e & 1) result = WrapMul(result, base);
      base = WrapMul(base, base);
      e >>= 1;
    }
    return result;
  }
  template <Float T>
  static T Apply(T a, T b, int) {
    if constexpr (std::is_same_v<T, float>) {
      if (InRange(a, b)) return InRangeValue(a, b);
    }
    return static_cast<T>(
        std::pow(static_cast<double>(a), static_cast<double>(b)));
  }
  // The f32 arguments kernels vectorize (`InRange`, `InRangeValue`:
  // binary kernels in elementwise.cc); the rest call the reference. Finite
  // nonzero bases to finite exponents, integers where the base is negative
  // ((-a)^b = +-a^b, negative for an odd b).
  KILN_FAST_MATH static bool InRange(float a, float b) {
    constexpr float kInf = __builtin_inff();
    float magnitude = a < 0 ? -a : a;
    // Bitwise: GCC 12 does not vectorize a loop through the branches of &&.
    return (magnitude > 0.0f) & (magnitude < kInf) & (b > -kInf) & (b < kInf) &
           ((a > 0.0f) | fast::IsIntegral(b));
  }
  KILN_FAST_MATH static float InRangeValue(float a, float b) {
    float r = fast::PowPositive(a < 0 ? -a : a, b);
    // a's sign where b is odd, as bits: GCC 12 vectorizes no select
    // between floats on this condition here.
    uint32_t odd = fast::IsOddIntegral(b) ? 0x80000000u : 0u;
    uint32_t sign = std::bit_cast<uint32_t>(a) & odd;
    return std::bit_cast<float>(std::bit_cast<uint32_t>(r) ^ sign);
  }
  template <Complex T>
  static T Apply(T a, T b, int) {
    c128 r = std::pow(c128(a.real(), a.imag()), c128(b.real(), b.imag()));
    return T(static_cast<typename T::value_type>(r.real()),
             static_cast<typename T::value_type>(r.imag()));
  }
};

struct Atan2 {
  template <Float T>
  static T Apply(T a, T b, int) {
    return static_cast<T>(
        std::atan2(static_cast<double>(a), static_cast<double>(b)));
  }
  // atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)) (spec: atan2).
  template <Complex T>
  static T Apply(T a, T b, int) {
    c128 y(a.real(), a.imag()), x(b.real(), b.imag());
    c128 i(0, 1);
    c128 r = -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
    return T(static_cast<typename T::value_type>(r.real()),
             static_cast<typename T::value_type>(r.imag()));
  }
};

// nextafter as glibc computes it, on the bits and without a call, so that
// f32 and f64 vectorize (the same bits: NaN by the bits, a == b compared
// as floats, zero by the bits, then one step of the signed bit pattern).
template <typename F, typename S>
KILN_FAST_MATH F NextAfterBits(F a, F b) {
  constexpr S kMagnitude = std::numeric_limits<S>::max();
  const S ha = std::bit_cast<S>(a), hb = std::bit_cast<S>(b);
  const S ia = ha & kMagnitude, ib = hb & kMagnitude;
  const S infinity = std::bit_cast<S>(std::numeric_limits<F>::infinity());
  // Toward b by one step: down where a > b (a positive) or where b is
  // positive or below a in bits (a negative).
  const bool down = ha >= 0 ? ha > hb : (hb >= 0 || ha > hb);
  // The step in unsigned arithmetic: every lane computes it, -0 and NaN
  // patterns included, where the signed one would overflow.
  using U = std::make_unsigned_t<S>;
  const U delta = down ? ~U{0} : U{1};
  F step = std::bit_cast<F>(static_cast<U>(static_cast<U>(ha) + delta));
  // From zero: the smallest subnormal with b's sign.
  F from_zero = std::bit_cast<F>(static_cast<S>((hb & ~kMagnitude) | 1));
  F result = ia == 0 ? from_zero : step;
  result = a == b ? b : result;
  return ia > infinity || ib > infinity ? a + b : result;
}

struct NextAfter {
  static float Apply(float a, float b, int) {
    return NextAfterBits<float, int32_t>(a, b);
  }
  static double Apply(double a, double b, int) {
    return NextAfterBits<double, int64_t>(a, b);
  }
  template <Float T>
  static T Apply(T a, T b, int) {
    return std::nextafter(a, b);
  }
};

struct And {
  template <BoolOrInt T>
  static T Apply(T a, T b, int) {
    return static_cast<T>(a & b);
  }
};
struct Or {
  template <BoolOrInt T>
  static T Apply(T a, T b, int) {
    return static_cast<T>(a | b);
  }
};
struct Xor {
  template <BoolOrInt T>
  static T Apply(T a, T b, int) {
    return static_cast<T>(a ^ b);
  }
};

// Shifts by an amount outside [0, bits) give 0, or the sign for an
// arithmetic right shift; the amount is read as unsigned. Everything is
// computed in T's own width (`bits` is at most 8 * sizeof(T), so it fits
// in T's unsigned type): a 32-bit shift vectorizes in 32-bit lanes. Only a
// sub-byte type (bits below the storage width) needs its value masked or
// sign-extended first.
struct ShiftLeft {
  template <Int T>
  static T Apply(T a, T b, int bits) {
    using U = Unsigned<T>;
    U amount = static_cast<U>(b);
    if (amount >= static_cast<U>(bits)) return 0;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) << amount));
  }
};
struct ShiftRightLogical {
  template <Int T>
  static T Apply(T a, T b, int bits) {
    using U = Unsigned<T>;
    U amount = static_cast<U>(b);
    if (amount >= static_cast<U>(bits)) return 0;
    U value = bits == static_cast<int>(8 * sizeof(T))
                  ? static_cast<U>(a)
                  : static_cast<U>(LowBits(a, bits));
    return static_cast<T>(value >> amount);
  }
};
struct ShiftRightArithmetic {
  template <Int T>
  static T Apply(T a, T b, int bits) {
    using S = std::make_signed_t<T>;
    using U = Unsigned<T>;
    U amount = static_cast<U>(b);
    if (amount >= static_cast<U>(bits)) amount = static_cast<U>(bits - 1);
    if (bits == static_cast<int>(8 * sizeof(T))) {
      return static_cast<T>(static_cast<S>(a) >> amount);
    }
    // Sign-extend from the logical width first.
    int64_t value =
        WrapToBits(static_cast<int64_t>(static_cast<S>(a)), bits, true);
    return static_cast<T>(value >> amount);
  }
};

struct Mulhi {
  // The high half of the double-width product.
  template <Int T>
  static T Apply(T a, T b, int bits) {
    if constexpr (sizeof(T) == 8) {
      using Wide =
          std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
      return static_cast<T>((static_cast<Wide>(a) * static_cast<Wide>(b)) >>
                            64);
    } else {
      using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      return static_cast<T>((static_cast<Wide>(a) * static_cast<Wide>(b)) >>
                            bits);
    }
  }
};

}  // namespace kiln::exec::ops

#endif  // KILN_EXEC_KERNELS_ELEMENTWISE_OPS_H_
