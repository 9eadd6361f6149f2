// Helpers shared by the verifier's op families: messages, counts, type
// compatibility, regions and lists.
#include <algorithm>
#include <limits>
#include <unordered_set>

#include "ir/verify_internal.h"

namespace kiln::ir::verifier {

// ---- Errors -----------------------------------------------------------------

std::string OpPrefix(const Operation& op) {
  std::string where = op.loc().ShortString();
  if (where.empty()) return StrCat("'", op.name(), "' op ");
  return StrCat(where, ": '", op.name(), "' op ");
}

std::string Quoted(const Type& type) {
  return StrCat("'", type ? type.ToString() : std::string("<null>"), "'");
}

std::string QuotedList(const std::vector<Type>& types) {
  return StrJoin(types, ", ", [](std::string& out, const Type& type) {
    out.append(Quoted(type));
  });
}

std::string DimText(int64_t dim) {
  return dim == kDynamic ? std::string("?") : std::to_string(dim);
}

std::string JoinInts(const std::vector<int64_t>& values) {
  return StrJoin(values, ", ");
}

// ---- Counts -----------------------------------------------------------------

Status ExpectOperands(const Operation& op, int count) {
  if (op.num_operands() == count) return OkStatus();
  return OpError(op, "expected ", count, " operand(s), but found ",
                 op.num_operands());
}

Status ExpectResults(const Operation& op, int count) {
  if (op.num_results() == count) return OkStatus();
  return OpError(op, "expected ", count, " result(s), but found ",
                 op.num_results());
}

Status ExpectMinOperands(const Operation& op, int count) {
  if (op.num_operands() >= count) return OkStatus();
  return OpError(op, "expected ", count, " or more operands, but found ",
                 op.num_operands());
}

Status ExpectMinResults(const Operation& op, int count) {
  if (op.num_results() >= count) return OkStatus();
  return OpError(op, "expected ", count, " or more results, but found ",
                 op.num_results());
}

Status ExpectRegions(const Operation& op, int count) {
  if (op.num_regions() == count) return OkStatus();
  return OpError(op, "expected ", count, " region(s), but found ",
                 op.num_regions());
}

// ---- Shapes and type compatibility ------------------------------------------

std::vector<int64_t> BoundsOf(const Type& type) {
  if (!IsTensor(type)) return {};
  std::optional<std::vector<int64_t>> bounds = type.bounds();
  if (!bounds || static_cast<int64_t>(bounds->size()) != type.rank()) {
    return {};
  }
  return *bounds;
}

namespace {

// Static sizes of `shape` must not exceed `bounds`.
bool WithinBounds(const std::vector<int64_t>& shape,
                  const std::vector<int64_t>& bounds) {
  if (bounds.empty()) return true;
  if (shape.size() != bounds.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (bounds[i] != kDynamic && shape[i] != kDynamic && shape[i] > bounds[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool ShapesCompatible(const Type& a, const Type& b) {
  if (!IsTensor(a) || !IsTensor(b)) return false;
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!DimsCompatible(a.dim(i), b.dim(i))) return false;
  }
  return WithinBounds(a.shape(), BoundsOf(b)) &&
         WithinBounds(b.shape(), BoundsOf(a));
}

bool ElementsCompatible(const Type& a, const Type& b) {
  if (a.is(TypeKind::kQuantized) && b.is(TypeKind::kQuantized)) {
    const QuantizedType& qa = a.quantized();
    const QuantizedType& qb = b.quantized();
    if (qa.storage_type != qb.storage_type ||
        qa.storage_min != qb.storage_min || qa.storage_max != qb.storage_max) {
      return false;
    }
  }
  return ExpressedOrSelf(a) == ExpressedOrSelf(b);
}

bool TypesCompatible(const Type& a, const Type& b) {
  if (IsTensor(a) && IsTensor(b)) {
    return ShapesCompatible(a, b) &&
           ElementsCompatible(a.element(), b.element());
  }
  if (a.IsToken() && b.IsToken()) return true;
  if (a.IsTuple() && b.IsTuple()) {
    return TypeListsCompatible(a.elements(), b.elements());
  }
  return a == b;
}

bool TypeListsCompatible(const std::vector<Type>& a,
                         const std::vector<Type>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!TypesCompatible(a[i], b[i])) return false;
  }
  return true;
}

bool SameElementType(const Type& a, const Type& b, bool ignore_fp_precision) {
  Type ea = IsTensor(a) ? a.element() : a;
  Type eb = IsTensor(b) ? b.element() : b;
  if (ignore_fp_precision && IsFloatElement(ea) && IsFloatElement(eb)) {
    return true;
  }
  return ea == eb;
}

Type MakeTensor(std::vector<int64_t> shape, Type element,
                const std::vector<int64_t>& bounds) {
  bool any_bound = false;
  if (bounds.size() == shape.size()) {
    for (size_t i = 0; i < bounds.size(); ++i) {
      if (bounds[i] != kDynamic && shape[i] == kDynamic) any_bound = true;
    }
  }
  if (!any_bound) return Type::Tensor(std::move(shape), std::move(element));
  std::vector<int64_t> kept = bounds;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (shape[i] != kDynamic) kept[i] = kDynamic;
  }
  return Type::Tensor(std::move(shape), std::move(element),
                      Attribute::Bounds(std::move(kept)));
}

Status CheckInferredResults(const Operation& op,
                            const std::vector<Type>& inferred) {
  std::vector<Type> declared = op.result_types();
  if (TypeListsCompatible(inferred, declared)) return OkStatus();
  return OpError(op, "inferred type(s) ", QuotedList(inferred),
                 " are incompatible with return type(s) of operation ",
                 QuotedList(declared));
}

Type MostSpecific(const std::vector<Type>& types) {
  if (types.empty()) return Type();
  const Type& first = types.front();
  if (!IsTensor(first)) return first;
  for (const Type& type : types) {
    if (!IsTensor(type) || type.rank() != first.rank()) return first;
  }
  int64_t rank = first.rank();
  std::vector<int64_t> shape(rank, kDynamic);
  std::vector<int64_t> bounds(rank, kDynamic);
  for (int64_t i = 0; i < rank; ++i) {
    for (const Type& type : types) {
      if (type.dim(i) != kDynamic) {
        shape[i] = type.dim(i);
        break;
      }
      std::vector<int64_t> type_bounds = BoundsOf(type);
      if (!type_bounds.empty() && type_bounds[i] != kDynamic) {
        bounds[i] = bounds[i] == kDynamic ? type_bounds[i]
                                          : std::min(bounds[i], type_bounds[i]);
      }
    }
  }
  return MakeTensor(std::move(shape), first.element(), bounds);
}

std::optional<int64_t> StaticElementCount(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim == kDynamic || dim < 0) return std::nullopt;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim) {
      return std::nullopt;
    }
    count *= dim;
  }
  return count;
}

