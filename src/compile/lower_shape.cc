// Lowering of shape ops: broadcast, reshape, transpose, reverse, slice,
// dynamic slices, concatenate, pad and their dynamic forms.
#include <algorithm>
#include <cstring>

#include "compile/lower_families.h"
#include "exec/kernels/shape.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

Status CheckPermutation(const ir::Operation& op,
                        const std::vector<int64_t>& dims, int64_t rank,
                        std::string_view what) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) {
      return InvalidArgumentError(op.Describe(), ": bad ", what, " [",
                                  StrJoin(dims, ", "), "] for rank ", rank);
    }
    seen[d] = true;
  }
  return OkStatus();
}

// result[i...] = operand[j...] where the operand's dimension k maps to the
// result's dimension broadcast_dimensions[k] (size-1 dimensions expand).
Status EmitBroadcast(Lowering& lowering, const ir::Operation& op,
                     SlotId operand, const std::vector<int64_t>& result_dims,
                     const std::vector<int64_t>& broadcast_dimensions) {
  ArrayShape in = lowering.shape(operand);
  if (static_cast<int64_t>(broadcast_dimensions.size()) != in.rank()) {
    return InvalidArgumentError(op.Describe(), ": broadcast_dimensions has ",
                                broadcast_dimensions.size(), " entries for ",
                                in.ToString());
  }
  exec::StridedCopy copy;
  copy.dims = result_dims;
  copy.source_strides.assign(result_dims.size(), 0);
  copy.target_strides = exec::RowMajorStrides(result_dims);
  std::vector<int64_t> in_strides = in.Strides();
  for (int64_t k = 0; k < in.rank(); ++k) {
    int64_t d = broadcast_dimensions[k];
    if (d < 0 || d >= static_cast<int64_t>(result_dims.size()) ||
        (in.dims[k] != 1 && in.dims[k] != result_dims[d])) {
      return InvalidArgumentError(op.Describe(), ": cannot broadcast ",
                                  in.ToString(), " to [",
                                  StrJoin(result_dims, ", "), "] along [",
                                  StrJoin(broadcast_dimensions, ", "), "]");
    }
    if (in.dims[k] != 1) copy.source_strides[d] = in_strides[k];
  }
  // Only dimensions of one added, the operand's in order (x[:, None], a
  // gather's index vector of one): the same elements in the same order, so
  // an alias of the operand, not a copy.
  if (exec::NumElements(result_dims) == in.num_elements() &&
      std::is_sorted(broadcast_dimensions.begin(),
                     broadcast_dimensions.end())) {
    ASSIGN_OR_RETURN(ArrayShape result,
                     lowering.ResultShape(op, 0, result_dims));
    result.type = in.type;
    lowering.Bind(op.result(0), lowering.NewAlias(operand, result));
    return OkStatus();
  }
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, result_dims));
  lowering.Emit(
      op, exec::MakeStridedCopyKernel(std::move(copy), in.element_bytes()),
      {operand}, {out});
  return OkStatus();
}

Status LowerBroadcastInDim(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   IntsAttr(op, "broadcast_dimensions"));
  std::vector<int64_t> result_dims;
  if (op.is(OpCode::kDynamicBroadcastInDim)) {
    ASSIGN_OR_RETURN(result_dims,
                     lowering.RequireConstantInts(op, 1, "output_dimensions"));
  } else {
    ASSIGN_OR_RETURN(ArrayShape result, lowering.ResultShape(op, 0));
    result_dims = result.dims;
  }
  return EmitBroadcast(lowering, op, operand, result_dims, dims);
}

Status LowerBroadcast(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes, IntsAttr(op, "broadcast_sizes"));
  ArrayShape in = lowering.shape(operand);
  std::vector<int64_t> result_dims = sizes;
  result_dims.insert(result_dims.end(), in.dims.begin(), in.dims.end());
  std::vector<int64_t> mapping;
  for (int64_t k = 0; k < in.rank(); ++k) {
    mapping.push_back(static_cast<int64_t>(sizes.size()) + k);
  }
  return EmitBroadcast(lowering, op, operand, result_dims, mapping);
}

