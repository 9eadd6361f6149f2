// Elementwise and shape ops (transpose, broadcast_in_dim, slice, reshape) on
// tiles, and values made at tile size again instead of whole.
#include "compile/spmd/partitioner.h"

#include <cstring>
#include <set>

#include "compile/spmd/tile_ops.h"

namespace kiln::compile::spmd {

StatusOr<bool> Partitioner::RunOnTiles(Operation& op, OpList& out) {
  if (!IsElementwise(op) || op.num_results() != 1 || op.num_regions() != 0) {
    return false;
  }
  const Type& type = op.result(0)->type();
  if (!type.IsTensor() || !type.HasStaticShape()) return false;
  const TileLayout* layout = nullptr;
  for (Value* operand : op.operands()) {
    const Type& operand_type = operand->type();
    auto it = tiled_.find(operand);
    if (it != tiled_.end()) {
      if (it->second.global_type.shape() != type.shape()) return false;
      if (layout == nullptr) {
        layout = &it->second.layout;
      } else if (!SameTiles(*layout, it->second.layout)) {
        return false;
      }
    } else if (!operand_type.IsTensor() ||
               (operand_type.rank() != 0 &&
                operand_type.shape() != type.shape())) {
      return false;
    }
  }
  if (layout == nullptr) return false;
  const TileLayout chosen = *layout;
  ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                   TileShape(type, chosen, op.Describe()));
  for (int i = 0; i < op.num_operands(); ++i) {
    Value* operand = op.operand(i);
    if (!tiled_.count(operand) && operand->type().rank() == 0) continue;
    ASSIGN_OR_RETURN(Value * local,
                     TileOf(operand, chosen, out, op.loc(), op.Describe()));
    op.SetOperand(i, local);
  }
  Value* result = op.result(0);
  pending_tiled_ = Tiled{nullptr, chosen, type, nullptr};
  result->set_type(type.WithShape(tile));
  return true;
}

