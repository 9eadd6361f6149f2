#include "exec/kernels/element.h"

#include <array>
#include <cmath>
#include <limits>
#include <memory>

#include "ir/float_bits.h"

namespace kiln::exec {
namespace {

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

float BitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

// Decoding tables of the formats up to 8 bits, built on first use.
const float* SmallFloatTable(ElementType type) {
  static const auto* tables = [] {
    auto* all =
        new std::array<std::unique_ptr<float[]>, ir::kNumElementTypes>();
    for (int t = 0; t < ir::kNumElementTypes; ++t) {
      auto type = static_cast<ElementType>(t);
      if (!ir::IsFloat(type) || ir::BitWidth(type) > 8) continue;
      (*all)[t] = std::make_unique<float[]>(256);
      int count = 1 << ir::BitWidth(type);
      for (int bits = 0; bits < 256; ++bits) {
        (*all)[t][bits] = static_cast<float>(
            ir::DecodeFloat(type, static_cast<uint64_t>(bits % count)));
      }
    }
    return all;
  }();
  return (*tables)[static_cast<int>(type)].get();
}

template <typename T>
T Read(const std::byte* data, int64_t index) {
  T value;
  std::memcpy(&value, data + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void Write(std::byte* data, int64_t index, T value) {
  std::memcpy(data + index * sizeof(T), &value, sizeof(T));
}

}  // namespace

bool HasNativeType(ElementType type) {
  return DispatchNative(type, [](auto) {});
}

ElementType ComputeType(ElementType type) {
  switch (type) {
    case ElementType::kI2:
    case ElementType::kI4:
      return ElementType::kI8;
    case ElementType::kUI2:
    case ElementType::kUI4:
      return ElementType::kUI8;
    case ElementType::kIndex:
      return ElementType::kI64;
    default:
      break;
  }
  if (ir::IsFloat(type) && type != ElementType::kF64) return ElementType::kF32;
  return type;
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) {
    return BitsToFloat(sign | 0x7f800000 | (mantissa << 13));
  }
  if (exponent == 0) {
    // Subnormal: mantissa * 2^-24, exact in float.
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  return BitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t FloatToHalf(float value) {
  uint32_t bits = FloatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000) {
    return sign | 0x7e00 | static_cast<uint16_t>((magnitude >> 13) & 0x1ff);
  }
  if (magnitude >= 0x47800000) return sign | 0x7c00;  // >= 2^16: inf
  if (magnitude < 0x38800000) {
    // Below the smallest normal half (2^-14): a multiple of 2^-24, rounded
    // to nearest even (the scaling by 2^24 is exact).
    float scaled = BitsToFloat(magnitude) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t exponent = (magnitude >> 23) - 112;
  uint32_t mantissa = magnitude & 0x7fffff;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return sign | static_cast<uint16_t>(half);
}

uint16_t DoubleToHalf(double value) {
  return static_cast<uint16_t>(ir::EncodeFloat(ElementType::kF16, value));
}

uint16_t DoubleToBF16(double value) {
  return static_cast<uint16_t>(ir::EncodeFloat(ElementType::kBF16, value));
}

double LoadDouble(ElementType type, const std::byte* data, int64_t index) {
  switch (type) {
    case ElementType::kI1:
      return Read<uint8_t>(data, index) != 0 ? 1.0 : 0.0;
    case ElementType::kF32:
      return Read<float>(data, index);
    case ElementType::kF64:
      return Read<double>(data, index);
    case ElementType::kF16:
      return HalfToFloat(Read<uint16_t>(data, index));
    case ElementType::kBF16:
      return BF16ToFloat(Read<uint16_t>(data, index));
    case ElementType::kC64:
      return Read<c64>(data, index).real();
    case ElementType::kC128:
      return Read<c128>(data, index).real();
    case ElementType::kUI64:
      return static_cast<double>(Read<uint64_t>(data, index));
    case ElementType::kTF32:
      return ir::DecodeFloat(type, Read<uint32_t>(data, index));
    default:
      break;
  }
  if (ir::IsFloat(type)) {
    return SmallFloatTable(type)[Read<uint8_t>(data, index)];
  }
  return static_cast<double>(LoadInt(type, data, index));
}

c128 LoadComplex(ElementType type, const std::byte* data, int64_t index) {
  if (type == ElementType::kC64) {
    c64 value = Read<c64>(data, index);
    return {value.real(), value.imag()};
  }
  if (type == ElementType::kC128) return Read<c128>(data, index);
  return {LoadDouble(type, data, index), 0.0};
}

int64_t LoadInt(ElementType type, const std::byte* data, int64_t index) {
  switch (type) {
    case ElementType::kI1:
      return Read<uint8_t>(data, index) != 0;
    case ElementType::kI2:
      return WrapToBits(Read<int8_t>(data, index), 2, true);
    case ElementType::kI4:
      return WrapToBits(Read<int8_t>(data, index), 4, true);
    case ElementType::kI8:
      return Read<int8_t>(data, index);
    case ElementType::kI16:
      return Read<int16_t>(data, index);
    case ElementType::kI32:
      return Read<int32_t>(data, index);
    case ElementType::kI64:
    case ElementType::kIndex:
      return Read<int64_t>(data, index);
    case ElementType::kUI2:
      return Read<uint8_t>(data, index) & 3;
    case ElementType::kUI4:
      return Read<uint8_t>(data, index) & 15;
    case ElementType::kUI8:
      return Read<uint8_t>(data, index);
    case ElementType::kUI16:
      return Read<uint16_t>(data, index);
    case ElementType::kUI32:
      return Read<uint32_t>(data, index);
    case ElementType::kUI64:
      return static_cast<int64_t>(Read<uint64_t>(data, index));
    default:
      return static_cast<int64_t>(LoadDouble(type, data, index));
  }
}

void StoreDouble(ElementType type, std::byte* data, int64_t index,
                 double value) {
  switch (type) {
    case ElementType::kF32:
      Write<float>(data, index, static_cast<float>(value));
      return;
    case ElementType::kF64:
      Write<double>(data, index, value);
      return;
    case ElementType::kF16:
      Write<uint16_t>(data, index, DoubleToHalf(value));
      return;
    case ElementType::kBF16:
      Write<uint16_t>(data, index, DoubleToBF16(value));
      return;
    case ElementType::kC64:
      Write<c64>(data, index, c64(static_cast<float>(value), 0.0f));
      return;
    case ElementType::kC128:
      Write<c128>(data, index, c128(value, 0.0));
      return;
    case ElementType::kTF32:
      Write<uint32_t>(data, index,
                      static_cast<uint32_t>(ir::EncodeFloat(type, value)));
      return;
    default:
      break;
  }
  if (ir::IsFloat(type)) {
    Write<uint8_t>(data, index,
                   static_cast<uint8_t>(ir::EncodeFloat(type, value)));
    return;
  }
  // Float to integer: NaN is 0, out-of-range values saturate.
  int64_t integer;
  if (ir::IsBool(type)) {
    integer = value != 0.0;
  } else if (std::isnan(value)) {
    integer = 0;
  } else if (ir::IsUnsignedInteger(type)) {
    int bits = ir::BitWidth(type);
    double max =
        bits == 64 ? 18446744073709551615.0 : std::ldexp(1.0, bits) - 1;
    if (value <= 0) {
      integer = 0;
    } else if (value >= max) {
      integer = bits == 64 ? -1 : static_cast<int64_t>(max);
    } else {
      integer = static_cast<int64_t>(static_cast<uint64_t>(value));
    }
  } else {
    int bits = ir::BitWidth(type);
    double max = std::ldexp(1.0, bits - 1);
    if (value >= max) {
      integer = bits == 64 ? std::numeric_limits<int64_t>::max()
                           : static_cast<int64_t>(max) - 1;
    } else if (value <= -max) {
      integer = bits == 64 ? std::numeric_limits<int64_t>::min()
                           : -static_cast<int64_t>(max);
    } else {
      integer = static_cast<int64_t>(value);
    }
  }
  StoreInt(type, data, index, integer);
}

void StoreComplex(ElementType type, std::byte* data, int64_t index,
                  c128 value) {
  if (type == ElementType::kC64) {
    Write<c64>(data, index,
               c64(static_cast<float>(value.real()),
                   static_cast<float>(value.imag())));
  } else if (type == ElementType::kC128) {
    Write<c128>(data, index, value);
  } else {
    StoreDouble(type, data, index, value.real());
  }
}

void StoreInt(ElementType type, std::byte* data, int64_t index, int64_t value) {
  switch (type) {
    case ElementType::kI1:
      Write<uint8_t>(data, index, value != 0);
      return;
    case ElementType::kI2:
      Write<int8_t>(data, index,
                    static_cast<int8_t>(WrapToBits(value, 2, true)));
      return;
    case ElementType::kI4:
      Write<int8_t>(data, index,
                    static_cast<int8_t>(WrapToBits(value, 4, true)));
      return;
    case ElementType::kI8:
      Write<int8_t>(data, index, static_cast<int8_t>(value));
      return;
    case ElementType::kI16:
      Write<int16_t>(data, index, static_cast<int16_t>(value));
      return;
    case ElementType::kI32:
      Write<int32_t>(data, index, static_cast<int32_t>(value));
      return;
    case ElementType::kI64:
    case ElementType::kIndex:
      Write<int64_t>(data, index, value);
      return;
    case ElementType::kUI2:
      Write<uint8_t>(data, index, value & 3);
      return;
    case ElementType::kUI4:
      Write<uint8_t>(data, index, value & 15);
      return;
    case ElementType::kUI8:
      Write<uint8_t>(data, index, static_cast<uint8_t>(value));
      return;
    case ElementType::kUI16:
      Write<uint16_t>(data, index, static_cast<uint16_t>(value));
      return;
    case ElementType::kUI32:
      Write<uint32_t>(data, index, static_cast<uint32_t>(value));
      return;
    case ElementType::kUI64:
      Write<uint64_t>(data, index, static_cast<uint64_t>(value));
      return;
    default:
      break;
  }
  // Integer to float: round to nearest (through double; ui64 values above
  // INT64_MAX are handled by the caller's type).
  StoreDouble(type, data, index, static_cast<double>(value));
}

}  // namespace kiln::exec
