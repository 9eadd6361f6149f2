// Gathers and scatters of tiles: at cut indices, or into and from an operand
// cut along the dimension its indices select.
#include "compile/spmd/partitioner.h"

#include <algorithm>

#include "compile/spmd/tile_ops.h"

namespace kiln::compile::spmd {

std::optional<TileLayout> Partitioner::LayoutFromIndices(
    Value* indices, int64_t index_vector_dim,
    const std::vector<int64_t>& batching_dims, const Type& type,
    const std::vector<int64_t>& window_dims) const {
  auto it = tiled_.find(indices);
  if (it == tiled_.end()) return std::nullopt;
  const TileLayout& from = it->second.layout;
  if (from.HasUnreduced() || from.IsReplicated() || !type.IsTensor() ||
      !type.HasStaticShape()) {
    return std::nullopt;
  }
  const int64_t rank = static_cast<int64_t>(from.tiles.size());
  std::vector<int64_t> batch;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == index_vector_dim) {
      if (from.tiles[d] > 1) return std::nullopt;
      continue;
    }
    if (from.tiles[d] > 1 &&
        std::find(batching_dims.begin(), batching_dims.end(), d) !=
            batching_dims.end()) {
      return std::nullopt;
    }
    batch.push_back(d);
  }
  std::vector<int64_t> from_dim;  // per dimension of `type`, or -1
  size_t next = 0;
  for (int64_t d = 0; d < type.rank(); ++d) {
    if (std::find(window_dims.begin(), window_dims.end(), d) !=
        window_dims.end()) {
      from_dim.push_back(-1);
      continue;
    }
    if (next >= batch.size()) return std::nullopt;
    from_dim.push_back(batch[next++]);
  }
  if (next != batch.size()) return std::nullopt;
  TileLayout layout;
  layout.copy_of_device = from.copy_of_device;
  layout.tile_of_device.resize(from.tile_of_device.size());
  for (int64_t dim : from_dim) {
    layout.tiles.push_back(dim < 0 ? 1 : from.tiles[dim]);
  }
  for (size_t d = 0; d < from.tile_of_device.size(); ++d) {
    for (int64_t dim : from_dim) {
      layout.tile_of_device[d].push_back(dim < 0 ? 0
                                                 : from.tile_of_device[d][dim]);
    }
  }
  if (layout.TileCount() != from.TileCount()) return std::nullopt;
  return layout;
}

StatusOr<bool> Partitioner::RunGatherOnTiles(Operation& op, OpList& out) {
  if (op.name() != "stablehlo.gather" || op.num_operands() != 2 ||
      op.num_results() != 1 || !IsWhole(op.operand(0))) {
    return false;
  }
  Attribute numbers = op.GetAttr("dimension_numbers");
  if (!numbers.is(AttrKind::kGatherDimensionNumbers)) return false;
  const ir::GatherDimensionNumbers& g = numbers.gather();
  const Type result_type = op.result(0)->type();
  std::optional<TileLayout> layout = LayoutFromIndices(
      op.operand(1), g.index_vector_dim, g.start_indices_batching_dims,
      result_type, g.offset_dims);
  if (!layout) return false;
  ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                   TileShape(result_type, *layout, op.Describe()));
  const Type& operand_type = GlobalType(op.operand(0));
  ASSIGN_OR_RETURN(Value * operand,
                   TileOf(op.operand(0), WholeLayout(operand_type.rank()), out,
                          op.loc(), op.Describe()));
  op.SetOperand(0, operand);
  op.SetOperand(1, tiled_.at(op.operand(1)).local);
  op.result(0)->set_type(result_type.WithShape(tile));
  pending_tiled_ = Tiled{nullptr, *layout, result_type, nullptr};
  pending_combine_.clear();
  return true;
}

