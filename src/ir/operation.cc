#include "ir/operation.h"

#include <algorithm>
#include <unordered_map>

#include "base/logging.h"
#include "base/strings.h"

namespace kiln::ir {
namespace {

struct OpInfo {
  std::string_view name;
  std::vector<std::string> inherent;
};

const std::vector<OpInfo>& OpInfos() {
  static const std::vector<OpInfo>* kInfos = [] {
    auto* infos = new std::vector<OpInfo>();
    auto add = [infos](std::string_view name, std::string_view inherent) {
      OpInfo info{name, {}};
      if (!inherent.empty()) {
        for (std::string_view piece : StrSplit(inherent, ',')) {
          info.inherent.emplace_back(piece);
        }
      }
      infos->push_back(std::move(info));
    };
#define KILN_OP(enumerator, name, inherent) add(name, inherent);
#include "ir/ops.def"
#undef KILN_OP
    add("", "");  // kUnknown
    return infos;
  }();
  return *kInfos;
}

const std::unordered_map<std::string_view, OpCode>& OpCodesByName() {
  static const auto* kMap = [] {
    auto* map = new std::unordered_map<std::string_view, OpCode>();
    const auto& infos = OpInfos();
    for (size_t i = 0; i + 1 < infos.size(); ++i) {
      (*map)[infos[i].name] = static_cast<OpCode>(i);
    }
    return map;
  }();
  return *kMap;
}

}  // namespace

std::string_view OpCodeName(OpCode code) {
  return OpInfos()[static_cast<size_t>(code)].name;
}

OpCode LookupOpCode(std::string_view name) {
  const auto& map = OpCodesByName();
  auto it = map.find(name);
  return it == map.end() ? OpCode::kUnknown : it->second;
}

const std::vector<std::string>& InherentAttributeNames(OpCode code) {
  return OpInfos()[static_cast<size_t>(code)].inherent;
}

bool IsInherentAttribute(OpCode code, std::string_view attribute) {
  const auto& names = InherentAttributeNames(code);
  return std::find(names.begin(), names.end(), attribute) != names.end();
}

// ---- Operation

Operation::Operation(std::string name, std::vector<Type> result_types, Location loc)
    : name_(std::move(name)), code_(LookupOpCode(name_)), loc_(std::move(loc)) {
  SetResultTypes(result_types);
}

Operation::~Operation() = default;

std::string_view Operation::dialect() const {
  std::string_view name(name_);
  size_t dot = name.find('.');
  return dot == std::string_view::npos ? std::string_view() : name.substr(0, dot);
}

std::vector<Value*> Operation::results() const {
  std::vector<Value*> values;
  values.reserve(results_.size());
  for (const auto& result : results_) values.push_back(result.get());
  return values;
}

std::vector<Type> Operation::result_types() const {
  std::vector<Type> types;
  types.reserve(results_.size());
  for (const auto& result : results_) types.push_back(result->type());
  return types;
}

void Operation::SetResultTypes(const std::vector<Type>& types) {
  results_.clear();
  results_.reserve(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    results_.push_back(std::make_unique<Value>(types[i], this, nullptr, static_cast<int>(i)));
  }
}

Attribute Operation::GetAttr(std::string_view name) const {
  Attribute value = properties_.Get(name);
  if (value) return value;
  return attributes_.Get(name);
}

void Operation::SetAttr(std::string name, Attribute value) {
  if (IsInherentAttribute(code_, name)) {
    attributes_.Erase(name);
    properties_.Set(std::move(name), std::move(value));
  } else {
    attributes_.Set(std::move(name), std::move(value));
  }
}

bool Operation::RemoveAttr(std::string_view name) {
  bool removed = properties_.Erase(name);
  return attributes_.Erase(name) || removed;
}

Region& Operation::AddRegion() {
  regions_.push_back(std::make_unique<Region>(this));
  return *regions_.back();
}

Operation* Operation::ParentOp() const {
  return parent_block_ ? parent_block_->ParentOp() : nullptr;
}

void Operation::Walk(const std::function<void(Operation&)>& visit) {
  visit(*this);
  for (const auto& region : regions_) {
    for (const auto& block : region->blocks()) {
      // Index-based: `visit` may not add or remove ops of this block.
      for (size_t i = 0; i < block->operations().size(); ++i) {
        block->operations()[i]->Walk(visit);
      }
    }
  }
}

std::unique_ptr<Operation> Operation::Clone(
    std::map<const Value*, Value*>& value_map) const {
  auto copy = std::make_unique<Operation>(name_, result_types(), loc_);
  for (Value* operand : operands_) {
    auto it = value_map.find(operand);
    copy->operands_.push_back(it == value_map.end() ? operand : it->second);
  }
  for (size_t i = 0; i < results_.size(); ++i) {
    value_map[results_[i].get()] = copy->results_[i].get();
  }
  copy->properties_ = properties_;
  copy->attributes_ = attributes_;
  // Blocks are created first so that successors and forward references
  // within a region map correctly.
  std::map<const Block*, Block*> block_map;
  for (const auto& region : regions_) {
    Region& new_region = copy->AddRegion();
    for (const auto& block : region->blocks()) {
      Block& new_block = new_region.AddBlock();
      block_map[block.get()] = &new_block;
      for (int a = 0; a < block->num_arguments(); ++a) {
        Value* arg = block->argument(a);
        value_map[arg] = new_block.AddArgument(arg->type(), arg->loc());
      }
    }
  }
  for (size_t r = 0; r < regions_.size(); ++r) {
    const Region& region = *regions_[r];
    for (int b = 0; b < region.num_blocks(); ++b) {
      Block& new_block = copy->region(static_cast<int>(r)).block(b);
      for (const auto& op : region.block(b).operations()) {
        new_block.Append(op->Clone(value_map));
      }
    }
  }
  for (Block* successor : successors_) {
    auto it = block_map.find(successor);
    copy->successors_.push_back(it == block_map.end() ? successor : it->second);
  }
  return copy;
}

std::string Operation::Describe() const {
  std::string where = loc_.ShortString();
  if (where.empty()) return name_;
  return StrCat(name_, " at ", where);
}

// ---- Block

Operation* Block::ParentOp() const { return parent_ ? parent_->parent() : nullptr; }

std::vector<Value*> Block::arguments() const {
  std::vector<Value*> values;
  for (const auto& arg : arguments_) values.push_back(arg.get());
  return values;
}

Value* Block::AddArgument(Type type, Location loc) {
  arguments_.push_back(std::make_unique<Value>(std::move(type), nullptr, this,
                                               static_cast<int>(arguments_.size())));
  arguments_.back()->set_loc(std::move(loc));
  return arguments_.back().get();
}

Operation* Block::Append(std::unique_ptr<Operation> op) {
  op->parent_block_ = this;
  operations_.push_back(std::move(op));
  return operations_.back().get();
}

Operation* Block::InsertBefore(size_t position, std::unique_ptr<Operation> op) {
  op->parent_block_ = this;
  Operation* raw = op.get();
  operations_.insert(operations_.begin() + position, std::move(op));
  return raw;
}

std::unique_ptr<Operation> Block::Remove(size_t position) {
  std::unique_ptr<Operation> op = std::move(operations_[position]);
  operations_.erase(operations_.begin() + position);
  op->parent_block_ = nullptr;
  return op;
}

int64_t Block::IndexOf(const Operation* op) const {
  for (size_t i = 0; i < operations_.size(); ++i) {
    if (operations_[i].get() == op) return static_cast<int64_t>(i);
  }
  return -1;
}

void Block::SetOperations(std::vector<std::unique_ptr<Operation>> operations) {
  operations_ = std::move(operations);
  for (auto& op : operations_) op->parent_block_ = this;
}

std::vector<std::unique_ptr<Operation>> Block::TakeOperations() {
  for (auto& op : operations_) op->parent_block_ = nullptr;
  return std::move(operations_);
}

// ---- Region

Block& Region::AddBlock() {
  blocks_.push_back(std::make_unique<Block>(this));
  return *blocks_.back();
}

// ---- Module

Module::Module() : op_(std::make_unique<Operation>("builtin.module", std::vector<Type>{})) {
  op_->AddRegion().AddBlock();
}

Module::Module(std::unique_ptr<Operation> module_op) : op_(std::move(module_op)) {
  KILN_CHECK(op_ && op_->num_regions() == 1 && op_->region(0).num_blocks() == 1)
      << "a module op needs one region with one block";
}

std::string Module::name() const {
  Attribute name = op_->GetAttr("sym_name");
  return name.is(AttrKind::kString) ? name.string_value() : std::string();
}

std::vector<Operation*> Module::Functions() const {
  std::vector<Operation*> functions;
  for (const auto& op : body().operations()) {
    if (op->is(OpCode::kFunc)) functions.push_back(op.get());
  }
  return functions;
}

Operation* Module::LookupFunction(std::string_view name) const {
  for (Operation* f : Functions()) {
    if (func::Name(*f) == name) return f;
  }
  return nullptr;
}

Operation* Module::EntryFunction() const {
  // A declaration has nothing to run: it is never the entry.
  if (Operation* main = LookupFunction("main")) {
    return func::HasBody(*main) ? main : nullptr;
  }
  Operation* only = nullptr;
  for (Operation* f : Functions()) {
    if (!func::IsPublic(*f) || !func::HasBody(*f)) continue;
    if (only) return nullptr;
    only = f;
  }
  return only;
}

std::shared_ptr<ResourceBlob> Module::GetOrCreateResource(const std::string& key) {
  auto& slot = resources_[key];
  if (!slot) {
    slot = std::make_shared<ResourceBlob>();
    slot->key = key;
  }
  return slot;
}

std::unique_ptr<Module> Module::Clone() const {
  std::map<const Value*, Value*> value_map;
  auto copy = std::make_unique<Module>(op_->Clone(value_map));
  copy->resources_ = resources_;
  copy->source_name_ = source_name_;
  return copy;
}

// ---- func accessors

namespace func {

std::string_view Name(const Operation& f) {
  Attribute name = f.GetAttr("sym_name");
  return name.is(AttrKind::kString) ? std::string_view(name.string_value())
                                    : std::string_view();
}

Type FunctionType(const Operation& f) {
  Attribute type = f.GetAttr("function_type");
  return type.is(AttrKind::kType) ? type.type() : Type();
}

bool IsPublic(const Operation& f) {
  Attribute visibility = f.GetAttr("sym_visibility");
  return !visibility.is(AttrKind::kString) || visibility.string_value() == "public";
}

bool HasBody(const Operation& f) {
  return f.num_regions() > 0 && !f.region(0).empty();
}
Block& Body(const Operation& f) { return f.region(0).front(); }

namespace {
Attribute NthDictionary(const Operation& f, const char* name, int i) {
  Attribute all = f.GetAttr(name);
  if (!all.is(AttrKind::kArray) || i < 0 || i >= static_cast<int>(all.array().size())) {
    return Attribute();
  }
  return all.array()[i];
}
}  // namespace

Attribute ArgAttrs(const Operation& f, int i) { return NthDictionary(f, "arg_attrs", i); }
Attribute ResultAttrs(const Operation& f, int i) { return NthDictionary(f, "res_attrs", i); }

}  // namespace func

// ---- structural equality

namespace {

class EqualityChecker {
 public:
  EqualityChecker(bool compare_locations, std::string* why)
      : compare_locations_(compare_locations), why_(why) {}