Status LowerReshape(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  std::optional<std::vector<int64_t>> dims;
  if (op.is(OpCode::kDynamicReshape)) {
    ASSIGN_OR_RETURN(dims, lowering.RequireConstantInts(op, 1, "output_shape"));
  }
  ASSIGN_OR_RETURN(ArrayShape result, lowering.ResultShape(op, 0, dims));
  ArrayShape in = lowering.shape(operand);
  if (result.num_elements() != in.num_elements()) {
    return InvalidArgumentError(op.Describe(), ": cannot reshape ",
                                in.ToString(), " to ", result.ToString());
  }
  result.type = in.type;
  lowering.Bind(op.result(0), lowering.NewAlias(operand, result));
  return OkStatus();
}

Status LowerTranspose(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(std::vector<int64_t> permutation,
                   IntsAttr(op, "permutation"));
  ArrayShape in = lowering.shape(operand);
  RETURN_IF_ERROR(CheckPermutation(op, permutation, in.rank(), "permutation"));
  std::vector<int64_t> result_dims;
  std::vector<int64_t> in_strides = in.Strides();
  exec::StridedCopy copy;
  for (int64_t d : permutation) {
    result_dims.push_back(in.dims[d]);
    copy.source_strides.push_back(in_strides[d]);
  }
  copy.dims = result_dims;
  copy.target_strides = exec::RowMajorStrides(result_dims);
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, result_dims));
  lowering.Emit(
      op, exec::MakeStridedCopyKernel(std::move(copy), in.element_bytes()),
      {operand}, {out});
  return OkStatus();
}

Status LowerReverse(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(std::vector<int64_t> dimensions, IntsAttr(op, "dimensions"));
  ArrayShape in = lowering.shape(operand);
  exec::StridedCopy copy;
  copy.dims = in.dims;
  copy.source_strides = in.Strides();
  copy.target_strides = in.Strides();
  for (int64_t d : dimensions) {
    if (d < 0 || d >= in.rank()) {
      return InvalidArgumentError(op.Describe(), ": dimension ", d,
                                  " out of range for ", in.ToString());
    }
    if (copy.source_strides[d] < 0) continue;  // listed twice
    if (in.dims[d] > 0)
      copy.source_offset += (in.dims[d] - 1) * copy.source_strides[d];
    copy.source_strides[d] = -copy.source_strides[d];
  }
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, in.dims));
  lowering.Emit(
      op, exec::MakeStridedCopyKernel(std::move(copy), in.element_bytes()),
      {operand}, {out});
  return OkStatus();
}

Status EmitSlice(Lowering& lowering, const ir::Operation& op, SlotId operand,
                 const std::vector<int64_t>& start,
                 const std::vector<int64_t>& limit,
                 const std::vector<int64_t>& strides) {
  ArrayShape in = lowering.shape(operand);
  if (static_cast<int64_t>(start.size()) != in.rank() ||
      static_cast<int64_t>(limit.size()) != in.rank() ||
      static_cast<int64_t>(strides.size()) != in.rank()) {
    return InvalidArgumentError(op.Describe(), ": slice bounds do not match ",
                                in.ToString());
  }
  std::vector<int64_t> in_strides = in.Strides();
  exec::StridedCopy copy;
  std::vector<int64_t> result_dims;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (start[d] < 0 || limit[d] > in.dims[d] || start[d] > limit[d] ||
        strides[d] <= 0) {
      return InvalidArgumentError(
          op.Describe(), ": slice [", start[d], ", ", limit[d], ") step ",
          strides[d], " out of range for dimension ", d, " of ", in.ToString());
    }
    int64_t size = (limit[d] - start[d] + strides[d] - 1) / strides[d];
    result_dims.push_back(size);
    copy.source_offset += start[d] * in_strides[d];
    copy.source_strides.push_back(in_strides[d] * strides[d]);
  }
  copy.dims = result_dims;
  copy.target_strides = exec::RowMajorStrides(result_dims);
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, result_dims));
  lowering.Emit(
      op, exec::MakeStridedCopyKernel(std::move(copy), in.element_bytes()),
      {operand}, {out});
  return OkStatus();
}

Status LowerSlice(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(std::vector<int64_t> start, IntsAttr(op, "start_indices"));
  ASSIGN_OR_RETURN(std::vector<int64_t> limit, IntsAttr(op, "limit_indices"));
  ASSIGN_OR_RETURN(
      std::vector<int64_t> strides,
      IntsAttr(op, "strides", std::vector<int64_t>(start.size(), 1)));
  return EmitSlice(lowering, op, operand, start, limit, strides);
}

