// Lowering of sort and chlo.top_k.
#include "compile/lower_families.h"
#include "exec/kernels/element.h"
#include "exec/kernels/sort.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

// A comparator that is one compare LT/GT of one input's lhs and rhs.
bool MatchComparator(const ir::Region& region, int inputs,
                     exec::KnownComparator& known) {
  if (region.num_blocks() != 1) return false;
  const ir::Block& block = region.front();
  const auto& ops = block.operations();
  if (ops.size() != 2 || block.num_arguments() != 2 * inputs) return false;
  const ir::Operation& compare = *ops[0];
  const ir::Operation& ret = *ops[1];
  if (!compare.is(OpCode::kCompare) || ret.num_operands() != 1 ||
      ret.operand(0) != compare.result(0)) {
    return false;
  }
  ir::Attribute direction = compare.GetAttr("comparison_direction");
  if (!direction.is(ir::AttrKind::kEnum)) return false;
  int64_t d = direction.enum_value();
  if (d != ir::kLT && d != ir::kGT) return false;
  for (int k = 0; k < inputs; ++k) {
    if (compare.operand(0) == block.argument(2 * k) &&
        compare.operand(1) == block.argument(2 * k + 1)) {
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
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(int64_t k, IntAttr(op, "k"));
  ArrayShape in = lowering.shape(operand);
  if (in.rank() < 1 || k < 0 || k > in.dims.back()) {
    return InvalidArgumentError(op.Describe(), ": k = ", k,
                                " out of range for ", in.ToString());
  }
  std::vector<int64_t> dims = in.dims;
  dims.back() = k;
  ASSIGN_OR_RETURN(SlotId values, lowering.NewResult(op, 0, dims));
  ASSIGN_OR_RETURN(SlotId indices, lowering.NewResult(op, 1, dims));
  lowering.Emit(op, exec::MakeTopKKernel(in, k, lowering.shape(indices).type),
                {operand}, {values, indices});
  return OkStatus();
}

}  // namespace

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
