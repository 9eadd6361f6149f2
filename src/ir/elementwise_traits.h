// What every layer reads of an elementwise math op, from its row of
// elementwise_ops.def: how many operands it takes and whether it counts
// as a transcendental function.
#ifndef KILN_IR_ELEMENTWISE_TRAITS_H_
#define KILN_IR_ELEMENTWISE_TRAITS_H_

#include "ir/operation.h"

namespace kiln::ir {

enum class OpCost : uint8_t { kArithmetic, kTranscendental };

struct ElementwiseTraits {
  OpCode code;
  int arity;
  OpCost cost;
  // Whether the verifier reads its element types from the row (StableHLO's
  // own elementwise ops) rather than from a rule of its own.
  bool spec_row;
};

// The row of `code`, or null for an op that is not an elementwise math op.
const ElementwiseTraits* FindElementwiseTraits(OpCode code);

}  // namespace kiln::ir

#endif  // KILN_IR_ELEMENTWISE_TRAITS_H_
