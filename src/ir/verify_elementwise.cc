// Elementwise ops: unary and binary math, logic and comparisons, select,
// clamp, complex/real/imag. One table row per op gives the element types it
// accepts and how its result type follows from its operands.
#include "ir/elementwise_traits.h"
#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

// How the result type of an elementwise op is inferred from its operands.
enum class ResultRule : uint8_t {
  kSameAsOperands,  // compatible operand and result types (most ops)
  kComponent,  // complex<T> -> T, anything else unchanged (abs, real, imag)
  kPredicate,  // i1 of the operands' shape (is_finite)
};

struct ElementwiseSpec {
  OpCode code;
  int arity;
  uint32_t operand_classes;
  uint32_t result_classes;
  ResultRule rule;
};

constexpr uint32_t kFpComplexQuant = kFloat | kComplex | kQuantized;
constexpr uint32_t kFpQuant = kFloat | kQuantized;
constexpr uint32_t kNumeric = kInt | kFloat | kComplex | kQuantized;
constexpr uint32_t kSignedNumeric = kSignedInt | kFloat | kComplex | kQuantized;

// Element types per the StableHLO spec's "Inputs" tables, one row per op of
// elementwise_traits.h.
#define KILN_SPEC_ROW(x, op, kernel, arity, cost, operands, results, rule) \
  {OpCode::k##op, arity, operands, results, ResultRule::rule},
#define KILN_NO_ROW(x, op, kernel, arity, cost)
constexpr ElementwiseSpec kElementwiseSpecs[] = {
    KILN_ELEMENTWISE_OPS(KILN_SPEC_ROW, KILN_NO_ROW, KILN_NO_ROW, ~)};
#undef KILN_SPEC_ROW
#undef KILN_NO_ROW

const ElementwiseSpec* FindSpec(OpCode code) {
  for (const ElementwiseSpec& spec : kElementwiseSpecs) {
    if (spec.code == code) return &spec;
  }
  return nullptr;
}

// Same rank and equal sizes where both are known (bounds are left to the
// inferred-type check).
bool DimsAgree(const Type& a, const Type& b) {
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!DimsCompatible(a.dim(i), b.dim(i))) return false;
  }
  return true;
}

// All operand and result shapes agree where known.
Status CheckSameShapes(const Operation& op, std::string_view message) {
  std::vector<Type> types = op.result_types();
  for (const Value* operand : op.operands()) types.push_back(operand->type());
  for (size_t i = 1; i < types.size(); ++i) {
    if (!DimsAgree(types[0], types[i])) {
      return OpError(op, message, ": ", QuotedList(types));
    }
  }
  return OkStatus();
}

Type ComponentType(const Type& element) {
  if (IsComplexElement(element)) {
    return Type::Element(ComplexComponentType(element.element_type()));
  }
  return element;
}

// The result_accuracy attribute of transcendental ops: tolerances must be
// zero unless the mode is TOLERANCE, and never negative.
Status CheckResultAccuracy(const Operation& op) {
  Attribute attr = op.GetAttr("result_accuracy");
  if (!attr) return OkStatus();
  if (!attr.is(AttrKind::kResultAccuracy)) {
    return OpError(op,
                   "attribute 'result_accuracy' must be a "
                   "#stablehlo.result_accuracy attribute, but got ",
                   attr.ToString());
  }
  const ResultAccuracy& accuracy = attr.result_accuracy();
  std::string_view mode =
      EnumValueName(EnumKind::kResultAccuracyMode, accuracy.mode);
  if (mode.empty()) {
    return OpError(op, "unsupported result accuracy mode ", accuracy.mode);
  }
  if (mode != "TOLERANCE" &&
      (accuracy.atol != 0 || accuracy.rtol != 0 || accuracy.ulps != 0)) {
    return OpError(op, "Invalid tolerances for ResultAccuracyAttr with mode ",
                   mode, ", must be all zero.");
  }
  if (accuracy.atol < 0 || accuracy.rtol < 0 || accuracy.ulps < 0) {
    return OpError(op, "Negative tolerance for ResultAccuracyAttr: atol ",
                   accuracy.atol, ", rtol ", accuracy.rtol, ", ulps ",
                   accuracy.ulps);
  }
  return OkStatus();
}

