#include "parse/bytecode/vhlo_ops.h"

#include <algorithm>
#include <unordered_map>

#include "base/strings.h"
#include "ir/attr_defaults.h"

namespace kiln::parse::bytecode {
namespace {

const std::unordered_map<std::string_view, VhloOpInfo>& VhloOps() {
  static const auto* kOps = [] {
    auto* ops = new std::unordered_map<std::string_view, VhloOpInfo>();
    auto add = [ops](std::string_view name, std::string_view target,
                     std::string_view properties) {
      VhloOpInfo info{name, target, {}};
      if (!properties.empty()) {
        for (std::string_view piece : StrSplit(properties, ',')) {
          info.properties.push_back(piece);
        }
      }
      ops->emplace(name, std::move(info));
    };
#define KILN_VHLO_OP(name, target, properties) add(name, target, properties);
#include "parse/bytecode/vhlo_ops.def"
#undef KILN_VHLO_OP
    return ops;
  }();
  return *kOps;
}

// "compare" for "compare_v1".
std::string_view BaseName(std::string_view name) {
  size_t suffix = name.rfind("_v");
  return suffix == std::string_view::npos ? name : name.substr(0, suffix);
}

// VHLO tensors that StableHLO keeps as dense arrays (array<i64: ...> or
// array<i1: ...>), by op.
struct DenseArrayAttr {
  std::string_view op;
  std::string_view attribute;
  bool is_bool = false;
};
constexpr DenseArrayAttr kDenseArrays[] = {
    {"broadcast", "broadcast_sizes"},
    {"broadcast_in_dim", "broadcast_dimensions"},
    {"convolution", "lhs_dilation"},
    {"convolution", "rhs_dilation"},
    {"convolution", "window_strides"},
    {"convolution", "window_reversal", true},
    {"dynamic_broadcast_in_dim", "broadcast_dimensions"},
    {"dynamic_broadcast_in_dim", "known_expanding_dimensions"},
    {"dynamic_broadcast_in_dim", "known_nonexpanding_dimensions"},
    {"dynamic_conv", "lhs_dilation"},
    {"dynamic_conv", "rhs_dilation"},
    {"dynamic_conv", "window_strides"},
    {"dynamic_conv", "window_reversal", true},
    {"dynamic_slice", "slice_sizes"},
    {"fft", "fft_length"},
    {"gather", "slice_sizes"},
    {"map", "dimensions"},
    {"pad", "edge_padding_high"},
    {"pad", "edge_padding_low"},
    {"pad", "interior_padding"},
    {"reduce", "dimensions"},
    {"reduce_window", "base_dilations"},
    {"reduce_window", "window_dilations"},
    {"reduce_window", "window_dimensions"},
    {"reduce_window", "window_strides"},
    {"reverse", "dimensions"},
    {"select_and_scatter", "window_dimensions"},
    {"select_and_scatter", "window_strides"},
    {"slice", "limit_indices"},
    {"slice", "start_indices"},
    {"slice", "strides"},
    {"transpose", "permutation"},
};

// Collectives whose `channel_id` becomes a channel handle of type 0.
constexpr std::string_view kChannelIdOps[] = {
    "all_gather",           "all_reduce",         "all_to_all",
    "collective_broadcast", "collective_permute", "collective_reduce",
    "reduce_scatter",
};

// VHLO booleans that StableHLO keeps as unit flags (present when true).
constexpr std::string_view kUnitFlags[] = {"use_global_device_ids",
                                           "has_dynamic_root"};

// Takes attributes out of a VHLO op's list, with the op in messages.
class Fields {
 public:
  Fields(const VhloOpInfo& info, ir::NamedAttrList& attributes)
      : info_(info), attributes_(attributes) {}

