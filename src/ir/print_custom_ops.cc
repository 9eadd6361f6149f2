// Hand-written pretty forms: func.func, module, stablehlo.while,
// stablehlo.reduce (compact and full), constants, optimization_barrier and
// chlo.scan. Each returns false, printing nothing, when the op does not fit
// its form.
#include "base/strings.h"
#include "ir/print_util.h"
#include "ir/printer_impl.h"

namespace kiln::ir {
namespace {

std::string TypeList(const std::vector<Type>& types) {
  return StrJoin(types, ", ",
                 [](std::string& out, const Type& t) { out += t.ToString(); });
}

// arg_attrs / res_attrs: absent, or an array of `count` dictionaries.
bool IsAttrArray(const Attribute& a, size_t count) {
  if (!a) return true;
  if (!a.is(AttrKind::kArray) || a.array().size() != count) return false;
  for (const Attribute& e : a.array()) {
    if (!e.is(AttrKind::kDictionary)) return false;
  }
  return true;
}

Attribute NthDict(const Attribute& a, size_t i) {
  if (!a) return Attribute();
  const Attribute& dict = a.array()[i];
  return dict.dictionary().empty() ? Attribute() : dict;
}

bool BlockArgumentsHaveTypes(const Block& block,
                             const std::vector<Type>& types) {
  if (block.num_arguments() != static_cast<int>(types.size())) return false;
  for (int i = 0; i < block.num_arguments(); ++i) {
    if (block.argument(i)->type() != types[i]) return false;
  }
  return true;
}

bool IsCommutativeBinary(OpCode code) {
  switch (code) {
    case OpCode::kAdd:
    case OpCode::kMultiply:
    case OpCode::kMaximum:
    case OpCode::kMinimum:
    case OpCode::kAnd:
    case OpCode::kOr:
    case OpCode::kXor:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool OpPrinter::PrintFunc(const Operation& op, int indent) {
  Attribute name = op.GetAttr("sym_name");
  Attribute type_attr = op.GetAttr("function_type");
  Attribute visibility = op.GetAttr("sym_visibility");
  if (op.num_operands() || op.num_results() || op.num_regions() != 1 ||
      !name.is(AttrKind::kString) || !type_attr.is(AttrKind::kType) ||
      !type_attr.type().is(TypeKind::kFunction)) {
    return false;
  }
  if (visibility && (!visibility.is(AttrKind::kString) ||
                     (visibility.string_value() != "public" &&
                      visibility.string_value() != "private" &&
                      visibility.string_value() != "nested"))) {
    return false;
  }
  const Type& type = type_attr.type();
  Attribute arg_attrs = op.GetAttr("arg_attrs");
  Attribute res_attrs = op.GetAttr("res_attrs");
  if (!IsAttrArray(arg_attrs, type.inputs().size()) ||
      !IsAttrArray(res_attrs, type.results().size())) {
    return false;
  }
  // The attr arrays read back only when some entry is non-empty.
  auto all_empty = [](const Attribute& a) {
    if (!a) return false;
    for (const Attribute& e : a.array()) {
      if (!e.dictionary().empty()) return false;
    }
    return true;
  };
  if (all_empty(arg_attrs) || all_empty(res_attrs)) return false;
  const Region& body = op.region(0);
  if (!body.empty() && !BlockArgumentsHaveTypes(body.front(), type.inputs()))
    return false;
  BeginIsolatedScope();
  if (!body.empty()) NameBlockArguments(body.front());
  out_ += "func.func ";
  if (visibility) StrAppend(out_, visibility.string_value(), " ");
  StrAppend(out_, SymbolString(name.string_value()), "(");
  for (size_t i = 0; i < type.inputs().size(); ++i) {
    if (i) out_ += ", ";
    if (!body.empty()) {
      StrAppend(out_, NameOf(body.front().argument(static_cast<int>(i))), ": ");
    }
    out_ += type.inputs()[i].ToString();
    if (Attribute dict = NthDict(arg_attrs, i))
      StrAppend(out_, " ", dict.ToString());
    if (!body.empty())
      PrintLocation(body.front().argument(static_cast<int>(i))->loc());
  }
  out_ += ")";
  const std::vector<Type>& results = type.results();
  bool any_result_attrs = res_attrs && !all_empty(res_attrs);
  if (results.size() == 1 && !any_result_attrs &&
      !results[0].is(TypeKind::kFunction)) {
    StrAppend(out_, " -> ", results[0].ToString());
  } else if (!results.empty()) {
    out_ += " -> (";
    for (size_t i = 0; i < results.size(); ++i) {
      if (i) out_ += ", ";
      out_ += results[i].ToString();
      if (Attribute dict = NthDict(res_attrs, i))
        StrAppend(out_, " ", dict.ToString());
    }
    out_ += ")";
  }
  std::vector<NamedAttribute> rest =
      RemainingAttributes(op, {"sym_name", "function_type", "sym_visibility",
                               "arg_attrs", "res_attrs"});
  if (!rest.empty()) StrAppend(out_, " attributes ", AttrDict(rest));
  if (!body.empty()) {
    out_ += " ";
    PrintRegion(body, indent, /*print_entry_args=*/false, /*func_body=*/true);
  }
  EndIsolatedScope();
  return true;
}

bool OpPrinter::PrintModuleOp(const Operation& op, int indent) {
  Attribute name = op.GetAttr("sym_name");
  if (op.num_operands() || op.num_results() || op.num_regions() != 1 ||
      op.region(0).num_blocks() != 1 ||
      op.region(0).front().num_arguments() != 0 ||
      (name && !name.is(AttrKind::kString))) {
    return false;
  }
  out_ += "module";
  if (name) StrAppend(out_, " ", SymbolString(name.string_value()));
  std::vector<NamedAttribute> rest = RemainingAttributes(op, {"sym_name"});
  if (!rest.empty()) StrAppend(out_, " attributes ", AttrDict(rest));
  out_ += " ";
  BeginIsolatedScope();
  const Block& block = op.region(0).front();
  out_ += "{\n";
  for (const auto& inner : block.operations()) PrintOp(*inner, indent + 2);
  out_.append(indent, ' ');
  out_ += "}";
  EndIsolatedScope();
  return true;
}

bool OpPrinter::PrintWhile(const Operation& op, int indent) {
  std::vector<Type> types;
  for (int i = 0; i < op.num_operands(); ++i)
    types.push_back(op.operand(i)->type());
  if (op.num_regions() != 2 || op.result_types() != types) return false;
  for (int r = 0; r < 2; ++r) {
    if (op.region(r).num_blocks() != 1 ||
        !BlockArgumentsHaveTypes(op.region(r).front(), types)) {
      return false;
    }
  }
  const Block& cond = op.region(0).front();
  const Block& body = op.region(1).front();
  // Both regions' arguments share one name, declared by `%name = %init`.
  for (int i = 0; i < cond.num_arguments(); ++i) {
    std::string name = StrCat("%iterArg", counters_.back().loop_variables++);
    names_[cond.argument(i)] = name;
    names_[body.argument(i)] = name;
  }
  out_ += "stablehlo.while(";
  for (int i = 0; i < op.num_operands(); ++i) {
    if (i) out_ += ", ";
    StrAppend(out_, NameOf(cond.argument(i)), " = ", NameOf(op.operand(i)));
  }
  out_ += ")";
  if (!types.empty()) StrAppend(out_, " : ", TypeList(types));
  std::vector<NamedAttribute> rest = RemainingAttributes(op, {});
  if (!rest.empty()) StrAppend(out_, " attributes ", AttrDict(rest));
  out_ += "\n";
  out_.append(indent, ' ');
  out_ += "cond ";
  PrintRegion(op.region(0), indent, /*print_entry_args=*/false);
  out_ += " do ";
  PrintRegion(op.region(1), indent, /*print_entry_args=*/false);
  return true;
}

bool OpPrinter::PrintReduce(const Operation& op, int indent) {
  int n = op.num_results();
  Attribute dims = op.GetAttr("dimensions");
  if (n == 0 || op.num_operands() != 2 * n || op.num_regions() != 1 ||
      op.region(0).num_blocks() != 1 ||
      op.region(0).front().num_arguments() != 2 * n ||
      !dims.is(AttrKind::kDenseArray) ||
      dims.dense_array_type() != ElementType::kI64) {
    return false;
  }
  const Block& block = op.region(0).front();
  std::string head = "stablehlo.reduce";
  for (int i = 0; i < n; ++i) {
    StrAppend(head, i ? ", (" : "(", NameOf(op.operand(i)),
              " init: ", NameOf(op.operand(n + i)), ")");
  }
  std::vector<NamedAttribute> rest = RemainingAttributes(op, {"dimensions"});
  std::string tail =
      StrCat("across dimensions = [", StrJoin(dims.dense_ints(), ", "), "]");
  if (!rest.empty()) StrAppend(tail, " ", AttrDict(rest));
  std::vector<Type> operand_types;
  for (int i = 0; i < op.num_operands(); ++i)
    operand_types.push_back(op.operand(i)->type());
  StrAppend(tail, " : ",
            Type::Function(operand_types, op.result_types()).ToString());

  // The compact form `applies OP` when the body is one commutative binary
  // op of the block arguments whose types follow from the first input.
  bool compact = false;
  if (n == 1 && block.operations().size() == 2 && operand_types[0].IsTensor()) {
    const Operation& inner = *block.operations()[0];
    const Operation& ret = *block.operations()[1];
    Type scalar = Type::Tensor({}, operand_types[0].element());
    compact = IsCommutativeBinary(inner.code()) && inner.num_operands() == 2 &&
              inner.operand(0) == block.argument(0) &&
              inner.operand(1) == block.argument(1) &&
              inner.num_results() == 1 && inner.num_regions() == 0 &&
              inner.properties().empty() && inner.attributes().empty() &&
              inner.result(0)->type() == scalar &&
              block.argument(0)->type() == scalar &&
              block.argument(1)->type() == scalar && ret.is(OpCode::kReturn) &&
              ret.num_operands() == 1 && ret.operand(0) == inner.result(0) &&
              ret.num_results() == 0 && ret.num_regions() == 0 &&
              ret.properties().empty() && ret.attributes().empty() &&
              (!options_.locations ||
               (inner.loc() == op.loc() && ret.loc() == op.loc()));
    if (compact) {
      StrAppend(out_, head, " applies ", inner.name(), " ", tail);
      return true;
    }
  }
  NameBlockArguments(block);
  StrAppend(out_, head, " ", tail, "\n");
  out_.append(indent + 2, ' ');
  out_ += "reducer";
  for (int i = 0; i < n; ++i) {
    out_ += "(";
    PrintBlockArgument(block.argument(i));
    out_ += ", ";
    PrintBlockArgument(block.argument(n + i));
    out_ += ") ";
  }
  PrintRegion(op.region(0), indent + 2, /*print_entry_args=*/false);
  return true;
}

bool OpPrinter::PrintConstant(const Operation& op) {
  Attribute value = op.GetAttr("value");
  if (op.num_operands() || op.num_results() != 1 || op.num_regions() || !value)
    return false;
  if (value.type() && !value.is(AttrKind::kType) &&
      value.type() == op.result(0)->type()) {
    out_ += op.name();
    std::vector<NamedAttribute> rest = RemainingAttributes(op, {"value"});
    if (!rest.empty()) StrAppend(out_, " ", AttrDict(rest));
    StrAppend(out_, " ", value.ToString());
    return true;
  }
  // The value's type differs from the result's (a quantized constant).
  StrAppend(out_, op.name(), "()");
  if (!op.properties().empty())
    StrAppend(out_, " <", AttrDict(op.properties().entries()), ">");
  if (!op.attributes().empty())
    StrAppend(out_, " ", AttrDict(op.attributes().entries()));
  StrAppend(out_, " : () -> ", op.result(0)->type().ToString());
  return true;
}

bool OpPrinter::PrintOptimizationBarrier(const Operation& op) {
  if (op.num_regions() || op.num_operands() != op.num_results()) return false;
  std::vector<Type> types;
  for (int i = 0; i < op.num_operands(); ++i) {
    if (op.operand(i)->type() != op.result(i)->type()) return false;
    types.push_back(op.operand(i)->type());
  }
  out_ += "stablehlo.optimization_barrier";
  std::vector<NamedAttribute> rest = RemainingAttributes(op, {});
  if (!rest.empty()) StrAppend(out_, " ", AttrDict(rest));
  if (types.empty()) {
    out_ += "()";
    return true;
  }
  out_ += " ";
  for (int i = 0; i < op.num_operands(); ++i) {
    if (i) out_ += ", ";
    out_ += NameOf(op.operand(i));
  }
  StrAppend(out_, " : ", TypeList(types));
  return true;
}

bool OpPrinter::PrintScan(const Operation& op, int indent) {
  Attribute segments = op.GetAttr("operandSegmentSizes");
  Attribute dimension = op.GetAttr("dimension");
  if (op.num_regions() != 1 || !segments.is(AttrKind::kDenseArray) ||
      segments.dense_array_type() != ElementType::kI32 ||
      segments.dense_ints().size() != 2 || segments.dense_ints()[0] < 0 ||
      segments.dense_ints()[1] < 0 ||
      segments.dense_ints()[0] + segments.dense_ints()[1] !=
          op.num_operands() ||
      !dimension.is(AttrKind::kInteger) ||
      dimension.type() != Type::Element(ElementType::kI64)) {
    return false;
  }
  int inputs = static_cast<int>(segments.dense_ints()[0]);
  out_ += "chlo.scan(";
  for (int i = 0; i < inputs; ++i)
    StrAppend(out_, i ? ", " : "", NameOf(op.operand(i)));
  out_ += ") inits(";
  for (int i = inputs; i < op.num_operands(); ++i) {
    StrAppend(out_, i > inputs ? ", " : "", NameOf(op.operand(i)));
  }
  StrAppend(out_, ") dimension=", dimension.int_value());
  // Result segments the parser derives (outputs, then one carry per init)
  // go unprinted, as MLIR prints them.
  int carries = op.num_operands() - inputs;
  Attribute result_segments = op.GetAttr("resultSegmentSizes");
  bool derived_results =
      result_segments.is(AttrKind::kDenseArray) &&
      result_segments.dense_array_type() == ElementType::kI32 &&
      result_segments.dense_ints() ==
          std::vector<int64_t>{op.num_results() - carries, carries};
  std::vector<std::string> elided = {"operandSegmentSizes", "dimension"};
  if (derived_results) elided.push_back("resultSegmentSizes");
  std::vector<NamedAttribute> rest = RemainingAttributes(op, elided);
  if (!rest.empty()) StrAppend(out_, " attributes ", AttrDict(rest));
  out_ += " ";
  PrintRegion(op.region(0), indent, /*print_entry_args=*/true);
  std::vector<Type> operand_types;
  for (int i = 0; i < op.num_operands(); ++i)
    operand_types.push_back(op.operand(i)->type());
  StrAppend(out_, " : ",
            Type::Function(operand_types, op.result_types()).ToString());
  return true;
}

}  // namespace kiln::ir
