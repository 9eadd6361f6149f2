// Linear algebra, normalization, FFT and random numbers: cholesky,
// triangular_solve, batch_norm_{grad,inference,training}, fft, rng and
// rng_bit_generator.
#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

constexpr uint32_t kFpComplexQuant = kFloat | kComplex | kQuantized;

Status VerifyCholesky(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kFpComplexQuant));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kFpComplexQuant));
  RETURN_IF_ERROR(OptionalBool(op, "lower"));
  const Type& a = op.operand(0)->type();
  // (C2)
  if (a.rank() < 2) {
    return OpError(op, "argument 'a' must have rank >= 2, got shape ",
                   JoinInts(a.shape()));
  }
  if (!DimsCompatible(a.dim(a.rank() - 1), a.dim(a.rank() - 2))) {
    return OpError(op,
                   "minor dimensions of 'a' must have equal size, got "
                   "shape ",
                   JoinInts(a.shape()));
  }
  // (C1)
  return CheckInferredResults(op, {a});
}

Status VerifyTriangularSolve(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kFpComplexQuant));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kFpComplexQuant));
  const Type& a = op.operand(0)->type();
  const Type& b = op.operand(1)->type();
  ASSIGN_OR_RETURN(bool left_side, OptionalBool(op, "left_side"));
  RETURN_IF_ERROR(OptionalBool(op, "lower"));
  RETURN_IF_ERROR(OptionalBool(op, "unit_diagonal"));
  ASSIGN_OR_RETURN(std::optional<int64_t> transpose,
                   OptionalEnum(op, "transpose_a", EnumKind::kTranspose));
  if (transpose && *transpose == kTransposeInvalid) {
    return OpError(op, "Invalid transpose option value for triangular solve");
  }
  // (C1)
  if (a.rank() < 2) {
    return OpError(op, "operand 'a' must have rank >= 2, but got ", Quoted(a));
  }
  if (!DimsCompatible(a.dim(a.rank() - 1), a.dim(a.rank() - 2))) {
    return OpError(op,
                   "two minor dimensions of operand 'a' must be "
                   "compatible, but got ",
                   Quoted(a));
  }
  // (C2)
  if (a.rank() != b.rank()) {
    return OpError(op, "operands must have equal rank, but got ", Quoted(a),
                   " and ", Quoted(b));
  }
  // (C3)
  int64_t shared = left_side ? b.dim(b.rank() - 2) : b.dim(b.rank() - 1);
  if (!DimsCompatible(a.dim(a.rank() - 1), shared)) {
    return OpError(op,
                   "shared dimension of operands 'a' and 'b' must be "
                   "compatible, but got ",
                   Quoted(a), " and ", Quoted(b));
  }
  // (C1)
  for (int64_t i = 0; i + 2 < a.rank(); ++i) {
    if (!DimsCompatible(a.dim(i), b.dim(i))) {
      return OpError(op,
                     "batch dimensions of the operands must be "
                     "compatible, but got ",
                     Quoted(a), " and ", Quoted(b));
    }
  }
  // (C4)
  return CheckInferredResults(op, {b});
}

