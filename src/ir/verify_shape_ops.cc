// Ops that rearrange data without computing on it: broadcasts, reshapes,
// transpose, reverse, concatenate, pads, dimension sizes, and the deprecated
// broadcast and torch_index_select.
#include <algorithm>
#include <limits>

#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

Status CheckCompatibleElements(const Operation& op, const Type& operand,
                               const Type& result) {
  if (ElementsCompatible(operand.element(), result.element())) {
    return OkStatus();
  }
  return OpError(op,
                 "expects operand and result to have compatible element "
                 "type, but got ",
                 Quoted(operand), " and ", Quoted(result));
}

// The broadcast_dimensions rules shared by broadcast_in_dim and
// dynamic_broadcast_in_dim ((C2)-(C5)); `shape_values` are the constant
// output dimensions of the dynamic form, when known.
Status CheckBroadcastDimensions(
    const Operation& op, const Type& operand, const Type& result,
    const std::vector<int64_t>& dimensions,
    const std::optional<std::vector<int64_t>>& shape_values) {
  // (C2)
  if (static_cast<int64_t>(dimensions.size()) != operand.rank()) {
    return OpError(op, "broadcast_dimensions size (", dimensions.size(),
                   ") does not match operand rank (", operand.rank(), ")");
  }
  // (C4)
  if (HasDuplicates(dimensions)) {
    return OpError(op, "broadcast_dimensions should not have duplicates, got [",
                   JoinInts(dimensions), "]");
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t dim = dimensions[i];
    // (C3)
    if (dim < 0 || dim >= result.rank()) {
      return OpError(op, "broadcast_dimensions contains invalid value ", dim,
                     " for result with rank ", result.rank());
    }
    // (C5)
    int64_t operand_size = operand.dim(i);
    int64_t result_size = result.dim(dim);
    if (operand_size != kDynamic && operand_size != 1 &&
        result_size != kDynamic && operand_size != result_size) {
      return OpError(op, "size of operand dimension ", i, " (", operand_size,
                     ") is not ",
                     op.is(OpCode::kBroadcastInDim)
                         ? "equal to 1 or size of result dimension "
                         : "compatible with size of result dimension ",
                     dim, " (", result_size, ")");
    }
    if (shape_values && dim < static_cast<int64_t>(shape_values->size())) {
      int64_t value = (*shape_values)[dim];
      if (operand_size != kDynamic && operand_size != 1 &&
          operand_size != value) {
        return OpError(op, "size of operand dimension ", i, " (", operand_size,
                       ") is not equal to 1 or value of shape "
                       "at index ",
                       dim, " (", value, ")");
      }
    }
  }
  return OkStatus();
}

Status VerifyBroadcastInDim(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyOrPerAxis));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyOrPerAxis));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  if (!IsStaticOrSingleBounded(result)) {
    return OpError(op,
                   "result #0 must be statically shaped or single bounded "
                   "dimension tensor, but got ",
                   Quoted(result));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> dimensions,
                   RequiredInts(op, "broadcast_dimensions"));
  // (C1)
  RETURN_IF_ERROR(CheckCompatibleElements(op, operand, result));
  RETURN_IF_ERROR(
      CheckBroadcastDimensions(op, operand, result, dimensions, std::nullopt));
  return CheckBroadcastQuantization(op, operand, result, dimensions);
}

Status VerifyDynamicBroadcastInDim(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyOrPerAxis));
  RETURN_IF_ERROR(CheckOperand1DTensor(op, 1, kDimensionValue, true));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyOrPerAxis));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  ASSIGN_OR_RETURN(std::vector<int64_t> dimensions,
                   RequiredInts(op, "broadcast_dimensions"));
  RETURN_IF_ERROR(CheckCompatibleElements(op, operand, result));
  RETURN_IF_ERROR(CheckBroadcastDimensions(op, operand, result, dimensions,
                                           ConstantInts(op.operand(1))));
  RETURN_IF_ERROR(CheckShapeOperand(op, 1, result));
  // (C8)-(C10): expansion hints name distinct operand dimensions.
  std::vector<int64_t> hints;
  for (const char* name :
       {"known_expanding_dimensions", "known_nonexpanding_dimensions"}) {
    ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> values,
                     OptionalInts(op, name));
    if (values) hints.insert(hints.end(), values->begin(), values->end());
  }
  if (HasDuplicates(hints)) {
    return OpError(op,
                   "duplicate expansion hint for at least one operand "
                   "dimension");
  }
  for (int64_t hint : hints) {
    if (hint < 0 || hint >= operand.rank()) {
      return OpError(op, "hint for expanding dimension ", hint,
                     " does not refer to a valid operand dimension");
    }
  }
  return CheckBroadcastQuantization(op, operand, result, dimensions);
}

