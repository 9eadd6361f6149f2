// Extensibility ops: custom_call (layouts, output-operand aliases, api
// versions, buffer targets) and composite (its name; the decomposition's
// signature is checked with the module's symbols in verify_module.cc).
#include <set>

#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

// api_version values of custom_call.
constexpr int64_t kApiStatusReturningUnified = 3;
constexpr int64_t kApiTypedFfi = 4;

// The results of a custom_call as layouts see them: a single tuple result
// stands for its elements.
std::vector<Type> FlattenedResults(const Operation& op) {
  std::vector<Type> types = op.result_types();
  if (types.size() == 1 && types[0].IsTuple()) return types[0].elements();
  return types;
}

Status CheckLayouts(const Operation& op, const std::vector<Type>& types,
                    const Attribute& layouts, std::string_view what) {
  if (!layouts.is(AttrKind::kArray)) {
    return OpError(op, what, "_layouts must be an array, but got ",
                   layouts.ToString());
  }
  const std::vector<Attribute>& list = layouts.array();
  if (list.size() != types.size()) {
    return OpError(op, "Number of ", what, "s must match the number of ", what,
                   " layouts, ", types.size(), " != ", list.size());
  }
  for (size_t i = 0; i < types.size(); ++i) {
    const Type& type = types[i];
    if (type.IsTuple()) {
      return OpError(op,
                     "Tuple types are not fully supported with layout "
                     "constraints yet");
    }
    ASSIGN_OR_RETURN(IntElements layout,
                     ReadIntElements(op, StrCat(what, "_layouts"), list[i]));
    if (!IsTensor(type)) {
      if (!layout.values.empty()) {
        return OpError(
            op, "Only tensor types can have non-empty layout: ", what, " #", i,
            " of type ", Quoted(type), " has layout ", list[i].ToString());
      }
      continue;
    }
    if (static_cast<int64_t>(layout.values.size()) != type.rank() ||
        !IsPermutation(layout.values)) {
      return OpError(op, "incorrect layout ", list[i].ToString(), " for type ",
                     Quoted(type), ", layout must be a permutation of [0, ",
                     type.rank(), ")");
    }
  }
  return OkStatus();
}

// Follows tuple `indices` into `type`; null when they leave the tuple.
Type Navigate(Type type, const std::vector<int64_t>& indices) {
  for (int64_t index : indices) {
    if (!type.IsTuple() || index < 0 ||
        index >= static_cast<int64_t>(type.elements().size())) {
      return Type();
    }
    type = type.elements()[index];
  }
  return type;
}

// Every memref reachable in `type`, by tuple path.
void CollectBuffers(const Type& type, std::vector<int64_t>& path,
                    std::vector<std::vector<int64_t>>& out) {
  if (type.is(TypeKind::kMemRef)) {
    out.push_back(path);
    return;
  }
  if (!type.IsTuple()) return;
  for (size_t i = 0; i < type.elements().size(); ++i) {
    path.push_back(static_cast<int64_t>(i));
    CollectBuffers(type.elements()[i], path, out);
    path.pop_back();
  }
}