  bool Ops(const Operation& a, const Operation& b, const std::string& path) {
    std::string here = StrCat(path, "/", a.name());
    if (a.name() != b.name()) return Fail(here, StrCat("op ", a.name(), " vs ", b.name()));
    if (a.num_operands() != b.num_operands()) return Fail(here, "operand count");
    for (int i = 0; i < a.num_operands(); ++i) {
      auto it = values_.find(a.operand(i));
      if (it == values_.end()) {
        if (a.operand(i) != b.operand(i)) return Fail(here, StrCat("operand ", i, " unmapped"));
      } else if (it->second != b.operand(i)) {
        return Fail(here, StrCat("operand ", i, " differs"));
      }
    }
    if (a.num_results() != b.num_results()) return Fail(here, "result count");
    for (int i = 0; i < a.num_results(); ++i) {
      if (a.result(i)->type() != b.result(i)->type()) {
        return Fail(here, StrCat("result ", i, " type ", a.result(i)->type().ToString(),
                                 " vs ", b.result(i)->type().ToString()));
      }
      values_[a.result(i)] = b.result(i);
    }
    if (!Attrs(a.properties(), b.properties(), here + " properties")) return false;
    if (!Attrs(a.attributes(), b.attributes(), here + " attributes")) return false;
    if (compare_locations_ && !(a.loc() == b.loc())) return Fail(here, "location");
    if (a.num_regions() != b.num_regions()) return Fail(here, "region count");
    for (int r = 0; r < a.num_regions(); ++r) {
      const Region& ra = a.region(r);
      const Region& rb = b.region(r);
      if (ra.num_blocks() != rb.num_blocks()) return Fail(here, "block count");
      for (int k = 0; k < ra.num_blocks(); ++k) {
        const Block& ba = ra.block(k);
        const Block& bb = rb.block(k);
        blocks_[&ba] = &bb;
        if (ba.num_arguments() != bb.num_arguments()) return Fail(here, "block argument count");
        for (int i = 0; i < ba.num_arguments(); ++i) {
          if (ba.argument(i)->type() != bb.argument(i)->type()) {
            return Fail(here, StrCat("block argument ", i, " type"));
          }
          values_[ba.argument(i)] = bb.argument(i);
        }
      }
      for (int k = 0; k < ra.num_blocks(); ++k) {
        const Block& ba = ra.block(k);
        const Block& bb = rb.block(k);
        if (ba.operations().size() != bb.operations().size()) {
          return Fail(here, StrCat("op count in block ", k, ": ", ba.operations().size(),
                                   " vs ", bb.operations().size()));
        }
        for (size_t i = 0; i < ba.operations().size(); ++i) {
          if (!Ops(*ba.operations()[i], *bb.operations()[i], here)) return false;
        }
      }
    }
    if (a.successors().size() != b.successors().size()) return Fail(here, "successors");
    for (size_t i = 0; i < a.successors().size(); ++i) {
      auto it = blocks_.find(a.successors()[i]);
      if (it == blocks_.end() || it->second != b.successors()[i]) return Fail(here, "successor");
    }
    return true;
  }