bool IsStaticOrSingleBounded(const Type& type) {
  if (!IsTensor(type)) return false;
  std::vector<int64_t> bounds = BoundsOf(type);
  int dynamic = 0;
  for (int64_t i = 0; i < type.rank(); ++i) {
    if (type.dim(i) != kDynamic) continue;
    if (++dynamic > 1 || bounds.empty() || bounds[i] == kDynamic) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> ConstantInts(const Value* value) {
  const Operation* producer = value->defining_op();
  if (producer == nullptr || !producer->is(OpCode::kConstant)) {
    return std::nullopt;
  }
  Attribute attr = producer->GetAttr("value");
  if (!attr.is(AttrKind::kDenseElements) || !IsTensor(attr.type()) ||
      !(IsIntElement(attr.type().element()) ||
        IsScalarElement(attr.type().element(), ElementType::kIndex))) {
    return std::nullopt;
  }
  // Shape-like operands are short; larger constants are not read.
  std::optional<int64_t> count = StaticElementCount(attr.type().shape());
  if (!count || *count > (int64_t{1} << 16)) return std::nullopt;
  std::optional<std::vector<int64_t>> values = attr.AsIntVector();
  if (!values || static_cast<int64_t>(values->size()) != *count) {
    return std::nullopt;
  }
  return values;
}

Status CheckShapeOperand(const Operation& op, int index, const Type& result) {
  const Type& shape = op.operand(index)->type();
  if (IsTensor(shape) && shape.rank() == 1 && shape.dim(0) != kDynamic &&
      shape.dim(0) != result.rank()) {
    return OpError(op,
                   "result should have a rank equal to the number of "
                   "elements in output_shape; got ",
                   Quoted(result), " and ", Quoted(shape));
  }
  std::optional<std::vector<int64_t>> values = ConstantInts(op.operand(index));
  if (!values) return OkStatus();
  bool compatible = static_cast<int64_t>(values->size()) == result.rank();
  for (size_t i = 0; compatible && i < values->size(); ++i) {
    if (result.dim(i) != kDynamic && (*values)[i] != result.dim(i)) {
      compatible = false;
    }
    if ((*values)[i] < 0) compatible = false;
  }
  if (!compatible) {
    return OpError(op, "output shape [", JoinInts(*values),
                   "] is incompatible with return type of operation ",
                   Quoted(result));
  }
  return OkStatus();
}

// ---- Regions
// ------------------------------------------------------------------

StatusOr<const Block*> SingleBlock(const Operation& op, int index) {
  if (index >= op.num_regions()) {
    return OpError(op, "expected region #", index, ", but the op has ",
                   op.num_regions(), " region(s)");
  }
  const Region& region = op.region(index);
  if (region.num_blocks() != 1) {
    return OpError(op, "region #", index,
                   " must have exactly one block, but has ",
                   region.num_blocks());
  }
  return &region.front();
}

std::vector<Type> ArgumentTypes(const Block& block) {
  std::vector<Type> types;
  for (int i = 0; i < block.num_arguments(); ++i) {
    types.push_back(block.argument(i)->type());
  }
  return types;
}

std::vector<Type> TerminatorTypes(const Block& block) {
  std::vector<Type> types;
  const Operation* terminator = block.terminator();
  if (!terminator) return types;
  for (const Value* operand : terminator->operands()) {
    types.push_back(operand->type());
  }
  return types;
}

StatusOr<const Operation*> RegionTerminator(const Operation& op,
                                            const Block& block) {
  const Operation* terminator = block.terminator();
  if (!terminator || !terminator->is(OpCode::kReturn)) {
    return OpError(op, "region block must end with 'stablehlo.return', but ",
                   terminator ? StrCat("ends with '", terminator->name(), "'")
                              : std::string("is empty"));
  }
  return terminator;
}

// ---- Lists
// --------------------------------------------------------------------

bool HasDuplicates(const std::vector<int64_t>& values) {
  std::unordered_set<int64_t> seen;
  for (int64_t v : values) {
    if (!seen.insert(v).second) return true;
  }
  return false;
}

bool IsSortedAscending(const std::vector<int64_t>& values) {
  return std::is_sorted(values.begin(), values.end());
}

bool IsPermutation(const std::vector<int64_t>& values) {
  int64_t size = static_cast<int64_t>(values.size());
  std::vector<bool> seen(values.size(), false);
  for (int64_t v : values) {
    if (v < 0 || v >= size || seen[v]) return false;
    seen[v] = true;
  }
  return true;
}

}  // namespace kiln::ir::verifier
