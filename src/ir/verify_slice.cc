// Slicing ops: slice, dynamic_slice, dynamic_update_slice and
// real_dynamic_slice.
#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

Status VerifySlice(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  ASSIGN_OR_RETURN(std::vector<int64_t> start,
                   RequiredInts(op, "start_indices"));
  ASSIGN_OR_RETURN(std::vector<int64_t> limit,
                   RequiredInts(op, "limit_indices"));
  ASSIGN_OR_RETURN(std::vector<int64_t> strides, RequiredInts(op, "strides"));
  // (C2)
  for (const auto& [name, values] :
       {std::pair<const char*, const std::vector<int64_t>&>{"start_indices",
                                                            start},
        {"limit_indices", limit},
        {"strides", strides}}) {
    if (static_cast<int64_t>(values.size()) != operand.rank()) {
      return OpError(
          op, "the number of elements in ", name, " (", values.size(),
          ") does not match the rank of the operand (", operand.rank(), ")");
    }
  }
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    // (C3)
    if (start[i] < 0) {
      return OpError(op, "negative start index ", start[i], " in dimension ",
                     i);
    }
    int64_t size = operand.dim(i);
    if (size != kDynamic && limit[i] > size) {
      return OpError(op, "limit index ", limit[i],
                     " is larger than dimension size ", size, " in dimension ",
                     i);
    }
    if (start[i] > limit[i]) {
      return OpError(op, "start index ", start[i],
                     " is larger than limit index ", limit[i], " in dimension ",
                     i);
    }
    // (C4)
    if (strides[i] <= 0) {
      return OpError(op, "stride must be positive but got ", strides[i],
                     " in dimension ", i);
    }
    // (C5): ceil((limit - start) / stride), without overflow.
    uint64_t extent =
        static_cast<uint64_t>(limit[i]) - static_cast<uint64_t>(start[i]);
    uint64_t stride = static_cast<uint64_t>(strides[i]);
    shape.push_back(
        static_cast<int64_t>(extent / stride + (extent % stride != 0 ? 1 : 0)));
  }
  return CheckInferredResults(op, {MakeTensor(shape, operand.element())});
}

// Start indices are 0-d integer tensors of one element type.
Status CheckStartIndices(const Operation& op, int first) {
  for (int i = first; i < op.num_operands(); ++i) {
    RETURN_IF_ERROR(CheckOperandScalarTensor(op, i, kInt));
    if (op.operand(i)->type().element() !=
        op.operand(first)->type().element()) {
      return OpError(op, "start indices must have same element type, but got ",
                     Quoted(op.operand(first)->type()), " and ",
                     Quoted(op.operand(i)->type()));
    }
  }
  return OkStatus();
}

Status VerifyDynamicSlice(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes, RequiredInts(op, "slice_sizes"));
  int64_t num_indices = op.num_operands() - 1;
  // (C2)
  if (static_cast<int64_t>(sizes.size()) != num_indices) {
    return OpError(op, "has mismatched number of slice sizes (", sizes.size(),
                   ") and number of start indices (", num_indices, ")");
  }
  if (num_indices != operand.rank()) {
    return OpError(op, "has mismatched number of start indices (", num_indices,
                   ") and the rank of operand (", operand.rank(), ")");
  }
  // (C3)
  RETURN_IF_ERROR(CheckStartIndices(op, 1));
  // (C4)
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (sizes[i] < 0) {
      return OpError(op,
                     "has negative size index to dynamic slice: ", sizes[i]);
    }
    if (operand.dim(i) != kDynamic && sizes[i] > operand.dim(i)) {
      return OpError(op, "has slice size ", sizes[i],
                     " greater than dimension size ", operand.dim(i),
                     " in dimension ", i, " of operand");
    }
  }
  // (C1), (C5)
  return CheckInferredResults(op, {MakeTensor(sizes, operand.element())});
}

