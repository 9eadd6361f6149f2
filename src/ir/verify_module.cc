// The verifier's entry points and the structural rules: values defined before
// use, terminators, func.func signatures against bodies, func.call symbols,
// and the dispatch of each op to its family's verifier.
#include <unordered_map>
#include <unordered_set>

#include "ir/verifier.h"
#include "ir/verify_internal.h"

namespace kiln::ir {
namespace verifier {
namespace {

// Deeper nesting than this is refused rather than risking the stack.
constexpr int kMaxRegionDepth = 1000;

const VerifierTable& Table() {
  static const VerifierTable* kTable = [] {
    auto* table = new VerifierTable();
    table->fill(nullptr);
    RegisterElementwiseVerifiers(*table);
    RegisterConversionVerifiers(*table);
    RegisterShapeVerifiers(*table);
    RegisterSliceVerifiers(*table);
    RegisterGatherScatterVerifiers(*table);
    RegisterReduceVerifiers(*table);
    RegisterDotConvVerifiers(*table);
    RegisterLinalgVerifiers(*table);
    RegisterControlFlowVerifiers(*table);
    RegisterCollectiveVerifiers(*table);
    RegisterExtensibilityVerifiers(*table);
    RegisterChloCheckVerifiers(*table);
    return table;
  }();
  return *kTable;
}

bool IsTerminatorOp(const Operation& op) {
  return op.is(OpCode::kReturn) || op.is(OpCode::kFuncReturn);
}

// ---- func.func, func.return, func.call --------------------------------------

Status VerifyFunc(const Operation& op) {
  Attribute name = op.GetAttr("sym_name");
  if (!name.is(AttrKind::kString)) {
    return OpError(op, "requires a string attribute 'sym_name'");
  }
  Type type = func::FunctionType(op);
  if (!type.is(TypeKind::kFunction)) {
    return OpError(op, "requires a function type attribute 'function_type'");
  }
  if (Status rules = CheckTypeRules(type, "function type"); !rules.ok()) {
    return OpError(op, rules.message());
  }
  const std::vector<Type>& inputs = type.inputs();
  const std::vector<Type>& results = type.results();
  for (const char* attrs_name : {"arg_attrs", "res_attrs"}) {
    Attribute attrs = op.GetAttr(attrs_name);
    if (!attrs) continue;
    size_t expected = attrs_name[0] == 'a' ? inputs.size() : results.size();
    if (!attrs.is(AttrKind::kArray) || attrs.array().size() != expected) {
      return OpError(op, "expects '", attrs_name, "' to be an array of ",
                     expected, " dictionaries, but got ", attrs.ToString());
    }
  }
  if (op.num_regions() > 1) {
    return OpError(op, "expected at most one region, but found ",
                   op.num_regions());
  }
  if (op.num_regions() == 0 || op.region(0).empty()) {
    // (MLIR) A declaration must not be public.
    if (func::IsPublic(op)) {
      return OpError(op, "symbol declaration cannot have public visibility");
    }
    return OkStatus();
  }
  const Block& entry = op.region(0).front();
  if (entry.num_arguments() != static_cast<int>(inputs.size())) {
    return OpError(op, "entry block must have ", inputs.size(),
                   " arguments to match function signature, but has ",
                   entry.num_arguments());
  }
  for (int i = 0; i < entry.num_arguments(); ++i) {
    if (entry.argument(i)->type() != inputs[i]) {
      return OpError(op, "type of entry block argument #", i, " (",
                     Quoted(entry.argument(i)->type()),
                     ") must match the type of the corresponding argument in "
                     "function signature (",
                     Quoted(inputs[i]), ")");
    }
  }
  // Each block ends with a terminator: func.return, or another dialect's
  // terminator (MLIR also accepts a stablehlo.return there, unchecked).
  for (const auto& block : op.region(0).blocks()) {
    const Operation* terminator = block->terminator();
    if (!terminator ||
        (!IsTerminatorOp(*terminator) && !terminator->is(OpCode::kUnknown))) {
      return OpError(op, "body block must end with 'func.return', but ",
                     terminator ? StrCat("ends with '", terminator->name(), "'")
                                : std::string("is empty"));
    }
  }
  return OkStatus();
}

Status VerifyFuncReturn(const Operation& op) {
  const Operation* parent = op.ParentOp();
  if (!parent || !parent->is(OpCode::kFunc)) {
    return OpError(op, "expects parent op 'func.func'");
  }
  Type type = func::FunctionType(*parent);
  if (!type.is(TypeKind::kFunction)) return OkStatus();  // reported there
  const std::vector<Type>& results = type.results();
  std::string fn_name(func::Name(*parent));
  if (op.num_operands() != static_cast<int>(results.size())) {
    return OpError(op, "has ", op.num_operands(),
                   " operands, but enclosing function (@", fn_name,
                   ") returns ", results.size());
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    if (op.operand(i)->type() != results[i]) {
      return OpError(op, "type of return operand ", i, " (",
                     Quoted(op.operand(i)->type()),
                     ") doesn't match function result type (",
                     Quoted(results[i]), ") in function @", fn_name);
    }
  }
  return OkStatus();
}

// The function named by symbol attribute `attr_name`, or an error.
StatusOr<const Operation*> ResolveFunction(const Operation& op,
                                           const Attribute& symbol,
                                           const FunctionTable& functions) {
  if (!symbol.is(AttrKind::kSymbolRef)) {
    return OpError(op, "expects a symbol reference, but got ",
                   symbol ? symbol.ToString() : std::string("nothing"));
  }
  auto it = functions.find(symbol.symbol_root());
  if (!symbol.symbol_nested().empty() || it == functions.end()) {
    return OpError(op, "'", symbol.symbol_root(),
                   "' does not reference a valid function");
  }
  return it->second;
}

Status VerifyCallSymbol(const Operation& op, const FunctionTable& functions) {
  ASSIGN_OR_RETURN(const Operation* callee,
                   ResolveFunction(op, op.GetAttr("callee"), functions));
  Type type = func::FunctionType(*callee);
  if (!type.is(TypeKind::kFunction)) return OkStatus();
  const std::vector<Type>& inputs = type.inputs();
  const std::vector<Type>& results = type.results();
  if (op.num_operands() != static_cast<int>(inputs.size())) {
    return OpError(op, "incorrect number of operands for callee: expected ",
                   inputs.size(), ", but got ", op.num_operands());
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    if (op.operand(i)->type() != inputs[i]) {
      return OpError(op, "operand type mismatch: expected operand type ",
                     Quoted(inputs[i]), ", but provided ",
                     Quoted(op.operand(i)->type()), " for operand number ", i);
    }
  }
  if (op.num_results() != static_cast<int>(results.size())) {
    return OpError(op, "incorrect number of results for callee: expected ",
                   results.size(), ", but got ", op.num_results());
  }
  for (int i = 0; i < op.num_results(); ++i) {
    if (op.result(i)->type() != results[i]) {
      return OpError(op, "result type mismatch at index ", i, ": expected ",
                     Quoted(results[i]), ", but got ",
                     Quoted(op.result(i)->type()));
    }
  }
  return OkStatus();
}

// composite (C2)-(C4): the decomposition exists and has the op's signature.
Status VerifyCompositeSymbol(const Operation& op,
                             const FunctionTable& functions) {
  ASSIGN_OR_RETURN(const Operation* decomposition,
                   ResolveFunction(op, op.GetAttr("decomposition"), functions));
  Type type = func::FunctionType(*decomposition);
  if (!type.is(TypeKind::kFunction)) return OkStatus();
  const std::vector<Type>& inputs = type.inputs();
  const std::vector<Type>& results = type.results();
  if (op.num_operands() != static_cast<int>(inputs.size())) {
    return OpError(op, "has ", op.num_operands(),
                   " operand(s), but decomposition has ", inputs.size());
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    if (op.operand(i)->type() != inputs[i]) {
      return OpError(op, "operand at index ", i, " has type ",
                     Quoted(op.operand(i)->type()),
                     ", but decomposition has type ", Quoted(inputs[i]));
    }
  }
  if (op.num_results() != static_cast<int>(results.size())) {
    return OpError(op, "has ", op.num_results(),
                   " result(s), but decomposition has ", results.size());
  }
  for (int i = 0; i < op.num_results(); ++i) {
    if (op.result(i)->type() != results[i]) {
      return OpError(op, "result at index ", i, " has type ",
                     Quoted(op.result(i)->type()),
                     ", but decomposition has type ", Quoted(results[i]));
    }
  }
  return OkStatus();
}

Status VerifySymbolUses(const Operation& op, const FunctionTable& functions) {
  switch (op.code()) {
    case OpCode::kCall:
      return VerifyCallSymbol(op, functions);
    case OpCode::kComposite:
      return VerifyCompositeSymbol(op, functions);
    default:
      return OkStatus();
  }
}

// ---- The walk
// ------------------------------------------------------------------

class Walker {
 public:
  // `functions` is null when verifying an op outside a module; then values
  // defined outside the op are accepted as they are.
  explicit Walker(const FunctionTable* functions) : functions_(functions) {}