// Whether two values are computed the same way from the same values (JAX
// often emits the same index computation twice).
bool SameComputation(const ir::Value* a, const ir::Value* b, int depth = 0) {
  if (a == b) return true;
  if (depth > 32 || a->index() != b->index() || a->type() != b->type()) {
    return false;
  }
  const ir::Operation* x = a->defining_op();
  const ir::Operation* y = b->defining_op();
  if (x == nullptr || y == nullptr || x->name() != y->name() ||
      x->num_operands() != y->num_operands() || x->num_regions() > 0 ||
      y->num_regions() > 0 || !(x->properties() == y->properties())) {
    return false;
  }
  for (int i = 0; i < x->num_operands(); ++i) {
    if (!SameComputation(x->operand(i), y->operand(i), depth + 1)) return false;
  }
  return true;
}

Status LowerRealDynamicSlice(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId start_slot, lowering.Operand(op, 1));
  ASSIGN_OR_RETURN(SlotId limit_slot, lowering.Operand(op, 2));
  ASSIGN_OR_RETURN(SlotId strides_slot, lowering.Operand(op, 3));
  auto start = lowering.ConstantInts(start_slot);
  auto limit = lowering.ConstantInts(limit_slot);
  auto strides = lowering.ConstantInts(strides_slot);
  if (start && limit && strides) {
    return EmitSlice(lowering, op, operand, *start, *limit, *strides);
  }
  // limit = start + sizes with run-time starts and unit strides: a
  // dynamic_slice of known sizes.
  const ir::Operation* add = op.operand(2)->defining_op();
  bool unit = strides && std::all_of(strides->begin(), strides->end(),
                                     [](int64_t s) { return s == 1; });
  if (unit && add != nullptr && add->is(OpCode::kAdd)) {
    for (int side = 0; side < 2; ++side) {
      if (!SameComputation(add->operand(side), op.operand(1))) continue;
      ASSIGN_OR_RETURN(SlotId sizes_slot,
                       lowering.Slot(add->operand(1 - side)));
      auto sizes = lowering.ConstantInts(sizes_slot);
      ArrayShape in = lowering.shape(operand);
      if (!sizes || static_cast<int64_t>(sizes->size()) != in.rank()) continue;
      for (int64_t d = 0; d < in.rank(); ++d) {
        if ((*sizes)[d] < 0 || (*sizes)[d] > in.dims[d]) {
          return InvalidArgumentError(op.Describe(), ": slice size ",
                                      (*sizes)[d], " out of range for ",
                                      in.ToString());
        }
      }
      ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, *sizes));
      lowering.Emit(op,
                    exec::MakeDynamicSliceKernel(
                        in, *sizes, lowering.shape(start_slot).type,
                        /*index_vector=*/true),
                    {operand, start_slot}, {out});
      return OkStatus();
    }
  }
  return UnimplementedError(op.Describe(),
                            ": the slice bounds must be known at "
                            "compile time (or be start + constant sizes)");
}

Status LowerDynamicSlice(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes, IntsAttr(op, "slice_sizes"));
  ArrayShape in = lowering.shape(operand);
  if (static_cast<int64_t>(sizes.size()) != in.rank() ||
      op.num_operands() != 1 + in.rank()) {
    return InvalidArgumentError(op.Describe(), ": expected ", in.rank(),
                                " start indices and slice sizes for ",
                                in.ToString());
  }
  std::vector<SlotId> inputs{operand};
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (sizes[d] < 0 || sizes[d] > in.dims[d]) {
      return InvalidArgumentError(op.Describe(), ": slice size ", sizes[d],
                                  " out of range for dimension ", d, " of ",
                                  in.ToString());
    }
    ASSIGN_OR_RETURN(SlotId index, lowering.Operand(op, 1 + d));
    inputs.push_back(index);
  }
  ElementType index_type =
      in.rank() > 0 ? lowering.shape(inputs[1]).type : ElementType::kI64;
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, sizes));
  lowering.Emit(op, exec::MakeDynamicSliceKernel(in, sizes, index_type),
                std::move(inputs), {out});
  return OkStatus();
}

