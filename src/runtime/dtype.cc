#include "runtime/dtype.h"

namespace kiln::runtime {
namespace {

// The IR column of the table: every ir::ElementType by its enumerator's
// name, plus kNoIrType.
namespace ir_types {
#define KILN_IR_TYPE_CONSTANT(e, name, bits, bytes, category) \
  constexpr std::optional<ir::ElementType> e = ir::ElementType::e;
KILN_ELEMENT_TYPES(KILN_IR_TYPE_CONSTANT)
#undef KILN_IR_TYPE_CONSTANT
constexpr std::optional<ir::ElementType> kNoIrType = std::nullopt;
}  // namespace ir_types

constexpr DTypeInfo kInfos[] = {
#define KILN_RUNTIME_DTYPE_INFO(e, name, bits, bytes, canon, ir_type) \
  {name, bits, bytes, Canonicalize::canon, ir_types::ir_type},
    KILN_RUNTIME_DTYPES(KILN_RUNTIME_DTYPE_INFO)
#undef KILN_RUNTIME_DTYPE_INFO
};

}  // namespace

const DTypeInfo& GetDTypeInfo(DType dtype) {
  return kInfos[static_cast<int>(dtype)];
}

std::optional<ir::ElementType> ToIrElementType(DType dtype) {
  return GetDTypeInfo(dtype).ir_type;
}

std::optional<DType> FromIrElementType(ir::ElementType type) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kInfos[i].ir_type == type) return static_cast<DType>(i);
  }
  return std::nullopt;
}

void CanonicalizeElements(DType dtype, void* data, int64_t count) {
  const DTypeInfo& info = GetDTypeInfo(dtype);
  auto* bytes = static_cast<uint8_t*>(data);
  switch (info.canonicalize) {
    case Canonicalize::kNone:
      return;
    case Canonicalize::kBool:
      for (int64_t i = 0; i < count; ++i) bytes[i] = bytes[i] != 0;
      return;
    case Canonicalize::kUnsignedLow: {
      const uint8_t mask = static_cast<uint8_t>((1u << info.bit_width) - 1);
      for (int64_t i = 0; i < count; ++i) bytes[i] &= mask;
      return;
    }
    case Canonicalize::kSignedLow: {
      // Shift the value's sign bit up to bit 7, then back with an
      // arithmetic shift, which copies it into the high bits.
      const int shift = 8 - info.bit_width;
      for (int64_t i = 0; i < count; ++i) {
        bytes[i] = static_cast<uint8_t>(
            static_cast<int8_t>(static_cast<uint8_t>(bytes[i] << shift)) >>
            shift);
      }
      return;
    }
  }
}

}  // namespace kiln::runtime
