// Element-type plumbing shared by the kernels: the C++ types Kiln computes
// in, dispatch from an ElementType to them, and scalar load/store through
// double or int64 for the types without a native C++ type (f16, bf16, the
// f8/f6/f4 formats, tf32, sub-byte integers).
#ifndef KILN_EXEC_KERNELS_ELEMENT_H_
#define KILN_EXEC_KERNELS_ELEMENT_H_

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ir/element_type.h"

namespace kiln::exec {

using ir::ElementType;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

template <typename T>
inline constexpr bool kIsComplex =
    std::is_same_v<T, c64> || std::is_same_v<T, c128>;
template <typename T>
inline constexpr bool kIsFloat =
    std::is_same_v<T, float> || std::is_same_v<T, double>;
template <typename T>
inline constexpr bool kIsInt =
    std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Whether kernels have a native C++ type for `type` (sub-byte integers map
// to int8/uint8 and are wrapped back to their width after arithmetic).
bool HasNativeType(ElementType type);

// The type kernels compute in for `type`: itself when native; f32 for
// narrow floats (f16, bf16, f8, f6, f4, tf32); i8/ui8 for sub-byte ints.
ElementType ComputeType(ElementType type);

// Calls `fn(T{})` with T the native C++ type of `type` (bool, int8 ...
// uint64, float, double, c64, c128); returns false when there is none.
template <typename Fn>
bool DispatchNative(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::kI1:
      fn(bool{});
      return true;
    case ElementType::kI2:
    case ElementType::kI4:
    case ElementType::kI8:
      fn(int8_t{});
      return true;
    case ElementType::kI16:
      fn(int16_t{});
      return true;
    case ElementType::kI32:
      fn(int32_t{});
      return true;
    case ElementType::kI64:
    case ElementType::kIndex:
      fn(int64_t{});
      return true;
    case ElementType::kUI2:
    case ElementType::kUI4:
    case ElementType::kUI8:
      fn(uint8_t{});
      return true;
    case ElementType::kUI16:
      fn(uint16_t{});
      return true;
    case ElementType::kUI32:
      fn(uint32_t{});
      return true;
    case ElementType::kUI64:
      fn(uint64_t{});
      return true;
    case ElementType::kF32:
      fn(float{});
      return true;
    case ElementType::kF64:
      fn(double{});
      return true;
    case ElementType::kC64:
      fn(c64{});
      return true;
    case ElementType::kC128:
      fn(c128{});
      return true;
    default:
      return false;
  }
}

// Calls fn(U{}) with the unsigned integer of `bytes` bytes, if any.
template <typename Fn>
bool DispatchElementBytes(int64_t bytes, Fn&& fn) {
  switch (bytes) {
    case 1:
      fn(uint8_t{});
      return true;
    case 2:
      fn(uint16_t{});
      return true;
    case 4:
      fn(uint32_t{});
      return true;
    case 8:
      fn(uint64_t{});
      return true;
    default:
      return false;
  }
}

// Copies one element of `bytes` bytes, typed where it can.
inline void CopyElement(std::byte* to, const std::byte* from, int64_t bytes) {
  if (!DispatchElementBytes(bytes, [&](auto tag) {
        std::memcpy(to, from, sizeof(tag));
      })) {
    std::memcpy(to, from, bytes);
  }
}

// Exact conversions of the 16-bit float formats, rounding to nearest even.
float HalfToFloat(uint16_t bits);
uint16_t FloatToHalf(float value);
uint16_t DoubleToHalf(double value);
inline float BF16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}
// Inline and branch-free, so that conversion loops vectorize: a NaN keeps
// its sign and upper payload, made quiet.
inline uint16_t FloatToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t rounded = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16;
  uint32_t quiet_nan = (bits >> 16) | 0x40;
  return static_cast<uint16_t>((bits & 0x7fffffff) > 0x7f800000 ? quiet_nan
                                                                : rounded);
}
uint16_t DoubleToBF16(double value);

// Any element as a double (complex: the real part; integers may round).
double LoadDouble(ElementType type, const std::byte* data, int64_t index);
// Any element as a complex<double>.
c128 LoadComplex(ElementType type, const std::byte* data, int64_t index);
// Any integer or bool element as int64 (ui64 above INT64_MAX wraps).
int64_t LoadInt(ElementType type, const std::byte* data, int64_t index);
// Stores a double into a float or complex element (rounding to nearest
// even), or into an integer element (see StoreInt).
void StoreDouble(ElementType type, std::byte* data, int64_t index,
                 double value);
void StoreComplex(ElementType type, std::byte* data, int64_t index, c128 value);
// Stores an integer, wrapped to the type's width (sign-extended storage
// for signed sub-byte types, zero-extended for unsigned; 0/1 for i1).
void StoreInt(ElementType type, std::byte* data, int64_t index, int64_t value);

// Wraps `value` to `bits` bits, sign-extending when `is_signed`.
inline int64_t WrapToBits(int64_t value, int bits, bool is_signed) {
  if (bits >= 64) return value;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t raw = static_cast<uint64_t>(value) & mask;
  if (is_signed && (raw >> (bits - 1)) & 1) raw |= ~mask;
  return static_cast<int64_t>(raw);
}

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_ELEMENT_H_
