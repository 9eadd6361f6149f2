#include "kiln/shape.h"

#include <limits>

#include "base/strings.h"

namespace kiln::client {
namespace {

struct ElementTypeInfo {
  PJRT_Buffer_Type type;
  const char* mlir_name;  // StableHLO spelling
  const char* pjrt_name;  // suffix of PJRT_Buffer_Type_*
  int bits;
};

// One row per PJRT element type (PJRT C API 0.112).
#define KILN_ELEMENT_TYPES(X)          \
  X(PRED, "i1", 1)                     \
  X(S1, "i1", 1)                       \
  X(S2, "i2", 2)                       \
  X(S4, "i4", 4)                       \
  X(S8, "i8", 8)                       \
  X(S16, "i16", 16)                    \
  X(S32, "i32", 32)                    \
  X(S64, "i64", 64)                    \
  X(U1, "ui1", 1)                      \
  X(U2, "ui2", 2)                      \
  X(U4, "ui4", 4)                      \
  X(U8, "ui8", 8)                      \
  X(U16, "ui16", 16)                   \
  X(U32, "ui32", 32)                   \
  X(U64, "ui64", 64)                   \
  X(F16, "f16", 16)                    \
  X(BF16, "bf16", 16)                  \
  X(F32, "f32", 32)                    \
  X(F64, "f64", 64)                    \
  X(C64, "complex<f32>", 64)           \
  X(C128, "complex<f64>", 128)         \
  X(F8E5M2, "f8E5M2", 8)               \
  X(F8E4M3FN, "f8E4M3FN", 8)           \
  X(F8E4M3B11FNUZ, "f8E4M3B11FNUZ", 8) \
  X(F8E5M2FNUZ, "f8E5M2FNUZ", 8)       \
  X(F8E4M3FNUZ, "f8E4M3FNUZ", 8)       \
  X(F8E4M3, "f8E4M3", 8)               \
  X(F8E3M4, "f8E3M4", 8)               \
  X(F8E8M0FNU, "f8E8M0FNU", 8)         \
  X(F4E2M1FN, "f4E2M1FN", 4)           \
  X(TOKEN, "!stablehlo.token", 0)

#define KILN_ELEMENT_TYPE_ROW(name, mlir, bits) \
  {PJRT_Buffer_Type_##name, mlir, #name, bits},
constexpr ElementTypeInfo kElementTypes[] = {
    KILN_ELEMENT_TYPES(KILN_ELEMENT_TYPE_ROW)};
#undef KILN_ELEMENT_TYPE_ROW

const ElementTypeInfo* Find(PJRT_Buffer_Type type) {
  for (const ElementTypeInfo& info : kElementTypes) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

}  // namespace

std::string_view ElementTypeName(PJRT_Buffer_Type type) {
  const ElementTypeInfo* info = Find(type);
  if (info != nullptr) return info->mlir_name;
  static thread_local std::string unknown;
  unknown = StrCat("invalid(", static_cast<int>(type), ")");
  return unknown;
}

std::optional<PJRT_Buffer_Type> ParseElementType(std::string_view name) {
  // "i1" names PRED (StableHLO has no separate 1-bit integer spelling).
  if (name == "i1" || name == "pred" || name == "bool") {
    return PJRT_Buffer_Type_PRED;
  }
  for (const ElementTypeInfo& info : kElementTypes) {
    if (name == info.mlir_name || name == info.pjrt_name) return info.type;
  }
  return std::nullopt;
}

int ElementTypeBits(PJRT_Buffer_Type type) {
  const ElementTypeInfo* info = Find(type);
  return info == nullptr ? 0 : info->bits;
}

bool IsArrayElementType(PJRT_Buffer_Type type) {
  return ElementTypeBits(type) > 0;
}

int64_t Shape::ElementCount() const {
  int64_t count = 1;
  for (int64_t dim : dimensions) count *= dim;
  return count;
}

int64_t Shape::ByteSize() const {
  int bits = ElementTypeBits(element_type);
  int64_t bytes_per_element = bits <= 8 ? (bits == 0 ? 0 : 1) : bits / 8;
  return ElementCount() * bytes_per_element;
}

std::string Shape::ToString() const {
  return StrCat(ElementTypeName(element_type), "[", StrJoin(dimensions, ","),
                "]");
}

std::string Shape::ToMlirType() const {
  std::string out = "tensor<";
  for (int64_t dim : dimensions) StrAppend(out, dim, "x");
  StrAppend(out, ElementTypeName(element_type), ">");
  return out;
}

Status ValidateShape(const Shape& shape) {
  if (!IsArrayElementType(shape.element_type)) {
    return InvalidArgumentError("shape ", shape.ToString(),
                                ": element type is not an array type");
  }
  int64_t count = 1;
  for (int64_t dim : shape.dimensions) {
    if (dim < 0) {
      return InvalidArgumentError("shape ", shape.ToString(), ": dimension ",
                                  dim, " is negative");
    }
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / 16 / dim) {
      return InvalidArgumentError("shape ", shape.ToString(),
                                  ": byte size overflows int64");
    }
    count *= dim;
  }
  return OkStatus();
}

}  // namespace kiln::client
