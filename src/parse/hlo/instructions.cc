// The per-opcode half of the HLO reader: each HLO instruction becomes the
// StableHLO op of the same meaning (XLA's operation semantics and the
// StableHLO spec agree op for op; where they differ, the comment says so).
#include <algorithm>

#include "ir/attr_defaults.h"
#include "parse/hlo/emitter.h"

namespace kiln::parse::hlo {
namespace {

using ir::Attribute;
using ir::ElementType;
using ir::Type;
using ir::Value;

// Nested computations deeper than this are refused (a malformed module
// could otherwise recurse without end).
constexpr int kMaxDepth = 64;

// HLO opcodes whose StableHLO op takes the operands and result as they are.
struct DirectOp {
  std::string_view opcode;
  std::string_view op;
};
constexpr DirectOp kDirectOps[] = {
    {"abs", "stablehlo.abs"},
    {"add", "stablehlo.add"},
    {"and", "stablehlo.and"},
    {"atan2", "stablehlo.atan2"},
    {"bitcast-convert", "stablehlo.bitcast_convert"},
    {"cbrt", "stablehlo.cbrt"},
    {"ceil", "stablehlo.ceil"},
    {"clamp", "stablehlo.clamp"},
    {"count-leading-zeros", "stablehlo.count_leading_zeros"},
    {"complex", "stablehlo.complex"},
    {"convert", "stablehlo.convert"},
    {"cosine", "stablehlo.cosine"},
    {"divide", "stablehlo.divide"},
    {"erf", "chlo.erf"},
    {"exponential", "stablehlo.exponential"},
    {"exponential-minus-one", "stablehlo.exponential_minus_one"},
    {"floor", "stablehlo.floor"},
    {"imag", "stablehlo.imag"},
    {"is-finite", "stablehlo.is_finite"},
    {"log", "stablehlo.log"},
    {"log-plus-one", "stablehlo.log_plus_one"},
    {"logistic", "stablehlo.logistic"},
    {"maximum", "stablehlo.maximum"},
    {"minimum", "stablehlo.minimum"},
    {"multiply", "stablehlo.multiply"},
    {"negate", "stablehlo.negate"},
    {"not", "stablehlo.not"},
    {"or", "stablehlo.or"},
    {"popcnt", "stablehlo.popcnt"},
    {"power", "stablehlo.power"},
    {"real", "stablehlo.real"},
    {"remainder", "stablehlo.remainder"},
    {"round-nearest-afz", "stablehlo.round_nearest_afz"},
    {"round-nearest-even", "stablehlo.round_nearest_even"},
    {"rsqrt", "stablehlo.rsqrt"},
    {"select", "stablehlo.select"},
    {"shift-left", "stablehlo.shift_left"},
    {"shift-right-arithmetic", "stablehlo.shift_right_arithmetic"},
    {"shift-right-logical", "stablehlo.shift_right_logical"},
    {"sign", "stablehlo.sign"},
    {"sine", "stablehlo.sine"},
    {"sqrt", "stablehlo.sqrt"},
    {"subtract", "stablehlo.subtract"},
    {"tan", "stablehlo.tan"},
    {"tanh", "stablehlo.tanh"},
    {"xor", "stablehlo.xor"},
    {"after-all", "stablehlo.after_all"},
};

// Opcodes that pass their first operand through unchanged: `copy` changes
// only a layout, which Kiln's row-major buffers do not have.
constexpr std::string_view kIdentityOps[] = {"copy", "add-dependency",
                                             "domain"};

Type I64() { return Type::Element(ElementType::kI64); }
Attribute I64Attr(int64_t value) { return Attribute::Integer(value, I64()); }
Attribute I32Attr(int64_t value) {
  return Attribute::Integer(value, Type::Element(ElementType::kI32));
}
template <typename Range>
Attribute I64Array(const Range& values) {
  return Attribute::DenseI64Array(
      std::vector<int64_t>(values.begin(), values.end()));
}
template <typename Range>
std::vector<int64_t> Ints(const Range& values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

// A tensor<Nx2xi64> of (low, high) pairs, as StableHLO writes paddings.
Attribute PaddingAttr(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  std::string data;
  for (const auto& [low, high] : pairs) {
    data.append(reinterpret_cast<const char*>(&low), sizeof(low));
    data.append(reinterpret_cast<const char*>(&high), sizeof(high));
  }
  Type type = Type::Tensor({static_cast<int64_t>(pairs.size()), 2}, I64());
  return Attribute::DenseElements(type, std::move(data), /*splat=*/false);
}

std::optional<int64_t> ComparisonDirection(std::string_view name) {
  static const std::pair<std::string_view, int64_t> kDirections[] = {
      {"EQ", ir::kEQ}, {"NE", ir::kNE}, {"GE", ir::kGE},
      {"GT", ir::kGT}, {"LE", ir::kLE}, {"LT", ir::kLT}};
  for (const auto& [text, value] : kDirections) {
    if (text == name) return value;
  }
  return std::nullopt;
}

std::optional<int64_t> ComparisonType(std::string_view name) {
  static const std::pair<std::string_view, int64_t> kTypes[] = {
      {"FLOAT", ir::kFloatCompare},
      {"TOTALORDER", ir::kTotalOrder},
      {"SIGNED", ir::kSignedCompare},
      {"UNSIGNED", ir::kUnsignedCompare}};
  for (const auto& [text, value] : kTypes) {
    if (text == name) return value;
  }
  return std::nullopt;
}

// Sets precision_config when some operand asks for more than DEFAULT.
void SetPrecision(ir::Operation& op, const xla::PrecisionConfig& config,
                  int operands) {
  bool any = false;
  for (int precision : config.operand_precision()) any |= precision != 0;
  if (!any) return;
  std::vector<Attribute> values;
  for (int i = 0; i < operands; ++i) {
    int precision =
        i < config.operand_precision_size() ? config.operand_precision(i) : 0;
    values.push_back(Attribute::Enum(ir::EnumKind::kPrecision,
                                     std::clamp(precision, 0, 2)));
  }
  op.SetAttr("precision_config", Attribute::Array(std::move(values)));
}

}  // namespace

std::string Describe(const xla::HloInstructionProto& instr) {
  return StrCat("HLO instruction ", instr.name(), " (", instr.opcode(), ")");
}

ir::Location Emitter::LocationOf(const xla::HloInstructionProto& instr) const {
  return ir::Location::Name(instr.name());
}

ir::Operation* Emitter::Append(Scope& scope,
                               const xla::HloInstructionProto& instr,
                               std::string_view name,
                               std::vector<Value*> operands,
                               std::vector<Type> results) {
  auto op = std::make_unique<ir::Operation>(std::string(name),
                                            std::move(results),
                                            LocationOf(instr));
  op->set_operands(std::move(operands));
  return scope.block->Append(std::move(op));
}

StatusOr<const xla::HloComputationProto*> Emitter::Called(
    int64_t id, std::string_view what) {
  auto it = computations_.find(id);
  if (it == computations_.end()) {
    return InvalidArgumentError(what, " calls computation ", id,
                                ", which the module lacks");
  }
  return it->second;
}

Status Emitter::EmitRegion(ir::Operation& op, int64_t computation_id,
                           std::string_view what) {
  ASSIGN_OR_RETURN(const xla::HloComputationProto* called,
                   Called(computation_id, what));
  std::map<int64_t, const xla::ShapeProto*> parameters;
  for (const auto& instr : called->instructions()) {
    if (instr.opcode() == "parameter") {
      parameters[instr.parameter_number()] = &instr.shape();
    }
  }
  ir::Block& block = op.AddRegion().AddBlock();
  std::vector<Value*> arguments;
  for (const auto& [number, shape] : parameters) {
    ASSIGN_OR_RETURN(std::vector<Type> types,
                     LeafTypes(*shape, StrCat(what, ": parameter ", number)));
    for (Type& type : types) arguments.push_back(block.AddArgument(type));
  }
  ASSIGN_OR_RETURN(std::vector<Value*> results,
                   EmitComputation(*called, block, arguments));
  auto ret = std::make_unique<ir::Operation>("stablehlo.return",
                                             std::vector<Type>{}, op.loc());
  ret->set_operands(std::move(results));
  block.Append(std::move(ret));
  return OkStatus();
}

Status Emitter::EmitCapturingRegion(ir::Operation& op, int64_t computation_id,
                                    const std::vector<Value*>& leaves,
                                    std::string_view what) {
  ASSIGN_OR_RETURN(const xla::HloComputationProto* called,
                   Called(computation_id, what));
  ir::Block& block = op.AddRegion().AddBlock();
  ASSIGN_OR_RETURN(std::vector<Value*> results,
                   EmitComputation(*called, block, leaves));
  auto ret = std::make_unique<ir::Operation>("stablehlo.return",
                                             std::vector<Type>{}, op.loc());
  ret->set_operands(std::move(results));
  block.Append(std::move(ret));
  return OkStatus();
}

StatusOr<std::vector<Value*>> Emitter::EmitComputation(
    const xla::HloComputationProto& computation, ir::Block& block,
    const std::vector<Value*>& parameter_leaves) {
  if (depth_ >= kMaxDepth) {
    return InvalidArgumentError(source_name_, ": computation ",
                                computation.name(), " is nested more than ",
                                kMaxDepth, " deep");
  }
  ++depth_;
  struct DepthGuard {
    int& depth;
    ~DepthGuard() { --depth; }
  } guard{depth_};

  std::map<int64_t, const xla::ShapeProto*> parameters;
  for (const auto& instr : computation.instructions()) {
    if (instr.opcode() == "parameter") {
      if (!parameters.emplace(instr.parameter_number(), &instr.shape()).second) {
        return InvalidArgumentError(source_name_, ": computation ",
                                    computation.name(), " has parameter ",
                                    instr.parameter_number(), " twice");
      }
    }
  }
  std::vector<int> offsets;
  int total = 0;
  int64_t expected = 0;
  for (const auto& [number, shape] : parameters) {
    if (number != expected++) {
      return InvalidArgumentError(source_name_, ": computation ",
                                  computation.name(), " lacks parameter ",
                                  expected - 1);
    }
    offsets.push_back(total);
    ASSIGN_OR_RETURN(std::vector<Type> types,
                     LeafTypes(*shape, computation.name()));
    total += static_cast<int>(types.size());
  }
  offsets.push_back(total);
  if (total != static_cast<int>(parameter_leaves.size())) {
    return InvalidArgumentError(source_name_, ": computation ",
                                computation.name(), " takes ", total,
                                " values, called with ",
                                parameter_leaves.size());
  }
  Scope scope{&computation, &block, {}};
  for (const auto& instr : computation.instructions()) {
    RETURN_IF_ERROR(EmitInstruction(scope, instr, parameter_leaves, offsets));
  }
  auto root = scope.values.find(computation.root_id());
  if (root == scope.values.end()) {
    return InvalidArgumentError(source_name_, ": computation ",
                                computation.name(), " has no root (id ",
                                computation.root_id(), ")");
  }
  return root->second.leaves;
}

Status Emitter::EmitInstruction(Scope& scope,
                                const xla::HloInstructionProto& instr,
                                const std::vector<Value*>& parameter_leaves,
                                const std::vector<int>& offsets) {
  std::string what = StrCat(source_name_, ": ", Describe(instr),
                            " in computation ", scope.computation->name());
  HloValue value;
  value.shape = &instr.shape();
  ASSIGN_OR_RETURN(std::vector<Type> types, LeafTypes(instr.shape(), what));
  if (instr.opcode() == "parameter") {
    int64_t number = instr.parameter_number();
    value.leaves.assign(parameter_leaves.begin() + offsets[number],
                        parameter_leaves.begin() + offsets[number + 1]);
  } else {
    std::vector<const HloValue*> operands;
    for (int64_t id : instr.operand_ids()) {
      auto it = scope.values.find(id);
      if (it == scope.values.end()) {
        return InvalidArgumentError(what, ": operand id ", id,
                                    " is not an earlier instruction of the "
                                    "computation");
      }
      operands.push_back(&it->second);
    }
    size_t first_new = scope.block->operations().size();
    StatusOr<std::vector<Value*>> leaves = Convert(scope, instr, operands);
    if (!leaves.ok()) {
      // Messages from nested computations already name their instruction.
      if (leaves.status().message().find(source_name_) == 0) {
        return leaves.status();
      }
      return Status(leaves.status().code(),
                    StrCat(what, ": ", leaves.status().message()));
    }
    value.leaves = std::move(*leaves);
    for (size_t i = first_new; i < scope.block->operations().size(); ++i) {
      ir::EraseDefaultAttributes(*scope.block->operations()[i]);
    }
    ++seen_[instr.opcode()];
  }
  if (value.leaves.size() != types.size()) {
    return InvalidArgumentError(what, ": gives ", value.leaves.size(),
                                " values for a shape of ", types.size());
  }
  for (size_t i = 0; i < types.size(); ++i) {
    if (value.leaves[i]->type() != types[i]) {
      return InvalidArgumentError(
          what, ": value ", i, " has another type than the instruction's "
          "shape says");
    }
  }
  if (!scope.values.emplace(instr.id(), std::move(value)).second) {
    return InvalidArgumentError(what, ": instruction id ", instr.id(),
                                " appears twice");
  }
  return OkStatus();
}

StatusOr<std::vector<Value*>> Emitter::Convert(
    Scope& scope, const xla::HloInstructionProto& instr,
    const std::vector<const HloValue*>& operands) {
  const std::string& opcode = instr.opcode();
  ASSIGN_OR_RETURN(std::vector<Type> results, LeafTypes(instr.shape(), opcode));
  // Every leaf of every operand, in order.
  std::vector<Value*> all;
  for (const HloValue* operand : operands) {
    all.insert(all.end(), operand->leaves.begin(), operand->leaves.end());
  }
  auto need_operands = [&](size_t count) -> Status {
    if (operands.size() != count) {
      return InvalidArgumentError("takes ", count, " operands, has ",
                                  operands.size());
    }
    for (const HloValue* operand : operands) {
      if (operand->leaves.size() != 1) {
        return InvalidArgumentError("an operand is a tuple");
      }
    }
    return OkStatus();
  };
  auto need_array = [&]() -> Status {
    if (results.size() != 1 || instr.shape().element_type() == xla::TUPLE) {
      return InvalidArgumentError("the result must be an array");
    }
    return OkStatus();
  };
  auto need_called = [&](int count) -> Status {
    if (instr.called_computation_ids_size() != count) {
      return InvalidArgumentError("calls ", instr.called_computation_ids_size(),
                                  " computations, expected ", count);
    }
    return OkStatus();
  };
  auto op_results = [](ir::Operation* op) { return op->results(); };

  for (const DirectOp& direct : kDirectOps) {
    if (direct.opcode != opcode) continue;
    if (opcode != "after-all") RETURN_IF_ERROR(need_array());
    for (const HloValue* operand : operands) {
      if (operand->leaves.size() != 1) {
        return InvalidArgumentError("an operand is a tuple");
      }
    }
    return op_results(Append(scope, instr, direct.op, all, results));
  }
  for (std::string_view identity : kIdentityOps) {
    if (identity != opcode) continue;
    if (operands.empty()) return InvalidArgumentError("has no operand");
    return operands[0]->leaves;
  }

  if (opcode == "constant") {
    RETURN_IF_ERROR(need_operands(0));
    RETURN_IF_ERROR(need_array());
    ASSIGN_OR_RETURN(Attribute value,
                     LiteralAttribute(instr.literal(), instr.shape(), opcode));
    ir::Operation* op = Append(scope, instr, "stablehlo.constant", {}, results);
    op->SetAttr("value", value);
    return op_results(op);
  }
  if (opcode == "tuple") return all;
  if (opcode == "get-tuple-element") {
    if (operands.size() != 1) return InvalidArgumentError("takes one operand");
    ASSIGN_OR_RETURN(auto range, LeafRange(*operands[0]->shape,
                                           {instr.tuple_index()}, opcode));
    return std::vector<Value*>(
        operands[0]->leaves.begin() + range.first,
        operands[0]->leaves.begin() + range.first + range.second);
  }
  if (opcode == "call" || opcode == "fusion") {
    // Inlined: the callee's instructions run on the operands where the
    // call stands.
    RETURN_IF_ERROR(need_called(1));
    ASSIGN_OR_RETURN(const xla::HloComputationProto* called,
                     Called(instr.called_computation_ids(0), opcode));
    return EmitComputation(*called, *scope.block, all);
  }
  if (opcode == "opt-barrier") {
    return op_results(Append(scope, instr, "stablehlo.optimization_barrier",
                             all, results));
  }
  if (opcode == "compare") {
    RETURN_IF_ERROR(need_operands(2));
    RETURN_IF_ERROR(need_array());
    std::optional<int64_t> direction =
        ComparisonDirection(instr.comparison_direction());
    if (!direction) {
      return InvalidArgumentError("comparison direction '",
                                  instr.comparison_direction(),
                                  "' is not one of EQ NE GE GT LE LT");
    }
    ir::Operation* op = Append(scope, instr, "stablehlo.compare", all, results);
    op->SetAttr("comparison_direction",
                Attribute::Enum(ir::EnumKind::kComparisonDirection, *direction));
    if (!instr.comparison_type().empty()) {
      std::optional<int64_t> type = ComparisonType(instr.comparison_type());
      if (!type) {
        return InvalidArgumentError("comparison type '",
                                    instr.comparison_type(),
                                    "' is not one of FLOAT TOTALORDER SIGNED "
                                    "UNSIGNED");
      }
      op->SetAttr("compare_type",
                  Attribute::Enum(ir::EnumKind::kComparisonType, *type));
    }
    return op_results(op);
  }
  if (opcode == "iota") {
    RETURN_IF_ERROR(need_operands(0));
    RETURN_IF_ERROR(need_array());
    if (instr.dimensions_size() != 1) {
      return InvalidArgumentError("needs one iota dimension");
    }
    ir::Operation* op = Append(scope, instr, "stablehlo.iota", {}, results);
    op->SetAttr("iota_dimension", I64Attr(instr.dimensions(0)));
    return op_results(op);
  }
  if (opcode == "broadcast") {
    // HLO's broadcast maps operand dimensions to result dimensions, as
    // broadcast_in_dim does.
    RETURN_IF_ERROR(need_operands(1));
    RETURN_IF_ERROR(need_array());
    ir::Operation* op =
        Append(scope, instr, "stablehlo.broadcast_in_dim", all, results);
    op->SetAttr("broadcast_dimensions", I64Array(instr.dimensions()));
    return op_results(op);
  }
  if (opcode == "reshape" || opcode == "bitcast") {
    RETURN_IF_ERROR(need_operands(1));
    RETURN_IF_ERROR(need_array());
    if (all[0]->type().element() != results[0].element()) {
      return UnimplementedError("a bitcast that changes the element type");
    }
    return op_results(Append(scope, instr, "stablehlo.reshape", all, results));
  }
  if (opcode == "transpose") {
    RETURN_IF_ERROR(need_operands(1));
    RETURN_IF_ERROR(need_array());
    ir::Operation* op =
        Append(scope, instr, "stablehlo.transpose", all, results);
    op->SetAttr("permutation", I64Array(instr.dimensions()));
    return op_results(op);
  }
  if (opcode == "reverse") {
    RETURN_IF_ERROR(need_operands(1));
    RETURN_IF_ERROR(need_array());
    ir::Operation* op = Append(scope, instr, "stablehlo.reverse", all, results);
    op->SetAttr("dimensions", I64Array(instr.dimensions()));
    return op_results(op);
  }
  if (opcode == "slice") {
    RETURN_IF_ERROR(need_operands(1));
    RETURN_IF_ERROR(need_array());
    std::vector<int64_t> start, limit, strides;
    for (const auto& dim : instr.slice_dimensions()) {
      start.push_back(dim.start());
      limit.push_back(dim.limit());
      strides.push_back(dim.stride() == 0 ? 1 : dim.stride());
    }
    ir::Operation* op = Append(scope, instr, "stablehlo.slice", all, results);
    op->SetAttr("start_indices", Attribute::DenseI64Array(start));
    op->SetAttr("limit_indices", Attribute::DenseI64Array(limit));
    op->SetAttr("strides", Attribute::DenseI64Array(strides));
    return op_results(op);
  }
  if (opcode == "dynamic-slice") {
    RETURN_IF_ERROR(need_array());
    ir::Operation* op =
        Append(scope, instr, "stablehlo.dynamic_slice", all, results);
    op->SetAttr("slice_sizes", I64Array(instr.dynamic_slice_sizes()));
    return op_results(op);
  }
  if (opcode == "dynamic-update-slice") {
    RETURN_IF_ERROR(need_array());
    return op_results(Append(scope, instr, "stablehlo.dynamic_update_slice",
                             all, results));
  }
  if (opcode == "concatenate") {
    RETURN_IF_ERROR(need_array());
    if (instr.dimensions_size() != 1) {
      return InvalidArgumentError("needs one concatenate dimension");
    }
    ir::Operation* op =
        Append(scope, instr, "stablehlo.concatenate", all, results);
    op->SetAttr("dimension", I64Attr(instr.dimensions(0)));
    return op_results(op);
  }
  if (opcode == "pad") {
    RETURN_IF_ERROR(need_operands(2));
    RETURN_IF_ERROR(need_array());
    std::vector<int64_t> low, high, interior;
    for (const auto& dim : instr.padding_config().dimensions()) {
      low.push_back(dim.edge_padding_low());
      high.push_back(dim.edge_padding_high());
      interior.push_back(dim.interior_padding());
    }
    ir::Operation* op = Append(scope, instr, "stablehlo.pad", all, results);
    op->SetAttr("edge_padding_low", Attribute::DenseI64Array(low));
    op->SetAttr("edge_padding_high", Attribute::DenseI64Array(high));
    op->SetAttr("interior_padding", Attribute::DenseI64Array(interior));
    return op_results(op);
  }
  if (opcode == "dot") {
    RETURN_IF_ERROR(need_operands(2));
    RETURN_IF_ERROR(need_array());
    const xla::DotDimensionNumbers& numbers = instr.dot_dimension_numbers();
    ir::DotDimensionNumbers dot;
    dot.lhs_batching_dimensions = Ints(numbers.lhs_batch_dimensions());
    dot.rhs_batching_dimensions = Ints(numbers.rhs_batch_dimensions());
    dot.lhs_contracting_dimensions = Ints(numbers.lhs_contracting_dimensions());
    dot.rhs_contracting_dimensions = Ints(numbers.rhs_contracting_dimensions());
    ir::Operation* op =
        Append(scope, instr, "stablehlo.dot_general", all, results);
    op->SetAttr("dot_dimension_numbers", Attribute::Dot(std::move(dot)));
    SetPrecision(*op, instr.precision_config(), 2);
    return op_results(op);
  }
  if (opcode == "convolution") {
    RETURN_IF_ERROR(need_operands(2));
    RETURN_IF_ERROR(need_array());
    const auto& numbers = instr.convolution_dimension_numbers();
    ir::ConvDimensionNumbers conv;
    conv.input_batch_dimension = numbers.input_batch_dimension();
    conv.input_feature_dimension = numbers.input_feature_dimension();
    conv.input_spatial_dimensions = Ints(numbers.input_spatial_dimensions());
    conv.kernel_input_feature_dimension =
        numbers.kernel_input_feature_dimension();
    conv.kernel_output_feature_dimension =
        numbers.kernel_output_feature_dimension();
    conv.kernel_spatial_dimensions = Ints(numbers.kernel_spatial_dimensions());
    conv.output_batch_dimension = numbers.output_batch_dimension();
    conv.output_feature_dimension = numbers.output_feature_dimension();
    conv.output_spatial_dimensions = Ints(numbers.output_spatial_dimensions());
    std::vector<int64_t> strides, lhs_dilation, rhs_dilation;
    std::vector<bool> reversal;
    std::vector<std::pair<int64_t, int64_t>> padding;
    for (const auto& dim : instr.window().dimensions()) {
      strides.push_back(dim.stride() == 0 ? 1 : dim.stride());
      lhs_dilation.push_back(dim.base_dilation() == 0 ? 1 : dim.base_dilation());
      rhs_dilation.push_back(dim.window_dilation() == 0 ? 1
                                                        : dim.window_dilation());
      reversal.push_back(dim.window_reversal());
      padding.emplace_back(dim.padding_low(), dim.padding_high());
    }
    ir::Operation* op =
        Append(scope, instr, "stablehlo.convolution", all, results);
    op->SetAttr("window_strides", Attribute::DenseI64Array(strides));
    op->SetAttr("padding", PaddingAttr(padding));
    op->SetAttr("lhs_dilation", Attribute::DenseI64Array(lhs_dilation));
    op->SetAttr("rhs_dilation", Attribute::DenseI64Array(rhs_dilation));
    op->SetAttr("window_reversal", Attribute::DenseBoolArray(reversal));
    op->SetAttr("dimension_numbers", Attribute::Conv(std::move(conv)));
    op->SetAttr("feature_group_count",
                I64Attr(std::max<int64_t>(1, instr.feature_group_count())));
    op->SetAttr("batch_group_count",
                I64Attr(std::max<int64_t>(1, instr.batch_group_count())));
    SetPrecision(*op, instr.precision_config(), 2);
    return op_results(op);
  }
  if (opcode == "reduce") {
    RETURN_IF_ERROR(need_called(1));
    if (operands.size() % 2 != 0 || operands.empty()) {
      return InvalidArgumentError("needs inputs and as many init values");
    }
    ir::Operation* op = Append(scope, instr, "stablehlo.reduce", all, results);
    op->SetAttr("dimensions", I64Array(instr.dimensions()));
    RETURN_IF_ERROR(EmitRegion(*op, instr.called_computation_ids(0), opcode));
    return op_results(op);
  }
  if (opcode == "reduce-window") {
    RETURN_IF_ERROR(need_called(1));
    if (operands.size() % 2 != 0 || operands.empty()) {
      return InvalidArgumentError("needs inputs and as many init values");
    }
    std::vector<int64_t> sizes, strides, base, window;
    std::vector<std::pair<int64_t, int64_t>> padding;
    for (const auto& dim : instr.window().dimensions()) {
      sizes.push_back(dim.size());
      strides.push_back(dim.stride() == 0 ? 1 : dim.stride());
      base.push_back(dim.base_dilation() == 0 ? 1 : dim.base_dilation());
      window.push_back(dim.window_dilation() == 0 ? 1 : dim.window_dilation());
      padding.emplace_back(dim.padding_low(), dim.padding_high());
    }
    ir::Operation* op =
        Append(scope, instr, "stablehlo.reduce_window", all, results);
    op->SetAttr("window_dimensions", Attribute::DenseI64Array(sizes));
    op->SetAttr("window_strides", Attribute::DenseI64Array(strides));
    op->SetAttr("base_dilations", Attribute::DenseI64Array(base));
    op->SetAttr("window_dilations", Attribute::DenseI64Array(window));
    op->SetAttr("padding", PaddingAttr(padding));
    RETURN_IF_ERROR(EmitRegion(*op, instr.called_computation_ids(0), opcode));
    return op_results(op);
  }
  if (opcode == "select-and-scatter") {
    RETURN_IF_ERROR(need_operands(3));
    RETURN_IF_ERROR(need_called(2));
    std::vector<int64_t> sizes, strides;
    std::vector<std::pair<int64_t, int64_t>> padding;
    for (const auto& dim : instr.window().dimensions()) {
      sizes.push_back(dim.size());
      strides.push_back(dim.stride() == 0 ? 1 : dim.stride());
      padding.emplace_back(dim.padding_low(), dim.padding_high());
    }
    ir::Operation* op =
        Append(scope, instr, "stablehlo.select_and_scatter", all, results);
    op->SetAttr("window_dimensions", Attribute::DenseI64Array(sizes));
    op->SetAttr("window_strides", Attribute::DenseI64Array(strides));
    op->SetAttr("padding", PaddingAttr(padding));
    RETURN_IF_ERROR(EmitRegion(*op, instr.called_computation_ids(0), opcode));
    RETURN_IF_ERROR(EmitRegion(*op, instr.called_computation_ids(1), opcode));
    return op_results(op);
  }
  if (opcode == "sort") {
    RETURN_IF_ERROR(need_called(1));
    if (instr.dimensions_size() != 1) {
      return InvalidArgumentError("needs one sort dimension");
    }
    ir::Operation* op = Append(scope, instr, "stablehlo.sort", all, results);
    op->SetAttr("dimension", I64Attr(instr.dimensions(0)));
    op->SetAttr("is_stable", Attribute::Bool(instr.is_stable()));
    RETURN_IF_ERROR(EmitRegion(*op, instr.called_computation_ids(0), opcode));
    return op_results(op);
  }
  if (opcode == "gather") {
    RETURN_IF_ERROR(need_operands(2));
    RETURN_IF_ERROR(need_array());
    const auto& numbers = instr.gather_dimension_numbers();
    ir::GatherDimensionNumbers gather;
    gather.offset_dims = Ints(numbers.offset_dims());
    gather.collapsed_slice_dims = Ints(numbers.collapsed_slice_dims());
    gather.operand_batching_dims = Ints(numbers.operand_batching_dims());
    gather.start_indices_batching_dims =
        Ints(numbers.start_indices_batching_dims());
    gather.start_index_map = Ints(numbers.start_index_map());
    gather.index_vector_dim = numbers.index_vector_dim();
    ir::Operation* op = Append(scope, instr, "stablehlo.gather", all, results);
    op->SetAttr("dimension_numbers", Attribute::Gather(std::move(gather)));
    op->SetAttr("slice_sizes", I64Array(instr.gather_slice_sizes()));
    op->SetAttr("indices_are_sorted",
                Attribute::Bool(instr.indices_are_sorted()));
    return op_results(op);
  }
  if (opcode == "scatter") {
    RETURN_IF_ERROR(need_called(1));
    if (operands.size() < 3 || operands.size() % 2 == 0) {
      return InvalidArgumentError(
          "needs inputs, indices and as many updates as inputs");
    }
    const auto& numbers = instr.scatter_dimension_numbers();
    ir::ScatterDimensionNumbers scatter;
    scatter.update_window_dims = Ints(numbers.update_window_dims());
    scatter.inserted_window_dims = Ints(numbers.inserted_window_dims());
    scatter.input_batching_dims = Ints(numbers.input_batching_dims());
    scatter.scatter_indices_batching_dims =
        Ints(numbers.scatter_indices_batching_dims());
    scatter.scatter_dims_to_operand_dims =
        Ints(numbers.scatter_dims_to_operand_dims());
    scatter.index_vector_dim = numbers.index_vector_dim();
    ir::Operation* op = Append(scope, instr, "stablehlo.scatter", all, results);
    op->SetAttr("scatter_dimension_numbers",
                Attribute::Scatter(std::move(scatter)));
    op->SetAttr("indices_are_sorted",
                Attribute::Bool(instr.indices_are_sorted()));
    op->SetAttr("unique_indices", Attribute::Bool(instr.unique_indices()));
    RETURN_IF_ERROR(EmitRegion(*op, instr.called_computation_ids(0), opcode));
    return op_results(op);
  }
  if (opcode == "map") {
    RETURN_IF_ERROR(need_called(1));
    RETURN_IF_ERROR(need_array());
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < results[0].rank(); ++i) dims.push_back(i);
    ir::Operation* op = Append(scope, instr, "stablehlo.map", all, results);
    op->SetAttr("dimensions", Attribute::DenseI64Array(dims));
    RETURN_IF_ERROR(EmitRegion(*op, instr.called_computation_ids(0), opcode));
    return op_results(op);
  }
  if (opcode == "while") {
    // called_computation_ids: body, then condition (XLA's order).
    RETURN_IF_ERROR(need_called(2));
    if (operands.size() != 1) return InvalidArgumentError("takes one operand");
    ir::Operation* op = Append(scope, instr, "stablehlo.while", all, results);
    RETURN_IF_ERROR(EmitRegion(*op, instr.called_computation_ids(1),
                               "while condition"));
    RETURN_IF_ERROR(
        EmitRegion(*op, instr.called_computation_ids(0), "while body"));
    return op_results(op);
  }
  if (opcode == "conditional") {
    // Operand 0 selects: a pred picks true/false computation, an s32 index
    // picks a branch (out of range: the last). Each branch reads its own
    // operand, captured from here.
    int branches = instr.called_computation_ids_size();
    if (branches < 1 || static_cast<int>(operands.size()) != branches + 1 ||
        operands[0]->leaves.size() != 1) {
      return InvalidArgumentError("needs a selector and one operand per branch");
    }
    Value* selector = operands[0]->leaves[0];
    bool is_pred = selector->type().IsTensor() &&
                   selector->type().element().element_type() == ElementType::kI1;
    if (is_pred && branches != 2) {
      return InvalidArgumentError("a pred selector needs two branches");
    }
    ir::Operation* op = Append(scope, instr,
                               is_pred ? "stablehlo.if" : "stablehlo.case",
                               {selector}, results);
    for (int i = 0; i < branches; ++i) {
      RETURN_IF_ERROR(EmitCapturingRegion(*op, instr.called_computation_ids(i),
                                          operands[i + 1]->leaves,
                                          StrCat("branch ", i)));
    }
    return op_results(op);
  }
  if (opcode == "custom-call") {
    ir::Operation* op =
        Append(scope, instr, "stablehlo.custom_call", all, results);
    op->SetAttr("call_target_name",
                Attribute::String(instr.custom_call_target()));
    if (!instr.backend_config().empty()) {
      op->SetAttr("backend_config", Attribute::String(instr.backend_config()));
    }
    return op_results(op);
  }
  if (opcode == "rng") {
    // stablehlo.rng takes the result shape as a tensor operand.
    RETURN_IF_ERROR(need_operands(2));
    RETURN_IF_ERROR(need_array());
    if (instr.distribution() != ir::kUniform &&
        instr.distribution() != ir::kNormal) {
      return InvalidArgumentError("distribution ", instr.distribution(),
                                  " is not RNG_UNIFORM or RNG_NORMAL");
    }
    std::vector<int64_t> dims = results[0].shape();
    std::string data(reinterpret_cast<const char*>(dims.data()),
                     dims.size() * sizeof(int64_t));
    Type shape_type = Type::Tensor({static_cast<int64_t>(dims.size())}, I64());
    ir::Operation* shape =
        Append(scope, instr, "stablehlo.constant", {}, {shape_type});
    shape->SetAttr("value",
                   Attribute::DenseElements(shape_type, std::move(data), false));
    std::vector<Value*> rng_operands = all;
    rng_operands.push_back(shape->result(0));
    ir::Operation* op =
        Append(scope, instr, "stablehlo.rng", rng_operands, results);
    op->SetAttr("rng_distribution", Attribute::Enum(ir::EnumKind::kRngDistribution,
                                                    instr.distribution()));
    return op_results(op);
  }
  if (opcode == "rng-bit-generator") {
    RETURN_IF_ERROR(need_operands(1));
    ir::Operation* op =
        Append(scope, instr, "stablehlo.rng_bit_generator", all, results);
    op->SetAttr("rng_algorithm",
                Attribute::Enum(ir::EnumKind::kRngAlgorithm,
                                std::clamp(instr.rng_algorithm(), 0, 2)));
    return op_results(op);
  }
  if (opcode == "reduce-precision") {
    RETURN_IF_ERROR(need_operands(1));
    RETURN_IF_ERROR(need_array());
    ir::Operation* op =
        Append(scope, instr, "stablehlo.reduce_precision", all, results);
    op->SetAttr("exponent_bits", I32Attr(instr.exponent_bits()));
    op->SetAttr("mantissa_bits", I32Attr(instr.mantissa_bits()));
    return op_results(op);
  }
  if (opcode == "batch-norm-training" || opcode == "batch-norm-inference" ||
      opcode == "batch-norm-grad") {
    std::string name = "stablehlo." + opcode;
    std::replace(name.begin(), name.end(), '-', '_');
    ir::Operation* op = Append(scope, instr, name, all, results);
    op->SetAttr("epsilon", Attribute::Float(instr.epsilon(),
                                            Type::Element(ElementType::kF32)));
    op->SetAttr("feature_index", I64Attr(instr.feature_index()));
    return op_results(op);
  }
  if (opcode == "cholesky") {
    RETURN_IF_ERROR(need_operands(1));
    ir::Operation* op =
        Append(scope, instr, "stablehlo.cholesky", all, results);
    op->SetAttr("lower", Attribute::Bool(instr.cholesky_options().lower()));
    return op_results(op);
  }
  if (opcode == "triangular-solve") {
    RETURN_IF_ERROR(need_operands(2));
    const auto& options = instr.triangular_solve_options();
    ir::Operation* op =
        Append(scope, instr, "stablehlo.triangular_solve", all, results);
    op->SetAttr("left_side", Attribute::Bool(options.left_side()));
    op->SetAttr("lower", Attribute::Bool(options.lower()));
    op->SetAttr("unit_diagonal", Attribute::Bool(options.unit_diagonal()));
    op->SetAttr("transpose_a",
                Attribute::Enum(ir::EnumKind::kTranspose,
                                std::clamp(options.transpose_a(), 1, 3)));
    return op_results(op);
  }
  if (opcode == "fft") {
    RETURN_IF_ERROR(need_operands(1));
    ir::Operation* op = Append(scope, instr, "stablehlo.fft", all, results);
    op->SetAttr("fft_type", Attribute::Enum(ir::EnumKind::kFftType,
                                            std::clamp(instr.fft_type(), 0, 3)));
    op->SetAttr("fft_length", I64Array(instr.fft_length()));
    return op_results(op);
  }
  if (opcode == "partition-id" || opcode == "replica-id") {
    RETURN_IF_ERROR(need_operands(0));
    return op_results(Append(scope, instr,
                             opcode == "partition-id" ? "stablehlo.partition_id"
                                                      : "stablehlo.replica_id",
                             {}, results));
  }
  if (opcode == "get-dimension-size") {
    RETURN_IF_ERROR(need_operands(1));
    if (instr.dimensions_size() != 1) {
      return InvalidArgumentError("needs one dimension");
    }
    ir::Operation* op =
        Append(scope, instr, "stablehlo.get_dimension_size", all, results);
    op->SetAttr("dimension", I64Attr(instr.dimensions(0)));
    return op_results(op);
  }
  if (opcode == "topk") {
    RETURN_IF_ERROR(need_operands(1));
    if (!instr.largest()) {
      return UnimplementedError("topk of the smallest elements");
    }
    ir::Operation* op = Append(scope, instr, "chlo.top_k", all, results);
    op->SetAttr("k", I64Attr(instr.k()));
    return op_results(op);
  }
  return UnimplementedError("HLO opcode '", opcode,
                            "' is not supported by Kiln's HLO reader");
}

}  // namespace kiln::parse::hlo