  // Values defined anywhere inside `root` (only needed outside a module).
  void CollectInner(const Operation& root) {
    for (const auto& region : root.regions()) {
      for (const auto& block : region->blocks()) {
        for (int i = 0; i < block->num_arguments(); ++i) {
          inner_.insert(block->argument(i));
        }
        for (const auto& op : block->operations()) {
          for (int i = 0; i < op->num_results(); ++i)
            inner_.insert(op->result(i));
          CollectInner(*op);
        }
      }
    }
  }

  Status Op(const Operation& op, int depth) {
    if (depth > kMaxRegionDepth) {
      return OpError(op, "regions nested more than ", kMaxRegionDepth,
                     " deep are not supported");
    }
    for (int i = 0; i < op.num_operands(); ++i) {
      const Value* value = op.operand(i);
      if (value == nullptr) return OpError(op, "operand #", i, " is missing");
      if (visible_.count(value)) continue;
      if (functions_ == nullptr && !inner_.count(value)) continue;
      return OpError(op, "operand #", i, " does not dominate this use");
    }
    for (int i = 0; i < op.num_results(); ++i) {
      RETURN_IF_ERROR(CheckValueType(op, op.result(i)->type(), "result", i));
    }
    RETURN_IF_ERROR(VerifyOpOnly(op));
    if (functions_ != nullptr) {
      RETURN_IF_ERROR(VerifySymbolUses(op, *functions_));
    }

    // func.func is isolated from above: its body sees nothing outside it.
    std::unordered_set<const Value*> saved;
    bool isolated = op.is(OpCode::kFunc) || op.is(OpCode::kModule);
    if (isolated) saved.swap(visible_);
    for (const auto& region : op.regions()) {
      RETURN_IF_ERROR(Region(op, *region, depth));
    }
    if (isolated) saved.swap(visible_);
    return OkStatus();
  }

