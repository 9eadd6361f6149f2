// Lowering of gather, dynamic_gather, torch_index_select and scatter.
#include <algorithm>
#include <optional>

#include "base/containers.h"
#include "compile/lower_families.h"
#include "exec/kernels/gather_scatter.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

Status CheckDims(const ir::Operation& op, const std::vector<int64_t>& dims,
                 int64_t rank, std::string_view what) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return InvalidArgumentError(op.Describe(), ": ", what, " ", d,
                                  " out of range for rank ", rank);
    }
  }
  return OkStatus();
}

// A value that broadcast_in_dim ops, and reshapes that only add or drop
// dimensions of size 1, made from an already lowered slot: the slot, and
// for each of its dimensions the dimension of the value it becomes (-1
// where a size-1 dimension is expanded or dropped); `ops` are the
// ops in between, from the value down.
struct BroadcastOrigin {
  SlotId source;
  std::vector<int64_t> to_value;
  std::vector<const ir::Operation*> ops;
};

std::optional<BroadcastOrigin> TraceBroadcasts(Lowering& lowering,
                                               const ir::Value* value) {
  if (!value->type().IsTensor() || !value->type().HasStaticShape()) {
    return std::nullopt;
  }
  BroadcastOrigin origin;
  const int64_t rank = static_cast<int64_t>(value->type().shape().size());
  for (int64_t d = 0; d < rank; ++d) origin.to_value.push_back(d);
  const ir::Value* current = value;
  while (true) {
    if (StatusOr<SlotId> slot = lowering.Slot(current); slot.ok()) {
      origin.source = *slot;
      return origin;
    }
    const ir::Operation* broadcast = current->defining_op();
    if (broadcast == nullptr || broadcast->num_operands() != 1 ||
        !(broadcast->is(OpCode::kBroadcastInDim) ||
          broadcast->is(OpCode::kReshape))) {
      return std::nullopt;
    }
    const ir::Value* operand = broadcast->operand(0);
    if (!operand->type().IsTensor() || !operand->type().HasStaticShape()) {
      return std::nullopt;
    }
    const std::vector<int64_t> dims = current->type().shape();
    const std::vector<int64_t> operand_dims = operand->type().shape();
    if (broadcast->is(OpCode::kReshape)) {
      // The dimensions of more than one element, in order, on both sides.
      std::vector<int64_t> to_value(operand_dims.size(), -1);
      size_t next = 0;
      for (size_t d = 0; d < operand_dims.size(); ++d) {
        if (operand_dims[d] == 1) continue;
        while (next < dims.size() && dims[next] == 1) ++next;
        if (next == dims.size() || dims[next] != operand_dims[d]) {
          return std::nullopt;
        }
        to_value[d] = origin.to_value[next++];
      }
      while (next < dims.size() && dims[next] == 1) ++next;
      if (next != dims.size()) return std::nullopt;
      origin.to_value = std::move(to_value);
      origin.ops.push_back(broadcast);
      current = operand;
      continue;
    }
    StatusOr<std::vector<int64_t>> mapping =
        IntsAttr(*broadcast, "broadcast_dimensions");
    if (!mapping.ok() || mapping->size() != operand_dims.size()) {
      return std::nullopt;
    }
    std::vector<int64_t> to_value(operand_dims.size());
    for (size_t d = 0; d < operand_dims.size(); ++d) {
      int64_t target = (*mapping)[d];
      if (target < 0 || target >= static_cast<int64_t>(dims.size())) {
        return std::nullopt;
      }
      to_value[d] =
          operand_dims[d] == dims[target] ? origin.to_value[target] : -1;
    }
    origin.to_value = std::move(to_value);
    origin.ops.push_back(broadcast);
    current = operand;
  }
}

// JAX's gather in its default `mode="fill"`: the gather's only reader is
// `select(broadcast(mask), gather, broadcast(fill))`, where the mask has
// one bool per window (its dimensions of more than one element are the
// result's batch dimensions, in order, at full size) and the fill value
// is one element. The gather kernel computes the select as it writes
// (GatherParams::masked).
struct FillSelect {
  const ir::Operation* select = nullptr;
  SlotId mask;
  SlotId fill;
  std::vector<const ir::Operation*> bypassed;  // both traces' ops
};

