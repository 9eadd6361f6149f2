// Lowering of sort and chlo.top_k.
#include <cmath>

#include "compile/lower_families.h"
#include "exec/kernels/element.h"
#include "exec/kernels/sort.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

// Whether `value` is a splat float constant for which `test` holds.
template <typename Test>
bool IsSplat(const ir::Value* value, Test test) {
  const ir::Operation* op = value->defining_op();
  if (op == nullptr) return false;
  std::optional<double> splat = FloatSplat(*op);
  return splat.has_value() && test(*splat);
}

// What JAX's float sort comparator canonicalizes into `value` before its
// total-order compare (-0 to +0, every NaN to a positive NaN):
//   select(compare(NE, x, x), NaN, select(compare(EQ, x, 0), 0, x))
// x, or null where `value` is not that.
const ir::Value* CanonicalizedFrom(const ir::Value* value) {
  auto select_of = [](const ir::Value* v) -> const ir::Operation* {
    const ir::Operation* op = v->defining_op();
    return op != nullptr && op->is(OpCode::kSelect) && op->num_operands() == 3
               ? op
               : nullptr;
  };
  const ir::Operation* nan_select = select_of(value);
  if (nan_select == nullptr) return nullptr;
  // Float compares (as C++'s operators compare floats) of x.
  auto float_compare = [](const ir::Operation* op) -> int64_t {
    std::optional<Comparison> c = ComparisonOf(op);
    if (!c) return -1;
    const ir::Type& type = op->operand(0)->type();
    if (!type.IsTensor() || !type.element().is(ir::TypeKind::kElement) ||
        !ir::IsFloat(type.element().element_type()) ||
        !ComparesLikeCpp(c->type, type.element().element_type())) {
      return -1;
    }
    return c->direction;
  };
  const ir::Operation* nan_test = nan_select->operand(0)->defining_op();
  if (float_compare(nan_test) != ir::kNE ||
      nan_test->operand(0) != nan_test->operand(1) ||
      !IsSplat(nan_select->operand(1),
               [](double v) { return std::isnan(v) && !std::signbit(v); })) {
    return nullptr;
  }
  const ir::Value* x = nan_test->operand(0);
  const ir::Operation* zero_select = select_of(nan_select->operand(2));
  if (zero_select == nullptr || zero_select->operand(2) != x) return nullptr;
  const ir::Operation* zero_test = zero_select->operand(0)->defining_op();
  auto positive_zero = [](double v) { return v == 0 && !std::signbit(v); };
  if (float_compare(zero_test) != ir::kEQ || zero_test->operand(0) != x ||
      !IsSplat(zero_test->operand(1), [](double v) { return v == 0; }) ||
      !IsSplat(zero_select->operand(1), positive_zero)) {
    return nullptr;
  }
  return x;
}

// A comparator that is one compare LT/GT of one input's lhs and rhs, or
// JAX's float comparator: that compare in total order of the two
// canonicalized (CanonicalizedFrom; KnownComparator::canonical).
bool MatchComparator(const ir::Region& region, int inputs,
                     exec::KnownComparator& known) {
  if (region.num_blocks() != 1) return false;
  const ir::Block& block = region.front();
  const auto& ops = block.operations();
  if (block.num_arguments() != 2 * inputs || ops.empty()) return false;
  const ir::Operation& ret = *ops.back();
  if (ret.num_operands() != 1) return false;
  const ir::Operation* found = ret.operand(0)->defining_op();
  if (found == nullptr || !found->is(OpCode::kCompare) ||
      found->num_operands() != 2) {
    return false;
  }
  const ir::Operation& compare = *found;
  const ir::Value* lhs = compare.operand(0);
  const ir::Value* rhs = compare.operand(1);
  // The canonical form: the compare, four ops per side, the return.
  bool canonical = false;
  std::optional<Comparison> comparison = ComparisonOf(&compare);
  if (ops.size() == 10 && comparison && comparison->type == ir::kTotalOrder) {
    lhs = CanonicalizedFrom(lhs);
    rhs = CanonicalizedFrom(rhs);
    if (lhs == nullptr || rhs == nullptr) return false;
    canonical = true;
  } else if (ops.size() != 2) {
    return false;
  }
  ir::Attribute direction = compare.GetAttr("comparison_direction");
  if (!direction.is(ir::AttrKind::kEnum)) return false;
  int64_t d = direction.enum_value();
  if (d != ir::kLT && d != ir::kGT) return false;
  for (int k = 0; k < inputs; ++k) {
    if (lhs == block.argument(2 * k) && rhs == block.argument(2 * k + 1)) {
      const ir::Type& key = lhs->type();
      if (canonical &&
          (!key.IsTensor() || !key.element().is(ir::TypeKind::kElement) ||
           !ir::IsFloat(key.element().element_type()))) {
        return false;
      }
      known.canonical = canonical;
      known.operand = k;
      known.direction = d == ir::kLT ? exec::CompareDirection::kLT
                                     : exec::CompareDirection::kGT;
      ir::Attribute type = compare.GetAttr("compare_type");
      known.type = type.is(ir::AttrKind::kEnum)
                       ? static_cast<exec::CompareType>(type.enum_value())
                       : exec::CompareType::kDefault;
      return true;
    }
  }
  return false;
}