 private:
  Status CheckValueType(const Operation& op, const Type& type,
                        std::string_view what, int index) {
    if (!type) return OpError(op, what, " #", index, " has no type");
    Status status = CheckTypeRules(type, StrCat(what, " #", index));
    if (!status.ok()) return OpError(op, status.message());
    return OkStatus();
  }

  Status Region(const Operation& parent, const ir::Region& region, int depth) {
    // Blocks of a multi-block region may refer to each other's values
    // (StableHLO never builds such CFGs; accept them rather than model
    // dominance between blocks).
    bool multi_block = region.num_blocks() > 1;
    std::vector<const Value*> added;
    auto add = [&](const Value* value) {
      if (visible_.insert(value).second) added.push_back(value);
    };
    if (multi_block) {
      for (const auto& block : region.blocks()) {
        for (const auto& op : block->operations()) {
          for (int i = 0; i < op->num_results(); ++i) add(op->result(i));
        }
      }
    }
    for (const auto& block : region.blocks()) {
      for (int i = 0; i < block->num_arguments(); ++i) {
        RETURN_IF_ERROR(
            CheckValueType(parent, block->argument(i)->type(), "argument", i));
        add(block->argument(i));
      }
      const auto& ops = block->operations();
      for (size_t i = 0; i < ops.size(); ++i) {
        const Operation& op = *ops[i];
        if (IsTerminatorOp(op) && i + 1 != ops.size()) {
          return OpError(op, "must be the last operation in the parent block");
        }
        RETURN_IF_ERROR(Op(op, depth + 1));
        for (int r = 0; r < op.num_results(); ++r) add(op.result(r));
      }
    }
    for (const Value* value : added) visible_.erase(value);
    return OkStatus();
  }

