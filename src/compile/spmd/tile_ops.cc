// TileOps: slices, assemblies, reshards without the whole value, and halo
// exchanges, as the ops and collectives that make them.
#include "compile/spmd/tile_ops.h"

#include <algorithm>
#include <cstring>

namespace kiln::compile::spmd {

StatusOr<Value*> TileOps::Slice(Value* global, const TileLayout& layout,
                                std::string_view what) {
  ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                   TileShape(global->type(), layout, what));
  const std::vector<int64_t>& coords =
      layout.tile_of_device[target_.partition_id];
  std::vector<int64_t> start(tile.size());
  for (size_t i = 0; i < tile.size(); ++i) start[i] = coords[i] * tile[i];
  return SliceOf(global, start, tile);
}

Value* TileOps::Reshard(Value* local, const Type& global_type,
                        const TileLayout& from, const TileLayout& to) {
  const size_t rank = from.tiles.size();
  const size_t devices = from.tile_of_device.size();
  if (to.tiles.size() != rank || to.tile_of_device.size() != devices ||
      from.copy_of_device.size() != devices ||
      target_.partition_id >= static_cast<int>(devices)) {
    return nullptr;
  }
  const std::vector<int64_t>& shape = global_type.shape();
  if (shape.size() != rank) return nullptr;
  for (int64_t dim : shape) {
    if (dim < 0) return nullptr;
  }
  if (Value* sliced = SliceWithin(local, from, to)) return sliced;
  if (Value* moved = MoveCut(local, from, to)) return moved;
  if (Value* permuted = PermuteTiles(local, from, to)) return permuted;
  // Dimensions whose cut `to` cannot slice out of the tile are gathered
  // among the devices that hold their other tiles (and only those), and
  // what is left is a slice or a permutation of tiles. Tried on ops of
  // its own, which join the program only if that works out (otherwise
  // the caller assembles the whole value, and partial gathers would be
  // collectives run for nothing).
  OpList tried;
  TileOps trial(tried, loc_, target_, next_channel_);
  TileLayout gathered = from;
  Value* value = local;
  for (size_t i = 0; i < rank; ++i) {
    if (gathered.tiles[i] <= 1 || to.tiles[i] % gathered.tiles[i] == 0) {
      continue;
    }
    value = trial.GatherDimension(value, gathered, i);
    if (value == nullptr) return nullptr;
  }
  if (value == local) return nullptr;
  if (!SameLayout(gathered, to)) {
    Value* moved = trial.SliceWithin(value, gathered, to);
    if (moved == nullptr) moved = trial.PermuteTiles(value, gathered, to);
    if (moved == nullptr) return nullptr;
    value = moved;
  }
  for (std::unique_ptr<Operation>& op : tried) out_.push_back(std::move(op));
  return value;
}

StatusOr<Value*> TileOps::Assemble(Value* local, const Type& global_type,
                                   const TileLayout& layout) {
  const int64_t tiles = layout.TileCount();
  const std::vector<int64_t> tile = local->type().shape();
  const size_t rank = tile.size();
  const int64_t devices = static_cast<int64_t>(layout.tile_of_device.size());
  const int64_t copies = devices / tiles;
  // Group c: the devices of copy c, in row-major order of their tiles.
  std::vector<int64_t> groups(static_cast<size_t>(devices));
  for (int64_t d = 0; d < devices; ++d) {
    groups[layout.copy_of_device[d] * tiles + layout.LinearTile(d)] = d;
  }
  // Over flattened ids, every replica gathering among its own partitions.
  std::vector<int64_t> flattened;
  for (int r = 0; r < target_.num_replicas; ++r) {
    for (int64_t d : groups) {
      flattened.push_back(r * int64_t{target_.num_partitions} + d);
    }
  }

  std::vector<int64_t> lead = {1};
  lead.insert(lead.end(), tile.begin(), tile.end());
  Value* stacked = Reshape(local, lead);
  std::vector<int64_t> gathered_shape = lead;
  gathered_shape[0] = tiles;
  auto gather =
      NewOp("stablehlo.all_gather", local->type().WithShape(gathered_shape));
  gather->AddOperand(stacked);
  gather->SetAttr("all_gather_dim",
                  Attribute::Integer(0, Type::Element(ir::ElementType::kI64)));
  gather->SetAttr("replica_groups",
                  ReplicaGroups(flattened, copies * target_.num_replicas));
  gather->SetAttr("channel_handle",
                  Attribute::Channel(ir::ChannelHandle{next_channel_++, 1}));
  gather->SetAttr("use_global_device_ids", Attribute::Unit());
  Value* gathered = Append(std::move(gather));

  // [T, l...] -> [t_s for the cut dims s..., l...] -> each cut dim's tile
  // count beside its tile size -> the global shape.
  std::vector<int64_t> cut;
  for (size_t k = 0; k < rank; ++k) {
    if (layout.tiles[k] > 1) cut.push_back(static_cast<int64_t>(k));
  }
  std::vector<int64_t> split;
  for (int64_t k : cut) split.push_back(layout.tiles[k]);
  split.insert(split.end(), tile.begin(), tile.end());
  Value* value = Reshape(gathered, split);
  std::vector<int64_t> perm;
  for (size_t k = 0; k < rank; ++k) {
    auto at = std::find(cut.begin(), cut.end(), static_cast<int64_t>(k));
    if (at != cut.end()) perm.push_back(at - cut.begin());
    perm.push_back(static_cast<int64_t>(cut.size() + k));
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    identity &= perm[i] == static_cast<int64_t>(i);
  }
  if (!identity) {
    std::vector<int64_t> permuted;
    for (int64_t p : perm) permuted.push_back(split[p]);
    auto transpose =
        NewOp("stablehlo.transpose", local->type().WithShape(permuted));
    transpose->AddOperand(value);
    transpose->SetAttr("permutation", Attribute::DenseI64Array(perm));
    value = Append(std::move(transpose));
  }
  return Reshape(value, global_type.shape());
}