Status LowerDynamicUpdateSlice(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId update, lowering.Operand(op, 1));
  ArrayShape in = lowering.shape(operand);
  ArrayShape upd = lowering.shape(update);
  if (upd.rank() != in.rank() || op.num_operands() != 2 + in.rank()) {
    return InvalidArgumentError(op.Describe(), ": update ", upd.ToString(),
                                " does not fit ", in.ToString());
  }
  std::vector<SlotId> inputs{operand, update};
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (upd.dims[d] > in.dims[d]) {
      return InvalidArgumentError(op.Describe(), ": update ", upd.ToString(),
                                  " larger than ", in.ToString());
    }
    ASSIGN_OR_RETURN(SlotId index, lowering.Operand(op, 2 + d));
    inputs.push_back(index);
  }
  ElementType index_type =
      in.rank() > 0 ? lowering.shape(inputs[2]).type : ElementType::kI64;
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, in.dims));
  lowering.Emit(op,
                exec::MakeDynamicUpdateSliceKernel(in, upd.dims, index_type),
                std::move(inputs), {out});
  return OkStatus();
}

Status LowerConcatenate(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(int64_t dimension, IntAttr(op, "dimension"));
  if (op.num_operands() == 0) {
    return InvalidArgumentError(op.Describe(), ": no operands");
  }
  std::vector<SlotId> inputs;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, i));
    inputs.push_back(input);
  }
  ArrayShape first = lowering.shape(inputs[0]);
  if (dimension < 0 || dimension >= first.rank()) {
    return InvalidArgumentError(op.Describe(), ": dimension ", dimension,
                                " out of range for ", first.ToString());
  }
  std::vector<int64_t> result_dims = first.dims;
  result_dims[dimension] = 0;
  for (SlotId input : inputs) {
    ArrayShape shape = lowering.shape(input);
    if (shape.rank() != first.rank()) {
      return InvalidArgumentError(op.Describe(),
                                  ": operands of different ranks");
    }
    result_dims[dimension] += shape.dims[dimension];
  }
  std::vector<int64_t> out_strides = exec::RowMajorStrides(result_dims);
  std::vector<exec::StridedCopy> copies;
  int64_t position = 0;
  for (SlotId input : inputs) {
    ArrayShape shape = lowering.shape(input);
    exec::StridedCopy copy;
    copy.dims = shape.dims;
    copy.source_strides = shape.Strides();
    copy.target_strides = out_strides;
    copy.target_offset = position * out_strides[dimension];
    position += shape.dims[dimension];
    copies.push_back(std::move(copy));
  }
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, result_dims));
  lowering.Emit(
      op, exec::MakeConcatenateKernel(std::move(copies), first.element_bytes()),
      std::move(inputs), {out});
  return OkStatus();
}

Status EmitPad(Lowering& lowering, const ir::Operation& op, SlotId operand,
               SlotId padding_value, const std::vector<int64_t>& low,
               const std::vector<int64_t>& high,
               const std::vector<int64_t>& interior) {
  ArrayShape in = lowering.shape(operand);
  int64_t rank = in.rank();
  if (static_cast<int64_t>(low.size()) != rank ||
      static_cast<int64_t>(high.size()) != rank ||
      static_cast<int64_t>(interior.size()) != rank) {
    return InvalidArgumentError(op.Describe(), ": padding does not match ",
                                in.ToString());
  }
  std::vector<int64_t> result_dims(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (interior[d] < 0) {
      return InvalidArgumentError(op.Describe(), ": negative interior padding");
    }
    int64_t size =
        in.dims[d] == 0 ? 0 : in.dims[d] + (in.dims[d] - 1) * interior[d];
    result_dims[d] = low[d] + size + high[d];
    if (result_dims[d] < 0) {
      return InvalidArgumentError(op.Describe(),
                                  ": padding gives a negative "
                                  "dimension ",
                                  result_dims[d]);
    }
  }
  std::vector<int64_t> in_strides = in.Strides();
  std::vector<int64_t> out_strides = exec::RowMajorStrides(result_dims);
  exec::StridedCopy copy;
  for (int64_t d = 0; d < rank; ++d) {
    // Operand index i lands at low + i * (interior + 1); keep those inside
    // the result (negative padding crops).
    int64_t step = interior[d] + 1;
    int64_t first = low[d] >= 0 ? 0 : (-low[d] + step - 1) / step;
    int64_t last = in.dims[d];  // exclusive
    while (last > first && low[d] + (last - 1) * step >= result_dims[d]) --last;
    int64_t count = std::max<int64_t>(0, last - first);
    copy.dims.push_back(count);
    copy.source_offset += first * in_strides[d];
    copy.source_strides.push_back(in_strides[d]);
    if (count > 0)
      copy.target_offset += (low[d] + first * step) * out_strides[d];
    copy.target_strides.push_back(step * out_strides[d]);
  }
  if (exec::NumElements(copy.dims) == 0) copy.target_offset = 0;
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, result_dims));
  int64_t count = exec::NumElements(result_dims);
  lowering.Emit(op,
                exec::MakePadKernel(std::move(copy), count, in.element_bytes()),
                {operand, padding_value}, {out});
  return OkStatus();
}