Status VerifyReshape(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyOrPerAxis));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyOrPerAxis));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  if (!IsStaticOrSingleBounded(result)) {
    return OpError(op,
                   "result #0 must be statically shaped or single bounded "
                   "dimension tensor, but got ",
                   Quoted(result));
  }
  RETURN_IF_ERROR(CheckCompatibleElements(op, operand, result));
  // (C2)
  std::optional<int64_t> in = StaticElementCount(operand.shape());
  std::optional<int64_t> out = StaticElementCount(result.shape());
  if (in && out && *in != *out) {
    return OpError(op, "number of output elements (", *out,
                   ") doesn't match expected number of elements (", *in, ")");
  }
  return CheckReshapeQuantization(op, operand, result);
}

Status VerifyDynamicReshape(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyOrPerAxis));
  RETURN_IF_ERROR(CheckOperand1DTensor(op, 1, kDimensionValue, true));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyOrPerAxis));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  RETURN_IF_ERROR(CheckCompatibleElements(op, operand, result));
  std::optional<int64_t> in = StaticElementCount(operand.shape());
  std::optional<int64_t> out = StaticElementCount(result.shape());
  if (in && out && *in != *out) {
    return OpError(op, "number of output elements (", *out,
                   ") doesn't match expected number of elements (", *in, ")");
  }
  RETURN_IF_ERROR(CheckShapeOperand(op, 1, result));
  if (std::optional<std::vector<int64_t>> values =
          ConstantInts(op.operand(1))) {
    std::optional<int64_t> count = StaticElementCount(*values);
    if (in && count && *in != *count) {
      return OpError(op,
                     "output_shape is incompatible with input type of "
                     "operation: input has ",
                     *in, " elements, but output_shape has ", *count);
    }
  }
  return CheckReshapeQuantization(op, operand, result);
}

Status VerifyTranspose(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyOrPerAxis));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyOrPerAxis));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  ASSIGN_OR_RETURN(std::vector<int64_t> permutation,
                   RequiredInts(op, "permutation"));
  if (static_cast<int64_t>(permutation.size()) != operand.rank()) {
    return OpError(op, "TransposeOp operand rank ", operand.rank(),
                   " does not match permutation size ", permutation.size());
  }
  // (C2)
  if (!IsPermutation(permutation)) {
    std::vector<int64_t> identity(permutation.size());
    for (size_t i = 0; i < identity.size(); ++i) identity[i] = i;
    return OpError(op, "attribute permutation must be a permutation of [",
                   JoinInts(identity), "] but got ", JoinInts(permutation));
  }
  // (C3)
  std::vector<int64_t> shape;
  std::vector<int64_t> bounds;
  std::vector<int64_t> operand_bounds = BoundsOf(operand);
  for (int64_t p : permutation) {
    shape.push_back(operand.dim(p));
    bounds.push_back(operand_bounds.empty() ? kDynamic : operand_bounds[p]);
  }
  RETURN_IF_ERROR(
      CheckInferredResults(op, {MakeTensor(shape, operand.element(), bounds)}));
  return CheckTransposeQuantization(op, operand, result, permutation);
}

Status VerifyReverse(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  ASSIGN_OR_RETURN(std::vector<int64_t> dimensions,
                   RequiredInts(op, "dimensions"));
  // (C2)
  if (HasDuplicates(dimensions)) {
    return OpError(op,
                   "dimensions should be unique. Got: ", JoinInts(dimensions));
  }
  // (C3)
  for (int64_t dim : dimensions) {
    if (dim < 0) {
      return OpError(op,
                     "all dimensions should be non-negative. Got "
                     "dimension: ",
                     dim, ".");
    }
    if (dim >= operand.rank()) {
      return OpError(op, "all dimensions should be between [0, ",
                     operand.rank(), "). Got dimension: ", dim, ".");
    }
  }
  // (C1)
  return CheckInferredResults(op, {operand});
}