Value* TileOps::WithHalo(Value* local, const TileLayout& layout, size_t dim,
                         int64_t left, int64_t right) {
  const std::vector<int64_t>& held = local->type().shape();
  if (dim >= held.size() || dim >= layout.tiles.size()) return nullptr;
  const int64_t k = layout.tiles[dim];
  if (k <= 1 || left < 0 || right < 0 || left > held[dim] ||
      right > held[dim]) {
    return nullptr;
  }
  std::optional<std::map<std::vector<int64_t>, std::vector<int64_t>>> found =
      Chains(layout, dim);
  if (!found) return nullptr;
  const auto& chains = *found;
  // Every tile's part sent `step` tiles along the chain.
  auto shift = [&](Value* part, int64_t step) {
    std::vector<int64_t> pairs;
    for (const auto& [key, chain] : chains) {
      for (int64_t c = 0; c < k; ++c) {
        if (c + step < 0 || c + step >= k) continue;
        pairs.push_back(chain[c]);
        pairs.push_back(chain[c + step]);
      }
    }
    return CollectivePermute(part, pairs);
  };
  std::vector<Value*> pieces;
  std::vector<int64_t> start(held.size(), 0), sizes = held;
  if (left > 0) {
    start[dim] = held[dim] - left;
    sizes[dim] = left;
    pieces.push_back(shift(SliceOf(local, start, sizes), 1));
  }
  pieces.push_back(local);
  if (right > 0) {
    start[dim] = 0;
    sizes[dim] = right;
    pieces.push_back(shift(SliceOf(local, start, sizes), -1));
  }
  if (pieces.size() == 1) return local;
  std::vector<int64_t> extended = held;
  extended[dim] += left + right;
  auto concat =
      NewOp("stablehlo.concatenate", local->type().WithShape(extended));
  for (Value* piece : pieces) concat->AddOperand(piece);
  concat->SetAttr("dimension",
                  Attribute::Integer(static_cast<int64_t>(dim),
                                     Type::Element(ir::ElementType::kI64)));
  return Append(std::move(concat));
}

Value* TileOps::SliceWithin(Value* local, const TileLayout& from,
                            const TileLayout& to) {
  const size_t rank = from.tiles.size();
  std::vector<int64_t> ratio(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (from.tiles[i] <= 0 || to.tiles[i] % from.tiles[i] != 0) {
      return nullptr;
    }
    ratio[i] = to.tiles[i] / from.tiles[i];
  }
  for (size_t d = 0; d < from.tile_of_device.size(); ++d) {
    for (size_t i = 0; i < rank; ++i) {
      if (to.tile_of_device[d][i] / ratio[i] != from.tile_of_device[d][i]) {
        return nullptr;
      }
    }
  }
  const std::vector<int64_t>& held = local->type().shape();
  const std::vector<int64_t>& coords = to.tile_of_device[target_.partition_id];
  std::vector<int64_t> start(rank), tile(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (held[i] % ratio[i] != 0) return nullptr;
    tile[i] = held[i] / ratio[i];
    start[i] = coords[i] % ratio[i] * tile[i];
  }
  return SliceOf(local, start, tile);
}

