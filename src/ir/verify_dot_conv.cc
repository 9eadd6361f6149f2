// Contractions: dot, dot_general (with its algorithm), einsum, unary_einsum,
// convolution and dynamic_conv, including the quantization rules of
// dot_general and convolution.
#include <cctype>
#include <functional>
#include <limits>
#include <tuple>

#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

// The result's shape (not its element type, which these ops do not infer)
// against `shape`: "inferred shape '[...]' is incompatible with return type
// of operation 'T'".
Status CheckInferredShape(const Operation& op,
                          const std::vector<int64_t>& shape) {
  const Type& result = op.result(0)->type();
  bool compatible = result.rank() == static_cast<int64_t>(shape.size());
  for (size_t i = 0; compatible && i < shape.size(); ++i) {
    compatible = DimsCompatible(shape[i], result.dim(i));
  }
  if (compatible) return OkStatus();
  std::vector<std::string> dims;
  for (int64_t dim : shape) dims.push_back(DimText(dim));
  return OpError(op, "inferred shape '[", StrJoin(dims, ", "),
                 "]' is incompatible with return type of operation ",
                 Quoted(result));
}

// precision_config: at most two #stablehlo<precision> values.
StatusOr<std::vector<int64_t>> ReadPrecisionConfig(const Operation& op) {
  std::vector<int64_t> values;
  Attribute attr = op.GetAttr("precision_config");
  if (!attr) return values;
  if (!attr.is(AttrKind::kArray)) {
    return OpError(op,
                   "attribute 'precision_config' failed to satisfy "
                   "constraint: Precision Config attribute, got ",
                   attr.ToString());
  }
  for (const Attribute& element : attr.array()) {
    if (!element.is(AttrKind::kEnum) ||
        element.enum_kind() != EnumKind::kPrecision) {
      return OpError(op,
                     "attribute 'precision_config' failed to satisfy "
                     "constraint: Precision Config attribute, got ",
                     attr.ToString());
    }
    values.push_back(element.enum_value());
  }
  if (values.size() > 2) {
    return OpError(op,
                   "expects precision config to be empty or have <= 2 "
                   "elements.");
  }
  return values;
}

// The quantization rules shared by dot_general and convolution ((C14)-(C20)
// of dot_general, (C28)-(C34) of convolution). `rhs_axis_rule` checks a
// per-axis rhs quantization dimension.
Status CheckContractionQuantization(
    const Operation& op, bool rhs_zero_points_must_be_zero,
    const std::function<Status(const QuantizedType&)>& rhs_axis_rule,
    const std::function<Status(const QuantizedType&)>& result_axis_rule) {
  Type lhs = op.operand(0)->type().element();
  Type rhs = op.operand(1)->type().element();
  Type result = op.result(0)->type().element();
  if (!IsQuantizedElement(lhs) && !IsQuantizedElement(rhs) &&
      !IsQuantizedElement(result)) {
    return OkStatus();
  }
  if (!IsQuantizedElement(rhs) ||
      IsQuantizedElement(lhs) != IsQuantizedElement(result)) {
    return OpError(op,
                   "rhs should be quantized for quantized operations and "
                   "is_quantized(lhs)=is_quantized(result) should hold");
  }
  const QuantizedType& q_rhs = rhs.quantized();
  if (rhs_zero_points_must_be_zero) {
    for (int64_t zero_point : q_rhs.zero_points) {
      if (zero_point != 0) {
        return OpError(op, q_rhs.axis ? "Zero points of rhs should be 0"
                                      : "Zero point of rhs should be 0");
      }
    }
  }
  if (q_rhs.axis) RETURN_IF_ERROR(rhs_axis_rule(q_rhs));
  if (IsQuantizedElement(lhs)) {
    const QuantizedType& q_lhs = lhs.quantized();
    const QuantizedType& q_result = result.quantized();
    if (q_lhs.storage_type != q_rhs.storage_type) {
      return OpError(op, "mismatched lhs and rhs quantization storage types");
    }
    if (q_lhs.expressed_type != q_rhs.expressed_type ||
        q_lhs.expressed_type != q_result.expressed_type) {
      return OpError(op,
                     "mismatched lhs, rhs and result quantization "
                     "expressed types");
    }
    if (!q_rhs.axis && q_result.axis) {
      return OpError(op, "mismatched rhs and result quantization granularity");
    }
    if (q_result.axis) RETURN_IF_ERROR(result_axis_rule(q_result));
    return OkStatus();
  }
  // Hybrid: float lhs and result with a quantized rhs.
  Type expressed = Type::Element(q_rhs.expressed_type);
  if (lhs != expressed || result != expressed) {
    return OpError(op,
                   "mismatched rhs quantization expressed type and lhs "
                   "and result element type");
  }
  return OkStatus();
}