Status VerifyConcatenate(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  ASSIGN_OR_RETURN(int64_t dimension, RequiredNonNegativeInt(op, "dimension"));
  const Type& first = op.operand(0)->type();
  for (int i = 1; i < op.num_operands(); ++i) {
    const Type& type = op.operand(i)->type();
    // (C2)
    if (type.rank() != first.rank()) {
      return OpError(op, "operands (0) and (", i, ") do not match rank");
    }
    // (C1)
    if (!ElementsCompatible(type.element(), first.element())) {
      return OpError(op,
                     "requires compatible element types for all operands, "
                     "but got ",
                     Quoted(first), " and ", Quoted(type));
    }
  }
  if (first.rank() == 0) {
    return OpError(op, "rank-0 values cannot be concatenated");
  }
  // (C4)
  if (dimension >= first.rank()) {
    return OpError(op, "dimension ", dimension,
                   " is out-of-bounds for input rank ", first.rank());
  }
  std::vector<int64_t> shape = first.shape();
  std::vector<int64_t> bounds(first.rank(), kDynamic);
  int64_t concat_size = 0;
  for (int i = 0; i < op.num_operands(); ++i) {
    const Type& type = op.operand(i)->type();
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (d == dimension) continue;
      // (C3)
      if (!DimsCompatible(type.dim(d), shape[d])) {
        return OpError(op, "shapes of operand (0) and (", i,
                       ") are not compatible at non-concat index ", d, ": (",
                       JoinInts(first.shape()), ") != (",
                       JoinInts(type.shape()), ")");
      }
      if (shape[d] == kDynamic) shape[d] = type.dim(d);
    }
    int64_t size = type.dim(dimension);
    if (size == kDynamic || concat_size == kDynamic ||
        size > std::numeric_limits<int64_t>::max() - concat_size) {
      concat_size = kDynamic;
    } else {
      concat_size += size;
    }
  }
  shape[dimension] = concat_size;
  // (C5), (C6)
  return CheckInferredResults(op, {MakeTensor(shape, first.element(), bounds)});
}

