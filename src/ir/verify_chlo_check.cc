// CHLO ops seen in the corpus, the `check` dialect of the StableHLO test
// suites, and the few other dialects' ops the corpus writes in pretty form.
// CHLO is checked for what its ops promise (operand counts, element kinds,
// broadcast-compatible shapes), not to MHLO's full strictness.
#include <algorithm>

#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

// Unary CHLO ops: same shape; the result keeps the element type, or is i1
// for the is_* predicates.
Status VerifyChloUnary(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  uint32_t classes = op.is(OpCode::kChloConj) ? kFloatOrComplex
                                              : kFloat | kComplex | kQuantized;
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, classes));
  const Type& operand = op.operand(0)->type();
  bool predicate = op.is(OpCode::kChloIsInf) || op.is(OpCode::kChloIsNegInf) ||
                   op.is(OpCode::kChloIsPosInf);
  Type element =
      predicate ? Type::Element(ElementType::kI1) : operand.element();
  return CheckInferredResults(
      op, {MakeTensor(operand.shape(), element, BoundsOf(operand))});
}

// Binary CHLO ops broadcast their operands numpy-style (trailing dims
// aligned, size 1 stretches) unless broadcast_dimensions says otherwise.
Status VerifyChloBinary(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& lhs = op.operand(0)->type();
  const Type& rhs = op.operand(1)->type();
  if (!ElementsCompatible(lhs.element(), rhs.element())) {
    return OpError(op,
                   "requires compatible element types for all operands, "
                   "but got ",
                   Quoted(lhs), " and ", Quoted(rhs));
  }
  if (op.HasAttr("broadcast_dimensions")) return OkStatus();
  int64_t rank = std::max(lhs.rank(), rhs.rank());
  std::vector<int64_t> shape(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - lhs.rank() ? 1 : lhs.dim(i - (rank - lhs.rank()));
    int64_t b = i < rank - rhs.rank() ? 1 : rhs.dim(i - (rank - rhs.rank()));
    if (a == 1) {
      shape[i] = b;
    } else if (b == 1) {
      shape[i] = a;
    } else if (a == kDynamic || b == kDynamic) {
      shape[i] = a == kDynamic ? b : a;
    } else if (a == b) {
      shape[i] = a;
    } else {
      return OpError(op, "operands of shapes ", Quoted(lhs), " and ",
                     Quoted(rhs), " are not broadcast compatible");
    }
  }
  const Type& result = op.result(0)->type();
  if (result.rank() != rank) {
    return OpError(op, "result rank ", result.rank(),
                   " differs from the broadcast rank ", rank);
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (!DimsCompatible(shape[i], result.dim(i))) {
      return OpError(op, "result type ", Quoted(result),
                     " is incompatible with the broadcast shape [",
                     JoinInts(shape), "]");
    }
  }
  return OkStatus();
}

Status VerifyChloTopK(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 2));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kPred | kInt | kFloat));
  ASSIGN_OR_RETURN(int64_t k, RequiredNonNegativeInt(op, "k"));
  const Type& operand = op.operand(0)->type();
  if (operand.rank() < 1) {
    return OpError(op, "operand's rank must be at least 1");
  }
  int64_t last = operand.shape().back();
  if (last != kDynamic && last < k) {
    return OpError(op, "operand's last dimension must be at least ", k);
  }
  std::vector<int64_t> shape = operand.shape();
  shape.back() = k;
  return CheckInferredResults(
      op, {MakeTensor(shape, operand.element()),
           MakeTensor(shape, Type::Element(ElementType::kI32))});
}

// CHLO ops with structure of their own (ragged_dot, scan): operands and
// results are tensors.
Status VerifyChloTensors(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinResults(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyOrPerAxis));
  return CheckAllResultTensors(op, kAnyOrPerAxis);
}

// check.expect_* ops compare a value with another or with a constant.
Status VerifyCheckCompare(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 0));
  const Type& actual = op.operand(0)->type();
  const Type& expected = op.operand(1)->type();
  if (IsTensor(actual) && IsTensor(expected) &&
      !ShapesCompatible(actual, expected)) {
    return OpError(op, "compares values of different shapes: ", Quoted(actual),
                   " and ", Quoted(expected));
  }
  return OkStatus();
}