Status LowerPad(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId value, lowering.Operand(op, 1));
  ASSIGN_OR_RETURN(std::vector<int64_t> low, IntsAttr(op, "edge_padding_low"));
  ASSIGN_OR_RETURN(std::vector<int64_t> high,
                   IntsAttr(op, "edge_padding_high"));
  ASSIGN_OR_RETURN(std::vector<int64_t> interior,
                   IntsAttr(op, "interior_padding"));
  return EmitPad(lowering, op, operand, value, low, high, interior);
}

Status LowerDynamicPad(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId value, lowering.Operand(op, 1));
  ASSIGN_OR_RETURN(std::vector<int64_t> low,
                   lowering.RequireConstantInts(op, 2, "edge_padding_low"));
  ASSIGN_OR_RETURN(std::vector<int64_t> high,
                   lowering.RequireConstantInts(op, 3, "edge_padding_high"));
  ASSIGN_OR_RETURN(std::vector<int64_t> interior,
                   lowering.RequireConstantInts(op, 4, "interior_padding"));
  return EmitPad(lowering, op, operand, value, low, high, interior);
}

Status LowerGetDimensionSize(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(int64_t dimension, IntAttr(op, "dimension"));
  ArrayShape in = lowering.shape(operand);
  if (dimension < 0 || dimension >= in.rank()) {
    return InvalidArgumentError(op.Describe(), ": dimension ", dimension,
                                " out of range for ", in.ToString());
  }
  ASSIGN_OR_RETURN(ArrayShape result, lowering.ResultShape(op, 0));
  std::string bytes(result.element_bytes(), '\0');
  int64_t size = in.dims[dimension];
  std::memcpy(bytes.data(), &size,
              std::min<size_t>(bytes.size(), sizeof(size)));
  ASSIGN_OR_RETURN(SlotId constant, lowering.NewConstant(result, bytes));
  lowering.Bind(op.result(0), constant);
  return OkStatus();
}

Status LowerSetDimensionSize(Lowering& lowering, const ir::Operation& op) {
  // On static shapes the result holds the operand's elements unchanged.
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ArrayShape in = lowering.shape(operand);
  lowering.Bind(op.result(0), lowering.NewAlias(operand, in));
  return OkStatus();
}

}  // namespace

void RegisterShapeLowerings() {
  RegisterLowering(OpCode::kBroadcastInDim, LowerBroadcastInDim);
  RegisterLowering(OpCode::kDynamicBroadcastInDim, LowerBroadcastInDim);
  RegisterLowering(OpCode::kBroadcast, LowerBroadcast);
  RegisterLowering(OpCode::kReshape, LowerReshape);
  RegisterLowering(OpCode::kDynamicReshape, LowerReshape);
  RegisterLowering(OpCode::kTranspose, LowerTranspose);
  RegisterLowering(OpCode::kReverse, LowerReverse);
  RegisterLowering(OpCode::kSlice, LowerSlice);
  RegisterLowering(OpCode::kRealDynamicSlice, LowerRealDynamicSlice);
  RegisterLowering(OpCode::kDynamicSlice, LowerDynamicSlice);
  RegisterLowering(OpCode::kDynamicUpdateSlice, LowerDynamicUpdateSlice);
  RegisterLowering(OpCode::kConcatenate, LowerConcatenate);
  RegisterLowering(OpCode::kPad, LowerPad);
  RegisterLowering(OpCode::kDynamicPad, LowerDynamicPad);
  RegisterLowering(OpCode::kGetDimensionSize, LowerGetDimensionSize);
  RegisterLowering(OpCode::kSetDimensionSize, LowerSetDimensionSize);
}

}  // namespace kiln::compile