Value* TileOps::SliceOf(Value* value, const std::vector<int64_t>& start,
                        const std::vector<int64_t>& sizes) {
  std::vector<int64_t> limit(start.size()), strides(start.size(), 1);
  for (size_t i = 0; i < start.size(); ++i) limit[i] = start[i] + sizes[i];
  auto op = NewOp("stablehlo.slice", value->type().WithShape(sizes));
  op->AddOperand(value);
  op->SetAttr("start_indices", Attribute::DenseI64Array(start));
  op->SetAttr("limit_indices", Attribute::DenseI64Array(limit));
  op->SetAttr("strides", Attribute::DenseI64Array(strides));
  return Append(std::move(op));
}

bool TileOps::SameLayout(const TileLayout& a, const TileLayout& b) {
  return a.tiles == b.tiles && a.tile_of_device == b.tile_of_device;
}

Value* TileOps::PermuteTiles(Value* local, const TileLayout& from,
                             const TileLayout& to) {
  if (from.tiles != to.tiles) return nullptr;
  const size_t devices = from.tile_of_device.size();
  std::map<std::vector<int64_t>, std::vector<int64_t>> holders;
  for (size_t d = 0; d < devices; ++d) {
    holders[from.tile_of_device[d]].push_back(static_cast<int64_t>(d));
  }
  std::vector<int64_t> source(devices, -1);
  std::vector<bool> sends(devices, false);
  for (size_t d = 0; d < devices; ++d) {
    if (from.tile_of_device[d] == to.tile_of_device[d]) {
      source[d] = static_cast<int64_t>(d);
    }
  }
  std::vector<int64_t> pairs;
  for (size_t d = 0; d < devices; ++d) {
    if (source[d] >= 0) continue;
    auto it = holders.find(to.tile_of_device[d]);
    if (it == holders.end()) return nullptr;
    for (int64_t h : it->second) {
      if (!sends[h]) {
        sends[h] = true;
        source[d] = h;
        break;
      }
    }
    if (source[d] < 0) return nullptr;
    pairs.push_back(source[d]);
    pairs.push_back(static_cast<int64_t>(d));
  }
  if (pairs.empty()) return local;
  Value* permuted = CollectivePermute(local, pairs);
  // Every partition sends; one that keeps its own tile ignores what the
  // permute gives it (zeros).
  return source[target_.partition_id] == target_.partition_id ? local
                                                              : permuted;
}

Value* TileOps::GatherDimension(Value* local, TileLayout& layout, size_t dim) {
  const int64_t k = layout.tiles[dim];
  const size_t devices = layout.tile_of_device.size();
  std::optional<std::map<std::vector<int64_t>, std::vector<int64_t>>> groups =
      Chains(layout, dim);
  if (!groups) return nullptr;
  std::vector<int64_t> ids;
  for (int r = 0; r < target_.num_replicas; ++r) {
    for (const auto& [key, group] : *groups) {
      for (int64_t d : group) {
        ids.push_back(r * int64_t{target_.num_partitions} + d);
      }
    }
  }
  std::vector<int64_t> shape = local->type().shape();
  shape[dim] *= k;
  auto gather = NewOp("stablehlo.all_gather", local->type().WithShape(shape));
  gather->AddOperand(local);
  gather->SetAttr("all_gather_dim",
                  Attribute::Integer(static_cast<int64_t>(dim),
                                     Type::Element(ir::ElementType::kI64)));
  gather->SetAttr("replica_groups",
                  ReplicaGroups(ids, static_cast<int64_t>(groups->size()) *
                                         target_.num_replicas));
  gather->SetAttr("channel_handle",
                  Attribute::Channel(ir::ChannelHandle{next_channel_++, 1}));
  gather->SetAttr("use_global_device_ids", Attribute::Unit());
  Value* value = Append(std::move(gather));
  layout.tiles[dim] = 1;
  std::map<std::vector<int64_t>, int64_t> copies;
  for (size_t d = 0; d < devices; ++d) {
    layout.tile_of_device[d][dim] = 0;
    layout.copy_of_device[d] = copies[layout.tile_of_device[d]]++;
  }
  return value;
}

