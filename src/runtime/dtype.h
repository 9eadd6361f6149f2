// The element types a runtime buffer can hold, with a table of their traits.
//
// The set is PJRT's (every `PJRT_Buffer_Type` of 0.112 but INVALID): it is
// a superset of what a StableHLO tensor can hold, because PJRT also moves
// 1-bit integers and tokens, which have no StableHLO element type. Each
// entry says how one element is stored in a runtime buffer (the same layout
// as `ir::DenseElementsAttr` data: sub-byte types take one byte each) and
// which `ir::ElementType` it is, if any.
#ifndef KILN_RUNTIME_DTYPE_H_
#define KILN_RUNTIME_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "ir/element_type.h"

namespace kiln::runtime {

// How stored bytes are brought to their canonical form when they arrive
// from the host: sub-byte values keep their low bits (sign-extended for
// signed types), booleans become 0 or 1.
enum class Canonicalize : uint8_t {
  kNone,         // every bit pattern is a valid value
  kBool,         // nonzero -> 1
  kSignedLow,    // keep `bit_width` low bits, sign-extend to the byte
  kUnsignedLow,  // keep `bit_width` low bits, clear the rest
};

// X(enumerator, name, bit width, storage bytes, canonicalize, ir type)
// `ir type` is an `ir::ElementType` enumerator, or kNoIrType.
#define KILN_RUNTIME_DTYPES(X)                                    \
  X(kPred, "pred", 1, 1, kBool, kI1)                              \
  X(kS8, "s8", 8, 1, kNone, kI8)                                  \
  X(kS16, "s16", 16, 2, kNone, kI16)                              \
  X(kS32, "s32", 32, 4, kNone, kI32)                              \
  X(kS64, "s64", 64, 8, kNone, kI64)                              \
  X(kU8, "u8", 8, 1, kNone, kUI8)                                 \
  X(kU16, "u16", 16, 2, kNone, kUI16)                             \
  X(kU32, "u32", 32, 4, kNone, kUI32)                             \
  X(kU64, "u64", 64, 8, kNone, kUI64)                             \
  X(kF16, "f16", 16, 2, kNone, kF16)                              \
  X(kF32, "f32", 32, 4, kNone, kF32)                              \
  X(kF64, "f64", 64, 8, kNone, kF64)                              \
  X(kBF16, "bf16", 16, 2, kNone, kBF16)                           \
  X(kC64, "c64", 64, 8, kNone, kC64)                              \
  X(kC128, "c128", 128, 16, kNone, kC128)                         \
  X(kF8E5M2, "f8e5m2", 8, 1, kNone, kF8E5M2)                      \
  X(kF8E4M3FN, "f8e4m3fn", 8, 1, kNone, kF8E4M3FN)                \
  X(kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8, 1, kNone, kF8E4M3B11FNUZ) \
  X(kF8E5M2FNUZ, "f8e5m2fnuz", 8, 1, kNone, kF8E5M2FNUZ)          \
  X(kF8E4M3FNUZ, "f8e4m3fnuz", 8, 1, kNone, kF8E4M3FNUZ)          \
  X(kS4, "s4", 4, 1, kSignedLow, kI4)                             \
  X(kU4, "u4", 4, 1, kUnsignedLow, kUI4)                          \
  X(kToken, "token", 0, 0, kNone, kNoIrType)                      \
  X(kS2, "s2", 2, 1, kSignedLow, kI2)                             \
  X(kU2, "u2", 2, 1, kUnsignedLow, kUI2)                          \
  X(kF8E4M3, "f8e4m3", 8, 1, kNone, kF8E4M3)                      \
  X(kF8E3M4, "f8e3m4", 8, 1, kNone, kF8E3M4)                      \
  X(kF8E8M0FNU, "f8e8m0fnu", 8, 1, kNone, kF8E8M0FNU)             \
  X(kF4E2M1FN, "f4e2m1fn", 4, 1, kUnsignedLow, kF4E2M1FN)         \
  X(kS1, "s1", 1, 1, kSignedLow, kNoIrType)                       \
  X(kU1, "u1", 1, 1, kUnsignedLow, kNoIrType)

enum class DType : uint8_t {
#define KILN_RUNTIME_DTYPE_ENUM(e, name, bits, bytes, canon, ir_type) e,
  KILN_RUNTIME_DTYPES(KILN_RUNTIME_DTYPE_ENUM)
#undef KILN_RUNTIME_DTYPE_ENUM
};

inline constexpr int kNumDTypes = 0
#define KILN_RUNTIME_DTYPE_COUNT(e, name, bits, bytes, canon, ir_type) +1
    KILN_RUNTIME_DTYPES(KILN_RUNTIME_DTYPE_COUNT)
#undef KILN_RUNTIME_DTYPE_COUNT
    ;

struct DTypeInfo {
  std::string_view name;
  int bit_width;      // bits of information in one element
  int storage_bytes;  // bytes one element takes in a buffer (0 for tokens)
  Canonicalize canonicalize;
  std::optional<ir::ElementType> ir_type;
};

const DTypeInfo& GetDTypeInfo(DType dtype);

inline std::string_view DTypeName(DType dtype) {
  return GetDTypeInfo(dtype).name;
}
inline int StorageBytes(DType dtype) {
  return GetDTypeInfo(dtype).storage_bytes;
}

// The IR element type of `dtype` (nullopt for s1, u1 and token).
std::optional<ir::ElementType> ToIrElementType(DType dtype);

// The runtime type holding `type` (nullopt for IR types no buffer can hold,
// such as tf32 or index).
std::optional<DType> FromIrElementType(ir::ElementType type);

// Brings `count` stored elements of `dtype` at `data` to canonical form
// (see Canonicalize). A no-op for types where every byte pattern is valid.
void CanonicalizeElements(DType dtype, void* data, int64_t count);

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_DTYPE_H_
