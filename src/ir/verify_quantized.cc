// Quantization rules of the ops that move quantized data without computing
// on it (broadcast_in_dim, transpose, reshape): the result keeps the
// operand's scales and zero points, and a per-axis quantization dimension
// follows the data.
#include "ir/verify_internal.h"

namespace kiln::ir::verifier {

Status CheckSameQuantizationParameters(const Operation& op, const Type& operand,
                                       const Type& result) {
  Type in = operand.element();
  Type out = result.element();
  if (!IsQuantizedElement(in) || !IsQuantizedElement(out)) return OkStatus();
  const QuantizedType& q_in = in.quantized();
  const QuantizedType& q_out = out.quantized();
  if (!q_in.axis && !q_out.axis) {
    if (q_in.scales != q_out.scales || q_in.zero_points != q_out.zero_points) {
      return OpError(op,
                     "expect same quantization scale and zero_point, but "
                     "got ",
                     Quoted(operand), " and ", Quoted(result));
    }
  }
  return OkStatus();
}

Status CheckBroadcastQuantization(const Operation& op, const Type& operand,
                                  const Type& result,
                                  const std::vector<int64_t>& dimensions) {
  RETURN_IF_ERROR(CheckSameQuantizationParameters(op, operand, result));
  Type in = operand.element();
  Type out = result.element();
  if (!IsPerAxisElement(in) || !IsPerAxisElement(out)) return OkStatus();
  const QuantizedType& q_in = in.quantized();
  const QuantizedType& q_out = out.quantized();
  int64_t in_axis = *q_in.axis;
  if (in_axis < 0 || in_axis >= static_cast<int64_t>(dimensions.size())) {
    return OkStatus();  // reported by the type rules
  }
  // (C6)
  if (*q_out.axis != dimensions[in_axis]) {
    return OpError(op, "result quantization_dimension ", *q_out.axis,
                   " not same as broadcast_dimensions[", in_axis,
                   "] = ", dimensions[in_axis]);
  }
  // A size-1 quantized dimension broadcasts its one scale and zero point.
  bool broadcast = operand.dim(in_axis) == 1;
  for (size_t i = 0; i < q_out.scales.size(); ++i) {
    size_t j = broadcast ? 0 : i;
    if (j >= q_in.scales.size()) break;
    if (q_out.scales[i] != q_in.scales[j]) {
      return OpError(op, "mismatch result scale ", i, " (",
                     FloatText(q_out.scales[i]), ") and operand scale ", j,
                     " (", FloatText(q_in.scales[j]), ")");
    }
    if (q_out.zero_points[i] != q_in.zero_points[j]) {
      return OpError(op, "mismatch result zero_point ", i, " (",
                     q_out.zero_points[i], ") and operand zero_point ", j, " (",
                     q_in.zero_points[j], ")");
    }
  }
  return OkStatus();
}

namespace {

Status CheckSameAxisParameters(const Operation& op, const Type& operand,
                               const Type& result) {
  const QuantizedType& q_in = operand.element().quantized();
  const QuantizedType& q_out = result.element().quantized();
  if (q_in.scales != q_out.scales || q_in.zero_points != q_out.zero_points) {
    return OpError(op,
                   "expect same quantization scales and zero_points, but "
                   "got ",
                   Quoted(operand), " and ", Quoted(result));
  }
  return OkStatus();
}

}  // namespace

Status CheckTransposeQuantization(const Operation& op, const Type& operand,
                                  const Type& result,
                                  const std::vector<int64_t>& permutation) {
  RETURN_IF_ERROR(CheckSameQuantizationParameters(op, operand, result));
  if (!IsPerAxisElement(operand.element()) ||
      !IsPerAxisElement(result.element())) {
    return OkStatus();
  }
  int64_t in_axis = *operand.element().quantized().axis;
  int64_t out_axis = *result.element().quantized().axis;
  if (out_axis < 0 || out_axis >= static_cast<int64_t>(permutation.size())) {
    return OkStatus();  // reported by the type rules
  }
  // (C4)
  if (in_axis != permutation[out_axis]) {
    return OpError(op, "operand quantization_dimension ", in_axis,
                   " is not same as permutation[", out_axis,
                   "] = ", permutation[out_axis]);
  }
  return CheckSameAxisParameters(op, operand, result);
}

Status CheckReshapeQuantization(const Operation& op, const Type& operand,
                                const Type& result) {
  RETURN_IF_ERROR(CheckSameQuantizationParameters(op, operand, result));
  if (!IsPerAxisElement(operand.element()) ||
      !IsPerAxisElement(result.element())) {
    return OkStatus();
  }
  int64_t in_axis = *operand.element().quantized().axis;
  int64_t out_axis = *result.element().quantized().axis;
  if (in_axis < 0 || in_axis >= operand.rank() || out_axis < 0 ||
      out_axis >= result.rank()) {
    return OkStatus();  // reported by the type rules
  }
  // (C3): the quantized dimension survives the reshape unchanged.
  if (!DimsCompatible(operand.dim(in_axis), result.dim(out_axis))) {
    return OpError(op,
                   "expect same quantization dimension size for operand "
                   "and result, but got ",
                   Quoted(operand), " and ", Quoted(result));
  }
  std::vector<int64_t> before_in(operand.shape().begin(),
                                 operand.shape().begin() + in_axis);
  std::vector<int64_t> before_out(result.shape().begin(),
                                  result.shape().begin() + out_axis);
  std::optional<int64_t> count_in = StaticElementCount(before_in);
  std::optional<int64_t> count_out = StaticElementCount(before_out);
  if (count_in && count_out && *count_in != *count_out) {
    return OpError(op,
                   "product of dimensions before quantization dimension "
                   "must match between operand and result, but got ",
                   *count_in, " and ", *count_out);
  }
  return CheckSameAxisParameters(op, operand, result);
}

}  // namespace kiln::ir::verifier