Value* TileOps::MoveCut(Value* local, const TileLayout& from,
                        const TileLayout& to) {
  const size_t rank = from.tiles.size();
  std::vector<size_t> differ;
  for (size_t i = 0; i < rank; ++i) {
    if (from.tiles[i] != to.tiles[i]) differ.push_back(i);
  }
  if (differ.size() != 2) return nullptr;
  size_t a = differ[0], b = differ[1];
  if (from.tiles[a] == 1) std::swap(a, b);
  const int64_t k = from.tiles[a];
  if (k <= 1 || from.tiles[b] != 1 || to.tiles[a] != 1 || to.tiles[b] != k) {
    return nullptr;
  }
  const std::vector<int64_t>& held = local->type().shape();
  if (held[b] % k != 0) return nullptr;
  // Groups: the devices that agree on everything but their coordinate
  // along a (and hold the same copy), ranked by that coordinate.
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
  for (size_t d = 0; d < from.tile_of_device.size(); ++d) {
    const std::vector<int64_t>& old_coords = from.tile_of_device[d];
    const std::vector<int64_t>& new_coords = to.tile_of_device[d];
    for (size_t i = 0; i < rank; ++i) {
      const int64_t expected = i == b   ? old_coords[a]
                               : i == a ? 0
                                        : old_coords[i];
      if (new_coords[i] != expected) return nullptr;
    }
    std::vector<int64_t> key = old_coords;
    key[a] = -1;
    key.push_back(from.copy_of_device[d]);
    std::vector<int64_t>& group = groups[key];
    if (group.empty()) group.assign(static_cast<size_t>(k), -1);
    int64_t& slot = group[static_cast<size_t>(old_coords[a])];
    if (slot >= 0) return nullptr;
    slot = static_cast<int64_t>(d);
  }
  std::vector<int64_t> ids;
  for (const auto& [key, group] : groups) {
    for (int64_t d : group) {
      if (d < 0) return nullptr;
      ids.push_back(d);
    }
  }
  std::vector<int64_t> moved = held;
  moved[a] *= k;
  moved[b] /= k;
  const Type i64 = Type::Element(ir::ElementType::kI64);
  auto op = NewOp("stablehlo.all_to_all", local->type().WithShape(moved));
  op->AddOperand(local);
  op->SetAttr("split_dimension",
              Attribute::Integer(static_cast<int64_t>(b), i64));
  op->SetAttr("concat_dimension",
              Attribute::Integer(static_cast<int64_t>(a), i64));
  op->SetAttr("split_count", Attribute::Integer(k, i64));
  // With a channel, the groups are partition ids within each replica.
  op->SetAttr("replica_groups",
              ReplicaGroups(ids, static_cast<int64_t>(groups.size())));
  op->SetAttr("channel_handle",
              Attribute::Channel(ir::ChannelHandle{next_channel_++, 1}));
  return Append(std::move(op));
}

std::optional<std::map<std::vector<int64_t>, std::vector<int64_t>>>
TileOps::Chains(const TileLayout& layout, size_t dim) {
  const int64_t k = layout.tiles[dim];
  std::map<std::vector<int64_t>, std::vector<int64_t>> chains;
  for (size_t d = 0; d < layout.tile_of_device.size(); ++d) {
    std::vector<int64_t> key = layout.tile_of_device[d];
    const int64_t coord = key[dim];
    key[dim] = -1;
    key.push_back(layout.copy_of_device[d]);
    std::vector<int64_t>& chain = chains[key];
    if (chain.empty()) chain.assign(static_cast<size_t>(k), -1);
    if (coord < 0 || coord >= k || chain[coord] >= 0) return std::nullopt;
    chain[coord] = static_cast<int64_t>(d);
  }
  for (const auto& [key, chain] : chains) {
    for (int64_t d : chain) {
      if (d < 0) return std::nullopt;
    }
  }
  return chains;
}

Value* TileOps::CollectivePermute(Value* value,
                                  const std::vector<int64_t>& pairs) {
  std::string bytes(pairs.size() * sizeof(int64_t), '\0');
  std::memcpy(bytes.data(), pairs.data(), bytes.size());
  const Type pairs_type =
      Type::Tensor({static_cast<int64_t>(pairs.size() / 2), 2},
                   Type::Element(ir::ElementType::kI64));
  auto op = NewOp("stablehlo.collective_permute", value->type());
  op->AddOperand(value);
  op->SetAttr("source_target_pairs",
              Attribute::DenseElements(pairs_type, std::move(bytes),
                                       /*splat=*/false));
  op->SetAttr("channel_handle",
              Attribute::Channel(ir::ChannelHandle{next_channel_++, 1}));
  return Append(std::move(op));
}

std::unique_ptr<Operation> TileOps::NewOp(std::string name, Type type) {
  return std::make_unique<Operation>(std::move(name),
                                     std::vector<Type>{std::move(type)}, loc_);
}

Value* TileOps::Append(std::unique_ptr<Operation> op) {
  out_.push_back(std::move(op));
  return out_.back()->result(0);
}

Value* TileOps::Reshape(Value* value, const std::vector<int64_t>& shape) {
  auto op = NewOp("stablehlo.reshape", value->type().WithShape(shape));
  op->AddOperand(value);
  return Append(std::move(op));
}

}  // namespace kiln::compile::spmd