  const FunctionTable* functions_;
  std::unordered_set<const Value*> visible_;
  std::unordered_set<const Value*> inner_;
};

// VerifySymbolUses for `op` and every op nested in it.
Status VerifyNestedSymbolUses(const Operation& op,
                              const FunctionTable& functions) {
  RETURN_IF_ERROR(VerifySymbolUses(op, functions));
  for (const auto& region : op.regions()) {
    for (const auto& block : region->blocks()) {
      for (const auto& nested : block->operations()) {
        RETURN_IF_ERROR(VerifyNestedSymbolUses(*nested, functions));
      }
    }
  }
  return OkStatus();
}

}  // namespace

Status VerifyOpOnly(const Operation& op) {
  switch (op.code()) {
    case OpCode::kUnknown:
      return OkStatus();
    case OpCode::kFunc:
      return VerifyFunc(op);
    case OpCode::kFuncReturn:
      return VerifyFuncReturn(op);
    default:
      break;
  }
  OpVerifyFn verify = Table()[static_cast<size_t>(op.code())];
  return verify ? verify(op) : OkStatus();
}

bool HasVerifier(OpCode code) {
  if (code == OpCode::kFunc || code == OpCode::kFuncReturn) return true;
  if (code == OpCode::kUnknown) return false;
  return Table()[static_cast<size_t>(code)] != nullptr;
}

}  // namespace verifier

Status VerifyModule(const Module& module) {
  const Operation& top = module.op();
  if (!top.is(OpCode::kModule) || top.num_regions() != 1 ||
      top.region(0).num_blocks() != 1) {
    return verifier::OpError(top,
                             "a module must be a 'builtin.module' with "
                             "one region of one block");
  }
  verifier::FunctionTable functions;
  for (const auto& op : module.body().operations()) {
    if (!op->is(OpCode::kFunc)) continue;
    std::string_view name = func::Name(*op);
    if (name.empty()) continue;  // reported by the func.func verifier
    if (!functions.emplace(name, op.get()).second) {
      return verifier::OpError(*op, "redefinition of symbol named '", name,
                               "'");
    }
  }
  verifier::Walker walker(&functions);
  return walker.Op(top, 0);
}

Status VerifyOperation(const Operation& op) {
  // Inside a module, func.call symbols can be resolved too.
  const Operation* root = &op;
  while (root->ParentOp() != nullptr) root = root->ParentOp();
  verifier::FunctionTable functions;
  bool in_module = root != &op && root->is(OpCode::kModule) &&
                   root->num_regions() == 1 &&
                   root->region(0).num_blocks() == 1;
  if (in_module) {
    for (const auto& child : root->region(0).front().operations()) {
      if (child->is(OpCode::kFunc) && !func::Name(*child).empty()) {
        functions.emplace(func::Name(*child), child.get());
      }
    }
  }
  verifier::Walker walker(nullptr);
  walker.CollectInner(op);
  RETURN_IF_ERROR(walker.Op(op, 0));
  if (in_module) {
    return verifier::VerifyNestedSymbolUses(op, functions);
  }
  return OkStatus();
}

}  // namespace kiln::ir