Status CheckOutputOperandAliases(const Operation& op) {
  Attribute attr = op.GetAttr("output_operand_aliases");
  if (!attr) return OkStatus();
  if (!attr.is(AttrKind::kArray)) {
    return OpError(op, "output_operand_aliases must be an array, but got ",
                   attr.ToString());
  }
  // Outputs: one result is addressed directly, several through an implicit
  // tuple.
  Type outputs = op.num_results() == 1 ? op.result(0)->type()
                                       : Type::Tuple(op.result_types());
  std::set<std::pair<int64_t, std::vector<int64_t>>> operand_buffers;
  std::set<std::vector<int64_t>> output_buffers;
  for (const Attribute& element : attr.array()) {
    if (!element.is(AttrKind::kOutputOperandAlias)) {
      return OpError(op,
                     "output_operand_aliases must hold "
                     "#stablehlo.output_operand_alias values, but got ",
                     element.ToString());
    }
    const OutputOperandAlias& alias = element.output_operand_alias();
    if (alias.operand_index < 0 || alias.operand_index >= op.num_operands()) {
      return OpError(op,
                     "expects operandIndex in the output_operand_alias "
                     "attribute to be in range [0, ",
                     op.num_operands(), "); got: ", alias.operand_index);
    }
    Type operand_part = Navigate(op.operand(alias.operand_index)->type(),
                                 alias.operand_tuple_indices);
    if (!operand_part) {
      return OpError(op,
                     "operand_tuple_indices in the output_operand_alias "
                     "attribute out of bounds");
    }
    Type output_part = Navigate(outputs, alias.output_tuple_indices);
    if (!output_part) {
      return OpError(op,
                     "output_tuple_indices in the output_operand_alias "
                     "attribute out of bounds");
    }
    if (operand_part != output_part) {
      return OpError(op,
                     "shapes mismatch in the output_operand_alias "
                     "attribute: operand part has type ",
                     Quoted(operand_part), " and output part has type ",
                     Quoted(output_part));
    }
    if (operand_part.is(TypeKind::kMemRef)) {
      if (!operand_buffers
               .insert({alias.operand_index, alias.operand_tuple_indices})
               .second) {
        return OpError(op, "buffer operand ", alias.operand_index, "[",
                       JoinInts(alias.operand_tuple_indices),
                       "] is used in output_operand_alias more than once");
      }
      if (!output_buffers.insert(alias.output_tuple_indices).second) {
        return OpError(op, "buffer output [",
                       JoinInts(alias.output_tuple_indices),
                       "] is used in output_operand_alias more than once");
      }
    }
  }
  return OkStatus();
}

// Buffer (memref) results must alias an operand buffer, except for the
// buffer-creating targets.
Status CheckBufferOutputsAliased(const Operation& op,
                                 const std::string& target) {
  if (target == "CreateBuffer" || target == "Pin") return OkStatus();
  Type outputs = op.num_results() == 1 ? op.result(0)->type()
                                       : Type::Tuple(op.result_types());
  std::vector<std::vector<int64_t>> buffers;
  std::vector<int64_t> path;
  CollectBuffers(outputs, path, buffers);
  if (buffers.empty()) return OkStatus();
  std::set<std::vector<int64_t>> aliased;
  if (Attribute attr = op.GetAttr("output_operand_aliases");
      attr.is(AttrKind::kArray)) {
    for (const Attribute& element : attr.array()) {
      if (element.is(AttrKind::kOutputOperandAlias)) {
        aliased.insert(element.output_operand_alias().output_tuple_indices);
      }
    }
  }
  for (const std::vector<int64_t>& buffer : buffers) {
    if (!aliased.count(buffer)) {
      return OpError(op, "buffer output [", JoinInts(buffer),
                     "] is not used in output_operand_alias");
    }
  }
  return OkStatus();
}

// The buffer-management targets of custom_call.
Status CheckBufferTargets(const Operation& op, const std::string& target) {
  if (target == "CreateBuffer") {
    if (op.num_operands() != 0) {
      return OpError(op, "CreateBuffer custom_call shouldn't have any inputs");
    }
    if (op.num_results() != 1 || !op.result(0)->type().is(TypeKind::kMemRef)) {
      return OpError(op,
                     "CreateBuffer custom_call should have a memref "
                     "output");
    }
  } else if (target == "Pin") {
    if (op.num_operands() != 1 || op.num_results() != 1 ||
        !op.result(0)->type().is(TypeKind::kMemRef)) {
      return OpError(op, "Pin custom_call should have a memref output");
    }
  } else if (target == "Unpin") {
    if (op.num_operands() != 1 || op.num_results() != 1 ||
        !op.operand(0)->type().is(TypeKind::kMemRef) ||
        !IsTensor(op.result(0)->type()) ||
        op.operand(0)->type().shape() != op.result(0)->type().shape() ||
        op.operand(0)->type().element() != op.result(0)->type().element()) {
      return OpError(op,
                     "Unpin custom_call should have compatible input and "
                     "output types");
    }
  }
  return OkStatus();
}