StatusOr<Value*> Partitioner::GatherFromCutOperand(
    Operation& op, OpList& out, TileLayout& layout,
    std::vector<std::vector<int64_t>>& group_key) {
  if (op.name() != "stablehlo.gather" || op.num_operands() != 2 ||
      op.num_results() != 1 || !IsWhole(op.operand(1))) {
    return nullptr;
  }
  auto operand_it = tiled_.find(op.operand(0));
  if (operand_it == tiled_.end()) return nullptr;
  const TileLayout& from = operand_it->second.layout;
  const Type& operand_type = operand_it->second.global_type;
  const Type result_type = op.result(0)->type();
  Value* indices = op.operand(1);
  const Type& indices_type = indices->type();
  Attribute numbers = op.GetAttr("dimension_numbers");
  std::optional<std::vector<int64_t>> slice_sizes =
      op.GetAttr("slice_sizes").AsIntVector();
  if (from.HasUnreduced() || from.IsReplicated() ||
      !numbers.is(AttrKind::kGatherDimensionNumbers) || !slice_sizes ||
      !operand_type.HasStaticShape() || !result_type.HasStaticShape() ||
      !indices_type.IsTensor() || !indices_type.HasStaticShape() ||
      !ir::IsInteger(indices_type.StorageElementType())) {
    return nullptr;
  }
  const ir::GatherDimensionNumbers& g = numbers.gather();
  const int64_t rank = operand_type.rank();
  if (g.start_index_map.size() != 1 || !g.operand_batching_dims.empty() ||
      static_cast<int64_t>(slice_sizes->size()) != rank) {
    return nullptr;
  }
  const int64_t dim = g.start_index_map[0];
  auto contains = [](const std::vector<int64_t>& list, int64_t value) {
    return std::find(list.begin(), list.end(), value) != list.end();
  };
  if (dim < 0 || dim >= rank || from.tiles[dim] <= 1 ||
      !contains(g.collapsed_slice_dims, dim) || (*slice_sizes)[dim] != 1) {
    return nullptr;
  }
  // Operand dimensions the slices keep, in order, are the result's
  // offset dimensions; a cut one must be taken whole.
  std::vector<int64_t> kept;
  for (int64_t k = 0; k < rank; ++k) {
    if (!contains(g.collapsed_slice_dims, k)) kept.push_back(k);
  }
  if (kept.size() != g.offset_dims.size()) return nullptr;
  const size_t devices = from.tile_of_device.size();
  layout = TileLayout{};
  layout.tiles.assign(result_type.rank(), 1);
  layout.tile_of_device.assign(devices,
                               std::vector<int64_t>(result_type.rank(), 0));
  std::vector<int64_t> local_sizes = *slice_sizes;
  for (int64_t k = 0; k < rank; ++k) {
    if (from.tiles[k] <= 1 || k == dim) continue;
    auto at = std::find(kept.begin(), kept.end(), k);
    if (at == kept.end() || (*slice_sizes)[k] != operand_type.shape()[k]) {
      return nullptr;
    }
    const int64_t r = g.offset_dims[at - kept.begin()];
    layout.tiles[r] = from.tiles[k];
    for (size_t d = 0; d < devices; ++d) {
      layout.tile_of_device[d][r] = from.tile_of_device[d][k];
    }
    local_sizes[k] = operand_type.shape()[k] / from.tiles[k];
  }
  // Devices that differ only along `dim` hold partials of one tile.
  std::vector<std::vector<int64_t>> copy_key(devices);
  group_key.assign(devices, {});
  for (size_t d = 0; d < devices; ++d) {
    group_key[d] = layout.tile_of_device[d];
    group_key[d].push_back(from.copy_of_device[d]);
    copy_key[d] = {from.copy_of_device[d], from.tile_of_device[d][dim]};
  }
  if (!RenumberCopies(layout, copy_key)) return nullptr;
  ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                   TileShape(result_type, layout, op.Describe()));

  const ir::Location& loc = op.loc();
  // A whole value that was a tile once is the partition's own copy.
  ASSIGN_OR_RETURN(indices, TileOf(indices, WholeLayout(indices_type.rank()),
                                   out, loc, op.Describe()));
  auto append = [&](std::string name, Type type, std::vector<Value*> operands) {
    auto made = std::make_unique<Operation>(std::move(name),
                                            std::vector<Type>{type}, loc);
    for (Value* operand : operands) made->AddOperand(operand);
    out.push_back(std::move(made));
    return out.back().get();
  };
  const int64_t rows = operand_type.shape()[dim] / from.tiles[dim];
  const int64_t first = from.tile_of_device[target_.partition_id][dim] * rows;
  // In the tile: 0 <= index - first < rows.
  Value* local_indices =
      append("stablehlo.subtract", indices_type,
             {indices, IntegerSplat(indices_type, first, out, loc)})
          ->result(0);
  const Type mask_type =
      indices_type.WithElement(Type::Element(ir::ElementType::kI1));
  auto compare = [&](Value* bound, int64_t direction) {
    Operation* made =
        append("stablehlo.compare", mask_type, {local_indices, bound});
    made->SetAttr(
        "comparison_direction",
        Attribute::Enum(ir::EnumKind::kComparisonDirection, direction));
    return made->result(0);
  };
  Value* at_least_first =
      compare(IntegerSplat(indices_type, 0, out, loc), /*GE=*/2);
  Value* below_last =
      compare(IntegerSplat(indices_type, rows, out, loc), /*LT=*/5);
  Value* inside =
      append("stablehlo.and", mask_type, {at_least_first, below_last})
          ->result(0);
  // The gather of the device's rows.
  Operation* gather = append("stablehlo.gather", result_type.WithShape(tile),
                             {operand_it->second.local, local_indices});
  gather->SetAttr("dimension_numbers", numbers);
  gather->SetAttr("slice_sizes", Attribute::DenseI64Array(local_sizes));
  if (Attribute sorted = op.GetAttr("indices_are_sorted")) {
    gather->SetAttr("indices_are_sorted", sorted);
  }
  // The mask over the result: its batch dimensions are the indices'
  // dimensions but the index vector's.
  std::vector<int64_t> batch_shape, batch_dims;
  for (int64_t d = 0; d < indices_type.rank(); ++d) {
    if (d != g.index_vector_dim) batch_shape.push_back(indices_type.shape()[d]);
  }
  for (int64_t d = 0; d < result_type.rank(); ++d) {
    if (!contains(g.offset_dims, d)) batch_dims.push_back(d);
  }
  if (batch_dims.size() != batch_shape.size())
    return InternalError(op.Describe(),
                         ": gather batch dimensions do not match its indices");
  Value* mask = inside;
  if (batch_shape != indices_type.shape()) {
    mask =
        append("stablehlo.reshape", mask_type.WithShape(batch_shape), {inside})
            ->result(0);
  }
  Operation* spread =
      append("stablehlo.broadcast_in_dim", mask_type.WithShape(tile), {mask});
  spread->SetAttr("broadcast_dimensions", Attribute::DenseI64Array(batch_dims));
  Value* zeros = Zeros(result_type.WithShape(tile), out, loc);
  return append("stablehlo.select", result_type.WithShape(tile),
                {spread->result(0), gather->result(0), zeros})
      ->result(0);
}

