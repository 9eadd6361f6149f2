// Ops, values, blocks, regions and modules: the program representation
// every layer of Kiln shares.
//
// Ownership is strictly hierarchical: a Module owns its top-level op; an
// Operation owns its result Values and its Regions; a Region owns its
// Blocks; a Block owns its argument Values and its Operations. Operands are
// plain pointers to Values owned elsewhere in the same module.
#ifndef KILN_IR_OPERATION_H_
#define KILN_IR_OPERATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/attributes.h"
#include "ir/location.h"
#include "ir/types.h"

namespace kiln::ir {

enum class OpCode : uint16_t {
#define KILN_OP(enumerator, name, inherent) k##enumerator,
#include "ir/ops.def"
#undef KILN_OP
  kUnknown,  // an op of another dialect (or an unknown name), kept generic
};

// "stablehlo.add" for OpCode::kAdd; "" for kUnknown.
std::string_view OpCodeName(OpCode code);
// The OpCode for a full op name, or kUnknown.
OpCode LookupOpCode(std::string_view name);
// Whether `attribute` is inherent (a property) of ops with this code.
bool IsInherentAttribute(OpCode code, std::string_view attribute);
// The inherent attribute names of an op, in declaration order.
const std::vector<std::string>& InherentAttributeNames(OpCode code);

class Block;
class Operation;
class Region;

// An SSA value: an op result or a block argument.
class Value {
 public:
  Value(Type type, Operation* defining_op, Block* owner_block, int index)
      : type_(std::move(type)),
        defining_op_(defining_op),
        owner_block_(owner_block),
        index_(index) {}

  const Type& type() const { return type_; }
  void set_type(Type type) { type_ = std::move(type); }
  // The op this value is a result of (null for block arguments).
  Operation* defining_op() const { return defining_op_; }
  // The block this value is an argument of (null for op results).
  Block* owner_block() const { return owner_block_; }
  bool IsBlockArgument() const { return owner_block_ != nullptr; }
  // Result number, or argument number.
  int index() const { return index_; }
  // Location of a block argument (op results use their op's location).
  const Location& loc() const { return loc_; }
  void set_loc(Location loc) { loc_ = std::move(loc); }

 private:
  Type type_;
  Operation* defining_op_;
  Block* owner_block_;
  int index_;
  Location loc_;
};

class Operation {
 public:
  // An op named `name` (e.g. "stablehlo.add") with results of `result_types`.
  Operation(std::string name, std::vector<Type> result_types,
            Location loc = Location());
  ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  const std::string& name() const { return name_; }
  OpCode code() const { return code_; }
  bool is(OpCode code) const { return code_ == code; }
  // The dialect prefix ("stablehlo").
  std::string_view dialect() const;

  const Location& loc() const { return loc_; }
  void set_loc(Location loc) { loc_ = std::move(loc); }

  // Operands.
  const std::vector<Value*>& operands() const { return operands_; }
  int num_operands() const { return static_cast<int>(operands_.size()); }
  Value* operand(int i) const { return operands_[i]; }
  void set_operands(std::vector<Value*> operands) { operands_ = std::move(operands); }
  void AddOperand(Value* value) { operands_.push_back(value); }
  void SetOperand(int i, Value* value) { operands_[i] = value; }

  // Results.
  int num_results() const { return static_cast<int>(results_.size()); }
  Value* result(int i) const { return results_[i].get(); }
  std::vector<Value*> results() const;
  std::vector<Type> result_types() const;
  // Replaces the result list (existing result Values are destroyed; only
  // valid while nothing uses them).
  void SetResultTypes(const std::vector<Type>& types);

  // Attributes. `properties` are the op's inherent attributes; `attributes`
  // are the discardable ones. SetAttr routes by the op's inherent names.
  const NamedAttrList& properties() const { return properties_; }
  const NamedAttrList& attributes() const { return attributes_; }
  NamedAttrList& mutable_properties() { return properties_; }
  NamedAttrList& mutable_attributes() { return attributes_; }
  // Looks in the properties, then the discardable attributes.
  Attribute GetAttr(std::string_view name) const;
  bool HasAttr(std::string_view name) const { return static_cast<bool>(GetAttr(name)); }
  void SetAttr(std::string name, Attribute value);
  bool RemoveAttr(std::string_view name);

  // Regions.
  int num_regions() const { return static_cast<int>(regions_.size()); }
  Region& region(int i) const { return *regions_[i]; }
  Region& AddRegion();
  const std::vector<std::unique_ptr<Region>>& regions() const { return regions_; }

  // Successor blocks (unusual in StableHLO; kept for generic ops).
  const std::vector<Block*>& successors() const { return successors_; }
  void AddSuccessor(Block* block) { successors_.push_back(block); }

  // The block holding this op (null for a module's top op).
  Block* parent_block() const { return parent_block_; }
  // The op whose region holds this op's block (null at top level).
  Operation* ParentOp() const;

  // Visits this op and every op nested in its regions, parents first.
  void Walk(const std::function<void(Operation&)>& visit);

