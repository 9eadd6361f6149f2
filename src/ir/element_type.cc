#include "ir/element_type.h"

#include <string>

namespace kiln::ir {
namespace {

constexpr ElementTypeInfo kInfos[] = {
#define KILN_ELEMENT_TYPE_INFO(e, name, bits, bytes, category) \
  {name, bits, bytes, ElementCategory::category},
    KILN_ELEMENT_TYPES(KILN_ELEMENT_TYPE_INFO)
#undef KILN_ELEMENT_TYPE_INFO
};

}  // namespace

const ElementTypeInfo& GetElementTypeInfo(ElementType type) {
  return kInfos[static_cast<int>(type)];
}

bool IsInteger(ElementType type) {
  ElementCategory category = Category(type);
  return category == ElementCategory::kSignedInt ||
         category == ElementCategory::kUnsignedInt;
}
bool IsSignedInteger(ElementType type) {
  return Category(type) == ElementCategory::kSignedInt;
}
bool IsUnsignedInteger(ElementType type) {
  return Category(type) == ElementCategory::kUnsignedInt;
}
bool IsBool(ElementType type) { return Category(type) == ElementCategory::kBool; }
bool IsFloat(ElementType type) { return Category(type) == ElementCategory::kFloat; }
bool IsComplex(ElementType type) {
  return Category(type) == ElementCategory::kComplex;
}

std::optional<FloatFormat> GetFloatFormat(ElementType type) {
  using N = FloatNonFinite;
  switch (type) {
    // Parameters from the format definitions in the StableHLO spec (which
    // follows the OCP 8-bit float specification and LLVM's APFloat
    // semantics for the FNUZ and B11 variants).
    case ElementType::kF4E2M1FN: return FloatFormat{2, 1, 1, true, N::kNone};
    case ElementType::kF6E2M3FN: return FloatFormat{2, 3, 1, true, N::kNone};
    case ElementType::kF6E3M2FN: return FloatFormat{3, 2, 3, true, N::kNone};
    case ElementType::kF8E3M4: return FloatFormat{3, 4, 3, true, N::kIeee};
    case ElementType::kF8E4M3: return FloatFormat{4, 3, 7, true, N::kIeee};
    case ElementType::kF8E4M3FN: return FloatFormat{4, 3, 7, true, N::kNanOnlyAllOnes};
    case ElementType::kF8E4M3FNUZ: return FloatFormat{4, 3, 8, true, N::kNanNegativeZero};
    case ElementType::kF8E4M3B11FNUZ: return FloatFormat{4, 3, 11, true, N::kNanNegativeZero};
    case ElementType::kF8E5M2: return FloatFormat{5, 2, 15, true, N::kIeee};
    case ElementType::kF8E5M2FNUZ: return FloatFormat{5, 2, 16, true, N::kNanNegativeZero};
    case ElementType::kF8E8M0FNU: return FloatFormat{8, 0, 127, false, N::kE8M0};
    case ElementType::kBF16: return FloatFormat{8, 7, 127, true, N::kIeee};
    case ElementType::kF16: return FloatFormat{5, 10, 15, true, N::kIeee};
    case ElementType::kTF32: return FloatFormat{8, 10, 127, true, N::kIeee};
    case ElementType::kF32: return FloatFormat{8, 23, 127, true, N::kIeee};
    case ElementType::kF64: return FloatFormat{11, 52, 1023, true, N::kIeee};
    default: return std::nullopt;
  }
}

ElementType ComplexComponentType(ElementType type) {
  return type == ElementType::kC128 ? ElementType::kF64 : ElementType::kF32;
}

std::optional<ElementType> ParseElementTypeName(std::string_view name) {
  for (int i = 0; i < kNumElementTypes; ++i) {
    if (kInfos[i].name == name) return static_cast<ElementType>(i);
  }
  // MLIR's explicitly signed spelling is the same type for StableHLO.
  if (name.size() > 2 && name.substr(0, 2) == "si") {
    std::string signless = "i";
    signless.append(name.substr(2));
    for (int i = 0; i < kNumElementTypes; ++i) {
      if (kInfos[i].name == signless && IsSignedInteger(static_cast<ElementType>(i))) {
        return static_cast<ElementType>(i);
      }
    }
  }
  return std::nullopt;
}

}  // namespace kiln::ir