  StatusOr<ir::Attribute> Take(std::string_view name) {
    ir::Attribute value = attributes_.Get(name);
    if (!value) return Error("has no '", name, "' attribute");
    attributes_.Erase(name);
    return value;
  }
  // Removes an attribute if present (null if absent).
  ir::Attribute TakeOptional(std::string_view name) {
    ir::Attribute value = attributes_.Get(name);
    if (value) attributes_.Erase(name);
    return value;
  }
  StatusOr<int64_t> TakeInt(std::string_view name) {
    ASSIGN_OR_RETURN(ir::Attribute value, Take(name));
    if (!value.is(ir::AttrKind::kInteger)) {
      return Error("'", name, "' must be an integer, got ", value.ToString());
    }
    return value.int_value();
  }
  StatusOr<bool> TakeBool(std::string_view name) {
    ASSIGN_OR_RETURN(ir::Attribute value, Take(name));
    if (!value.is(ir::AttrKind::kBool)) {
      return Error("'", name, "' must be a boolean, got ", value.ToString());
    }
    return value.bool_value();
  }
  StatusOr<ir::Type> TakeType(std::string_view name) {
    ASSIGN_OR_RETURN(ir::Attribute value, Take(name));
    if (!value.is(ir::AttrKind::kType)) {
      return Error("'", name, "' must be a type, got ", value.ToString());
    }
    return value.type();
  }
  StatusOr<std::vector<int64_t>> Ints(std::string_view name,
                                      const ir::Attribute& value) {
    std::optional<std::vector<int64_t>> ints;
    if (value.is(ir::AttrKind::kDenseElements)) ints = value.AsIntVector();
    if (!ints) {
      return Error("'", name, "' must be an integer tensor, got ",
                   value.ToString());
    }
    return *ints;
  }
  StatusOr<std::vector<int64_t>> TakeInts(std::string_view name) {
    ASSIGN_OR_RETURN(ir::Attribute value, Take(name));
    return Ints(name, value);
  }
  // An optional list (added in a later version): empty when absent.
  StatusOr<std::vector<int64_t>> TakeOptionalInts(std::string_view name) {
    ir::Attribute value = TakeOptional(name);
    if (!value) return std::vector<int64_t>();
    return Ints(name, value);
  }

  template <typename... Args>
  Status Error(const Args&... args) const {
    return InvalidArgumentError("vhlo.", info_.name, " ", args...);
  }