// (C21)-(C25) of dot_general: the algorithm is well formed and one of the
// combinations known to be implemented somewhere.
Status CheckDotAlgorithm(const Operation& op,
                         const std::vector<int64_t>& precision) {
  Attribute attr = op.GetAttr("algorithm");
  if (!attr) return OkStatus();
  if (!attr.is(AttrKind::kDotAlgorithm)) {
    return OpError(op,
                   "attribute 'algorithm' must be a "
                   "#stablehlo.dot_algorithm, but got ",
                   attr.ToString());
  }
  for (int64_t p : precision) {
    if (p != 0) {
      return OpError(op,
                     "must specify DEFAULT precision config when "
                     "algorithm is set.");
    }
  }
  const DotAlgorithm& a = attr.dot_algorithm();
  if (a.lhs_component_count <= 0) {
    return OpError(op, "lhs component count must be positive");
  }
  if (a.rhs_component_count <= 0) {
    return OpError(op, "rhs component count must be positive");
  }
  if (a.num_primitive_operations <= 0) {
    return OpError(op, "num primitive operations must be positive");
  }
  auto is = [](const Type& type, ElementType element) {
    return type.is(TypeKind::kElement) && type.element_type() == element;
  };
  auto is_f8 = [](const Type& type) {
    return type.is(TypeKind::kElement) && IsFloat(type.element_type()) &&
           BitWidth(type.element_type()) == 8;
  };
  const Type& l = a.lhs_precision_type;
  const Type& r = a.rhs_precision_type;
  const Type& acc = a.accumulation_type;
  int64_t ops = a.num_primitive_operations;
  bool single = a.lhs_component_count == 1 && a.rhs_component_count == 1;
  bool known = false;
  if (single && is_f8(l) && is_f8(r) && is(acc, ElementType::kF32)) {
    known = ops == 1;  // fast accumulation allowed
  } else if (single && !a.allow_imprecise_accumulation) {
    auto same = [&](ElementType e) { return is(l, e) && is(r, e); };
    if (same(ElementType::kBF16) && is(acc, ElementType::kF32)) {
      known = ops == 1 || ops == 3 || ops == 6 || ops == 9;
    } else if (same(ElementType::kTF32) && is(acc, ElementType::kF32)) {
      known = ops == 1 || ops == 3;
    } else if ((same(ElementType::kF16) &&
                (is(acc, ElementType::kF16) || is(acc, ElementType::kF32))) ||
               (same(ElementType::kBF16) && is(acc, ElementType::kBF16)) ||
               (same(ElementType::kF32) && is(acc, ElementType::kF32)) ||
               (same(ElementType::kF64) && is(acc, ElementType::kF64))) {
      known = ops == 1;
    }
  }
  if (!known) {
    return OpError(op,
                   "dot algorithm not known to be supported on any "
                   "hardware: {lhs:",
                   Quoted(l), ", rhs:", Quoted(r), ", accum:", Quoted(acc),
                   ", lhs_components:", a.lhs_component_count,
                   ", rhs_components:", a.rhs_component_count,
                   ", primitive_ops:", ops,
                   ", imprecise:", a.allow_imprecise_accumulation ? 1 : 0, "}");
  }
  return OkStatus();
}

