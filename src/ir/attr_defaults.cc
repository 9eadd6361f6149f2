#include "ir/attr_defaults.h"

#include <algorithm>
#include <vector>

namespace kiln::ir {
namespace {

// How a default value is recognized.
enum class DefaultKind : uint8_t {
  kFalse,                // false
  kInteger,              // an integer equal to `value`
  kEmptyString,          // ""
  kEmptyStringOrDict,    // "" or {}
  kEmptyArray,           // []
  kEmptyDictionary,      // {}
  kEmptyDictionaries,    // [] or [{}, {}, ...]: no argument has attributes
  kNoElements,           // a dense array or tensor with no elements
  kAllElementsEqual,     // every element (of a dense array/tensor) is `value`
  kAllPrecisionDefault,  // [#stablehlo<precision DEFAULT>, ...]
  kComparisonNoType,     // #stablehlo<comparison_type NOTYPE>
  kChannelZero,          // #stablehlo.channel_handle<handle = 0, ...>
  kResultAccuracy,       // atol = 0, rtol = 0, ulps = 0, mode = DEFAULT
};

struct AttrDefault {
  std::string_view op;
  std::string_view attribute;
  DefaultKind kind;
  int64_t value = 0;
};

// Source: StableHLO's optional attributes with default values
// (StablehloOps.td) and the defaults VHLO fills in for absent attributes
// (VhloLegalizeToStablehlo.cpp, removeDefaults).
constexpr AttrDefault kDefaults[] = {
    // MLIR prints no attributes for `arg_attrs = [{}, {}]`, and writers
    // (JAX) store such lists.
    {"func.func", "arg_attrs", DefaultKind::kEmptyDictionaries},
    {"func.func", "res_attrs", DefaultKind::kEmptyDictionaries},
    {"func.call", "arg_attrs", DefaultKind::kEmptyDictionaries},
    {"func.call", "res_attrs", DefaultKind::kEmptyDictionaries},
    {"stablehlo.all_gather", "channel_handle", DefaultKind::kChannelZero},
    {"stablehlo.all_reduce", "channel_handle", DefaultKind::kChannelZero},
    {"stablehlo.all_to_all", "channel_handle", DefaultKind::kChannelZero},
    {"stablehlo.collective_broadcast", "channel_handle",
     DefaultKind::kChannelZero},
    {"stablehlo.collective_permute", "channel_handle",
     DefaultKind::kChannelZero},
    {"stablehlo.collective_reduce", "channel_handle",
     DefaultKind::kChannelZero},
    {"stablehlo.reduce_scatter", "channel_handle", DefaultKind::kChannelZero},
    {"stablehlo.cholesky", "lower", DefaultKind::kFalse},
    {"stablehlo.compare", "compare_type", DefaultKind::kComparisonNoType},
    {"stablehlo.composite", "version", DefaultKind::kInteger, 0},
    {"stablehlo.composite", "composite_attributes",
     DefaultKind::kEmptyDictionary},
    {"stablehlo.convolution", "window_strides", DefaultKind::kAllElementsEqual,
     1},
    {"stablehlo.convolution", "padding", DefaultKind::kAllElementsEqual, 0},
    {"stablehlo.convolution", "lhs_dilation", DefaultKind::kAllElementsEqual,
     1},
    {"stablehlo.convolution", "rhs_dilation", DefaultKind::kAllElementsEqual,
     1},
    {"stablehlo.convolution", "window_reversal", DefaultKind::kAllElementsEqual,
     0},
    {"stablehlo.convolution", "precision_config",
     DefaultKind::kAllPrecisionDefault},
    {"stablehlo.dynamic_conv", "window_strides", DefaultKind::kAllElementsEqual,
     1},
    {"stablehlo.dynamic_conv", "lhs_dilation", DefaultKind::kAllElementsEqual,
     1},
    {"stablehlo.dynamic_conv", "rhs_dilation", DefaultKind::kAllElementsEqual,
     1},
    {"stablehlo.dynamic_conv", "window_reversal",
     DefaultKind::kAllElementsEqual, 0},
    {"stablehlo.dynamic_conv", "precision_config",
     DefaultKind::kAllPrecisionDefault},
    {"stablehlo.custom_call", "has_side_effect", DefaultKind::kFalse},
    {"stablehlo.custom_call", "backend_config",
     DefaultKind::kEmptyStringOrDict},
    {"stablehlo.custom_call", "api_version", DefaultKind::kInteger, 1},
    {"stablehlo.custom_call", "called_computations", DefaultKind::kEmptyArray},
    {"stablehlo.custom_call", "operand_layouts", DefaultKind::kEmptyArray},
    {"stablehlo.custom_call", "result_layouts", DefaultKind::kEmptyArray},
    {"stablehlo.custom_call", "output_operand_aliases",
     DefaultKind::kEmptyArray},
    {"stablehlo.custom_call", "result_tilings", DefaultKind::kEmptyArray},
    {"stablehlo.dot", "precision_config", DefaultKind::kAllPrecisionDefault},
    {"stablehlo.dot_general", "precision_config",
     DefaultKind::kAllPrecisionDefault},
    {"stablehlo.dynamic_broadcast_in_dim", "known_expanding_dimensions",
     DefaultKind::kNoElements},
    {"stablehlo.dynamic_broadcast_in_dim", "known_nonexpanding_dimensions",
     DefaultKind::kNoElements},
    {"stablehlo.gather", "indices_are_sorted", DefaultKind::kFalse},
    {"stablehlo.dynamic_gather", "indices_are_sorted", DefaultKind::kFalse},
    {"stablehlo.infeed", "infeed_config", DefaultKind::kEmptyString},
    {"stablehlo.infeed", "layout", DefaultKind::kEmptyArray},
    {"stablehlo.outfeed", "outfeed_config", DefaultKind::kEmptyString},
    {"stablehlo.recv", "is_host_transfer", DefaultKind::kFalse},
    {"stablehlo.recv", "source_target_pairs", DefaultKind::kNoElements},
    {"stablehlo.send", "is_host_transfer", DefaultKind::kFalse},
    {"stablehlo.send", "source_target_pairs", DefaultKind::kNoElements},
    {"stablehlo.reduce_window", "window_strides",
     DefaultKind::kAllElementsEqual, 1},
    {"stablehlo.reduce_window", "base_dilations",
     DefaultKind::kAllElementsEqual, 1},
    {"stablehlo.reduce_window", "window_dilations",
     DefaultKind::kAllElementsEqual, 1},
    {"stablehlo.reduce_window", "padding", DefaultKind::kAllElementsEqual, 0},
    {"stablehlo.scatter", "indices_are_sorted", DefaultKind::kFalse},
    {"stablehlo.scatter", "unique_indices", DefaultKind::kFalse},
    {"stablehlo.select_and_scatter", "window_strides",
     DefaultKind::kAllElementsEqual, 1},
    {"stablehlo.select_and_scatter", "padding", DefaultKind::kAllElementsEqual,
     0},
    {"stablehlo.sort", "dimension", DefaultKind::kInteger, -1},
    {"stablehlo.sort", "is_stable", DefaultKind::kFalse},
};

// The elements of a dense array or an integer / bool dense tensor.
std::optional<std::vector<int64_t>> Elements(const Attribute& value) {
  if (value.is(AttrKind::kDenseArray) || value.is(AttrKind::kDenseElements)) {
    return value.AsIntVector();
  }
  return std::nullopt;
}

bool Matches(const AttrDefault& entry, const Attribute& value) {
  switch (entry.kind) {
    case DefaultKind::kFalse:
      return value.is(AttrKind::kBool) && !value.bool_value();
    case DefaultKind::kInteger:
      return value.is(AttrKind::kInteger) && value.int_value() == entry.value;
    case DefaultKind::kEmptyString:
      return value.is(AttrKind::kString) && value.string_value().empty();
    case DefaultKind::kEmptyStringOrDict:
      return (value.is(AttrKind::kString) && value.string_value().empty()) ||
             (value.is(AttrKind::kDictionary) && value.dictionary().empty());
    case DefaultKind::kEmptyArray:
      return value.is(AttrKind::kArray) && value.array().empty();
    case DefaultKind::kEmptyDictionary:
      return value.is(AttrKind::kDictionary) && value.dictionary().empty();
    case DefaultKind::kEmptyDictionaries:
      return value.is(AttrKind::kArray) &&
             std::all_of(value.array().begin(), value.array().end(),
                         [](const Attribute& e) {
                           return e.is(AttrKind::kDictionary) &&
                                  e.dictionary().empty();
                         });
    case DefaultKind::kNoElements: {
      std::optional<std::vector<int64_t>> elements = Elements(value);
      return elements && elements->empty();
    }
    case DefaultKind::kAllElementsEqual: {
      std::optional<std::vector<int64_t>> elements = Elements(value);
      return elements &&
             std::all_of(elements->begin(), elements->end(),
                         [&](int64_t e) { return e == entry.value; });
    }
    case DefaultKind::kAllPrecisionDefault:
      return value.is(AttrKind::kArray) &&
             std::all_of(value.array().begin(), value.array().end(),
                         [](const Attribute& e) {
                           return e.is(AttrKind::kEnum) &&
                                  e.enum_kind() == EnumKind::kPrecision &&
                                  e.enum_value() == 0;
                         });
    case DefaultKind::kComparisonNoType:
      return value.is(AttrKind::kEnum) &&
             value.enum_kind() == EnumKind::kComparisonType &&
             value.enum_value() == kNoType;
    case DefaultKind::kChannelZero:
      return value.is(AttrKind::kChannelHandle) &&
             value.channel_handle().handle == 0;
    case DefaultKind::kResultAccuracy:
      return value.is(AttrKind::kResultAccuracy) &&
             value.result_accuracy() == ResultAccuracy{};
  }
  return false;
}

}  // namespace

bool IsDefaultAttribute(OpCode code, std::string_view name,
                        const Attribute& value) {
  if (!value) return false;
  std::string_view op = OpCodeName(code);
  // Every op that takes a result_accuracy (ops.def) defaults it alike.
  if (name == "result_accuracy" && IsInherentAttribute(code, name)) {
    return Matches({op, name, DefaultKind::kResultAccuracy}, value);
  }
  for (const AttrDefault& entry : kDefaults) {
    if (entry.op == op && entry.attribute == name) return Matches(entry, value);
  }
  return false;
}

namespace {

// Whether a per-dimension attribute (window strides, dilations, padding,
// reversal; precision lists) has a length a valid op can have. A list of
// the wrong length is an error for the verifier to report, not a default
// to drop, even when every element is the default value.
bool HasValidLength(const Operation& op, std::string_view name,
                    const Attribute& value) {
  if (name == "precision_config") {
    return value.is(AttrKind::kArray) && value.array().size() <= 2;
  }
  int64_t rank = -1;
  if (op.num_operands() > 0 && op.operand(0)->type().IsTensor()) {
    rank = op.operand(0)->type().rank();
  }
  int64_t dims;
  switch (op.code()) {
    case OpCode::kConvolution:
    case OpCode::kDynamicConv:
      dims = rank - 2;
      break;
    case OpCode::kReduceWindow:
    case OpCode::kSelectAndScatter:
      dims = rank;
      break;
    default:
      return true;
  }
  std::optional<std::vector<int64_t>> elements = Elements(value);
  if (rank < 0 || !elements) return true;
  return static_cast<int64_t>(elements->size()) ==
         (name == "padding" ? 2 * dims : dims);
}

}  // namespace

void EraseDefaultAttributes(Operation& op) {
  if (op.code() == OpCode::kUnknown) return;
  std::vector<std::string> erase;
  for (const auto& [name, value] : op.properties()) {
    if (IsDefaultAttribute(op.code(), name, value) &&
        HasValidLength(op, name, value)) {
      erase.push_back(name);
    }
  }
  for (const std::string& name : erase) op.RemoveAttr(name);
}

}  // namespace kiln::ir