 private:
  const VhloOpInfo& info_;
  ir::NamedAttrList& attributes_;
};

Status ImplodeConvolution(Fields& fields, ir::Operation& op) {
  ir::ConvDimensionNumbers dims;
  ASSIGN_OR_RETURN(dims.input_batch_dimension,
                   fields.TakeInt("input_batch_dimension"));
  ASSIGN_OR_RETURN(dims.input_feature_dimension,
                   fields.TakeInt("input_feature_dimension"));
  ASSIGN_OR_RETURN(dims.input_spatial_dimensions,
                   fields.TakeInts("input_spatial_dimensions"));
  ASSIGN_OR_RETURN(dims.kernel_input_feature_dimension,
                   fields.TakeInt("kernel_input_feature_dimension"));
  ASSIGN_OR_RETURN(dims.kernel_output_feature_dimension,
                   fields.TakeInt("kernel_output_feature_dimension"));
  ASSIGN_OR_RETURN(dims.kernel_spatial_dimensions,
                   fields.TakeInts("kernel_spatial_dimensions"));
  ASSIGN_OR_RETURN(dims.output_batch_dimension,
                   fields.TakeInt("output_batch_dimension"));
  ASSIGN_OR_RETURN(dims.output_feature_dimension,
                   fields.TakeInt("output_feature_dimension"));
  ASSIGN_OR_RETURN(dims.output_spatial_dimensions,
                   fields.TakeInts("output_spatial_dimensions"));
  op.SetAttr("dimension_numbers", ir::Attribute::Conv(std::move(dims)));
  return OkStatus();
}

Status ImplodeDotGeneral(Fields& fields, ir::Operation& op) {
  ir::DotDimensionNumbers dims;
  ASSIGN_OR_RETURN(dims.lhs_batching_dimensions,
                   fields.TakeInts("lhs_batching_dimensions"));
  ASSIGN_OR_RETURN(dims.rhs_batching_dimensions,
                   fields.TakeInts("rhs_batching_dimensions"));
  ASSIGN_OR_RETURN(dims.lhs_contracting_dimensions,
                   fields.TakeInts("lhs_contracting_dimensions"));
  ASSIGN_OR_RETURN(dims.rhs_contracting_dimensions,
                   fields.TakeInts("rhs_contracting_dimensions"));
  op.SetAttr("dot_dimension_numbers", ir::Attribute::Dot(std::move(dims)));

  // dot_general_v2 (1.6.0) adds the algorithm, flattened; every field is
  // `none` when the op has no algorithm.
  ir::Attribute lhs_precision = fields.TakeOptional("lhs_precision_type");
  if (!lhs_precision) return OkStatus();
  std::vector<ir::Attribute> parts = {lhs_precision};
  for (std::string_view name :
       {"rhs_precision_type", "accumulation_type", "lhs_component_count",
        "rhs_component_count", "num_primitive_operations",
        "allow_imprecise_accumulation"}) {
    ASSIGN_OR_RETURN(ir::Attribute part, fields.Take(name));
    parts.push_back(part);
  }
  auto is_none = [](const ir::Attribute& a) {
    return a.is(ir::AttrKind::kType) && a.type().is(ir::TypeKind::kNone);
  };
  bool all_none = std::all_of(parts.begin(), parts.end(), is_none);
  bool any_none = std::any_of(parts.begin(), parts.end(), is_none);
  if (all_none) return OkStatus();
  if (any_none) return fields.Error("has a partly unset dot algorithm");
  auto type_of = [&](int i) -> StatusOr<ir::Type> {
    if (!parts[i].is(ir::AttrKind::kType)) {
      return fields.Error("dot algorithm field ", i, " must be a type, got ",
                          parts[i].ToString());
    }
    return parts[i].type();
  };
  auto int_of = [&](int i) -> StatusOr<int64_t> {
    if (!parts[i].is(ir::AttrKind::kInteger)) {
      return fields.Error("dot algorithm field ", i,
                          " must be an integer, got ", parts[i].ToString());
    }
    return parts[i].int_value();
  };
  ir::DotAlgorithm algorithm;
  ASSIGN_OR_RETURN(algorithm.lhs_precision_type, type_of(0));
  ASSIGN_OR_RETURN(algorithm.rhs_precision_type, type_of(1));
  ASSIGN_OR_RETURN(algorithm.accumulation_type, type_of(2));
  ASSIGN_OR_RETURN(algorithm.lhs_component_count, int_of(3));
  ASSIGN_OR_RETURN(algorithm.rhs_component_count, int_of(4));
  ASSIGN_OR_RETURN(algorithm.num_primitive_operations, int_of(5));
  if (!parts[6].is(ir::AttrKind::kBool)) {
    return fields.Error("allow_imprecise_accumulation must be a boolean, got ",
                        parts[6].ToString());
  }
  algorithm.allow_imprecise_accumulation = parts[6].bool_value();
  op.SetAttr("algorithm",
             ir::Attribute::DotAlgorithmAttr(std::move(algorithm)));
  return OkStatus();
}

Status ImplodeGather(Fields& fields, ir::Operation& op) {
  ir::GatherDimensionNumbers dims;
  ASSIGN_OR_RETURN(dims.offset_dims, fields.TakeInts("offset_dims"));
  ASSIGN_OR_RETURN(dims.collapsed_slice_dims,
                   fields.TakeInts("collapsed_slice_dims"));
  // Batching dimensions came with gather_v2 (1.1.0).
  ASSIGN_OR_RETURN(dims.operand_batching_dims,
                   fields.TakeOptionalInts("operand_batching_dims"));
  ASSIGN_OR_RETURN(dims.start_indices_batching_dims,
                   fields.TakeOptionalInts("start_indices_batching_dims"));
  ASSIGN_OR_RETURN(dims.start_index_map, fields.TakeInts("start_index_map"));
  ASSIGN_OR_RETURN(dims.index_vector_dim, fields.TakeInt("index_vector_dim"));
  op.SetAttr("dimension_numbers", ir::Attribute::Gather(std::move(dims)));
  return OkStatus();
}

Status ImplodeScatter(Fields& fields, ir::Operation& op) {
  ir::ScatterDimensionNumbers dims;
  ASSIGN_OR_RETURN(dims.update_window_dims,
                   fields.TakeInts("update_window_dims"));
  ASSIGN_OR_RETURN(dims.inserted_window_dims,
                   fields.TakeInts("inserted_window_dims"));
  ASSIGN_OR_RETURN(dims.input_batching_dims,
                   fields.TakeOptionalInts("input_batching_dims"));
  ASSIGN_OR_RETURN(dims.scatter_indices_batching_dims,
                   fields.TakeOptionalInts("scatter_indices_batching_dims"));
  ASSIGN_OR_RETURN(dims.scatter_dims_to_operand_dims,
                   fields.TakeInts("scatter_dims_to_operand_dims"));
  ASSIGN_OR_RETURN(dims.index_vector_dim, fields.TakeInt("index_vector_dim"));
  op.SetAttr("scatter_dimension_numbers",
             ir::Attribute::Scatter(std::move(dims)));
  return OkStatus();
}

Status ImplodeChannel(std::string_view base, Fields& fields,
                      ir::Operation& op) {
  bool has_type = base == "send" || base == "recv";
  bool is_collective =
      std::find(std::begin(kChannelIdOps), std::end(kChannelIdOps), base) !=
      std::end(kChannelIdOps);
  if (!has_type && !is_collective) return OkStatus();
  ir::ChannelHandle channel;
  ASSIGN_OR_RETURN(channel.handle, fields.TakeInt("channel_id"));
  if (has_type) {
    ASSIGN_OR_RETURN(channel.type, fields.TakeInt("channel_type"));
  }
  op.SetAttr("channel_handle", ir::Attribute::Channel(channel));
  return OkStatus();
}

Status ConvertDenseArrays(std::string_view base, Fields& fields,
                          ir::Operation& op) {
  for (const DenseArrayAttr& entry : kDenseArrays) {
    if (entry.op != base) continue;
    ir::Attribute value = fields.TakeOptional(entry.attribute);
    if (!value) continue;
    ASSIGN_OR_RETURN(std::vector<int64_t> ints,
                     fields.Ints(entry.attribute, value));
    if (entry.is_bool) {
      op.SetAttr(std::string(entry.attribute),
                 ir::Attribute::DenseBoolArray(
                     std::vector<bool>(ints.begin(), ints.end())));
    } else {
      op.SetAttr(std::string(entry.attribute),
                 ir::Attribute::DenseI64Array(std::move(ints)));
    }
  }
  return OkStatus();
}

StatusOr<ir::Attribute> ToSymbol(Fields& fields, std::string_view name,
                                 const ir::Attribute& value) {
  if (!value.is(ir::AttrKind::kString)) {
    return fields.Error("'", name, "' must be a string, got ",
                        value.ToString());
  }
  return ir::Attribute::SymbolRef(value.string_value());
}

Status ConvertSymbols(std::string_view base, Fields& fields,
                      ir::Operation& op) {
  std::string_view name = base == "call"          ? "callee"
                          : base == "composite"   ? "decomposition"
                          : base == "custom_call" ? "called_computations"
                                                  : "";
  if (name.empty()) return OkStatus();
  ir::Attribute value = fields.TakeOptional(name);
  if (!value) return OkStatus();
  if (base != "custom_call") {
    ASSIGN_OR_RETURN(ir::Attribute symbol, ToSymbol(fields, name, value));
    op.SetAttr(std::string(name), symbol);
    return OkStatus();
  }
  if (!value.is(ir::AttrKind::kArray)) {
    return fields.Error("'", name, "' must be an array, got ",
                        value.ToString());
  }
  std::vector<ir::Attribute> symbols;
  for (const ir::Attribute& element : value.array()) {
    ASSIGN_OR_RETURN(ir::Attribute symbol, ToSymbol(fields, name, element));
    symbols.push_back(symbol);
  }
  op.SetAttr(std::string(name), ir::Attribute::Array(std::move(symbols)));
  return OkStatus();
}

Status ConvertUnitFlags(Fields& fields, ir::Operation& op) {
  for (std::string_view name : kUnitFlags) {
    ir::Attribute value = fields.TakeOptional(name);
    if (!value) continue;
    if (!value.is(ir::AttrKind::kBool)) {
      return fields.Error("'", name, "' must be a boolean, got ",
                          value.ToString());
    }
    if (value.bool_value())
      op.SetAttr(std::string(name), ir::Attribute::Unit());
  }
  return OkStatus();
}

// func_v1 stores absent visibility as "" and absent argument / result
// attributes as [].
void DropFuncDefaults(Fields& fields, ir::NamedAttrList& attributes) {
  ir::Attribute visibility = attributes.Get("sym_visibility");
  if (visibility.is(ir::AttrKind::kString) &&
      visibility.string_value().empty()) {
    fields.TakeOptional("sym_visibility");
  }
  for (std::string_view name : {"arg_attrs", "res_attrs"}) {
    ir::Attribute value = attributes.Get(name);
    if (value.is(ir::AttrKind::kArray) && value.array().empty()) {
      fields.TakeOptional(name);
    }
  }
}

}  // namespace

const VhloOpInfo* LookupVhloOp(std::string_view name) {
  const auto& ops = VhloOps();
  auto it = ops.find(name);
  return it == ops.end() ? nullptr : &it->second;
}

StatusOr<std::unique_ptr<ir::Operation>> ConvertVhloOp(VhloOp vhlo,
                                                       bool in_function) {
  const VhloOpInfo& info = *vhlo.info;
  std::string_view base = BaseName(info.name);
  std::string target(info.target);
  if (base == "return" && in_function) target = "func.return";
  auto op =
      std::make_unique<ir::Operation>(target, vhlo.result_types, vhlo.loc);

  Fields fields(info, vhlo.attributes);
  if (base == "func") DropFuncDefaults(fields, vhlo.attributes);
  if (base == "convolution" || base == "dynamic_conv") {
    RETURN_IF_ERROR(ImplodeConvolution(fields, *op));
    // dynamic_conv_v2 (0.20.0) dropped `padding`: the padding is an operand.
    if (base == "dynamic_conv") fields.TakeOptional("padding");
  }
  if (base == "dot_general") RETURN_IF_ERROR(ImplodeDotGeneral(fields, *op));
  if (base == "gather" || base == "dynamic_gather") {
    RETURN_IF_ERROR(ImplodeGather(fields, *op));
  }
  if (base == "scatter") RETURN_IF_ERROR(ImplodeScatter(fields, *op));
  RETURN_IF_ERROR(ImplodeChannel(base, fields, *op));
  RETURN_IF_ERROR(ConvertDenseArrays(base, fields, *op));
  RETURN_IF_ERROR(ConvertSymbols(base, fields, *op));
  RETURN_IF_ERROR(ConvertUnitFlags(fields, *op));
  for (const auto& [name, value] : vhlo.attributes) op->SetAttr(name, value);
  for (const auto& [name, value] : vhlo.discardable) op->SetAttr(name, value);
  ir::EraseDefaultAttributes(*op);
  return op;
}

}  // namespace kiln::parse::bytecode