Status VerifyPad(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandScalarTensor(op, 1, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  const Type& padding_value = op.operand(1)->type();
  // (C1)
  if (!ElementsCompatible(operand.element(), padding_value.element())) {
    return OpError(op,
                   "requires compatible element types for operand and "
                   "padding value, but got ",
                   Quoted(operand), " and ", Quoted(padding_value));
  }
  std::vector<std::vector<int64_t>> paddings;
  for (const char* name :
       {"edge_padding_low", "edge_padding_high", "interior_padding"}) {
    ASSIGN_OR_RETURN(std::vector<int64_t> values, RequiredInts(op, name));
    // (C2)
    if (static_cast<int64_t>(values.size()) != operand.rank()) {
      return OpError(op, name, " length (", values.size(),
                     ") must match operand rank (", operand.rank(), ")");
    }
    paddings.push_back(std::move(values));
  }
  const std::vector<int64_t>& low = paddings[0];
  const std::vector<int64_t>& high = paddings[1];
  const std::vector<int64_t>& interior = paddings[2];
  std::vector<int64_t> shape;
  std::vector<int64_t> bounds;
  std::vector<int64_t> operand_bounds = BoundsOf(operand);
  // Sizes are computed in 128 bits so that absurd paddings cannot overflow.
  auto padded = [&](int64_t size, int64_t i) -> __int128 {
    __int128 out = static_cast<__int128>(low[i]) + high[i];
    if (size > 0) out += size + static_cast<__int128>(size - 1) * interior[i];
    return out;
  };
  for (int64_t i = 0; i < operand.rank(); ++i) {
    // (C3)
    if (interior[i] < 0) {
      return OpError(op, "Interior padding cannot be negative: ", interior[i]);
    }
    int64_t size = operand.dim(i);
    int64_t bound = operand_bounds.empty() ? kDynamic : operand_bounds[i];
    if (size == kDynamic) {
      shape.push_back(kDynamic);
      __int128 padded_bound = bound == kDynamic ? -1 : padded(bound, i);
      bounds.push_back(padded_bound >= 0 &&
                               padded_bound <=
                                   std::numeric_limits<int64_t>::max()
                           ? static_cast<int64_t>(padded_bound)
                           : kDynamic);
      continue;
    }
    __int128 out = padded(size, i);
    if (out < 0) {
      return OpError(op, "Padding result in negative size for dimension ", i);
    }
    if (out > std::numeric_limits<int64_t>::max()) {
      return OpError(op, "Padding result too large for dimension ", i);
    }
    shape.push_back(static_cast<int64_t>(out));
    bounds.push_back(kDynamic);
  }
  // (C4)
  return CheckInferredResults(op,
                              {MakeTensor(shape, operand.element(), bounds)});
}

Status VerifyDynamicPad(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 5));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandScalarTensor(op, 1, kAnyElement));
  for (int i = 2; i < 5; ++i) {
    RETURN_IF_ERROR(CheckOperand1DTensor(op, i, kDimensionValue, true));
  }
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  if (!ElementsCompatible(operand.element(), op.operand(1)->type().element()) ||
      !ElementsCompatible(operand.element(), result.element())) {
    return OpError(op,
                   "requires compatible element types for operand, "
                   "padding value and result");
  }
  if (result.rank() != operand.rank()) {
    return OpError(op, "operand and result must have the same rank, but got ",
                   Quoted(operand), " and ", Quoted(result));
  }
  for (int i = 2; i < 5; ++i) {
    int64_t size = op.operand(i)->type().dim(0);
    if (size != operand.rank()) {
      return OpError(op, "padding operands size (", size,
                     ") must match operand rank (", operand.rank(), ")");
    }
  }
  std::optional<std::vector<int64_t>> low = ConstantInts(op.operand(2));
  std::optional<std::vector<int64_t>> high = ConstantInts(op.operand(3));
  std::optional<std::vector<int64_t>> interior = ConstantInts(op.operand(4));
  if (interior) {
    for (int64_t value : *interior) {
      if (value < 0) {
        return OpError(op, "interior_padding must be non-negative, but got ",
                       value);
      }
    }
  }
  if (!low || !high || !interior) return OkStatus();
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t size = operand.dim(i);
    if (size == kDynamic || result.dim(i) == kDynamic) continue;
    __int128 expected = static_cast<__int128>((*low)[i]) + (*high)[i];
    if (size > 0) {
      expected += size + static_cast<__int128>(size - 1) * (*interior)[i];
    }
    if (expected != result.dim(i)) {
      return OpError(op, "expected output dimension at index ", i, " to equal ",
                     static_cast<int64_t>(expected), ", but got ",
                     result.dim(i));
    }
  }
  return OkStatus();
}

Status CheckDimensionInRange(const Operation& op, const Type& operand,
                             int64_t dimension) {
  if (dimension >= operand.rank()) {
    return OpError(op, "requires dimension attribute in range [0, ",
                   operand.rank(), "); found (", dimension, ")");
  }
  return OkStatus();
}

Status VerifyGetDimensionSize(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyOrPerAxis));
  const Type& result = op.result(0)->type();
  if (!IsTensor(result) || result.rank() != 0 ||
      !IsScalarElement(result.element(), ElementType::kI32)) {
    return OpError(op,
                   "result #0 must be 0D tensor of 32-bit signless "
                   "integer values, but got ",
                   Quoted(result));
  }
  ASSIGN_OR_RETURN(int64_t dimension, RequiredNonNegativeInt(op, "dimension"));
  return CheckDimensionInRange(op, op.operand(0)->type(), dimension);
}

Status VerifySetDimensionSize(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  const Type& size = op.operand(1)->type();
  if (!IsTensor(size) || size.rank() != 0) {
    return OpError(op, "size operand should be of rank-0, but got ",
                   Quoted(size));
  }
  if (!IsScalarElement(size.element(), ElementType::kI32)) {
    return OpError(op,
                   "operand #1 must be 0D tensor of 32-bit signless "
                   "integer values, but got ",
                   Quoted(size));
  }
  ASSIGN_OR_RETURN(int64_t dimension, RequiredNonNegativeInt(op, "dimension"));
  RETURN_IF_ERROR(CheckDimensionInRange(op, operand, dimension));
  // The resized dimension takes the constant size when known; otherwise it
  // is dynamic, bounded by the operand's static size.
  std::vector<int64_t> shape = operand.shape();
  std::vector<int64_t> bounds = BoundsOf(operand);
  if (bounds.empty()) bounds.assign(operand.rank(), kDynamic);
  std::optional<std::vector<int64_t>> value = ConstantInts(op.operand(1));
  if (value && value->size() == 1) {
    shape[dimension] = (*value)[0];
    bounds[dimension] = kDynamic;
  } else {
    if (shape[dimension] != kDynamic) bounds[dimension] = shape[dimension];
    shape[dimension] = kDynamic;
  }
  return CheckInferredResults(op,
                              {MakeTensor(shape, operand.element(), bounds)});
}

