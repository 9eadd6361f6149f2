#include "ir/elementwise_traits.h"

#include <array>

namespace kiln::ir {
namespace {

#define KILN_SPEC_ROW(x, op, kernel, arity, cost, operands, results, rule) \
  {OpCode::k##op, arity, OpCost::cost, true},
#define KILN_OTHER_ROW(x, op, kernel, arity, cost) \
  {OpCode::k##op, arity, OpCost::cost, false},
constexpr ElementwiseTraits kRows[] = {
    KILN_ELEMENTWISE_OPS(KILN_SPEC_ROW, KILN_OTHER_ROW, KILN_OTHER_ROW, ~)};
#undef KILN_SPEC_ROW
#undef KILN_OTHER_ROW

constexpr size_t kNumOpCodes = static_cast<size_t>(OpCode::kUnknown) + 1;

// Indexed by OpCode, built once.
const std::array<const ElementwiseTraits*, kNumOpCodes>& ByCode() {
  static const auto* table = [] {
    auto* by_code = new std::array<const ElementwiseTraits*, kNumOpCodes>{};
    for (const ElementwiseTraits& row : kRows) {
      (*by_code)[static_cast<size_t>(row.code)] = &row;
    }
    return by_code;
  }();
  return *table;
}

}  // namespace

const ElementwiseTraits* FindElementwiseTraits(OpCode code) {
  size_t index = static_cast<size_t>(code);
  return index < kNumOpCodes ? ByCode()[index] : nullptr;
}

}  // namespace kiln::ir