Status VerifyDynamicUpdateSlice(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandTensor(op, 1, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  const Type& update = op.operand(1)->type();
  int64_t num_indices = op.num_operands() - 2;
  // (C3)
  if (update.rank() != operand.rank()) {
    return OpError(op,
                   "update rank does not match operand rank: ", update.rank(),
                   " vs ", operand.rank(), ".");
  }
  // (C4)
  if (num_indices != operand.rank()) {
    return OpError(op,
                   "expects number of start_indices to match operand "
                   "rank: ",
                   num_indices, " vs ", operand.rank(), ".");
  }
  // (C5)
  if (num_indices > 0) RETURN_IF_ERROR(CheckStartIndices(op, 2));
  // (C2)
  if (!ElementsCompatible(operand.element(), update.element())) {
    return OpError(op,
                   "expects operand and update to have compatible element "
                   "types, but got ",
                   Quoted(operand), " and ", Quoted(update));
  }
  // (C6)
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t size = update.dim(i);
    if (size == kDynamic) continue;
    if (size < 0 || (operand.dim(i) != kDynamic && size > operand.dim(i))) {
      return OpError(op, "expects size at dimension ", i,
                     " of update to be in range [0, ", DimText(operand.dim(i)),
                     "]. Got: ", size, ".");
    }
  }
  // (C1)
  return CheckInferredResults(op, {operand});
}

Status VerifyRealDynamicSlice(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 4));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  for (int i = 1; i < 4; ++i) {
    RETURN_IF_ERROR(CheckOperand1DTensor(op, i, kDimensionValue, true));
  }
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  if (!ElementsCompatible(operand.element(), result.element())) {
    return OpError(op,
                   "expects operand and result to have compatible element "
                   "types, but got ",
                   Quoted(operand), " and ", Quoted(result));
  }
  if (result.rank() != operand.rank()) {
    return OpError(op, "operand and result must have the same rank, but got ",
                   Quoted(operand), " and ", Quoted(result));
  }
  static constexpr const char* kNames[] = {"", "start_indices", "limit_indices",
                                           "strides"};
  for (int i = 1; i < 4; ++i) {
    if (op.operand(i)->type().dim(0) != operand.rank()) {
      return OpError(op, "has mismatched number of operand rank (",
                     operand.rank(), ") and ", kNames[i], " size (",
                     op.operand(i)->type().dim(0), ")");
    }
  }
  std::optional<std::vector<int64_t>> start = ConstantInts(op.operand(1));
  std::optional<std::vector<int64_t>> limit = ConstantInts(op.operand(2));
  std::optional<std::vector<int64_t>> strides = ConstantInts(op.operand(3));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (start && (*start)[i] < 0) {
      return OpError(op, "has negative start index ", (*start)[i],
                     " in dimension ", i);
    }
    if (strides && (*strides)[i] <= 0) {
      return OpError(op, "has non-positive stride ", (*strides)[i],
                     " in dimension ", i);
    }
    if (start && limit && (*start)[i] > (*limit)[i]) {
      return OpError(op, "has start index ", (*start)[i],
                     " greater than limit index ", (*limit)[i],
                     " in dimension ", i);
    }
    if (limit && operand.dim(i) != kDynamic && (*limit)[i] > operand.dim(i)) {
      return OpError(op, "has limit index ", (*limit)[i],
                     " greater than dimension size ", operand.dim(i),
                     " in dimension ", i);
    }
  }
  return OkStatus();
}

}  // namespace

void RegisterSliceVerifiers(VerifierTable& table) {
  table[static_cast<size_t>(OpCode::kSlice)] = VerifySlice;
  table[static_cast<size_t>(OpCode::kDynamicSlice)] = VerifyDynamicSlice;
  table[static_cast<size_t>(OpCode::kDynamicUpdateSlice)] =
      VerifyDynamicUpdateSlice;
  table[static_cast<size_t>(OpCode::kRealDynamicSlice)] =
      VerifyRealDynamicSlice;
}

}  // namespace kiln::ir::verifier