Status LowerSort(Lowering& lowering, const ir::Operation& op) {
  if (op.num_operands() == 0 || op.num_regions() != 1) {
    return InvalidArgumentError(op.Describe(),
                                ": expected inputs and a comparator");
  }
  std::vector<SlotId> inputs;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, i));
    inputs.push_back(input);
  }
  ASSIGN_OR_RETURN(int64_t dimension, IntAttr(op, "dimension", -1));
  return EmitSort(lowering, op, inputs, dimension, op.region(0),
                  /*bind_results=*/true)
      .status();
}

Status LowerTopK(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(int64_t k, IntAttr(op, "k"));
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  return EmitTopK(lowering, op, operand, k);
}

}  // namespace

Status EmitTopK(Lowering& lowering, const ir::Operation& op, SlotId operand,
                int64_t k) {
  ArrayShape in = lowering.shape(operand);
  if (in.rank() < 1 || k < 0 || k > in.dims.back()) {
    return InvalidArgumentError(op.Describe(), ": k = ", k,
                                " out of range for ", in.ToString());
  }
  std::vector<int64_t> dims = in.dims;
  dims.back() = k;
  ASSIGN_OR_RETURN(SlotId values, lowering.NewResult(op, 0, dims));
  ASSIGN_OR_RETURN(SlotId indices, lowering.NewResult(op, 1, dims));
  ElementType index_type = lowering.shape(indices).type;
  if (lowering.shape(values).type != in.type ||
      (index_type != ElementType::kI32 && index_type != ElementType::kI64)) {
    return InvalidArgumentError(
        op.Describe(), ": results ", lowering.shape(values).ToString(), " and ",
        lowering.shape(indices).ToString(), " are not values of ",
        in.ToString(), " and i32 or i64 indices");
  }
  lowering.Emit(op, exec::MakeTopKKernel(in, k, index_type), {operand},
                {values, indices});
  return OkStatus();
}

StatusOr<std::vector<SlotId>> EmitSort(Lowering& lowering,
                                       const ir::Operation& op,
                                       const std::vector<SlotId>& inputs,
                                       int64_t dimension,
                                       const ir::Region& comparator_region,
                                       bool bind_results) {
  exec::SortParams p;
  std::vector<ElementType> params;
  for (SlotId input : inputs) {
    ArrayShape shape = lowering.shape(input);
    if (!p.inputs.empty() && shape.dims != p.inputs[0].dims) {
      return InvalidArgumentError(op.Describe(),
                                  ": inputs of different shapes");
    }
    p.inputs.push_back(shape);
    params.push_back(shape.type);
    params.push_back(shape.type);
  }
  int64_t rank = p.inputs[0].rank();
  if (dimension < 0) dimension += rank;
  if (rank > 0 && (dimension < 0 || dimension >= rank)) {
    return InvalidArgumentError(op.Describe(), ": dimension ", dimension,
                                " out of range for rank ", rank);
  }
  p.dimension = rank == 0 ? 0 : dimension;
  const int n = static_cast<int>(inputs.size());
  std::unique_ptr<exec::Region> comparator;
  p.known = MatchComparator(comparator_region, n, p.comparator) &&
            exec::HasNativeType(p.inputs[p.comparator.operand].type) &&
            ir::BitWidth(p.inputs[p.comparator.operand].type) >= 8;
  if (!p.known) {
    ASSIGN_OR_RETURN(comparator,
                     LowerScalarRegion(lowering, comparator_region, params));
    if (comparator->results.size() != 1) {
      return InvalidArgumentError(op.Describe(),
                                  ": the comparator must return one i1");
    }
  }
  std::vector<SlotId> outputs;
  for (int i = 0; i < n; ++i) {
    if (bind_results) {
      ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, i, p.inputs[i].dims));
      outputs.push_back(out);
    } else {
      outputs.push_back(lowering.NewTemp(p.inputs[i]));
    }
  }
  lowering.Emit(op, exec::MakeSortKernel(std::move(p), std::move(comparator)),
                inputs, outputs, /*foldable=*/false);
  return outputs;
}

void RegisterSortLowerings() {
  RegisterLowering(OpCode::kSort, LowerSort);
  RegisterLowering(OpCode::kChloTopK, LowerTopK);
}

}  // namespace kiln::compile