std::optional<FillSelect> FillSelectOf(Lowering& lowering,
                                       const ir::Operation& gather,
                                       const exec::GatherParams& p) {
  if (!lowering.fuse_elementwise()) return std::nullopt;
  const ir::Operation* select = OnlyReader(gather);
  const ir::Value* gathered = gather.result(0);
  if (select == nullptr || !select->is(OpCode::kSelect) ||
      select->num_operands() != 3 || select->operand(1) != gathered ||
      select->operand(0) == gathered || select->operand(2) == gathered ||
      select->result(0)->type() != gathered->type()) {
    return std::nullopt;
  }
  std::optional<BroadcastOrigin> mask =
      TraceBroadcasts(lowering, select->operand(0));
  std::optional<BroadcastOrigin> fill =
      TraceBroadcasts(lowering, select->operand(2));
  if (!mask || !fill) return std::nullopt;
  const ArrayShape mask_shape = lowering.shape(mask->source);
  const ArrayShape fill_shape = lowering.shape(fill->source);
  if (mask_shape.type != ElementType::kI1 || fill_shape.num_elements() != 1 ||
      fill_shape.type != p.operand.type) {
    return std::nullopt;
  }
  int64_t windows = 1;
  std::vector<int64_t> batch_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(p.output_dims.size()); ++d) {
    if (!Contains(p.dims.offset_dims, d)) {
      batch_dims.push_back(d);
      windows *= p.output_dims[d];
    }
  }
  int64_t next = 0;
  for (size_t d = 0; d < mask_shape.dims.size(); ++d) {
    if (mask_shape.dims[d] == 1) continue;
    int64_t target = mask->to_value[d];
    if (target < next || !Contains(batch_dims, target) ||
        mask_shape.dims[d] != p.output_dims[target]) {
      return std::nullopt;
    }
    next = target + 1;
  }
  if (mask_shape.num_elements() != windows) return std::nullopt;
  FillSelect found{select, mask->source, fill->source, mask->ops};
  found.bypassed.insert(found.bypassed.end(), fill->ops.begin(),
                        fill->ops.end());
  return found;
}

Status EmitGather(Lowering& lowering, const ir::Operation& op,
                  const ir::GatherDimensionNumbers& dn,
                  const std::vector<int64_t>& slice_sizes) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId indices, lowering.Operand(op, 1));
  exec::GatherParams p;
  p.operand = lowering.shape(operand);
  p.indices = lowering.shape(indices);
  p.dims = dn;
  p.slice_sizes = slice_sizes;
  int64_t rank = p.operand.rank();
  if (static_cast<int64_t>(slice_sizes.size()) != rank ||
      !ir::IsInteger(p.indices.type)) {
    return InvalidArgumentError(op.Describe(), ": bad slice_sizes or indices");
  }
  RETURN_IF_ERROR(
      CheckDims(op, p.dims.collapsed_slice_dims, rank, "collapsed_slice_dims"));
  RETURN_IF_ERROR(CheckDims(op, p.dims.operand_batching_dims, rank,
                            "operand_batching_dims"));
  RETURN_IF_ERROR(
      CheckDims(op, p.dims.start_index_map, rank, "start_index_map"));
  RETURN_IF_ERROR(CheckDims(op, p.dims.start_indices_batching_dims,
                            p.indices.rank(), "start_indices_batching_dims"));
  for (int64_t d = 0; d < rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > p.operand.dims[d]) {
      return InvalidArgumentError(op.Describe(), ": slice size ",
                                  slice_sizes[d], " out of range for ",
                                  p.operand.ToString());
    }
  }
  int64_t vector_size = p.dims.index_vector_dim < p.indices.rank()
                            ? p.indices.dims[p.dims.index_vector_dim]
                            : 1;
  if (vector_size != static_cast<int64_t>(p.dims.start_index_map.size())) {
    return InvalidArgumentError(
        op.Describe(), ": index vectors have ", vector_size,
        " components but start_index_map has ", p.dims.start_index_map.size());
  }
  // Result shape: batch dimensions (the indices' dimensions other than
  // index_vector_dim) with the slice dimensions at offset_dims.
  std::vector<int64_t> batch, offsets;
  for (int64_t d = 0; d < p.indices.rank(); ++d) {
    if (d != p.dims.index_vector_dim) batch.push_back(p.indices.dims[d]);
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(p.dims.collapsed_slice_dims, d) &&
        !Contains(p.dims.operand_batching_dims, d)) {
      offsets.push_back(slice_sizes[d]);
    }
  }
  int64_t out_rank = static_cast<int64_t>(batch.size() + offsets.size());
  if (offsets.size() != p.dims.offset_dims.size()) {
    return InvalidArgumentError(
        op.Describe(), ": offset_dims has ", p.dims.offset_dims.size(),
        " entries; the slices have ", offsets.size(), " dimensions");
  }
  RETURN_IF_ERROR(CheckDims(op, p.dims.offset_dims, out_rank, "offset_dims"));
  std::vector<int64_t> result_dims(out_rank);
  size_t next_batch = 0, next_offset = 0;
  for (int64_t d = 0; d < out_rank; ++d) {
    result_dims[d] = Contains(p.dims.offset_dims, d) ? offsets[next_offset++]
                                                     : batch[next_batch++];
  }
  p.output_dims = result_dims;
  if (std::optional<FillSelect> select = FillSelectOf(lowering, op, p)) {
    p.masked = true;
    ASSIGN_OR_RETURN(SlotId out,
                     lowering.NewResult(*select->select, 0, result_dims));
    lowering.Emit(op, exec::MakeGatherKernel(std::move(p)),
                  {operand, indices, select->mask, select->fill}, {out});
    // The gather's own value has no reader but the select, computed with it.
    lowering.Bind(op.result(0), out);
    lowering.LowerAhead(*select->select);
    // The traced ops come after the gather (a trace stops at the first
    // value lowered already): their copies are dropped if no one else
    // reads them.
    for (const ir::Operation* bypassed : select->bypassed) {
      lowering.NoteBypassedOp(*bypassed);
    }
    return OkStatus();
  }
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, result_dims));
  lowering.Emit(op, exec::MakeGatherKernel(std::move(p)), {operand, indices},
                {out});
  return OkStatus();
}