Status CheckDimsRange(const Operation& op, const std::vector<int64_t>& dims,
                      std::string_view name, int64_t rank) {
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank) {
      return OpError(op, name, " value: ", dim, " is out of range: [0, ", rank,
                     ")");
    }
  }
  return OkStatus();
}

Status VerifyDotGeneral(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandTensor(op, 1, kAnyOrPerAxis));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyOrPerAxis));
  const Type& lhs = op.operand(0)->type();
  const Type& rhs = op.operand(1)->type();
  ASSIGN_OR_RETURN(Attribute attr,
                   AttrOfKind(op, "dot_dimension_numbers",
                              AttrKind::kDotDimensionNumbers, true));
  const DotDimensionNumbers& dn = attr.dot();
  // (C1), (C2)
  if (dn.lhs_batching_dimensions.size() != dn.rhs_batching_dimensions.size()) {
    return OpError(op,
                   "lhs and rhs should have the same number of batching "
                   "dimensions");
  }
  if (dn.lhs_contracting_dimensions.size() !=
      dn.rhs_contracting_dimensions.size()) {
    return OpError(op,
                   "lhs and rhs should have the same number of "
                   "contracting dimensions");
  }
  // (C3), (C4)
  for (const auto& [batching, contracting, side] :
       {std::tuple<const std::vector<int64_t>&, const std::vector<int64_t>&,
                   const char*>{dn.lhs_batching_dimensions,
                                dn.lhs_contracting_dimensions, "lhs"},
        {dn.rhs_batching_dimensions, dn.rhs_contracting_dimensions, "rhs"}}) {
    std::vector<int64_t> all = batching;
    all.insert(all.end(), contracting.begin(), contracting.end());
    for (size_t i = 0; i < all.size(); ++i) {
      for (size_t j = i + 1; j < all.size(); ++j) {
        if (all[i] == all[j]) {
          return OpError(op, "has duplicated dimension from ", side,
                         "_batching_dimensions and ", side,
                         "_contracting_dimensions: ", all[i]);
        }
      }
    }
  }
  // (C5)-(C8)
  RETURN_IF_ERROR(CheckDimsRange(op, dn.lhs_batching_dimensions,
                                 "lhs_batching_dimensions", lhs.rank()));
  RETURN_IF_ERROR(CheckDimsRange(op, dn.lhs_contracting_dimensions,
                                 "lhs_contracting_dimensions", lhs.rank()));
  RETURN_IF_ERROR(CheckDimsRange(op, dn.rhs_batching_dimensions,
                                 "rhs_batching_dimensions", rhs.rank()));
  RETURN_IF_ERROR(CheckDimsRange(op, dn.rhs_contracting_dimensions,
                                 "rhs_contracting_dimensions", rhs.rank()));
  // (C9), (C10)
  for (size_t i = 0; i < dn.lhs_batching_dimensions.size(); ++i) {
    if (!DimsCompatible(lhs.dim(dn.lhs_batching_dimensions[i]),
                        rhs.dim(dn.rhs_batching_dimensions[i]))) {
      return OpError(op, "batching dimension sizes must match for lhs/rhs");
    }
  }
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
    if (!DimsCompatible(lhs.dim(dn.lhs_contracting_dimensions[i]),
                        rhs.dim(dn.rhs_contracting_dimensions[i]))) {
      return OpError(op, "contracting dimension sizes must match for lhs/rhs");
    }
  }
  // (C11), (C21)-(C25)
  ASSIGN_OR_RETURN(std::vector<int64_t> precision, ReadPrecisionConfig(op));
  RETURN_IF_ERROR(CheckDotAlgorithm(op, precision));
  // (C13)-(C20)
  RETURN_IF_ERROR(CheckContractionQuantization(
      op, /*rhs_zero_points_must_be_zero=*/true,
      [&](const QuantizedType& q) -> Status {
        if (Contains(dn.rhs_contracting_dimensions, *q.axis)) {
          return OpError(op,
                         "Quantization dimension of rhs should not be in "
                         "the contracting dimension of rhs");
        }
        return OkStatus();
      },
      [](const QuantizedType&) { return OkStatus(); }));
  // (C12): batch dims, then lhs and rhs free dims.
  std::vector<int64_t> shape;
  for (int64_t d : dn.lhs_batching_dimensions) shape.push_back(lhs.dim(d));
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (!Contains(dn.lhs_batching_dimensions, d) &&
        !Contains(dn.lhs_contracting_dimensions, d)) {
      shape.push_back(lhs.dim(d));
    }
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (!Contains(dn.rhs_batching_dimensions, d) &&
        !Contains(dn.rhs_contracting_dimensions, d)) {
      shape.push_back(rhs.dim(d));
    }
  }
  return CheckInferredShape(op, shape);
}

