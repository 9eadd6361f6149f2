// Reductions of tiles, the all_reduces that finish partial results, and
// unreduced values (partial sums kept, split among devices, or dropped).
#include "compile/spmd/partitioner.h"

#include <algorithm>
#include <functional>

namespace kiln::compile::spmd {

bool Partitioner::RenumberCopies(TileLayout& layout,
                                 const std::vector<std::vector<int64_t>>& key) {
  const size_t devices = layout.tile_of_device.size();
  std::map<std::vector<int64_t>, int64_t> holders;
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>, int64_t> seen;
  for (size_t d = 0; d < devices; ++d) {
    ++holders[layout.tile_of_device[d]];
    if (seen.count({layout.tile_of_device[d], key[d]})) return false;
    seen[{layout.tile_of_device[d], key[d]}] = 0;
  }
  const int64_t tiles = layout.TileCount();
  if (static_cast<int64_t>(holders.size()) != tiles) return false;
  const int64_t copies = static_cast<int64_t>(devices) / tiles;
  for (const auto& [tile, count] : holders) {
    if (count != copies) return false;
  }
  // Copy c of every tile: the holders ranked by key.
  std::map<std::vector<int64_t>,
           std::vector<std::pair<std::vector<int64_t>, size_t>>>
      by_tile;
  for (size_t d = 0; d < devices; ++d) {
    by_tile[layout.tile_of_device[d]].push_back({key[d], d});
  }
  // Keys must rank the same way in every tile for groups to line up: the
  // key without the tile is the group.
  std::map<std::vector<int64_t>, int64_t> group_of_key;
  for (auto& [tile, list] : by_tile) {
    std::sort(list.begin(), list.end());
    for (size_t rank = 0; rank < list.size(); ++rank) {
      group_of_key.emplace(list[rank].first, static_cast<int64_t>(rank));
    }
  }
  layout.copy_of_device.assign(devices, 0);
  for (auto& [tile, list] : by_tile) {
    for (size_t rank = 0; rank < list.size(); ++rank) {
      layout.copy_of_device[list[rank].second] = static_cast<int64_t>(rank);
    }
  }
  return true;
}

Value* Partitioner::AllReduce(
    Value* local, const std::string& combiner,
    const std::vector<std::vector<int64_t>>& group_key, OpList& out,
    const ir::Location& loc) {
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
  for (size_t d = 0; d < group_key.size(); ++d) {
    groups[group_key[d]].push_back(static_cast<int64_t>(d));
  }
  std::vector<int64_t> flattened;
  const int64_t size = static_cast<int64_t>(groups.begin()->second.size());
  for (int r = 0; r < target_.num_replicas; ++r) {
    for (const auto& [key, members] : groups) {
      for (int64_t d : members) {
        flattened.push_back(r * int64_t{target_.num_partitions} + d);
      }
    }
  }
  auto reduce = std::make_unique<Operation>(
      "stablehlo.all_reduce", std::vector<Type>{local->type()}, loc);
  reduce->AddOperand(local);
  reduce->SetAttr(
      "replica_groups",
      ReplicaGroups(flattened, static_cast<int64_t>(flattened.size()) / size));
  reduce->SetAttr("channel_handle",
                  Attribute::Channel(ir::ChannelHandle{next_channel_++, 1}));
  reduce->SetAttr("use_global_device_ids", Attribute::Unit());
  ir::Block& block = reduce->AddRegion().AddBlock();
  Type scalar = local->type().WithShape({});
  Value* a = block.AddArgument(scalar, loc);
  Value* b = block.AddArgument(scalar, loc);
  auto combine =
      std::make_unique<Operation>(combiner, std::vector<Type>{scalar}, loc);
  combine->AddOperand(a);
  combine->AddOperand(b);
  Value* combined = block.Append(std::move(combine))->result(0);
  auto ret =
      std::make_unique<Operation>("stablehlo.return", std::vector<Type>{}, loc);
  ret->AddOperand(combined);
  block.Append(std::move(ret));
  out.push_back(std::move(reduce));
  return out.back()->result(0);
}

std::string Partitioner::TileCombiner(const Operation& reduce) {
  if (reduce.num_operands() != 2) return "";
  const std::string name = RegionCombiner(reduce);
  if (name != "stablehlo.add") return name;
  const Operation* init = reduce.operand(1)->defining_op();
  if (init == nullptr || init->name() != "stablehlo.constant") return "";
  Attribute value = init->GetAttr("value");
  if (!value.is(AttrKind::kDenseElements)) return "";
  for (char byte : value.dense_data()) {
    if (byte != 0) return "";
  }
  return name;
}

std::string Partitioner::RegionCombiner(const Operation& op) {
  if (op.num_regions() != 1 || op.region(0).num_blocks() != 1) return "";
  const ir::Block& body = op.region(0).front();
  if (body.operations().size() != 2 || body.num_arguments() != 2) return "";
  const Operation& combine = *body.operations()[0];
  const Operation& ret = *body.operations()[1];
  if (combine.num_operands() != 2 || ret.num_operands() != 1 ||
      ret.operand(0) != combine.result(0) ||
      !((combine.operand(0) == body.argument(0) &&
         combine.operand(1) == body.argument(1)) ||
        (combine.operand(0) == body.argument(1) &&
         combine.operand(1) == body.argument(0)))) {
    return "";
  }
  const std::string& name = combine.name();
  if (name == "stablehlo.maximum" || name == "stablehlo.minimum" ||
      name == "stablehlo.and" || name == "stablehlo.or" ||
      name == "stablehlo.add") {
    return name;
  }
  return "";
}

StatusOr<bool> Partitioner::RunReduceOnTiles(Operation& op, OpList& out) {
  if (op.name() != "stablehlo.reduce" || op.num_results() != 1) return false;
  auto it = tiled_.find(op.operand(0));
  if (it == tiled_.end() || tiled_.count(op.operand(1))) return false;
  const std::string combiner = TileCombiner(op);
  Attribute dims_attr = op.GetAttr("dimensions");
  if (combiner.empty() || !dims_attr.is(AttrKind::kDenseArray)) return false;
  const Tiled& source = it->second;
  const std::vector<int64_t>& dims = dims_attr.dense_ints();
  const size_t rank = source.layout.tiles.size();
  const size_t devices = source.layout.tile_of_device.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t d : dims) reduced[d] = true;
  TileLayout layout;
  std::vector<std::vector<int64_t>> group_key(devices), copy_key(devices);
  bool partial = false;
  for (size_t i = 0; i < rank; ++i) {
    if (!reduced[i]) layout.tiles.push_back(source.layout.tiles[i]);
    partial |= reduced[i] && source.layout.tiles[i] > 1;
  }
  layout.tile_of_device.resize(devices);
  for (size_t d = 0; d < devices; ++d) {
    std::vector<int64_t> reduced_coords;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t c = source.layout.tile_of_device[d][i];
      if (reduced[i]) {
        reduced_coords.push_back(c);
      } else {
        layout.tile_of_device[d].push_back(c);
      }
    }
    group_key[d] = layout.tile_of_device[d];
    group_key[d].push_back(source.layout.copy_of_device[d]);
    copy_key[d] = {source.layout.copy_of_device[d]};
    copy_key[d].insert(copy_key[d].end(), reduced_coords.begin(),
                       reduced_coords.end());
  }
  if (!RenumberCopies(layout, copy_key)) return false;
  const Type result_type = op.result(0)->type();
  if (!result_type.IsTensor() || !result_type.HasStaticShape()) return false;
  ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                   TileShape(result_type, layout, op.Describe()));
  op.SetOperand(0, source.local);
  op.result(0)->set_type(result_type.WithShape(tile));
  pending_tiled_ = Tiled{nullptr, layout, result_type, nullptr};
  pending_combine_.clear();
  if (partial) {
    pending_combine_ = combiner;
    pending_group_key_ = std::move(group_key);
  }
  return true;
}