StatusOr<bool> Partitioner::RunShapeOpOnTiles(Operation& op, OpList& out) {
  if (op.num_operands() != 1 || op.num_results() != 1) return false;
  auto it = tiled_.find(op.operand(0));
  if (it == tiled_.end()) return false;
  const Tiled* source_ptr = &it->second;
  std::optional<Tiled> gathered;
  if (op.name() == "stablehlo.slice") {
    // A slice within a cut dimension: that dimension is gathered whole
    // first (the others stay cut).
    Attribute start = op.GetAttr("start_indices");
    Attribute limit = op.GetAttr("limit_indices");
    Attribute strides = op.GetAttr("strides");
    if (start.is(AttrKind::kDenseArray) && limit.is(AttrKind::kDenseArray) &&
        strides.is(AttrKind::kDenseArray)) {
      const std::vector<int64_t>& shape = it->second.global_type.shape();
      std::vector<bool> partial(shape.size(), false);
      bool any = false;
      for (size_t i = 0; i < shape.size(); ++i) {
        partial[i] =
            it->second.layout.tiles[i] > 1 &&
            (start.dense_ints()[i] != 0 || limit.dense_ints()[i] != shape[i] ||
             strides.dense_ints()[i] != 1);
        any |= partial[i];
      }
      bool all = true;
      for (size_t i = 0; i < shape.size(); ++i) {
        all &= partial[i] || it->second.layout.tiles[i] == 1;
      }
      if (any && !all) {
        ASSIGN_OR_RETURN(gathered,
                         GatherDims(it->second, partial, out, op.loc()));
        if (!gathered) return false;
        source_ptr = &*gathered;
      }
    }
  }
  const Tiled& source = *source_ptr;
  const Type& result_type = op.result(0)->type();
  if (!result_type.IsTensor() || !result_type.HasStaticShape()) return false;
  const std::vector<int64_t>& in_shape = source.global_type.shape();
  const std::vector<int64_t>& out_shape = result_type.shape();
  const size_t in_rank = in_shape.size(), out_rank = out_shape.size();
  const size_t devices = source.layout.tile_of_device.size();
  // For each result dimension, the operand dimension whose tiles it
  // takes (-1: whole).
  std::vector<int64_t> from(out_rank, -1);
  if (op.name() == "stablehlo.transpose") {
    Attribute perm = op.GetAttr("permutation");
    if (!perm.is(AttrKind::kDenseArray)) return false;
    for (size_t j = 0; j < out_rank; ++j) from[j] = perm.dense_ints()[j];
  } else if (op.name() == "stablehlo.broadcast_in_dim") {
    Attribute dims = op.GetAttr("broadcast_dimensions");
    if (!dims.is(AttrKind::kDenseArray)) return false;
    for (size_t i = 0; i < in_rank; ++i) {
      const int64_t j = dims.dense_ints()[i];
      if (source.layout.tiles[i] > 1 && in_shape[i] != out_shape[j]) {
        return false;
      }
      from[j] = static_cast<int64_t>(i);
    }
  } else if (op.name() == "stablehlo.slice") {
    Attribute start = op.GetAttr("start_indices");
    Attribute limit = op.GetAttr("limit_indices");
    Attribute strides = op.GetAttr("strides");
    if (!start.is(AttrKind::kDenseArray) || !limit.is(AttrKind::kDenseArray) ||
        !strides.is(AttrKind::kDenseArray)) {
      return false;
    }
    for (size_t i = 0; i < in_rank; ++i) {
      if (source.layout.tiles[i] > 1 &&
          (start.dense_ints()[i] != 0 || limit.dense_ints()[i] != in_shape[i] ||
           strides.dense_ints()[i] != 1)) {
        return false;
      }
      from[i] = static_cast<int64_t>(i);
    }
  } else if (op.name() == "stablehlo.reshape") {
    // The dimensions other than 1, in order, must be the same.
    std::vector<size_t> in_dims, out_dims;
    for (size_t i = 0; i < in_rank; ++i) {
      if (in_shape[i] != 1) in_dims.push_back(i);
    }
    for (size_t j = 0; j < out_rank; ++j) {
      if (out_shape[j] != 1) out_dims.push_back(j);
    }
    if (in_dims.size() != out_dims.size()) return false;
    for (size_t k = 0; k < in_dims.size(); ++k) {
      if (in_shape[in_dims[k]] != out_shape[out_dims[k]]) return false;
      from[out_dims[k]] = static_cast<int64_t>(in_dims[k]);
    }
  } else {
    return false;
  }
  TileLayout layout;
  layout.tiles.assign(out_rank, 1);
  layout.tile_of_device.assign(devices, std::vector<int64_t>(out_rank, 0));
  layout.copy_of_device = source.layout.copy_of_device;
  int64_t kept = 1;
  for (size_t j = 0; j < out_rank; ++j) {
    if (from[j] < 0) continue;
    layout.tiles[j] = source.layout.tiles[from[j]];
    kept *= layout.tiles[j];
    for (size_t d = 0; d < devices; ++d) {
      layout.tile_of_device[d][j] = source.layout.tile_of_device[d][from[j]];
    }
  }
  // Every cut dimension of the operand must reach the result.
  if (kept != source.layout.TileCount()) return false;
  ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                   TileShape(result_type, layout, op.Describe()));
  if (op.name() == "stablehlo.slice") {
    std::vector<int64_t> limit = op.GetAttr("limit_indices").dense_ints();
    for (size_t i = 0; i < in_rank; ++i) {
      if (source.layout.tiles[i] > 1) limit[i] = tile[i];
    }
    op.SetAttr("limit_indices", Attribute::DenseI64Array(limit));
  }
  op.SetOperand(0, source.local);
  pending_tiled_ = Tiled{nullptr, layout, result_type, nullptr};
  op.result(0)->set_type(result_type.WithShape(tile));
  return true;
}