Status VerifyCheckCompareConst(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 0));
  Attribute value = op.GetAttr("value");
  if (!value.is(AttrKind::kDenseElements) &&
      !value.is(AttrKind::kDenseResource)) {
    return OpError(op, "requires a dense elements attribute 'value'");
  }
  const Type& actual = op.operand(0)->type();
  if (IsTensor(actual) && IsTensor(value.type()) &&
      !ShapesCompatible(actual, value.type())) {
    return OpError(op, "compares ", Quoted(actual), " with a constant of type ",
                   Quoted(value.type()));
  }
  return OkStatus();
}

Status VerifyArithConstant(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 0));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  Attribute value = op.GetAttr("value");
  if (!value) return OpError(op, "requires attribute 'value'");
  Type type = value.type();
  if (type && type != op.result(0)->type()) {
    return OpError(op, "value of type ", Quoted(type),
                   " does not match the result type ",
                   Quoted(op.result(0)->type()));
  }
  return OkStatus();
}

Status VerifyTensorCast(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  const Type& in = op.operand(0)->type();
  const Type& out = op.result(0)->type();
  if (!IsTensor(in) || !IsTensor(out) || in.element() != out.element() ||
      (in.rank() == out.rank() && !ShapesCompatible(in, out))) {
    return OpError(op, "operand type ", Quoted(in), " and result type ",
                   Quoted(out), " are cast incompatible");
  }
  return OkStatus();
}

Status VerifyAnything(const Operation& op) { return OkStatus(); }

}  // namespace

void RegisterChloCheckVerifiers(VerifierTable& table) {
  for (OpCode code :
       {OpCode::kChloAcos,      OpCode::kChloAcosh,  OpCode::kChloAsin,
        OpCode::kChloAsinh,     OpCode::kChloAtan,   OpCode::kChloAtanh,
        OpCode::kChloBesselI1e, OpCode::kChloConj,   OpCode::kChloCosh,
        OpCode::kChloDigamma,   OpCode::kChloErf,    OpCode::kChloErfInv,
        OpCode::kChloErfc,      OpCode::kChloIsInf,  OpCode::kChloIsNegInf,
        OpCode::kChloIsPosInf,  OpCode::kChloLgamma, OpCode::kChloSinh,
        OpCode::kChloSquare,    OpCode::kChloTan}) {
    table[static_cast<size_t>(code)] = VerifyChloUnary;
  }
  for (OpCode code : {OpCode::kChloMulhi, OpCode::kChloNextAfter,
                      OpCode::kChloPolygamma, OpCode::kChloZeta}) {
    table[static_cast<size_t>(code)] = VerifyChloBinary;
  }
  table[static_cast<size_t>(OpCode::kChloTopK)] = VerifyChloTopK;
  table[static_cast<size_t>(OpCode::kChloRaggedDot)] = VerifyChloTensors;
  table[static_cast<size_t>(OpCode::kChloScan)] = VerifyChloTensors;
  for (OpCode code : {OpCode::kCheckExpectEq, OpCode::kCheckExpectAlmostEq,
                      OpCode::kCheckExpectClose}) {
    table[static_cast<size_t>(code)] = VerifyCheckCompare;
  }
  for (OpCode code :
       {OpCode::kCheckExpectEqConst, OpCode::kCheckExpectAlmostEqConst}) {
    table[static_cast<size_t>(code)] = VerifyCheckCompareConst;
  }
  table[static_cast<size_t>(OpCode::kCheckExpectSerializedEq)] = VerifyAnything;
  // Other dialects' ops are looked up by name: the op table may or may not
  // know them.
  auto by_name = [&](std::string_view name, OpVerifyFn verify) {
    OpCode code = LookupOpCode(name);
    if (code != OpCode::kUnknown) table[static_cast<size_t>(code)] = verify;
  };
  by_name("arith.constant", VerifyArithConstant);
  by_name("tensor.cast", VerifyTensorCast);
  by_name("interpreter.probe", VerifyAnything);
  by_name("interpreter.print", VerifyAnything);
}

}  // namespace kiln::ir::verifier