bool Partitioner::SameGroups(const std::vector<std::vector<int64_t>>& keys,
                             const std::vector<int64_t>& groups) {
  if (keys.size() != groups.size()) return false;
  for (size_t a = 0; a < keys.size(); ++a) {
    for (size_t b = a + 1; b < keys.size(); ++b) {
      if ((keys[a] == keys[b]) != (groups[a] == groups[b])) return false;
    }
  }
  return true;
}

void Partitioner::DropUnusedSums(OpList& ops) {
  if (partial_sums_.empty()) return;
  std::set<const Value*> used;
  std::function<void(const Operation&)> note = [&](const Operation& op) {
    for (const Value* operand : op.operands()) used.insert(operand);
    for (const auto& region : op.regions()) {
      for (const auto& block : region->blocks()) {
        for (const auto& inner : block->operations()) note(*inner);
      }
    }
  };
  std::set<const Operation*> candidates;
  for (const auto& [value, sum] : partial_sums_) {
    for (const Value* v : sum.chain) candidates.insert(v->defining_op());
  }
  for (const auto& op : ops) {
    if (!candidates.count(op.get())) note(*op);
  }
  used.insert(split_tiles_.begin(), split_tiles_.end());
  // Everything made from one sum goes together, or stays.
  std::map<const Value*, std::set<const Value*>> by_sum;
  for (const auto& [value, sum] : partial_sums_) {
    by_sum[sum.chain.front()].insert(sum.chain.begin(), sum.chain.end());
  }
  std::set<const Operation*> dropped;
  for (const auto& [first, made] : by_sum) {
    bool dead = true;
    for (const Value* v : made) dead = dead && !used.count(v);
    if (!dead) continue;
    for (const Value* v : made) dropped.insert(v->defining_op());
  }
  OpList kept;
  for (std::unique_ptr<Operation>& op : ops) {
    if (dropped.count(op.get())) {
      removed_.push_back(std::move(op));
    } else {
      kept.push_back(std::move(op));
    }
  }
  ops = std::move(kept);
  partial_sums_.clear();
  split_tiles_.clear();
}

