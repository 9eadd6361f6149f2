// Element types of StableHLO tensors, with a table of their traits.
//
// Every scalar type a tensor can hold is one enumerator. Signless MLIR
// integers (`i8`) are StableHLO's signed integers; `ui8` are unsigned. Float
// formats carry the parameters a conversion needs (exponent and mantissa
// widths, bias, and how infinities and NaNs are encoded), so conversions are
// written once for every format.
#ifndef KILN_IR_ELEMENT_TYPE_H_
#define KILN_IR_ELEMENT_TYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::ir {

// X(enumerator, MLIR spelling, bit width, storage bytes, category)
//
// Storage bytes is how one element is laid out in Kiln's dense buffers and
// in `DenseElementsAttr` data: sub-byte types take one byte each (as in
// MLIR's hex dense form), `i1` one byte (0 or 1).
#define KILN_ELEMENT_TYPES(X)                          \
  X(kI1, "i1", 1, 1, kBool)                            \
  X(kI2, "i2", 2, 1, kSignedInt)                       \
  X(kI4, "i4", 4, 1, kSignedInt)                       \
  X(kI8, "i8", 8, 1, kSignedInt)                       \
  X(kI16, "i16", 16, 2, kSignedInt)                    \
  X(kI32, "i32", 32, 4, kSignedInt)                    \
  X(kI64, "i64", 64, 8, kSignedInt)                    \
  X(kUI2, "ui2", 2, 1, kUnsignedInt)                   \
  X(kUI4, "ui4", 4, 1, kUnsignedInt)                   \
  X(kUI8, "ui8", 8, 1, kUnsignedInt)                   \
  X(kUI16, "ui16", 16, 2, kUnsignedInt)                \
  X(kUI32, "ui32", 32, 4, kUnsignedInt)                \
  X(kUI64, "ui64", 64, 8, kUnsignedInt)                \
  X(kIndex, "index", 64, 8, kSignedInt)                \
  X(kF4E2M1FN, "f4E2M1FN", 4, 1, kFloat)               \
  X(kF6E2M3FN, "f6E2M3FN", 6, 1, kFloat)               \
  X(kF6E3M2FN, "f6E3M2FN", 6, 1, kFloat)               \
  X(kF8E3M4, "f8E3M4", 8, 1, kFloat)                   \
  X(kF8E4M3, "f8E4M3", 8, 1, kFloat)                   \
  X(kF8E4M3FN, "f8E4M3FN", 8, 1, kFloat)               \
  X(kF8E4M3FNUZ, "f8E4M3FNUZ", 8, 1, kFloat)           \
  X(kF8E4M3B11FNUZ, "f8E4M3B11FNUZ", 8, 1, kFloat)     \
  X(kF8E5M2, "f8E5M2", 8, 1, kFloat)                   \
  X(kF8E5M2FNUZ, "f8E5M2FNUZ", 8, 1, kFloat)           \
  X(kF8E8M0FNU, "f8E8M0FNU", 8, 1, kFloat)             \
  X(kBF16, "bf16", 16, 2, kFloat)                      \
  X(kF16, "f16", 16, 2, kFloat)                        \
  X(kTF32, "tf32", 19, 4, kFloat)                      \
  X(kF32, "f32", 32, 4, kFloat)                        \
  X(kF64, "f64", 64, 8, kFloat)                        \
  X(kC64, "complex<f32>", 64, 8, kComplex)             \
  X(kC128, "complex<f64>", 128, 16, kComplex)

enum class ElementType : uint8_t {
#define KILN_ELEMENT_TYPE_ENUM(e, name, bits, bytes, category) e,
  KILN_ELEMENT_TYPES(KILN_ELEMENT_TYPE_ENUM)
#undef KILN_ELEMENT_TYPE_ENUM
};

inline constexpr int kNumElementTypes = 0
#define KILN_ELEMENT_TYPE_COUNT(e, name, bits, bytes, category) +1
    KILN_ELEMENT_TYPES(KILN_ELEMENT_TYPE_COUNT)
#undef KILN_ELEMENT_TYPE_COUNT
    ;

enum class ElementCategory : uint8_t {
  kBool,
  kSignedInt,
  kUnsignedInt,
  kFloat,
  kComplex,
};

// How a float format encodes non-finite values.
enum class FloatNonFinite : uint8_t {
  kIeee,         // all-ones exponent: inf (mantissa 0) or NaN
  kNanOnlyAllOnes,  // "FN": no inf; only exponent and mantissa all ones is NaN
  kNanNegativeZero, // "FNUZ": no inf, no -0; the bit pattern of -0 is NaN
  kNone,         // no inf and no NaN (f4E2M1FN, f6*)
  kE8M0,         // exponent only: 0xFF is NaN, no zero, no sign
};

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;  // explicit fraction bits
  int exponent_bias;
  bool has_sign;
  FloatNonFinite non_finite;
};

struct ElementTypeInfo {
  std::string_view name;  // MLIR spelling
  int bit_width;
  int storage_bytes;
  ElementCategory category;
};

const ElementTypeInfo& GetElementTypeInfo(ElementType type);

inline std::string_view ElementTypeName(ElementType type) {
  return GetElementTypeInfo(type).name;
}
inline int BitWidth(ElementType type) { return GetElementTypeInfo(type).bit_width; }
inline int StorageBytes(ElementType type) {
  return GetElementTypeInfo(type).storage_bytes;
}
inline ElementCategory Category(ElementType type) {
  return GetElementTypeInfo(type).category;
}

bool IsInteger(ElementType type);          // signed or unsigned, not i1
bool IsSignedInteger(ElementType type);    // iN and index
bool IsUnsignedInteger(ElementType type);  // uiN
bool IsBool(ElementType type);
bool IsFloat(ElementType type);
bool IsComplex(ElementType type);

// The float format of a float type (nullopt for other types).
std::optional<FloatFormat> GetFloatFormat(ElementType type);

// The component type of a complex type (f32 or f64).
ElementType ComplexComponentType(ElementType type);

// Parses an MLIR element type spelling ("f32", "ui8", "complex<f64>").
std::optional<ElementType> ParseElementTypeName(std::string_view name);

}  // namespace kiln::ir

#endif  // KILN_IR_ELEMENT_TYPE_H_
