// Control flow, tuples and tokens: if, case, while, optimization_barrier,
// return, tuple, get_tuple_element, after_all, create_token, and the
// builtin ops that carry no StableHLO semantics of their own.
#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

// A value type an if/case/while may carry.
bool IsValueType(const Type& type, bool allow_memref) {
  if (type.IsToken()) return true;
  if (IsTensor(type)) return ClassOf(type.element()) != 0;
  if (type.IsTuple()) {
    for (const Type& element : type.elements()) {
      if (!IsValueType(element, allow_memref)) return false;
    }
    return true;
  }
  return allow_memref && type.is(TypeKind::kMemRef);
}

Status CheckResultValueTypes(const Operation& op, bool allow_memref) {
  for (int i = 0; i < op.num_results(); ++i) {
    const Type& type = op.result(i)->type();
    if (!IsValueType(type, allow_memref)) {
      return OpError(op, "result #", i,
                     " must be variadic of ranked tensor of "
                     "any type values or token or tuple, but got ",
                     Quoted(type));
    }
  }
  return OkStatus();
}

Status CheckOperandValueTypes(const Operation& op, bool allow_memref) {
  for (int i = 0; i < op.num_operands(); ++i) {
    const Type& type = op.operand(i)->type();
    if (!IsValueType(type, allow_memref)) {
      return OpError(op, "operand #", i,
                     " must be variadic of ranked tensor "
                     "of any type values or token or tuple, but got ",
                     Quoted(type));
    }
  }
  return OkStatus();
}

// The least specific of compatible types: dims that differ become dynamic.
Type LeastSpecific(const std::vector<Type>& types) {
  const Type& first = types.front();
  if (!IsTensor(first)) return first;
  std::vector<int64_t> shape = first.shape();
  for (const Type& type : types) {
    if (!IsTensor(type) || type.rank() != first.rank()) return first;
    for (int64_t i = 0; i < first.rank(); ++i) {
      if (type.dim(i) != shape[i]) shape[i] = kDynamic;
    }
  }
  return MakeTensor(shape, first.element());
}

// if and case: branches take no arguments and return compatible types,
// which (made least specific) are the op's results.
Status VerifyBranches(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(CheckResultValueTypes(op, false));
  const Type& index = op.operand(0)->type();
  if (IsTensor(index) && index.rank() != 0) {
    return OpError(op, "operand should be rank 0 tensor but got rank ",
                   index.rank());
  }
  RETURN_IF_ERROR(
      CheckOperandScalarTensor(op, 0, op.is(OpCode::kIf) ? kPred : kSignedInt));
  // case_i1: the index is a tensor<i32>.
  if (op.is(OpCode::kCase) &&
      !IsScalarElement(index.element(), ElementType::kI32)) {
    return OpError(op,
                   "operand #0 must be 0D tensor of 32-bit signless "
                   "integer values, but got ",
                   Quoted(index));
  }
  if (op.num_regions() == 0) return OpError(op, "expect at least one branch");
  if (op.is(OpCode::kIf)) RETURN_IF_ERROR(ExpectRegions(op, 2));
  std::vector<std::vector<Type>> branch_types;
  for (int i = 0; i < op.num_regions(); ++i) {
    ASSIGN_OR_RETURN(const Block* block, SingleBlock(op, i));
    // (C1) of if, (C2) of case
    if (block->num_arguments() != 0) {
      return OpError(op, "branch ", i, " must have 0 arguments, but found ",
                     block->num_arguments());
    }
    RETURN_IF_ERROR(RegionTerminator(op, *block));
    branch_types.push_back(TerminatorTypes(*block));
  }
  for (size_t i = 1; i < branch_types.size(); ++i) {
    if (!TypeListsCompatible(branch_types[0], branch_types[i])) {
      return OpError(
          op, "branch 0 and branch ", i,
          " have mismatched return types: ", QuotedList(branch_types[0]),
          " vs ", QuotedList(branch_types[i]));
    }
  }
  std::vector<Type> inferred;
  for (size_t r = 0; r < branch_types[0].size(); ++r) {
    std::vector<Type> candidates;
    for (const auto& types : branch_types) candidates.push_back(types[r]);
    inferred.push_back(LeastSpecific(candidates));
  }
  return CheckInferredResults(op, inferred);
}

