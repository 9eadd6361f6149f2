// Conversions and value producers: convert, bitcast_convert,
// reduce_precision, uniform_quantize/dequantize, constant, iota and
// dynamic_iota.
#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

Status CheckSameShape(const Operation& op, const Type& a, const Type& b) {
  if (ShapesCompatible(a, b)) return OkStatus();
  return OpError(op,
                 "requires the same shape for all operands and results, "
                 "but got ",
                 Quoted(a), " and ", Quoted(b));
}

Status VerifyConvert(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kNonQuantized));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kNonQuantized));
  return CheckSameShape(op, op.operand(0)->type(), op.result(0)->type());
}

// Bit width of one element, complex counting both parts, quantized types
// their storage.
int WidthOf(const Type& element) { return ElementBitWidth(element); }

Status VerifyBitcastConvert(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyOrPerAxis));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyOrPerAxis));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  // (C2)
  if (IsComplexElement(operand.element()) !=
      IsComplexElement(result.element())) {
    return OpError(op,
                   "cannot convert between real and complex types, but "
                   "got: ",
                   Quoted(operand), " and ", Quoted(result));
  }
  int operand_width = WidthOf(operand.element());
  int result_width = WidthOf(result.element());
  const Type& smaller = operand_width < result_width ? operand : result;
  const Type& larger = operand_width < result_width ? result : operand;
  int small_width = std::min(operand_width, result_width);
  int large_width = std::max(operand_width, result_width);
  // (C1)
  if (small_width != large_width) {
    if (smaller.rank() != larger.rank() + 1) {
      return OpError(op, "rank of smaller element type (", smaller.rank(),
                     ") should be 1 more than rank of larger element type (",
                     larger.rank(), "), but ", smaller.rank(),
                     " != ", larger.rank(), " + 1.");
    }
    int64_t last = smaller.shape().back();
    if (last != kDynamic &&
        (last > large_width || last * small_width != large_width)) {
      return OpError(op,
                     "requires compatible bit widths. Got: ", Quoted(operand),
                     " and ", Quoted(result), ", but ", small_width, " * ",
                     last, " != ", large_width, ".");
    }
  }
  bool shapes_match =
      small_width != large_width || smaller.rank() == larger.rank();
  for (int64_t i = 0; shapes_match && i < larger.rank(); ++i) {
    shapes_match = DimsCompatible(smaller.dim(i), larger.dim(i));
  }
  if (!shapes_match) {
    return OpError(op,
                   "operand and result shapes must match except for the "
                   "innermost dimension of the shape with the smaller "
                   "element type. Got: ",
                   Quoted(operand), " and ", Quoted(result), ".");
  }
  return OkStatus();
}

Status VerifyReducePrecision(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kFloat | kQuantized));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kFloat | kQuantized));
  // (C2), (C3)
  RETURN_IF_ERROR(RequiredPositiveInt(op, "exponent_bits", 32));
  RETURN_IF_ERROR(RequiredNonNegativeInt(op, "mantissa_bits", 32));
  const Type& operand = op.operand(0)->type();
  // (C1)
  return CheckInferredResults(op, {operand});
}

Status VerifyUniformQuantize(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(
      CheckOperandTensor(op, 0, kFloat | kQuantized | kPerAxisQuantized));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kQuantized | kPerAxisQuantized));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  RETURN_IF_ERROR(CheckSameShape(op, operand, result));
  // (C1)
  Type expected = ExpressedOrSelf(operand.element());
  Type got = ExpressedOrSelf(result.element());
  if (expected != got) {
    return OpError(op, "Expressed type of result expected to be ",
                   Quoted(expected), ", but got ", Quoted(got));
  }
  return OkStatus();
}

Status VerifyUniformDequantize(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kQuantized | kPerAxisQuantized));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kFloat));
  const Type& operand = op.operand(0)->type();
  // (C1), (C2)
  return CheckInferredResults(
      op, {MakeTensor(operand.shape(), ExpressedOrSelf(operand.element()),
                      BoundsOf(operand))});
}

Status VerifyConstant(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 0));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  Attribute value = op.GetAttr("value");
  if (!value) return OpError(op, "requires attribute 'value'");
  if (!value.is(AttrKind::kDenseElements) &&
      !value.is(AttrKind::kDenseResource)) {
    return OpError(op,
                   "attribute 'value' must be a dense elements attribute, "
                   "but got ",
                   value.ToString());
  }
  Type value_type = value.type();
  if (!IsTensor(value_type) || !value_type.HasStaticShape()) {
    return OpError(op,
                   "elements literal type must have static shape, but "
                   "got ",
                   Quoted(value_type));
  }
  const Type& result = op.result(0)->type();
  if (!IsTensorOf(result, kAnyOrPerAxis) || !result.HasStaticShape()) {
    return OpError(op, "result #0 must be statically shaped tensor, but got ",
                   Quoted(result));
  }
  if (value_type == result) return OkStatus();
  // A quantized constant holds its storage values.
  if (IsQuantizedElement(result.element()) &&
      value_type.shape() == result.shape() &&
      value_type.element() == StorageOrSelf(result.element())) {
    return OkStatus();
  }
  if (value_type.shape() == result.shape() &&
      value_type.element() == result.element() && !result.encoding()) {
    return OkStatus();
  }
  return OpError(op, "inferred type(s) ", Quoted(value_type),
                 " are incompatible with return type(s) of operation ",
                 Quoted(result));
}

Status CheckIotaDimension(const Operation& op, const Type& result) {
  ASSIGN_OR_RETURN(int64_t dimension,
                   RequiredNonNegativeInt(op, "iota_dimension"));
  if (result.rank() == 0) return OpError(op, "does not support scalars.");
  // (C1)
  if (dimension >= result.rank()) {
    return OpError(op, "iota dimension cannot go beyond the output rank; got ",
                   dimension, " for ", Quoted(result));
  }
  return OkStatus();
}

Status VerifyIota(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 0));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(
      CheckResultTensor(op, 0, kInt | kFloat | kComplex | kQuantized));
  const Type& result = op.result(0)->type();
  if (!result.HasStaticShape()) {
    return OpError(op, "result #0 must be statically shaped, but got ",
                   Quoted(result));
  }
  return CheckIotaDimension(op, result);
}

Status VerifyDynamicIota(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperand1DTensor(op, 0, kDimensionValue, false));
  RETURN_IF_ERROR(
      CheckResultTensor(op, 0, kInt | kFloat | kComplex | kQuantized));
  const Type& result = op.result(0)->type();
  RETURN_IF_ERROR(CheckIotaDimension(op, result));
  return CheckShapeOperand(op, 0, result);
}

}  // namespace

void RegisterConversionVerifiers(VerifierTable& table) {
  table[static_cast<size_t>(OpCode::kConvert)] = VerifyConvert;
  table[static_cast<size_t>(OpCode::kBitcastConvert)] = VerifyBitcastConvert;
  table[static_cast<size_t>(OpCode::kReducePrecision)] = VerifyReducePrecision;
  table[static_cast<size_t>(OpCode::kUniformQuantize)] = VerifyUniformQuantize;
  table[static_cast<size_t>(OpCode::kUniformDequantize)] =
      VerifyUniformDequantize;
  table[static_cast<size_t>(OpCode::kConstant)] = VerifyConstant;
  table[static_cast<size_t>(OpCode::kIota)] = VerifyIota;
  table[static_cast<size_t>(OpCode::kDynamicIota)] = VerifyDynamicIota;
}

}  // namespace kiln::ir::verifier