  // A deep copy. Operands that refer to values outside the copied op are
  // mapped through `value_map` when present there, else kept as they are;
  // every value defined inside the copy is added to `value_map`.
  std::unique_ptr<Operation> Clone(std::map<const Value*, Value*>& value_map) const;

  // "stablehlo.add at file.mlir:3:5" for error messages.
  std::string Describe() const;

 private:
  friend class Block;
  std::string name_;
  OpCode code_;
  Location loc_;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  NamedAttrList properties_;
  NamedAttrList attributes_;
  std::vector<std::unique_ptr<Region>> regions_;
  std::vector<Block*> successors_;
  Block* parent_block_ = nullptr;
};

class Block {
 public:
  explicit Block(Region* parent = nullptr) : parent_(parent) {}
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Region* parent() const { return parent_; }
  Operation* ParentOp() const;

  // Arguments.
  int num_arguments() const { return static_cast<int>(arguments_.size()); }
  Value* argument(int i) const { return arguments_[i].get(); }
  std::vector<Value*> arguments() const;
  Value* AddArgument(Type type, Location loc = Location());

  // Operations, in order.
  const std::vector<std::unique_ptr<Operation>>& operations() const { return operations_; }
  bool empty() const { return operations_.empty(); }
  Operation* Append(std::unique_ptr<Operation> op);
  Operation* InsertBefore(size_t position, std::unique_ptr<Operation> op);
  // Removes and returns the op at `position`.
  std::unique_ptr<Operation> Remove(size_t position);
  // The position of `op` in this block (or -1).
  int64_t IndexOf(const Operation* op) const;
  // The last op (the terminator of a well-formed block), or null.
  Operation* terminator() const {
    return operations_.empty() ? nullptr : operations_.back().get();
  }
  // Replaces the whole op list.
  void SetOperations(std::vector<std::unique_ptr<Operation>> operations);
  std::vector<std::unique_ptr<Operation>> TakeOperations();

 private:
  Region* parent_;
  std::vector<std::unique_ptr<Value>> arguments_;
  std::vector<std::unique_ptr<Operation>> operations_;
};

class Region {
 public:
  explicit Region(Operation* parent = nullptr) : parent_(parent) {}
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  Operation* parent() const { return parent_; }
  int num_blocks() const { return static_cast<int>(blocks_.size()); }
  bool empty() const { return blocks_.empty(); }
  Block& block(int i) const { return *blocks_[i]; }
  Block& front() const { return *blocks_.front(); }
  Block& AddBlock();
  const std::vector<std::unique_ptr<Block>>& blocks() const { return blocks_; }

 private:
  Operation* parent_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

// A parsed or decoded program: one `builtin.module` op (with one region of
// one block holding `func.func` ops and whatever else the file had), plus
// the blobs of its `dense_resource` attributes.
class Module {
 public:
  // An empty module (a builtin.module with one empty block).
  Module();
  explicit Module(std::unique_ptr<Operation> module_op);

  Operation& op() const { return *op_; }
  Block& body() const { return op_->region(0).front(); }
  // The module's sym_name, or "" when it has none.
  std::string name() const;

  // Top-level func.func ops, in order.
  std::vector<Operation*> Functions() const;
  // The func.func named `name`, or null.
  Operation* LookupFunction(std::string_view name) const;
  // `@main`, else the only public function, else null.
  Operation* EntryFunction() const;

  // Blobs referenced by dense_resource attributes, by key.
  std::map<std::string, std::shared_ptr<ResourceBlob>>& resources() {
    return resources_;
  }
  const std::map<std::string, std::shared_ptr<ResourceBlob>>& resources() const {
    return resources_;
  }
  // The blob for `key`, created (empty, not present) on first use.
  std::shared_ptr<ResourceBlob> GetOrCreateResource(const std::string& key);

  // Where the module came from (a file name), for messages.
  const std::string& source_name() const { return source_name_; }
  void set_source_name(std::string name) { source_name_ = std::move(name); }

  std::unique_ptr<Module> Clone() const;

 private:
  std::unique_ptr<Operation> op_;
  std::map<std::string, std::shared_ptr<ResourceBlob>> resources_;
  std::string source_name_;
};

// Accessors for func.func ops.
namespace func {
std::string_view Name(const Operation& func);
Type FunctionType(const Operation& func);  // a kFunction type
bool IsPublic(const Operation& func);  // no sym_visibility or "public"
// Whether `func` has a body (a declaration has none; Body needs one).
bool HasBody(const Operation& func);
Block& Body(const Operation& func);
// The attribute dictionary of argument / result `i` (null if none).
Attribute ArgAttrs(const Operation& func, int i);
Attribute ResultAttrs(const Operation& func, int i);
}  // namespace func

// Structural equality of two modules (ops, types, attributes, regions,
// value wiring); locations are compared only when `compare_locations`.
// On a difference, returns false and describes the first one in `why`.
bool StructurallyEqual(const Module& a, const Module& b, bool compare_locations,
                       std::string* why = nullptr);

}  // namespace kiln::ir

#endif  // KILN_IR_OPERATION_H_