Status VerifyBroadcast(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                   RequiredInts(op, "broadcast_sizes"));
  for (int64_t size : sizes) {
    if (size < 0) {
      return OpError(op, "Broadcast with negative dimension size ", size);
    }
  }
  std::vector<int64_t> shape = sizes;
  shape.insert(shape.end(), operand.shape().begin(), operand.shape().end());
  std::vector<int64_t> bounds(sizes.size(), kDynamic);
  std::vector<int64_t> operand_bounds = BoundsOf(operand);
  if (operand_bounds.empty()) operand_bounds.assign(operand.rank(), kDynamic);
  bounds.insert(bounds.end(), operand_bounds.begin(), operand_bounds.end());
  return CheckInferredResults(op,
                              {MakeTensor(shape, operand.element(), bounds)});
}

Status VerifyTorchIndexSelect(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandTensor(op, 1, kInt));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  const Type& index = op.operand(1)->type();
  ASSIGN_OR_RETURN(int64_t dim, RequiredInt(op, "dim"));
  ASSIGN_OR_RETURN(int64_t batch_dims, RequiredInt(op, "batch_dims"));
  if (dim < 0) dim += operand.rank();
  if (batch_dims < 0) batch_dims += index.rank();
  if (dim < 0 || dim >= operand.rank()) {
    return OpError(op, "dim ", dim, " is out of bounds for operand rank ",
                   operand.rank());
  }
  if (batch_dims < 0 || batch_dims > dim || batch_dims > index.rank()) {
    return OpError(op, "batch_dims ", batch_dims,
                   " must be in [0, min(dim, rank(index))]");
  }
  // result = operand[:dim] ++ index[batch_dims:] ++ operand[dim + 1:]
  std::vector<int64_t> shape(operand.shape().begin(),
                             operand.shape().begin() + dim);
  shape.insert(shape.end(), index.shape().begin() + batch_dims,
               index.shape().end());
  shape.insert(shape.end(), operand.shape().begin() + dim + 1,
               operand.shape().end());
  return CheckInferredResults(op, {MakeTensor(shape, operand.element())});
}

}  // namespace

void RegisterShapeVerifiers(VerifierTable& table) {
  table[static_cast<size_t>(OpCode::kBroadcastInDim)] = VerifyBroadcastInDim;
  table[static_cast<size_t>(OpCode::kDynamicBroadcastInDim)] =
      VerifyDynamicBroadcastInDim;
  table[static_cast<size_t>(OpCode::kReshape)] = VerifyReshape;
  table[static_cast<size_t>(OpCode::kDynamicReshape)] = VerifyDynamicReshape;
  table[static_cast<size_t>(OpCode::kTranspose)] = VerifyTranspose;
  table[static_cast<size_t>(OpCode::kReverse)] = VerifyReverse;
  table[static_cast<size_t>(OpCode::kConcatenate)] = VerifyConcatenate;
  table[static_cast<size_t>(OpCode::kPad)] = VerifyPad;
  table[static_cast<size_t>(OpCode::kDynamicPad)] = VerifyDynamicPad;
  table[static_cast<size_t>(OpCode::kGetDimensionSize)] =
      VerifyGetDimensionSize;
  table[static_cast<size_t>(OpCode::kSetDimensionSize)] =
      VerifySetDimensionSize;
  table[static_cast<size_t>(OpCode::kBroadcast)] = VerifyBroadcast;
  table[static_cast<size_t>(OpCode::kTorchIndexSelect)] =
      VerifyTorchIndexSelect;
}

}  // namespace kiln::ir::verifier