StatusOr<bool> Partitioner::RunScatterIntoCutOperand(Operation& op,
                                                     OpList& out) {
  auto operand_it = tiled_.find(op.operand(0));
  if (operand_it == tiled_.end() || !IsWhole(op.operand(1)) ||
      !IsWhole(op.operand(2))) {
    return false;
  }
  const TileLayout& layout = operand_it->second.layout;
  const Type& operand_type = operand_it->second.global_type;
  Attribute numbers = op.GetAttr("scatter_dimension_numbers");
  if (layout.HasUnreduced() ||
      !numbers.is(AttrKind::kScatterDimensionNumbers) ||
      !operand_type.HasStaticShape()) {
    return false;
  }
  const ir::ScatterDimensionNumbers& sc = numbers.scatter();
  if (sc.scatter_dims_to_operand_dims.size() != 1 ||
      !sc.input_batching_dims.empty()) {
    return false;
  }
  const int64_t dim = sc.scatter_dims_to_operand_dims[0];
  const auto& inserted = sc.inserted_window_dims;
  const int64_t rank = static_cast<int64_t>(layout.tiles.size());
  if (dim < 0 || dim >= rank || layout.tiles[dim] <= 1 ||
      std::find(inserted.begin(), inserted.end(), dim) == inserted.end()) {
    return false;
  }
  // Other cuts must be in dimensions the update windows cover whole:
  // the updates are sliced alike.
  const Type& updates_type = op.operand(2)->type();
  if (!updates_type.IsTensor() || !updates_type.HasStaticShape()) {
    return false;
  }
  std::vector<int64_t> window;  // operand dimensions the windows keep
  for (int64_t k = 0; k < rank; ++k) {
    if (std::find(inserted.begin(), inserted.end(), k) == inserted.end()) {
      window.push_back(k);
    }
  }
  if (window.size() != sc.update_window_dims.size()) return false;
  TileLayout updates_layout = WholeLayout(updates_type.rank());
  for (int64_t k = 0; k < rank; ++k) {
    if (layout.tiles[k] <= 1 || k == dim) continue;
    auto at = std::find(window.begin(), window.end(), k);
    if (at == window.end()) return false;
    const int64_t u = sc.update_window_dims[at - window.begin()];
    if (updates_type.shape()[u] != operand_type.shape()[k]) return false;
    updates_layout.tiles[u] = layout.tiles[k];
    for (size_t d = 0; d < layout.tile_of_device.size(); ++d) {
      updates_layout.tile_of_device[d][u] = layout.tile_of_device[d][k];
    }
  }
  Value* indices = op.operand(1);
  const Type& indices_type = indices->type();
  if (!indices_type.IsTensor() || !indices_type.HasStaticShape() ||
      !ir::IsInteger(indices_type.StorageElementType())) {
    return false;
  }
  const int64_t tile = operand_type.shape()[dim] / layout.tiles[dim];
  const int64_t first = layout.tile_of_device[target_.partition_id][dim] * tile;
  ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                   TileShape(operand_type, layout, op.Describe()));
  // Whole values that were tiles once are the partition's own copies.
  ASSIGN_OR_RETURN(indices, TileOf(indices, WholeLayout(indices_type.rank()),
                                   out, op.loc(), op.Describe()));
  Value* local_indices = indices;
  if (first != 0) {
    Value* offset = IntegerSplat(indices_type, first, out, op.loc());
    auto shifted = std::make_unique<Operation>(
        "stablehlo.subtract", std::vector<Type>{indices_type}, op.loc());
    shifted->AddOperand(indices);
    shifted->AddOperand(offset);
    out.push_back(std::move(shifted));
    local_indices = out.back()->result(0);
  }
  ASSIGN_OR_RETURN(Value * updates,
                   TileOf(op.operand(2), WholeLayout(updates_type.rank()), out,
                          op.loc(), op.Describe()));
  if (!updates_layout.IsReplicated()) {
    TileOps ops(out, op.loc(), target_, next_channel_);
    ASSIGN_OR_RETURN(updates,
                     ops.Slice(updates, updates_layout, op.Describe()));
  }
  op.SetOperand(0, operand_it->second.local);
  op.SetOperand(1, local_indices);
  op.SetOperand(2, updates);
  op.result(0)->set_type(op.result(0)->type().WithShape(shape));
  pending_tiled_ = Tiled{nullptr, layout, operand_type, nullptr};
  pending_combine_.clear();
  return true;
}