Status LowerGather(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute dn = op.GetAttr("dimension_numbers");
  if (!dn.is(ir::AttrKind::kGatherDimensionNumbers)) {
    return InvalidArgumentError(op.Describe(), ": missing dimension_numbers");
  }
  std::vector<int64_t> slice_sizes;
  if (op.is(OpCode::kDynamicGather)) {
    ASSIGN_OR_RETURN(slice_sizes,
                     lowering.RequireConstantInts(op, 2, "slice_sizes"));
  } else {
    ASSIGN_OR_RETURN(slice_sizes, IntsAttr(op, "slice_sizes"));
  }
  return EmitGather(lowering, op, dn.gather(), slice_sizes);
}

Status LowerScatter(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute dn_attr = op.GetAttr("scatter_dimension_numbers");
  if (!dn_attr.is(ir::AttrKind::kScatterDimensionNumbers)) {
    return InvalidArgumentError(op.Describe(),
                                ": missing scatter_dimension_numbers");
  }
  const ir::ScatterDimensionNumbers& dn = dn_attr.scatter();
  if (op.num_operands() < 3 || op.num_operands() % 2 != 1 ||
      op.num_regions() != 1) {
    return InvalidArgumentError(op.Describe(),
                                ": expected N operands, indices, "
                                "N updates and one region");
  }
  int n = (op.num_operands() - 1) / 2;
  exec::ScatterParams p;
  std::vector<SlotId> inputs;
  std::vector<ElementType> types;
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, i));
    p.operands.push_back(lowering.shape(operand));
    types.push_back(lowering.shape(operand).type);
    inputs.push_back(operand);
  }
  ASSIGN_OR_RETURN(SlotId indices, lowering.Operand(op, n));
  p.indices = lowering.shape(indices);
  inputs.push_back(indices);
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(SlotId update, lowering.Operand(op, n + 1 + i));
    if (i == 0) p.update_dims = lowering.shape(update).dims;
    if (lowering.shape(update).dims != p.update_dims) {
      return InvalidArgumentError(op.Describe(),
                                  ": updates of different shapes");
    }
    inputs.push_back(update);
  }
  p.dims = dn;
  int64_t rank = p.operands[0].rank();
  RETURN_IF_ERROR(
      CheckDims(op, p.dims.inserted_window_dims, rank, "inserted_window_dims"));
  RETURN_IF_ERROR(
      CheckDims(op, p.dims.input_batching_dims, rank, "input_batching_dims"));
  RETURN_IF_ERROR(CheckDims(op, p.dims.scatter_dims_to_operand_dims, rank,
                            "scatter_dims_to_operand_dims"));
  RETURN_IF_ERROR(CheckDims(op, p.dims.update_window_dims,
                            static_cast<int64_t>(p.update_dims.size()),
                            "update_window_dims"));
  RETURN_IF_ERROR(CheckDims(op, p.dims.scatter_indices_batching_dims,
                            p.indices.rank(), "scatter_indices_batching_dims"));
  if (!ir::IsInteger(p.indices.type)) {
    return InvalidArgumentError(op.Describe(), ": indices must be integers");
  }
  int64_t vector_size = p.dims.index_vector_dim < p.indices.rank()
                            ? p.indices.dims[p.dims.index_vector_dim]
                            : 1;
  if (vector_size !=
      static_cast<int64_t>(p.dims.scatter_dims_to_operand_dims.size())) {
    return InvalidArgumentError(
        op.Describe(), ": index vectors have ", vector_size,
        " components but scatter_dims_to_operand_dims has ",
        p.dims.scatter_dims_to_operand_dims.size());
  }
  for (int64_t d = 0, w = 0; d < rank; ++d) {
    if (Contains(p.dims.inserted_window_dims, d) ||
        Contains(p.dims.input_batching_dims, d))
      continue;
    if (w < static_cast<int64_t>(p.dims.update_window_dims.size()) &&
        p.update_dims[p.dims.update_window_dims[w]] > p.operands[0].dims[d]) {
      return InvalidArgumentError(op.Describe(), ": update window larger than ",
                                  p.operands[0].ToString());
    }
    ++w;
  }
  p.combiner = MatchCombiner(op.region(0));
  std::unique_ptr<exec::Region> body;
  if (n != 1 || !exec::HasFastCombiner(p.combiner, types[0])) {
    p.combiner = exec::Combiner::kGeneric;
    std::vector<ElementType> params = types;
    params.insert(params.end(), types.begin(), types.end());
    ASSIGN_OR_RETURN(body, LowerScalarRegion(lowering, op.region(0), params));
  }
  std::vector<SlotId> outputs;
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, i, p.operands[i].dims));
    outputs.push_back(out);
  }
  lowering.Emit(op, exec::MakeScatterKernel(std::move(p), std::move(body)),
                std::move(inputs), std::move(outputs), /*foldable=*/false);
  return OkStatus();
}