Status VerifyDot(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandTensor(op, 1, kAnyOrPerAxis));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyOrPerAxis));
  RETURN_IF_ERROR(ReadPrecisionConfig(op));
  const Type& lhs = op.operand(0)->type();
  const Type& rhs = op.operand(1)->type();
  if ((lhs.rank() != 1 && lhs.rank() != 2) ||
      (rhs.rank() != 1 && rhs.rank() != 2)) {
    return OpError(op,
                   "expected both lhs/rhs ranks to be either 1 or 2, but "
                   "got ",
                   Quoted(lhs), " and ", Quoted(rhs));
  }
  if (!DimsCompatible(lhs.shape().back(), rhs.dim(0))) {
    return OpError(op, "expected lhs dimension ", lhs.rank() - 1,
                   " and rhs dimension 0 to be compatible, but got ",
                   Quoted(lhs), " and ", Quoted(rhs));
  }
  std::vector<int64_t> shape;
  if (lhs.rank() == 2) shape.push_back(lhs.dim(0));
  if (rhs.rank() == 2) shape.push_back(rhs.dim(1));
  return CheckInferredShape(op, shape);
}

// The letters of each operand of an einsum config ("ab,bc->ac") count its
// rank; configs with an ellipsis are not checked.
Status VerifyEinsumConfig(const Operation& op) {
  ASSIGN_OR_RETURN(Attribute attr,
                   AttrOfKind(op, "einsum_config", AttrKind::kString, true));
  const std::string& config = attr.string_value();
  size_t arrow = config.find("->");
  if (arrow == std::string::npos) {
    return OpError(op, "einsum_config '", config, "' has no '->'");
  }
  if (config.find('.') != std::string::npos) return OkStatus();
  std::vector<std::string_view> inputs =
      StrSplit(std::string_view(config).substr(0, arrow), ',');
  if (static_cast<int>(inputs.size()) != op.num_operands()) {
    return OpError(op, "einsum_config '", config, "' names ", inputs.size(),
                   " operands, but the op has ", op.num_operands());
  }
  auto count = [](std::string_view text) {
    int64_t letters = 0;
    for (char c : text) {
      if (std::isalpha(static_cast<unsigned char>(c)) != 0) ++letters;
    }
    return letters;
  };
  for (int i = 0; i < op.num_operands(); ++i) {
    if (count(inputs[i]) != op.operand(i)->type().rank()) {
      return OpError(op, "einsum_config '", config, "' gives operand #", i,
                     " rank ", count(inputs[i]), ", but it has type ",
                     Quoted(op.operand(i)->type()));
    }
  }
  if (count(std::string_view(config).substr(arrow + 2)) !=
      op.result(0)->type().rank()) {
    return OpError(op, "einsum_config '", config,
                   "' does not match the result rank of ",
                   Quoted(op.result(0)->type()));
  }
  return OkStatus();
}

Status VerifyEinsum(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, op.is(OpCode::kEinsum) ? 2 : 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  return VerifyEinsumConfig(op);
}

// ---- convolution
// ----------------------------------------------------------------

struct ConvWindow {
  std::vector<int64_t> strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> lhs_dilation;
  std::vector<int64_t> rhs_dilation;
};