StatusOr<Value*> Partitioner::Rematerialize(Value* value,
                                            const TileLayout& layout,
                                            const std::string& layout_key,
                                            OpList& out, int depth) {
  if (auto it = tiled_.find(value); it != tiled_.end()) {
    return SameTiles(it->second.layout, layout) ? it->second.local : nullptr;
  }
  const auto memo_key =
      std::make_pair(static_cast<const Value*>(value), layout_key);
  if (auto it = rematerialized_.find(memo_key); it != rematerialized_.end()) {
    return it->second;
  }
  Operation* op = value->defining_op();
  const Type& type = value->type();
  if (op == nullptr || depth > 200 || !type.IsTensor() ||
      !type.HasStaticShape() || op->num_results() != 1 ||
      op->num_regions() != 0 ||
      static_cast<size_t>(type.rank()) != layout.tiles.size()) {
    return nullptr;
  }
  StatusOr<std::vector<int64_t>> tile = TileShape(type, layout, "");
  if (!tile.ok()) return nullptr;
  const Type local_type = type.WithShape(*tile);
  const std::vector<int64_t>& coords =
      layout.tile_of_device[target_.partition_id];
  Value* made = nullptr;
  if (op->name() == "stablehlo.iota") {
    Attribute dim_attr = op->GetAttr("iota_dimension");
    if (!dim_attr.is(AttrKind::kInteger)) return nullptr;
    const int64_t dim = dim_attr.int_value();
    auto iota = std::make_unique<Operation>(
        "stablehlo.iota", std::vector<Type>{local_type}, op->loc());
    iota->SetAttr("iota_dimension", dim_attr);
    out.push_back(std::move(iota));
    made = out.back()->result(0);
    const int64_t offset = coords[dim] * (*tile)[dim];
    if (offset != 0) {
      std::optional<std::string> bytes =
          ScalarBytes(type.StorageElementType(), offset);
      if (!bytes) return nullptr;
      auto constant = std::make_unique<Operation>(
          "stablehlo.constant", std::vector<Type>{local_type}, op->loc());
      constant->SetAttr("value",
                        Attribute::DenseElements(local_type, *bytes, true));
      out.push_back(std::move(constant));
      auto add = std::make_unique<Operation>(
          "stablehlo.add", std::vector<Type>{local_type}, op->loc());
      add->AddOperand(made);
      add->AddOperand(out.back()->result(0));
      out.push_back(std::move(add));
      made = out.back()->result(0);
    }
  } else if (op->name() == "stablehlo.constant") {
    Attribute value_attr = op->GetAttr("value");
    if (!value_attr.is(AttrKind::kDenseElements) ||
        !value_attr.dense_is_splat()) {
      return nullptr;
    }
    auto constant = std::make_unique<Operation>(
        "stablehlo.constant", std::vector<Type>{local_type}, op->loc());
    constant->SetAttr("value", Attribute::DenseElements(
                                   local_type, value_attr.dense_data(), true));
    out.push_back(std::move(constant));
    made = out.back()->result(0);
  } else if (op->name() == "stablehlo.broadcast_in_dim" &&
             op->num_operands() == 1 && op->operand(0)->type().IsTensor() &&
             op->operand(0)->type().rank() == 0 &&
             !tiled_.count(op->operand(0))) {
    auto broadcast = std::make_unique<Operation>(
        "stablehlo.broadcast_in_dim", std::vector<Type>{local_type}, op->loc());
    broadcast->AddOperand(op->operand(0));
    broadcast->SetAttr("broadcast_dimensions", Attribute::DenseI64Array({}));
    out.push_back(std::move(broadcast));
    made = out.back()->result(0);
  } else if (IsElementwise(*op)) {
    std::vector<Value*> operands;
    for (Value* operand : op->operands()) {
      const Type& operand_type = operand->type();
      if (operand_type.IsTensor() && operand_type.rank() == 0 &&
          !tiled_.count(operand)) {
        operands.push_back(operand);
        continue;
      }
      if (!operand_type.IsTensor() || operand_type.shape() != type.shape()) {
        return nullptr;
      }
      ASSIGN_OR_RETURN(Value * local, Rematerialize(operand, layout, layout_key,
                                                    out, depth + 1));
      if (local == nullptr) return nullptr;
      operands.push_back(local);
    }
    auto clone = std::make_unique<Operation>(
        op->name(), std::vector<Type>{local_type}, op->loc());
    for (Value* operand : operands) clone->AddOperand(operand);
    for (const ir::NamedAttribute& attr : op->properties()) {
      clone->SetAttr(attr.first, attr.second);
    }
    for (const ir::NamedAttribute& attr : op->attributes()) {
      clone->SetAttr(attr.first, attr.second);
    }
    out.push_back(std::move(clone));
    made = out.back()->result(0);
  } else {
    return nullptr;
  }
  rematerialized_[memo_key] = made;
  return made;
}