Status VerifyCustomCall(const Operation& op) {
  ASSIGN_OR_RETURN(Attribute name,
                   AttrOfKind(op, "call_target_name", AttrKind::kString, true));
  const std::string& target = name.string_value();
  RETURN_IF_ERROR(OptionalBool(op, "has_side_effect"));
  ASSIGN_OR_RETURN(std::optional<int64_t> api_version,
                   OptionalInt(op, "api_version"));
  Attribute config = op.GetAttr("backend_config");
  if (config && api_version == kApiTypedFfi &&
      !config.is(AttrKind::kDictionary)) {
    return OpError(op,
                   "backend_config for api_version "
                   "API_VERSION_TYPED_FFI must be a dictionary attribute");
  }
  if (config && api_version != kApiTypedFfi && !config.is(AttrKind::kString)) {
    return OpError(op, "backend_config for api_version ",
                   api_version == kApiStatusReturningUnified
                       ? "API_VERSION_STATUS_RETURNING_UNIFIED"
                       : "other than API_VERSION_TYPED_FFI",
                   " must be a string attribute");
  }
  Attribute operand_layouts = op.GetAttr("operand_layouts");
  Attribute result_layouts = op.GetAttr("result_layouts");
  // Layouts come for both operands and results or for neither; an absent
  // list stands for an empty one when its side has no values (readers of
  // portable artifacts drop empty lists).
  bool results_without =
      operand_layouts && !result_layouts && !FlattenedResults(op).empty();
  bool operands_without =
      result_layouts && !operand_layouts && op.num_operands() != 0;
  if (results_without || operands_without) {
    return OpError(op,
                   "Layout attributes should be specified for either both "
                   "operands and results or none.");
  }
  if (operand_layouts || result_layouts) {
    std::vector<Type> operand_types;
    for (const Value* value : op.operands()) {
      operand_types.push_back(value->type());
    }
    Attribute none = Attribute::Array({});
    RETURN_IF_ERROR(CheckLayouts(op, operand_types,
                                 operand_layouts ? operand_layouts : none,
                                 "operand"));
    RETURN_IF_ERROR(CheckLayouts(op, FlattenedResults(op),
                                 result_layouts ? result_layouts : none,
                                 "result"));
  }
  RETURN_IF_ERROR(CheckBufferTargets(op, target));
  RETURN_IF_ERROR(CheckOutputOperandAliases(op));
  return CheckBufferOutputsAliased(op, target);
}

// A namespaced op name: dot-separated non-empty parts of letters, digits,
// '_' and '$', the first part not starting with a digit.
bool IsNamespacedOpName(std::string_view name) {
  std::vector<std::string_view> parts = StrSplit(name, '.');
  if (parts.size() < 2) return false;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    if (part.empty()) return false;
    if (i == 0 && std::isdigit(static_cast<unsigned char>(part[0]))) {
      return false;
    }
    for (char c : part) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' &&
          c != '$') {
        return false;
      }
    }
  }
  return true;
}

Status VerifyComposite(const Operation& op) {
  ASSIGN_OR_RETURN(Attribute name,
                   AttrOfKind(op, "name", AttrKind::kString, true));
  // (C1)
  if (!IsNamespacedOpName(name.string_value())) {
    return OpError(op, "name must be a valid namespaced op name, but got '",
                   name.string_value(), "'");
  }
  RETURN_IF_ERROR(AttrOfKind(op, "decomposition", AttrKind::kSymbolRef, true));
  RETURN_IF_ERROR(
      AttrOfKind(op, "composite_attributes", AttrKind::kDictionary, false));
  RETURN_IF_ERROR(OptionalInt(op, "version"));
  return OkStatus();
}

}  // namespace

void RegisterExtensibilityVerifiers(VerifierTable& table) {
  table[static_cast<size_t>(OpCode::kCustomCall)] = VerifyCustomCall;
  table[static_cast<size_t>(OpCode::kComposite)] = VerifyComposite;
}

}  // namespace kiln::ir::verifier