StatusOr<ConvWindow> ReadConvWindow(const Operation& op, size_t spatial,
                                    bool has_padding_attr) {
  ConvWindow window;
  // An absent or empty list stands for all ones ((C2)-(C9)).
  auto read = [&](const char* name, const char* what, const char* factor,
                  std::vector<int64_t>& out) -> Status {
    out.assign(spatial, 1);
    ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> values,
                     OptionalInts(op, name));
    if (!values || values->empty()) return OkStatus();
    if (values->size() != spatial) {
      return OpError(op, "expects ", what,
                     " to have same dimension-size as size of window "
                     "dimensions (",
                     spatial, "), but got: ", values->size(), ".");
    }
    for (size_t i = 0; i < spatial; ++i) {
      if ((*values)[i] <= 0) {
        return OpError(op, "expects window to have positive ", factor, " for ",
                       i, "-th window dimension, but got ", (*values)[i], ".");
      }
    }
    out = std::move(*values);
    return OkStatus();
  };
  RETURN_IF_ERROR(
      read("window_strides", "window-strides", "stride", window.strides));
  RETURN_IF_ERROR(read("lhs_dilation", "base-dilation factors",
                       "base dilation factor", window.lhs_dilation));
  RETURN_IF_ERROR(read("rhs_dilation", "window-dilation factors",
                       "window dilation factor", window.rhs_dilation));
  ASSIGN_OR_RETURN(std::optional<std::vector<bool>> reversal,
                   OptionalBools(op, "window_reversal"));
  if (reversal && !reversal->empty() && reversal->size() != spatial) {
    return OpError(op,
                   "expects window-reversal to have same dimension-size "
                   "as size of window dimensions (",
                   spatial, "), but got: ", reversal->size(), ".");
  }
  window.padding.assign(spatial, {0, 0});
  if (Attribute padding = op.GetAttr("padding"); padding && has_padding_attr) {
    ASSIGN_OR_RETURN(IntElements values,
                     ReadIntElements(op, "padding", padding));
    if (values.shape.size() != 2 || values.shape[1] != 2) {
      return OpError(op,
                     "expects the shape of padding-attribute to be {N, "
                     "2}, but got {",
                     JoinInts(values.shape), "}.");
    }
    size_t rows = static_cast<size_t>(values.shape[0]);
    if (rows != 0 && rows != spatial) {
      return OpError(op,
                     "expects padding-entries to have same "
                     "dimension-size as size of window dimensions (",
                     spatial, "), but got: ", rows, ".");
    }
    for (size_t i = 0; i < rows; ++i) {
      window.padding[i] = {values.values[2 * i], values.values[2 * i + 1]};
    }
  }
  return window;
}