Value* Partitioner::IntegerSplat(const Type& type, int64_t value, OpList& out,
                                 const ir::Location& loc) {
  const int bytes = ir::StorageBytes(type.StorageElementType());
  std::string data(static_cast<size_t>(bytes), '\0');
  // Little-endian, the storage order of Kiln's dense elements.
  for (int b = 0; b < bytes; ++b) {
    data[b] =
        static_cast<char>((static_cast<uint64_t>(value) >> (8 * b)) & 0xff);
  }
  auto constant = std::make_unique<Operation>("stablehlo.constant",
                                              std::vector<Type>{type}, loc);
  constant->SetAttr("value", Attribute::DenseElements(type, std::move(data),
                                                      /*splat=*/true));
  out.push_back(std::move(constant));
  return out.back()->result(0);
}

StatusOr<bool> Partitioner::RunScatterOnTiles(Operation& op, OpList& out) {
  if (op.name() != "stablehlo.scatter" || op.num_operands() != 3 ||
      op.num_results() != 1) {
    return false;
  }
  if (!IsWhole(op.operand(0))) return RunScatterIntoCutOperand(op, out);
  Attribute numbers = op.GetAttr("scatter_dimension_numbers");
  if (!numbers.is(AttrKind::kScatterDimensionNumbers)) return false;
  const ir::ScatterDimensionNumbers& sc = numbers.scatter();
  const std::string combiner = RegionCombiner(op);
  if (combiner.empty()) return false;
  const Type result_type = op.result(0)->type();
  const Type& updates_type = GlobalType(op.operand(2));
  std::optional<TileLayout> updates_layout = LayoutFromIndices(
      op.operand(1), sc.index_vector_dim, sc.scatter_indices_batching_dims,
      updates_type, sc.update_window_dims);
  if (!updates_layout || !result_type.HasStaticShape()) return false;
  const TileLayout& indices_layout = tiled_.at(op.operand(1)).layout;
  const size_t devices = target_.num_partitions;
  std::vector<std::vector<int64_t>> group_key(devices);
  for (size_t d = 0; d < devices; ++d) {
    group_key[d] = {indices_layout.copy_of_device[d]};
  }
  ASSIGN_OR_RETURN(Value * updates, TileOf(op.operand(2), *updates_layout, out,
                                           op.loc(), op.Describe()));
  Value* operand;
  if (combiner == "stablehlo.add" &&
      indices_layout.LinearTile(target_.partition_id) != 0) {
    operand = Zeros(result_type, out, op.loc());
  } else {
    ASSIGN_OR_RETURN(operand,
                     TileOf(op.operand(0), WholeLayout(result_type.rank()), out,
                            op.loc(), op.Describe()));
  }
  op.SetOperand(0, operand);
  op.SetOperand(1, tiled_.at(op.operand(1)).local);
  op.SetOperand(2, updates);
  pending_tiled_ =
      Tiled{nullptr, WholeLayout(result_type.rank()), result_type, nullptr};
  pending_combine_ = combiner;
  pending_group_key_ = std::move(group_key);
  return true;
}

}  // namespace kiln::compile::spmd
