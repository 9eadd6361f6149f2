#include "ir/float_bits.h"

#include <cmath>
#include <cstring>

#include "base/logging.h"

namespace kiln::ir {
namespace {

double DoubleFromBits(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint64_t BitsFromDouble(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

FloatFormat FormatOf(ElementType type) {
  auto format = GetFloatFormat(type);
  KILN_CHECK(format.has_value())
      << "not a float type: " << ElementTypeName(type);
  return *format;
}

// The largest exponent field value that encodes finite numbers, and the
// largest mantissa allowed with it.
void MaxFinite(const FloatFormat& f, uint64_t& exponent, uint64_t& mantissa) {
  uint64_t all_ones_exponent = (1ULL << f.exponent_bits) - 1;
  uint64_t all_ones_mantissa = (1ULL << f.mantissa_bits) - 1;
  switch (f.non_finite) {
    case FloatNonFinite::kIeee:
      exponent = all_ones_exponent - 1;
      mantissa = all_ones_mantissa;
      break;
    case FloatNonFinite::kNanOnlyAllOnes:
      exponent = all_ones_exponent;
      mantissa = all_ones_mantissa - 1;
      break;
    case FloatNonFinite::kNanNegativeZero:
    case FloatNonFinite::kNone:
      exponent = all_ones_exponent;
      mantissa = all_ones_mantissa;
      break;
    case FloatNonFinite::kE8M0:
      exponent = all_ones_exponent - 1;
      mantissa = 0;
      break;
  }
}

}  // namespace

uint64_t NanBits(ElementType type) {
  FloatFormat f = FormatOf(type);
  int width = f.exponent_bits + f.mantissa_bits + (f.has_sign ? 1 : 0);
  switch (f.non_finite) {
    case FloatNonFinite::kIeee:
      // Quiet NaN: exponent all ones, top mantissa bit set.
      return (((1ULL << f.exponent_bits) - 1) << f.mantissa_bits) |
             (f.mantissa_bits > 0 ? 1ULL << (f.mantissa_bits - 1) : 0);
    case FloatNonFinite::kNanOnlyAllOnes:
      return (1ULL << (width - 1)) - 1;  // 0x7F for f8E4M3FN
    case FloatNonFinite::kNanNegativeZero:
      return 1ULL << (width - 1);  // 0x80
    case FloatNonFinite::kE8M0:
      return 0xFF;
    case FloatNonFinite::kNone:
      return (1ULL << (width - 1)) - 1;  // no NaN: the largest value
  }
  return 0;
}

uint64_t EncodeFloat(ElementType type, double value) {
  if (type == ElementType::kF64) return BitsFromDouble(value);
  if (type == ElementType::kF32) {
    float f = static_cast<float>(value);  // IEEE round-to-nearest-even
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    return bits;
  }
  FloatFormat f = FormatOf(type);
  const int sign_shift = f.exponent_bits + f.mantissa_bits;
  uint64_t sign = (f.has_sign && std::signbit(value)) ? 1ULL << sign_shift : 0;
  if (std::isnan(value)) {
    switch (f.non_finite) {
      case FloatNonFinite::kIeee:
      case FloatNonFinite::kNanOnlyAllOnes:
        return NanBits(type) | sign;  // NaN keeps its sign (0xFF for f8E4M3FN)
      case FloatNonFinite::kNone:
        // No NaN in the format: ml_dtypes and XLA write negative zero.
        return 1ULL << sign_shift;
      default:
        return NanBits(type);
    }
  }

  uint64_t max_exponent, max_mantissa;
  MaxFinite(f, max_exponent, max_mantissa);
  auto overflow = [&]() -> uint64_t {
    switch (f.non_finite) {
      case FloatNonFinite::kIeee:
        return sign | (((1ULL << f.exponent_bits) - 1) << f.mantissa_bits);
      case FloatNonFinite::kNanOnlyAllOnes:
        return NanBits(type) | sign;  // -1e4 and -inf become 0xFF in f8E4M3FN
      case FloatNonFinite::kNanNegativeZero:
      case FloatNonFinite::kE8M0:
        return NanBits(type);
      case FloatNonFinite::kNone:
        return sign | (max_exponent << f.mantissa_bits) | max_mantissa;
    }
    return 0;
  };
  if (std::isinf(value)) return overflow();

  double magnitude = std::fabs(value);
  if (!f.has_sign && std::signbit(value) && magnitude != 0) {
    return NanBits(type);  // E8M0 cannot hold negative values
  }
  if (f.non_finite == FloatNonFinite::kE8M0) {
    // Powers of two only: 2^(e - 127), e in [0, 254], and no zero (zero is
    // NaN, as in ml_dtypes and XLA). The significand rounds to nearest with
    // no fraction bits kept, so a tie (1.5 * 2^e) rounds up: 0.75 -> 1, 3 -> 4.
    if (magnitude == 0) return NanBits(type);
    int exponent;
    double fraction = std::frexp(magnitude, &exponent);  // [0.5, 1)
    int e =
        exponent - 1;  // magnitude = (2*fraction) * 2^e, 2*fraction in [1,2)
    if (2 * fraction >= 1.5) ++e;
    int field = e + f.exponent_bias;
    if (field < 0) return 0;
    if (field > 254) return NanBits(type);
    return static_cast<uint64_t>(field);
  }
  if (magnitude == 0) {
    // FNUZ formats have no negative zero.
    return f.non_finite == FloatNonFinite::kNanNegativeZero ? 0 : sign;
  }

  // Work on the double's bits: magnitude = 1.m * 2^e (or subnormal).
  int exponent;
  std::frexp(magnitude, &exponent);
  int e = exponent - 1;  // unbiased exponent of the leading bit
  const int min_normal_exponent = 1 - f.exponent_bias;
  // Number of mantissa bits kept: fewer for subnormals.
  int kept = f.mantissa_bits;
  if (e < min_normal_exponent) kept -= (min_normal_exponent - e);
  // Scale so the kept bits become the integer part, then round to nearest
  // even with exact double arithmetic (all operations below are exact).
  int scale_exponent =
      (e < min_normal_exponent ? min_normal_exponent : e) - f.mantissa_bits;
  double scaled = std::ldexp(magnitude, -scale_exponent);  // exact
  double rounded = std::nearbyint(scaled);  // default rounding: nearest even
  (void)kept;
  uint64_t integer = static_cast<uint64_t>(rounded);
  // integer = significand in units of 2^scale_exponent.
  uint64_t mantissa;
  int64_t field;
  if (e < min_normal_exponent) {
    // Subnormal (or rounded up to the smallest normal).
    if (integer >= (1ULL << f.mantissa_bits)) {
      field = 1;
      mantissa = integer - (1ULL << f.mantissa_bits);
    } else {
      field = 0;
      mantissa = integer;
    }
  } else {
    field = e + f.exponent_bias;
    if (integer >= (2ULL << f.mantissa_bits)) {  // rounding carried out
      integer >>= 1;
      ++field;
    }
    mantissa = integer - (1ULL << f.mantissa_bits);
  }
  if (field == 0 && mantissa == 0) {
    return f.non_finite == FloatNonFinite::kNanNegativeZero ? 0 : sign;
  }
  if (static_cast<uint64_t>(field) > max_exponent ||
      (static_cast<uint64_t>(field) == max_exponent &&
       mantissa > max_mantissa)) {
    return overflow();
  }
  return sign | (static_cast<uint64_t>(field) << f.mantissa_bits) | mantissa;
}

double DecodeFloat(ElementType type, uint64_t bits) {
  if (type == ElementType::kF64) return DoubleFromBits(bits);
  if (type == ElementType::kF32) {
    uint32_t narrow = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &narrow, sizeof(f));
    return f;
  }
  FloatFormat f = FormatOf(type);
  const int sign_shift = f.exponent_bits + f.mantissa_bits;
  const uint64_t mantissa_mask = (1ULL << f.mantissa_bits) - 1;
  const uint64_t exponent_mask = (1ULL << f.exponent_bits) - 1;
  bool negative = f.has_sign && ((bits >> sign_shift) & 1);
  uint64_t exponent = (bits >> f.mantissa_bits) & exponent_mask;
  uint64_t mantissa = bits & mantissa_mask;
  double sign = negative ? -1.0 : 1.0;
  switch (f.non_finite) {
    case FloatNonFinite::kIeee:
      if (exponent == exponent_mask) {
        // NaNs keep their sign, as XLA's conversions do.
        return mantissa == 0 ? sign * INFINITY : std::copysign(NAN, sign);
      }
      break;
    case FloatNonFinite::kNanOnlyAllOnes:
      if (exponent == exponent_mask && mantissa == mantissa_mask) {
        return std::copysign(NAN, sign);
      }
      break;
    case FloatNonFinite::kNanNegativeZero:
      if (negative && exponent == 0 && mantissa == 0) return NAN;
      break;
    case FloatNonFinite::kE8M0:
      if (exponent == 0xFF) return NAN;
      return std::ldexp(1.0, static_cast<int>(exponent) - f.exponent_bias);
    case FloatNonFinite::kNone:
      break;
  }
  if (exponent == 0) {
    return sign * std::ldexp(static_cast<double>(mantissa),
                             1 - f.exponent_bias - f.mantissa_bits);
  }
  return sign *
         std::ldexp(
             static_cast<double>(mantissa | (1ULL << f.mantissa_bits)),
             static_cast<int>(exponent) - f.exponent_bias - f.mantissa_bits);
}

}  // namespace kiln::ir
