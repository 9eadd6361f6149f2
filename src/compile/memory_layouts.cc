#include "compile/memory_layouts.h"

#include <map>
#include <optional>
#include <memory>
#include <string>

#include "base/strings.h"
#include "ir/attributes.h"

namespace kiln::compile {
namespace {

using ir::Attribute;
using ir::AttrKind;
using ir::Block;
using ir::Operation;
using ir::Type;
using ir::Value;

bool IsRowMajor(const std::vector<int64_t>& minor_to_major) {
  const int64_t rank = static_cast<int64_t>(minor_to_major.size());
  for (int64_t i = 0; i < rank; ++i) {
    if (minor_to_major[i] != rank - 1 - i) return false;
  }
  return true;
}

std::string LayoutText(const std::vector<int64_t>& minor_to_major) {
  return StrCat("{", StrJoin(minor_to_major, ","), "}");
}

Status CheckPermutation(const std::vector<int64_t>& minor_to_major,
                        int64_t rank, std::string_view what) {
  bool valid = static_cast<int64_t>(minor_to_major.size()) == rank;
  std::vector<bool> seen(valid ? rank : 0, false);
  for (size_t i = 0; valid && i < minor_to_major.size(); ++i) {
    const int64_t dim = minor_to_major[i];
    valid = dim >= 0 && dim < rank && !seen[dim];
    if (valid) seen[dim] = true;
  }
  if (valid) return OkStatus();
  return InvalidArgumentError(what, ": the layout ", LayoutText(minor_to_major),
                              " is not a permutation of the ", rank,
                              " dimensions");
}

// The dimensions of the row-major array holding the bytes of `dims` laid
// out by `minor_to_major`: most major first.
std::vector<int64_t> Physical(const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& minor_to_major) {
  std::vector<int64_t> physical;
  for (size_t i = minor_to_major.size(); i-- > 0;) {
    physical.push_back(dims[minor_to_major[i]]);
  }
  return physical;
}

std::string_view LayoutModeOf(const Attribute& attrs) {
  if (!attrs.is(AttrKind::kDictionary)) return "";
  Attribute mode = attrs.Get("mhlo.layout_mode");
  if (!mode.is(AttrKind::kString)) return "";
  return mode.string_value();
}

// A non-row-major layout needs a static tensor to permute.
Status CheckLayoutTarget(const Type& type, const std::vector<int64_t>& layout,
                         std::string_view what) {
  if (layout.empty()) return OkStatus();
  if (!type.IsTensor() || !type.HasStaticShape()) {
    return UnimplementedError(what, " is ", type.ToString(), ", and Kiln lays ",
                              "out only static tensors in a layout other "
                              "than row-major (", LayoutText(layout),
                              " was asked)");
  }
  return CheckPermutation(layout, type.rank(), what);
}

// Replaces uses of the keys of `replaced` by their values in `block` and
// every region nested in it.
void RedirectUses(Block& block, const std::map<const Value*, Value*>& replaced) {
  for (const std::unique_ptr<Operation>& op : block.operations()) {
    for (int i = 0; i < op->num_operands(); ++i) {
      auto it = replaced.find(op->operand(i));
      if (it != replaced.end()) op->SetOperand(i, it->second);
    }
    for (int r = 0; r < op->num_regions(); ++r) {
      for (const std::unique_ptr<Block>& nested : op->region(r).blocks()) {
        RedirectUses(*nested, replaced);
      }
    }
  }
}

std::unique_ptr<Operation> Transpose(Value* operand, Type result,
                                     std::vector<int64_t> permutation,
                                     const ir::Location& loc) {
  auto op = std::make_unique<Operation>("stablehlo.transpose",
                                        std::vector<Type>{std::move(result)},
                                        loc);
  op->AddOperand(operand);
  op->SetAttr("permutation", Attribute::DenseI64Array(std::move(permutation)));
  return op;
}

}  // namespace

bool MemoryLayouts::AllRowMajor() const {
  for (const auto& layout : arguments) {
    if (!layout.empty()) return false;
  }
  for (const auto& layout : results) {
    if (!layout.empty()) return false;
  }
  return true;
}

StatusOr<std::optional<std::vector<int64_t>>> ParseLayoutMode(
    std::string_view layout_mode, int64_t rank) {
  if (layout_mode.empty() || layout_mode == "default") {
    return std::optional<std::vector<int64_t>>(std::vector<int64_t>());
  }
  if (layout_mode == "auto") return std::optional<std::vector<int64_t>>();
  if (layout_mode.size() < 2 || layout_mode.front() != '{' ||
      layout_mode.back() != '}') {
    return InvalidArgumentError("mhlo.layout_mode \"", layout_mode,
                                "\" is not \"default\", \"auto\" or a layout "
                                "such as \"{1,0}\"");
  }
  std::string_view inner = layout_mode.substr(1, layout_mode.size() - 2);
  if (inner.find(':') != std::string_view::npos) {
    return UnimplementedError("mhlo.layout_mode \"", layout_mode,
                              "\" has tiles or a memory space; Kiln lays out "
                              "arrays densely, in any order of dimensions");
  }
  std::vector<int64_t> minor_to_major;
  while (!inner.empty()) {
    size_t comma = inner.find(',');
    std::string_view item = inner.substr(0, comma);
    std::optional<int64_t> value = ParseInt64(item);
    if (!value) {
      return InvalidArgumentError("mhlo.layout_mode \"", layout_mode,
                                  "\" has \"", item,
                                  "\" where a dimension belongs");
    }
    minor_to_major.push_back(*value);
    if (comma == std::string_view::npos) break;
    inner.remove_prefix(comma + 1);
  }
  RETURN_IF_ERROR(CheckPermutation(
      minor_to_major, rank, StrCat("mhlo.layout_mode \"", layout_mode, "\"")));
  if (IsRowMajor(minor_to_major)) minor_to_major.clear();
  return std::optional<std::vector<int64_t>>(std::move(minor_to_major));
}

StatusOr<MemoryLayouts> ChooseMemoryLayouts(
    const ir::Module& module,
    const std::vector<std::vector<int64_t>>& argument_overrides) {
  MemoryLayouts layouts;
  const Operation* entry = module.EntryFunction();
  if (entry == nullptr || !ir::func::HasBody(*entry)) return layouts;
  const Block& body = ir::func::Body(*entry);
  const Type function = ir::func::FunctionType(*entry);
  for (int i = 0; i < body.num_arguments(); ++i) {
    const std::string what = StrCat("argument ", i);
    const Type& type = body.argument(i)->type();
    const int64_t rank = type.IsTensor() ? type.rank() : 0;
    std::vector<int64_t> layout;
    if (i < static_cast<int>(argument_overrides.size()) &&
        !argument_overrides[i].empty()) {
      layout = argument_overrides[i];
      RETURN_IF_ERROR(CheckPermutation(
          layout, rank, StrCat("compile options' argument_layouts[", i, "]")));
      if (IsRowMajor(layout)) layout.clear();
    } else {
      auto mode =
          ParseLayoutMode(LayoutModeOf(ir::func::ArgAttrs(*entry, i)), rank);
      if (!mode.ok()) return mode.status().WithContext(what);
      // "auto" for an argument: row-major, what a framework has anyway.
      if (mode->has_value()) layout = std::move(**mode);
    }
    RETURN_IF_ERROR(CheckLayoutTarget(type, layout, what));
    layouts.arguments.push_back(std::move(layout));
  }
  const Operation* terminator = body.terminator();
  const int num_results = static_cast<int>(function.results().size());
  for (int i = 0; i < num_results; ++i) {
    const std::string what = StrCat("result ", i);
    const Type& type = function.results()[i];
    const int64_t rank = type.IsTensor() ? type.rank() : 0;
    auto mode =
        ParseLayoutMode(LayoutModeOf(ir::func::ResultAttrs(*entry, i)), rank);
    if (!mode.ok()) return mode.status().WithContext(what);
    std::vector<int64_t> layout;
    if (mode->has_value()) {
      layout = std::move(**mode);
    } else if (terminator != nullptr && i < terminator->num_operands()) {
      // "auto": a transpose of an argument leaves as the argument's bytes.
      const Value* value = terminator->operand(i);
      const Operation* op = value->defining_op();
      if (op != nullptr && op->name() == "stablehlo.transpose" &&
          op->operand(0)->IsBlockArgument() &&
          op->operand(0)->owner_block() == &body && type.IsTensor() &&
          type.HasStaticShape()) {
        Attribute permutation_attr = op->GetAttr("permutation");
        std::vector<int64_t> permutation;
        if (permutation_attr.is(AttrKind::kDenseArray)) {
          permutation = permutation_attr.dense_ints();
        }
        std::vector<int64_t> operand_layout =
            layouts.arguments[op->operand(0)->index()];
        if (operand_layout.empty()) {
          for (int64_t d = rank; d-- > 0;) operand_layout.push_back(d);
        }
        if (static_cast<int64_t>(permutation.size()) == rank &&
            CheckPermutation(permutation, rank, what).ok()) {
          // Result dimension j reads operand dimension permutation[j].
          std::vector<int64_t> inverse(rank);
          for (int64_t j = 0; j < rank; ++j) inverse[permutation[j]] = j;
          for (int64_t operand_dim : operand_layout) {
            layout.push_back(inverse[operand_dim]);
          }
          if (IsRowMajor(layout)) layout.clear();
        }
      }
    }
    RETURN_IF_ERROR(CheckLayoutTarget(type, layout, what));
    layouts.results.push_back(std::move(layout));
  }
  return layouts;
}

Status ApplyMemoryLayouts(ir::Module& module, const MemoryLayouts& layouts) {
  if (layouts.AllRowMajor()) return OkStatus();
  Operation* entry = module.EntryFunction();
  if (entry == nullptr || !ir::func::HasBody(*entry)) {
    return InvalidArgumentError("the program has no entry to lay out");
  }
  Block& body = ir::func::Body(*entry);
  Operation* terminator = body.terminator();
  if (static_cast<int>(layouts.arguments.size()) != body.num_arguments() ||
      terminator == nullptr ||
      static_cast<int>(layouts.results.size()) != terminator->num_operands()) {
    return InternalError("the layouts of ", layouts.arguments.size(),
                         " arguments and ", layouts.results.size(),
                         " results do not fit the entry");
  }
  // Arguments: the physical array in, transposed to the value the program
  // reads (logical dimension d is the physical dimension holding it).
  std::vector<std::unique_ptr<Operation>> prologue;
  std::map<const Value*, Value*> replaced;
  for (int i = 0; i < body.num_arguments(); ++i) {
    const std::vector<int64_t>& layout = layouts.arguments[i];
    if (layout.empty()) continue;
    Value* argument = body.argument(i);
    const Type logical = argument->type();
    RETURN_IF_ERROR(CheckLayoutTarget(logical, layout, StrCat("argument ", i)));
    const int64_t rank = logical.rank();
    std::vector<int64_t> permutation(rank);
    for (int64_t position = 0; position < rank; ++position) {
      permutation[layout[rank - 1 - position]] = position;
    }
    argument->set_type(logical.WithShape(Physical(logical.shape(), layout)));
    prologue.push_back(
        Transpose(argument, logical, std::move(permutation), argument->loc()));
    replaced[argument] = prologue.back()->result(0);
  }
  RedirectUses(body, replaced);
  for (size_t i = 0; i < prologue.size(); ++i) {
    body.InsertBefore(i, std::move(prologue[i]));
  }
  // Results: transposed to the physical array they leave as (its
  // dimension j is the logical dimension layout[rank - 1 - j]).
  for (int i = 0; i < terminator->num_operands(); ++i) {
    const std::vector<int64_t>& layout = layouts.results[i];
    if (layout.empty()) continue;
    Value* result = terminator->operand(i);
    const Type& logical = result->type();
    RETURN_IF_ERROR(CheckLayoutTarget(logical, layout, StrCat("result ", i)));
    std::vector<int64_t> major_to_minor(layout.rbegin(), layout.rend());
    auto transpose =
        Transpose(result, logical.WithShape(Physical(logical.shape(), layout)),
                  std::move(major_to_minor), terminator->loc());
    terminator->SetOperand(i, transpose->result(0));
    body.InsertBefore(body.operations().size() - 1, std::move(transpose));
  }
  std::vector<Type> inputs;
  for (const Value* argument : body.arguments()) {
    inputs.push_back(argument->type());
  }
  std::vector<Type> results;
  for (const Value* result : terminator->operands()) {
    results.push_back(result->type());
  }
  entry->SetAttr("function_type",
                 Attribute::TypeAttr(Type::Function(inputs, results)));
  return OkStatus();
}

}  // namespace kiln::compile