// stablehlo.add's quantization rules (add_c2 to add_c7): per-axis types are
// allowed as long as the result keeps the operands' quantization dimension.
Status CheckAddQuantization(const Operation& op) {
  Type lhs = op.operand(0)->type().element();
  Type rhs = op.operand(1)->type().element();
  Type result = op.result(0)->type().element();
  int quantized = IsQuantizedElement(lhs) + IsQuantizedElement(rhs) +
                  IsQuantizedElement(result);
  if (quantized == 0) return OkStatus();
  if (quantized != 3) {
    return OpError(op,
                   "expects all operands and results to be either "
                   "quantized or non-quantized");
  }
  const QuantizedType& ql = lhs.quantized();
  const QuantizedType& qr = rhs.quantized();
  const QuantizedType& qo = result.quantized();
  if (ql.storage_type != qo.storage_type ||
      qr.storage_type != qo.storage_type) {
    return OpError(op,
                   "mismatched operands and result quantization storage "
                   "types");
  }
  if (ql.expressed_type != qo.expressed_type ||
      qr.expressed_type != qo.expressed_type) {
    return OpError(op,
                   "mismatched operands and result quantization expressed "
                   "types");
  }
  if ((ql.axis || qr.axis) && !qo.axis) {
    return OpError(op, "result is not per_axis quantized but lhs or rhs are");
  }
  if (ql.axis && ql.axis != qo.axis) {
    return OpError(op, "quantization_dimension of lhs and result are not same");
  }
  if (qr.axis && qr.axis != qo.axis) {
    return OpError(op, "quantization_dimension of rhs and result are not same");
  }
  return OkStatus();
}

Status VerifyElementwise(const Operation& op) {
  const ElementwiseSpec* spec = FindSpec(op.code());
  RETURN_IF_ERROR(ExpectOperands(op, spec->arity));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, spec->operand_classes));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, spec->result_classes));
  RETURN_IF_ERROR(CheckResultAccuracy(op));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  switch (spec->rule) {
    case ResultRule::kSameAsOperands: {
      RETURN_IF_ERROR(CheckSameShapes(
          op, "requires the same shape for all operands and results"));
      if (op.is(OpCode::kAdd)) RETURN_IF_ERROR(CheckAddQuantization(op));
      std::vector<Type> operand_types;
      for (const Value* value : op.operands()) {
        operand_types.push_back(value->type());
        if (!ElementsCompatible(value->type().element(), result.element())) {
          return OpError(op,
                         "requires the same element type for all operands "
                         "and results, but got ",
                         Quoted(value->type()), " and ", Quoted(result));
        }
      }
      return CheckInferredResults(op, {MostSpecific(operand_types)});
    }
    case ResultRule::kComponent: {
      RETURN_IF_ERROR(CheckSameShapes(
          op, "requires the same shape for all operands and results"));
      Type inferred = MakeTensor(
          operand.shape(), ComponentType(operand.element()), BoundsOf(operand));
      return CheckInferredResults(op, {inferred});
    }
    case ResultRule::kPredicate:
      return CheckSameShapes(op,
                             "all non-scalar operands/results must have the "
                             "same shape and base type");
  }
  return OkStatus();
}

Status VerifyCompare(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kPred));
  RETURN_IF_ERROR(
      RequiredEnum(op, "comparison_direction", EnumKind::kComparisonDirection));
  RETURN_IF_ERROR(OptionalEnum(op, "compare_type", EnumKind::kComparisonType));
  const Type& lhs = op.operand(0)->type();
  const Type& rhs = op.operand(1)->type();
  if (!ElementsCompatible(lhs.element(), rhs.element())) {
    return OpError(op,
                   "requires compatible element types for all operands, "
                   "but got ",
                   Quoted(lhs), " and ", Quoted(rhs));
  }
  RETURN_IF_ERROR(CheckSameShapes(
      op, "requires the same shape for all operands and results"));
  Type shape = MostSpecific({lhs, rhs});
  return CheckInferredResults(
      op, {MakeTensor(shape.shape(), Type::Element(ElementType::kI1),
                      BoundsOf(shape))});
}