// The convolution rules shared by convolution and dynamic_conv; `padding`
// is nullopt when it is not known statically.
Status VerifyConvolutionCommon(const Operation& op, bool static_padding) {
  const Type& lhs = op.operand(0)->type();
  const Type& rhs = op.operand(1)->type();
  const Type& result = op.result(0)->type();
  ASSIGN_OR_RETURN(Attribute attr,
                   AttrOfKind(op, "dimension_numbers",
                              AttrKind::kConvDimensionNumbers, true));
  const ConvDimensionNumbers& dn = attr.conv();
  if (lhs.rank() != rhs.rank()) {
    return OpError(op,
                   "expects convolution arguments to have same number of "
                   "dimensions. Got: ",
                   Quoted(lhs), " and ", Quoted(rhs), ".");
  }
  if (lhs.rank() < 2) {
    return OpError(op,
                   "expects convolution arguments to have >= 2 "
                   "dimensions. Got: ",
                   Quoted(lhs), " and ", Quoted(rhs), ".");
  }
  size_t spatial = dn.input_spatial_dimensions.size();
  if (dn.kernel_spatial_dimensions.size() != spatial ||
      dn.output_spatial_dimensions.size() != spatial) {
    return OpError(op,
                   "expects the same size for input, kernel and output "
                   "spatial-dimensions, but got ",
                   spatial, ", ", dn.kernel_spatial_dimensions.size(), ", and ",
                   dn.output_spatial_dimensions.size(), " resp.");
  }
  std::vector<int64_t> input_dims = {dn.input_batch_dimension,
                                     dn.input_feature_dimension};
  input_dims.insert(input_dims.end(), dn.input_spatial_dimensions.begin(),
                    dn.input_spatial_dimensions.end());
  std::vector<int64_t> kernel_dims = {dn.kernel_input_feature_dimension,
                                      dn.kernel_output_feature_dimension};
  kernel_dims.insert(kernel_dims.end(), dn.kernel_spatial_dimensions.begin(),
                     dn.kernel_spatial_dimensions.end());
  std::vector<int64_t> output_dims = {dn.output_batch_dimension,
                                      dn.output_feature_dimension};
  output_dims.insert(output_dims.end(), dn.output_spatial_dimensions.begin(),
                     dn.output_spatial_dimensions.end());
  int64_t rank = lhs.rank();
  for (const std::vector<int64_t>* dims :
       {&input_dims, &kernel_dims, &output_dims}) {
    for (int64_t d : *dims) {
      if (d < 0 || d >= rank) {
        return OpError(op,
                       "expects input, kernel, and output "
                       "dimension-numbers to be in-range [0, ",
                       rank, ").");
      }
    }
  }
  if (result.rank() != rank) {
    return OpError(op, "expects the result to have rank ", rank, ", but got ",
                   Quoted(result));
  }
  for (const auto& [dims, name] :
       {std::pair<const std::vector<int64_t>&, const char*>{input_dims,
                                                            "input"},
        {kernel_dims, "kernel"},
        {output_dims, "output"}}) {
    if (HasDuplicates(dims)) {
      return OpError(op, "expects ", name,
                     " dimension-numbers to be unique, got {", JoinInts(dims),
                     "}.");
    }
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> feature_groups,
                   OptionalInt(op, "feature_group_count"));
  ASSIGN_OR_RETURN(std::optional<int64_t> batch_groups,
                   OptionalInt(op, "batch_group_count"));
  int64_t fgc = feature_groups.value_or(1);
  int64_t bgc = batch_groups.value_or(1);
  if (fgc <= 0) {
    return OpError(op,
                   "expects feature_group_count to be a positive number, "
                   "got ",
                   fgc, ".");
  }
  if (bgc <= 0) {
    return OpError(op,
                   "expects batch_group_count to be a positive number, "
                   "got ",
                   bgc, ".");
  }
  if (fgc > 1 && bgc > 1) {
    return OpError(op,
                   "expects batch_group_count and feature_group_count not "
                   "to be both greater than 1. Got ",
                   bgc, " and ", fgc, " resp.");
  }
  int64_t input_features = lhs.dim(dn.input_feature_dimension);
  int64_t input_batch = lhs.dim(dn.input_batch_dimension);
  int64_t kernel_input_features = rhs.dim(dn.kernel_input_feature_dimension);
  int64_t kernel_output_features = rhs.dim(dn.kernel_output_feature_dimension);
  if (kernel_output_features != kDynamic) {
    if (kernel_output_features % bgc != 0) {
      return OpError(op, "expects output feature dimension size (",
                     kernel_output_features,
                     ") to be a multiple of batch_group_count. Got "
                     "batch_group_count = ",
                     bgc, ".");
    }
    if (kernel_output_features % fgc != 0) {
      return OpError(op, "expects kernel output feature dimension (",
                     kernel_output_features,
                     ") to be divisible by feature_group_count. For "
                     "feature_group_count = ",
                     fgc, ".");
    }
  }
  if (input_features != kDynamic) {
    if (input_features % fgc != 0) {
      return OpError(op, "expects input feature dimension (", input_features,
                     ") to be a multiple of feature_group_count. Got "
                     "feature_group_count = ",
                     fgc, ".");
    }
    if (kernel_input_features != kDynamic &&
        input_features / fgc != kernel_input_features) {
      return OpError(op, "expects input feature dimension (", input_features,
                     ") / feature_group_count = kernel input feature "
                     "dimension (",
                     kernel_input_features,
                     "). Got feature_group_count = ", fgc, ".");
    }
  }
  if (input_batch != kDynamic && input_batch % bgc != 0) {
    return OpError(op, "expects input batch dimension (", input_batch,
                   ") to be divisible by batch_group_count. Got "
                   "batch_group_count = ",
                   bgc, ".");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> precision, ReadPrecisionConfig(op));
  // dynamic_conv's window attributes are not checked: the programs JAX
  // emits give them for more dimensions than there are spatial ones.
  ConvWindow window;
  if (static_padding) {
    ASSIGN_OR_RETURN(window, ReadConvWindow(op, spatial, static_padding));
  }
  // The inferred result shape.
  std::vector<int64_t> shape(rank, kDynamic);
  shape[dn.output_batch_dimension] =
      input_batch == kDynamic ? kDynamic : input_batch / bgc;
  shape[dn.output_feature_dimension] = kernel_output_features;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t base = lhs.dim(dn.input_spatial_dimensions[i]);
    int64_t size = rhs.dim(dn.kernel_spatial_dimensions[i]);
    // The kernel's spatial sizes are the window dimensions.
    if (static_padding && size != kDynamic && size <= 0) {
      return OpError(op, "expects window to have positive value for ", i,
                     "-th window dimension, but got ", size, ".");
    }
    if (!static_padding || base == kDynamic || size == kDynamic) continue;
    __int128 dilated_base =
        base == 0
            ? 0
            : static_cast<__int128>(base - 1) * window.lhs_dilation[i] + 1;
    __int128 padded =
        dilated_base + window.padding[i].first + window.padding[i].second;
    __int128 dilated_window =
        size == 0
            ? 0
            : static_cast<__int128>(size - 1) * window.rhs_dilation[i] + 1;
    int64_t out = 0;
    if (padded < 0) {
      return OpError(op, "padding of spatial dimension ", i,
                     " makes its size negative");
    }
    if (padded > 0 && dilated_window <= padded) {
      __int128 value = (padded - dilated_window) / window.strides[i] + 1;
      if (value > std::numeric_limits<int64_t>::max()) {
        return OpError(op, "spatial dimension ", i, " is too large");
      }
      out = static_cast<int64_t>(value);
    }
    shape[dn.output_spatial_dimensions[i]] = out;
  }
  RETURN_IF_ERROR(CheckInferredShape(op, shape));
  return CheckContractionQuantization(
      op, /*rhs_zero_points_must_be_zero=*/false,
      [&](const QuantizedType& q) -> Status {
        if (*q.axis != dn.kernel_output_feature_dimension) {
          return OpError(op,
                         "quantization dimension of rhs should be same "
                         "with kernel_output_feature_dimension");
        }
        return OkStatus();
      },
      [&](const QuantizedType& q) -> Status {
        if (*q.axis != dn.output_feature_dimension) {
          return OpError(op,
                         "quantization dimension of result should be same "
                         "with output_feature_dimension");
        }
        return OkStatus();
      });
}

Status VerifyConvolution(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandTensor(op, 1, kAnyOrPerAxis));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyOrPerAxis));
  return VerifyConvolutionCommon(op, /*static_padding=*/true);
}

Status VerifyDynamicConv(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 3));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandTensor(op, 1, kAnyOrPerAxis));
  RETURN_IF_ERROR(CheckOperandTensor(op, 2, kInt));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyOrPerAxis));
  return VerifyConvolutionCommon(op, /*static_padding=*/false);
}

}  // namespace

void RegisterDotConvVerifiers(VerifierTable& table) {
  table[static_cast<size_t>(OpCode::kDotGeneral)] = VerifyDotGeneral;
  table[static_cast<size_t>(OpCode::kDot)] = VerifyDot;
  table[static_cast<size_t>(OpCode::kEinsum)] = VerifyEinsum;
  table[static_cast<size_t>(OpCode::kUnaryEinsum)] = VerifyEinsum;
  table[static_cast<size_t>(OpCode::kConvolution)] = VerifyConvolution;
  table[static_cast<size_t>(OpCode::kDynamicConv)] = VerifyDynamicConv;
}

}  // namespace kiln::ir::verifier