// The batch_norm rules: `multi` operands share the full shape, `single`
// ones are 1-d of the feature count.
Status VerifyBatchNorm(const Operation& op, int num_multi, int num_single,
                       bool inference) {
  RETURN_IF_ERROR(ExpectOperands(op, num_multi + num_single));
  RETURN_IF_ERROR(ExpectResults(op, inference ? 1 : 3));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kFloat | kQuantized));
  RETURN_IF_ERROR(CheckAllResultTensors(op, kFloat | kQuantized));
  ASSIGN_OR_RETURN(int64_t feature_index,
                   RequiredNonNegativeInt(op, "feature_index"));
  Attribute epsilon = op.GetAttr("epsilon");
  if (!epsilon.is(AttrKind::kFloat)) {
    return OpError(op, "requires a float attribute 'epsilon'");
  }
  // batch_norm_grad takes (operand, scale, mean, variance, grad_output).
  std::vector<Type> multi;
  std::vector<Type> single;
  for (int i = 0; i < op.num_operands(); ++i) {
    bool is_multi = op.is(OpCode::kBatchNormGrad)
                        ? (i == 0 || i == op.num_operands() - 1)
                        : i == 0;
    (is_multi ? multi : single).push_back(op.operand(i)->type());
  }
  for (const Type& type : multi) {
    if (!ShapesCompatible(type, multi[0])) {
      return OpError(op,
                     "expects multi-dimensional operands to have "
                     "compatible shapes.");
    }
  }
  for (const Type& type : single) {
    if (type.rank() != 1) {
      return OpError(op,
                     "expects single-dimensional operands to be 1-d, but "
                     "got ",
                     Quoted(type));
    }
    if (!ShapesCompatible(type, single[0])) {
      return OpError(op,
                     "expects single-dimensional operands to have "
                     "compatible shapes.");
    }
  }
  const Type& operand = multi[0];
  if (feature_index >= operand.rank()) {
    return OpError(op,
                   "expects featureIndex to be smaller than the rank of "
                   "multi-dimensional operands; got featureIndex ",
                   feature_index, ", and rank ", operand.rank(), ".");
  }
  int64_t feature_count = operand.dim(feature_index);
  int64_t single_size = single[0].dim(0);
  if (!DimsCompatible(single_size, feature_count)) {
    return OpError(op,
                   "expects the size of single-dimensional operands to be "
                   "compatible with feature count, but the size of "
                   "single-dimensional operands is ",
                   DimText(single_size), " and the feature count is ",
                   DimText(feature_count), ".");
  }
  std::vector<Type> inferred = {operand};
  if (!inference) {
    std::vector<int64_t> bounds = BoundsOf(operand);
    Type feature = MakeTensor(
        {feature_count}, operand.element(),
        bounds.empty() ? std::vector<int64_t>{}
                       : std::vector<int64_t>{bounds[feature_index]});
    inferred.push_back(feature);
    inferred.push_back(feature);
  }
  return CheckInferredResults(op, inferred);
}

Status VerifyBatchNormGrad(const Operation& op) {
  return VerifyBatchNorm(op, 2, 3, false);
}
Status VerifyBatchNormInference(const Operation& op) {
  return VerifyBatchNorm(op, 1, 4, true);
}
Status VerifyBatchNormTraining(const Operation& op) {
  return VerifyBatchNorm(op, 1, 2, false);
}

Status VerifyFft(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kFloatOrComplex));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kFloatOrComplex));
  ASSIGN_OR_RETURN(int64_t fft_type,
                   RequiredEnum(op, "fft_type", EnumKind::kFftType));
  ASSIGN_OR_RETURN(std::vector<int64_t> lengths,
                   RequiredInts(op, "fft_length"));
  const Type& operand = op.operand(0)->type();
  int64_t fft_rank = static_cast<int64_t>(lengths.size());
  // (C1)
  if (fft_rank < 1 || fft_rank > 3) {
    return OpError(op, "rank must be between 1 and 3, but got ", fft_rank, ".");
  }
  if (operand.rank() < fft_rank) {
    return OpError(op, "operand rank must not be less than fft rank of ",
                   fft_rank, " for operand of type ", Quoted(operand));
  }
  std::vector<int64_t> shape = operand.shape();
  std::vector<int64_t> inner(shape.end() - fft_rank, shape.end());
  Type element = operand.element();
  auto dims_text = [](const std::vector<int64_t>& dims) {
    return JoinInts(dims);
  };
  if (fft_type == kRFFT) {
    // (C2), (C4)
    if (!IsScalarElement(element, ElementType::kF32) &&
        !IsScalarElement(element, ElementType::kF64)) {
      return OpError(op, "RFFT requires f32 or f64 input type, but is given ",
                     Quoted(element), ".");
    }
    for (int64_t i = 0; i < fft_rank; ++i) {
      if (!DimsCompatible(inner[i], lengths[i])) {
        return OpError(op,
                       "RFFT requires innermost dimensions to be "
                       "compatible with fft_length. Got: ",
                       dims_text(shape), " but wanted ", dims_text(lengths),
                       ".");
      }
    }
    shape.back() = lengths.back() / 2 + 1;
    element = Type::Element(element.element_type() == ElementType::kF32
                                ? ElementType::kC64
                                : ElementType::kC128);
  } else {
    if (!IsComplexElement(element)) {
      return OpError(op,
                     "FFT/IFFT/IRFFT take a complex tensor as input, but "
                     "is given ",
                     Quoted(operand), ".");
    }
    if (fft_type == kIRFFT) {
      // (C5)
      for (int64_t i = 0; i + 1 < fft_rank; ++i) {
        if (!DimsCompatible(inner[i], lengths[i])) {
          return OpError(op,
                         "IRFFT requires non-final dimensions to be "
                         "compatible with fft_length. Got: ",
                         dims_text(shape), " but wanted ", dims_text(lengths),
                         ", and ", inner[i], " != ", lengths[i], ".");
        }
      }
      if (!DimsCompatible(inner.back(), lengths.back() / 2 + 1)) {
        return OpError(op,
                       "IRFFT requires innermost dimension to be "
                       "compatible with fft_length[-1]/2+1. Got: ",
                       inner.back(), " but fft_length is ", lengths.back(),
                       ".");
      }
      shape.back() = lengths.back();
      element = Type::Element(ComplexComponentType(element.element_type()));
    }
  }
  // (C3)
  return CheckInferredResults(op, {MakeTensor(shape, element)});
}