Value* Partitioner::SumUnreduced(Value* local, const TileLayout& layout,
                                 OpList& out, const ir::Location& loc) {
  return AllReduce(local, "stablehlo.add", GroupKeys(layout), out, loc);
}

std::vector<std::vector<int64_t>> Partitioner::GroupKeys(
    const TileLayout& layout) {
  std::vector<std::vector<int64_t>> keys;
  for (int64_t group : layout.unreduced_group) keys.push_back({group});
  return keys;
}

Value* Partitioner::KnownPartials(const Value* global, const TileLayout& layout,
                                  OpList& out, const ir::Location& loc) {
  auto partial = partial_sums_.find(global);
  if (partial != partial_sums_.end() &&
      SameTiles(partial->second.layout, WithoutUnreduced(layout)) &&
      SameGroups(partial->second.group_key, layout.unreduced_group)) {
    return LocalHandle(partial->second.partial, out, loc);
  }
  // A value cut by the very devices of each unreduced group, one tile
  // each, made unreduced whole: each device's tile in place among zeros,
  // as XLA's partitioner gives it (no tile moves).
  auto tiled = tiled_.find(global);
  if (tiled == tiled_.end() || !WithoutUnreduced(layout).IsReplicated()) {
    return nullptr;
  }
  const TileLayout& cut = tiled->second.layout;
  const size_t devices = layout.unreduced_group.size();
  if (cut.IsReplicated() || cut.HasUnreduced() ||
      cut.tile_of_device.size() != devices ||
      target_.partition_id >= static_cast<int>(devices)) {
    return nullptr;
  }
  std::map<int64_t, std::set<int64_t>> tiles_of_group;
  for (size_t d = 0; d < devices; ++d) {
    if (!tiles_of_group[layout.unreduced_group[d]]
             .insert(cut.LinearTile(d))
             .second) {
      return nullptr;
    }
  }
  for (const auto& [group, tiles] : tiles_of_group) {
    if (static_cast<int64_t>(tiles.size()) != cut.TileCount()) {
      return nullptr;
    }
  }
  Value* local = tiled->second.local;
  const std::vector<int64_t>& tile = local->type().shape();
  const std::vector<int64_t>& whole = tiled->second.global_type.shape();
  const std::vector<int64_t>& coords = cut.tile_of_device[target_.partition_id];
  std::vector<int64_t> low(tile.size()), high(tile.size()),
      interior(tile.size(), 0);
  for (size_t i = 0; i < tile.size(); ++i) {
    low[i] = coords[i] * tile[i];
    high[i] = whole[i] - low[i] - tile[i];
  }
  Value* zero = Zeros(local->type().WithShape({}), out, loc);
  auto pad = std::make_unique<Operation>(
      "stablehlo.pad", std::vector<Type>{tiled->second.global_type}, loc);
  pad->AddOperand(local);
  pad->AddOperand(zero);
  pad->SetAttr("edge_padding_low", Attribute::DenseI64Array(low));
  pad->SetAttr("edge_padding_high", Attribute::DenseI64Array(high));
  pad->SetAttr("interior_padding", Attribute::DenseI64Array(interior));
  out.push_back(std::move(pad));
  return out.back()->result(0);
}

Value* Partitioner::SplitUnreduced(Value* tile, const TileLayout& layout,
                                   OpList& out, const ir::Location& loc) {
  split_tiles_.insert(tile);
  if (layout.unreduced_index[target_.partition_id] == 0) return tile;
  return Zeros(tile->type(), out, loc);
}

Value* Partitioner::Zeros(const Type& type, OpList& out,
                          const ir::Location& loc) {
  auto zeros = std::make_unique<Operation>("stablehlo.constant",
                                           std::vector<Type>{type}, loc);
  zeros->SetAttr(
      "value",
      Attribute::DenseElements(
          type, std::string(ir::StorageBytes(type.StorageElementType()), '\0'),
          /*splat=*/true));
  out.push_back(std::move(zeros));
  return out.back()->result(0);
}

}  // namespace kiln::compile::spmd