std::optional<std::string> Partitioner::ScalarBytes(ir::ElementType type,
                                                    int64_t value) {
  const int bytes = ir::StorageBytes(type);
  std::string out(bytes, '\0');
  if (ir::IsInteger(type)) {
    for (int i = 0; i < bytes && i < 8; ++i) {
      out[i] =
          static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xff);
    }
    return out;
  }
  if (type == ir::ElementType::kF32) {
    float f = static_cast<float>(value);
    std::memcpy(out.data(), &f, 4);
    return out;
  }
  if (type == ir::ElementType::kF64) {
    double f = static_cast<double>(value);
    std::memcpy(out.data(), &f, 8);
    return out;
  }
  return std::nullopt;
}

StatusOr<std::optional<Partitioner::Tiled>> Partitioner::GatherDims(
    const Tiled& tiled, const std::vector<bool>& dims, OpList& out,
    const ir::Location& loc) {
  const TileLayout& layout = tiled.layout;
  const size_t rank = layout.tiles.size();
  const size_t devices = layout.tile_of_device.size();
  TileLayout part;  // the cuts of `dims` only, grouped by the rest
  part.tiles.assign(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    if (dims[k]) part.tiles[k] = layout.tiles[k];
  }
  part.tile_of_device.assign(devices, std::vector<int64_t>(rank, 0));
  std::map<std::vector<int64_t>, int64_t> group_ids;
  std::vector<int64_t> group_of(devices);
  for (size_t d = 0; d < devices; ++d) {
    std::vector<int64_t> key;
    for (size_t k = 0; k < rank; ++k) {
      if (dims[k]) {
        part.tile_of_device[d][k] = layout.tile_of_device[d][k];
      } else {
        key.push_back(layout.tile_of_device[d][k]);
      }
    }
    key.push_back(layout.copy_of_device[d]);
    group_of[d] = group_ids.emplace(key, static_cast<int64_t>(group_ids.size()))
                      .first->second;
  }
  part.copy_of_device = group_of;
  // Each group must hold each tile of `dims` once.
  std::set<std::pair<int64_t, std::vector<int64_t>>> seen;
  for (size_t d = 0; d < devices; ++d) {
    if (!seen.insert({group_of[d], part.tile_of_device[d]}).second) {
      return std::optional<Tiled>();
    }
  }
  if (static_cast<int64_t>(group_ids.size()) * part.TileCount() !=
      static_cast<int64_t>(devices)) {
    return std::optional<Tiled>();
  }
  std::vector<int64_t> shape = tiled.local->type().shape();
  for (size_t k = 0; k < rank; ++k) {
    if (dims[k]) shape[k] = tiled.global_type.shape()[k];
  }
  TileOps ops(out, loc, target_, next_channel_);
  ASSIGN_OR_RETURN(
      Value * gathered,
      ops.Assemble(tiled.local, tiled.local->type().WithShape(shape), part));
  Tiled result;
  result.local = gathered;
  result.global_type = tiled.global_type;
  result.layout = layout;
  std::vector<std::vector<int64_t>> copy_key(devices);
  for (size_t d = 0; d < devices; ++d) {
    copy_key[d] = {layout.copy_of_device[d]};
    for (size_t k = 0; k < rank; ++k) {
      if (dims[k]) {
        result.layout.tiles[k] = 1;
        copy_key[d].push_back(layout.tile_of_device[d][k]);
        result.layout.tile_of_device[d][k] = 0;
      }
    }
  }
  if (!RenumberCopies(result.layout, copy_key)) return std::optional<Tiled>();
  return std::optional<Tiled>(std::move(result));
}

}  // namespace kiln::compile::spmd