Status VerifyRng(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 3));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandScalarTensor(op, 0, kPred | kInt | kFloat));
  RETURN_IF_ERROR(CheckOperandScalarTensor(op, 1, kPred | kInt | kFloat));
  RETURN_IF_ERROR(CheckOperand1DTensor(op, 2, kDimensionValue, true));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kPred | kInt | kFloat));
  ASSIGN_OR_RETURN(
      int64_t distribution,
      RequiredEnum(op, "rng_distribution", EnumKind::kRngDistribution));
  const Type& a = op.operand(0)->type();
  const Type& b = op.operand(1)->type();
  // (C1)
  if (a.element() != b.element()) {
    return OpError(op,
                   "expects a and b to have the same element type, but "
                   "got ",
                   Quoted(a), " and ", Quoted(b));
  }
  if (distribution == kNormal && !IsFloatElement(a.element())) {
    return OpError(op, "NORMAL distribution requires float operands, but got ",
                   Quoted(a));
  }
  // (C2): the shape operand's values when constant, else its length.
  std::vector<int64_t> shape;
  if (std::optional<std::vector<int64_t>> values =
          ConstantInts(op.operand(2))) {
    shape = *values;
  } else {
    shape.assign(op.operand(2)->type().dim(0), kDynamic);
  }
  return CheckInferredResults(op, {MakeTensor(shape, a.element())});
}

Status VerifyRngBitGenerator(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 2));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kInt | kFloat));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kInt | kFloat));
  RETURN_IF_ERROR(CheckResultTensor(op, 1, kInt | kFloat));
  ASSIGN_OR_RETURN(int64_t algorithm,
                   RequiredEnum(op, "rng_algorithm", EnumKind::kRngAlgorithm));
  const Type& state = op.operand(0)->type();
  const Type& output_state = op.result(0)->type();
  // (C1)
  if (!ShapesCompatible(state, output_state) ||
      state.element() != output_state.element()) {
    return OpError(op,
                   "output state shape must be compatible with initial "
                   "state shape. Got: ",
                   Quoted(state), " and ", Quoted(output_state));
  }
  // (C2): the state sizes the algorithms need (a u64 vector).
  int64_t size = state.rank() == 1 ? state.dim(0) : kDynamic;
  if (size != kDynamic && ElementBitWidth(state.element()) == 64) {
    if (algorithm == kThreeFry && size != 2) {
      return OpError(op,
                     "THREE_FRY algorithm requires initial state of size "
                     "2, but got ",
                     Quoted(state));
    }
    if (algorithm == kPhilox && size != 2 && size != 3) {
      return OpError(op,
                     "PHILOX algorithm requires initial state of size 2 "
                     "or 3, but got ",
                     Quoted(state));
    }
  }
  return OkStatus();
}

}  // namespace

void RegisterLinalgVerifiers(VerifierTable& table) {
  table[static_cast<size_t>(OpCode::kCholesky)] = VerifyCholesky;
  table[static_cast<size_t>(OpCode::kTriangularSolve)] = VerifyTriangularSolve;
  table[static_cast<size_t>(OpCode::kBatchNormGrad)] = VerifyBatchNormGrad;
  table[static_cast<size_t>(OpCode::kBatchNormInference)] =
      VerifyBatchNormInference;
  table[static_cast<size_t>(OpCode::kBatchNormTraining)] =
      VerifyBatchNormTraining;
  table[static_cast<size_t>(OpCode::kFft)] = VerifyFft;
  table[static_cast<size_t>(OpCode::kRng)] = VerifyRng;
  table[static_cast<size_t>(OpCode::kRngBitGenerator)] = VerifyRngBitGenerator;
}

}  // namespace kiln::ir::verifier