Status VerifyWhile(const Operation& op) {
  RETURN_IF_ERROR(ExpectRegions(op, 2));
  RETURN_IF_ERROR(CheckOperandValueTypes(op, true));
  RETURN_IF_ERROR(CheckResultValueTypes(op, true));
  std::vector<Type> operands;
  for (const Value* value : op.operands()) operands.push_back(value->type());
  ASSIGN_OR_RETURN(const Block* cond, SingleBlock(op, 0));
  ASSIGN_OR_RETURN(const Block* body, SingleBlock(op, 1));
  // (C1)
  if (!TypeListsCompatible(operands, ArgumentTypes(*cond))) {
    return OpError(op,
                   "expect operands are compatible with condition block "
                   "arguments but got ",
                   QuotedList(operands), " vs ",
                   QuotedList(ArgumentTypes(*cond)));
  }
  ASSIGN_OR_RETURN(const Operation* cond_return, RegionTerminator(op, *cond));
  if (cond_return->num_operands() != 1) {
    return OpError(op, "expect condition body returns a single value but got ",
                   cond_return->num_operands());
  }
  const Type& pred = cond_return->operand(0)->type();
  if (!IsTensor(pred) || pred.rank() != 0 || !IsPredElement(pred.element())) {
    return OpError(op,
                   "expect condition block return a zero-ranked tensor of "
                   "i1 but got ",
                   Quoted(pred));
  }
  // (C2)
  if (!TypeListsCompatible(operands, ArgumentTypes(*body))) {
    return OpError(op,
                   "expect operands are compatible with body block "
                   "arguments but got ",
                   QuotedList(operands), " vs ",
                   QuotedList(ArgumentTypes(*body)));
  }
  RETURN_IF_ERROR(RegionTerminator(op, *body));
  if (!TypeListsCompatible(operands, TerminatorTypes(*body))) {
    return OpError(op,
                   "expect operands are compatible with body block return "
                   "types but got ",
                   QuotedList(operands), " vs ",
                   QuotedList(TerminatorTypes(*body)));
  }
  // (C3)
  if (!TypeListsCompatible(operands, op.result_types())) {
    return OpError(op,
                   "expect operands are compatible with result types but "
                   "got ",
                   QuotedList(operands), " vs ", QuotedList(op.result_types()));
  }
  return OkStatus();
}

Status VerifyOptimizationBarrier(const Operation& op) {
  RETURN_IF_ERROR(ExpectResults(op, op.num_operands()));
  for (int i = 0; i < op.num_operands(); ++i) {
    const Type& type = op.operand(i)->type();
    if (!type.IsToken() && !type.IsTuple() && !IsTensorOf(type, kAnyElement)) {
      return OpError(op, "operand #", i,
                     " must be variadic of ranked tensor "
                     "of any type values or token, but got ",
                     Quoted(type));
    }
    if (op.result(i)->type() != type) {
      return OpError(op,
                     "requires the same type for operand and result at "
                     "index ",
                     i, ", but got ", Quoted(type), " and ",
                     Quoted(op.result(i)->type()));
    }
  }
  return OkStatus();
}

// stablehlo.return's operands are checked by the op owning its region.
Status VerifyReturn(const Operation& op) { return ExpectResults(op, 0); }

Status VerifyTuple(const Operation& op) {
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandValueTypes(op, true));
  std::vector<Type> elements;
  for (const Value* value : op.operands()) elements.push_back(value->type());
  Type expected = Type::Tuple(elements);
  // (C1)
  if (op.result(0)->type() != expected) {
    return OpError(op, "inferred type(s) ", Quoted(expected),
                   " are incompatible with return type(s) of operation ",
                   Quoted(op.result(0)->type()));
  }
  return OkStatus();
}

Status VerifyGetTupleElement(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  const Type& tuple = op.operand(0)->type();
  if (!tuple.IsTuple()) {
    return OpError(op, "operand #0 must be a tuple, but got ", Quoted(tuple));
  }
  ASSIGN_OR_RETURN(int64_t index, RequiredNonNegativeInt(op, "index", 32));
  // (C1)
  if (index >= static_cast<int64_t>(tuple.elements().size())) {
    return OpError(op, "index ", index,
                   " is out of bounds of operand with "
                   "size ",
                   tuple.elements().size());
  }
  // (C2)
  const Type& element = tuple.elements()[index];
  if (op.result(0)->type() != element) {
    return OpError(op, "inferred type(s) ", Quoted(element),
                   " are incompatible with return type(s) of operation ",
                   Quoted(op.result(0)->type()));
  }
  return OkStatus();
}

Status VerifyAfterAll(const Operation& op) {
  RETURN_IF_ERROR(ExpectResults(op, 1));
  for (int i = 0; i < op.num_operands(); ++i) {
    RETURN_IF_ERROR(CheckOperandToken(op, i));
  }
  return CheckResultToken(op, 0);
}

Status VerifyCreateToken(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 0));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  return CheckResultToken(op, 0);
}

// Ops whose rules live elsewhere (builtin.module, func.call's symbol check)
// or that carry no StableHLO semantics (unrealized_conversion_cast).
Status VerifyNothing(const Operation& op) { return OkStatus(); }

}  // namespace

void RegisterControlFlowVerifiers(VerifierTable& table) {
  table[static_cast<size_t>(OpCode::kIf)] = VerifyBranches;
  table[static_cast<size_t>(OpCode::kCase)] = VerifyBranches;
  table[static_cast<size_t>(OpCode::kWhile)] = VerifyWhile;
  table[static_cast<size_t>(OpCode::kOptimizationBarrier)] =
      VerifyOptimizationBarrier;
  table[static_cast<size_t>(OpCode::kReturn)] = VerifyReturn;
  table[static_cast<size_t>(OpCode::kTuple)] = VerifyTuple;
  table[static_cast<size_t>(OpCode::kGetTupleElement)] = VerifyGetTupleElement;
  table[static_cast<size_t>(OpCode::kAfterAll)] = VerifyAfterAll;
  table[static_cast<size_t>(OpCode::kCreateToken)] = VerifyCreateToken;
  table[static_cast<size_t>(OpCode::kModule)] = VerifyNothing;
  table[static_cast<size_t>(OpCode::kCall)] = VerifyNothing;
  table[static_cast<size_t>(OpCode::kUnrealizedConversionCast)] = VerifyNothing;
}

}  // namespace kiln::ir::verifier