Status VerifySelect(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 3));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kPred));
  RETURN_IF_ERROR(CheckOperandTensor(op, 1, kAnyElement));
  RETURN_IF_ERROR(CheckOperandTensor(op, 2, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& pred = op.operand(0)->type();
  const Type& on_true = op.operand(1)->type();
  const Type& on_false = op.operand(2)->type();
  // (C2)
  if (!ShapesCompatible(on_true, on_false) ||
      on_true.element() != on_false.element()) {
    return OpError(op,
                   "requires compatible types for non-predicate operands, "
                   "but got ",
                   Quoted(on_true), " and ", Quoted(on_false));
  }
  // (C1)
  if (pred.rank() != 0 && !ShapesCompatible(pred, on_true)) {
    return OpError(op, "requires the same shape for all operands, but got ",
                   Quoted(pred), " and ", Quoted(on_true));
  }
  return CheckInferredResults(op, {MostSpecific({on_true, on_false})});
}

Status VerifyClamp(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 3));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& min = op.operand(0)->type();
  const Type& operand = op.operand(1)->type();
  const Type& max = op.operand(2)->type();
  // (C1), (C2)
  for (const auto& [name, bound] :
       {std::pair<const char*, const Type&>{"min", min}, {"max", max}}) {
    if (bound.rank() != 0 && !ShapesCompatible(bound, operand)) {
      return OpError(op, name, " shape [", JoinInts(bound.shape()),
                     "] is not scalar and is not compatible to operand shape [",
                     JoinInts(operand.shape()), "]");
    }
  }
  // (C3)
  for (const Type& type : {min, max, op.result(0)->type()}) {
    if (!ElementsCompatible(type.element(), operand.element())) {
      return OpError(op,
                     "requires compatible element types for all operands "
                     "and results, but got ",
                     Quoted(type), " and ", Quoted(operand));
    }
  }
  // (C4)
  return CheckInferredResults(op, {operand});
}

Status VerifyComplex(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  for (int i = 0; i < 2; ++i) {
    Type element = ElementOf(op.operand(i)->type());
    if (!IsScalarElement(element, ElementType::kF32) &&
        !IsScalarElement(element, ElementType::kF64)) {
      return OpError(op, "operand #", i,
                     " must be ranked tensor of 32/64-bit float values, but "
                     "got ",
                     Quoted(op.operand(i)->type()));
    }
  }
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kComplex));
  const Type& lhs = op.operand(0)->type();
  const Type& rhs = op.operand(1)->type();
  // (C1)
  if (lhs.element() != rhs.element()) {
    return OpError(op,
                   "requires the same element type for all operands, but "
                   "got ",
                   Quoted(lhs), " and ", Quoted(rhs));
  }
  RETURN_IF_ERROR(CheckSameShapes(
      op, "requires the same shape for all operands and results"));
  // (C2), (C3)
  ElementType complex = lhs.element().element_type() == ElementType::kF32
                            ? ElementType::kC64
                            : ElementType::kC128;
  Type shape = MostSpecific({lhs, rhs});
  return CheckInferredResults(
      op, {MakeTensor(shape.shape(), Type::Element(complex), BoundsOf(shape))});
}

}  // namespace

void RegisterElementwiseVerifiers(VerifierTable& table) {
  for (const ElementwiseSpec& spec : kElementwiseSpecs) {
    table[static_cast<size_t>(spec.code)] = VerifyElementwise;
  }
  table[static_cast<size_t>(OpCode::kCompare)] = VerifyCompare;
  table[static_cast<size_t>(OpCode::kSelect)] = VerifySelect;
  table[static_cast<size_t>(OpCode::kClamp)] = VerifyClamp;
  table[static_cast<size_t>(OpCode::kComplex)] = VerifyComplex;
}

}  // namespace kiln::ir::verifier