 private:
  bool Attrs(const NamedAttrList& a, const NamedAttrList& b, const std::string& path) {
    if (a.size() != b.size()) {
      return Fail(path, StrCat("{", StrJoin(a.entries(), ", ", NameOf), "} vs {",
                               StrJoin(b.entries(), ", ", NameOf), "}"));
    }
    for (size_t i = 0; i < a.size(); ++i) {
      const auto& [name_a, value_a] = a.entries()[i];
      const auto& [name_b, value_b] = b.entries()[i];
      if (name_a != name_b) return Fail(path, StrCat("attribute ", name_a, " vs ", name_b));
      if (value_a != value_b) {
        return Fail(path, StrCat("attribute ", name_a, ": ", value_a.ToString(), " vs ",
                                 value_b.ToString()));
      }
    }
    return true;
  }

  static void NameOf(std::string& out, const NamedAttribute& entry) { out += entry.first; }

  bool Fail(const std::string& path, const std::string& what) {
    if (why_) *why_ = StrCat(path, ": ", what);
    return false;
  }

  bool compare_locations_;
  std::string* why_;
  std::map<const Value*, const Value*> values_;
  std::map<const Block*, const Block*> blocks_;
};

}  // namespace

bool StructurallyEqual(const Module& a, const Module& b, bool compare_locations,
                       std::string* why) {
  EqualityChecker checker(compare_locations, why);
  return checker.Ops(a.op(), b.op(), "");
}

}  // namespace kiln::ir