Status LowerTorchIndexSelect(Lowering& lowering, const ir::Operation& op) {
  // torch_index_select(operand, index) {dim, batch_dims} as a gather.
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId index, lowering.Operand(op, 1));
  ASSIGN_OR_RETURN(int64_t dim, IntAttr(op, "dim"));
  ASSIGN_OR_RETURN(int64_t batch_dims, IntAttr(op, "batch_dims", 0));
  ArrayShape in = lowering.shape(operand);
  ArrayShape idx = lowering.shape(index);
  if (dim < 0 || dim >= in.rank() || batch_dims < 0 || batch_dims > dim ||
      batch_dims > idx.rank()) {
    return InvalidArgumentError(op.Describe(), ": bad dim ", dim,
                                " or batch_dims ", batch_dims);
  }
  ir::GatherDimensionNumbers dn;
  std::vector<int64_t> slice_sizes = in.dims;
  slice_sizes[dim] = 1;
  for (int64_t d = 0; d < batch_dims; ++d) {
    dn.operand_batching_dims.push_back(d);
    dn.start_indices_batching_dims.push_back(d);
    slice_sizes[d] = 1;
  }
  dn.collapsed_slice_dims = {dim};
  dn.start_index_map = {dim};
  dn.index_vector_dim = idx.rank();
  // Offsets: operand dims other than batch dims and `dim`, placed after
  // the index dims in the result (operand dims before `dim` come first).
  int64_t position = 0;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (d < batch_dims) {
      ++position;
      continue;
    }
    if (d == dim) {
      position += idx.rank() - batch_dims;
      continue;
    }
    dn.offset_dims.push_back(position++);
  }
  return EmitGather(lowering, op, dn, slice_sizes);
}

}  // namespace

void RegisterGatherScatterLowerings() {
  RegisterLowering(OpCode::kGather, LowerGather);
  RegisterLowering(OpCode::kDynamicGather, LowerGather);
  RegisterLowering(OpCode::kScatter, LowerScatter);
  RegisterLowering(OpCode::kTorchIndexSelect, LowerTorchIndexSelect);
}

}  // namespace kiln::compile
