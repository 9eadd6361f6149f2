#include "compile/spmd_partition.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <set>

#include "base/strings.h"

namespace kiln::compile {
namespace {

using ir::Attribute;
using ir::AttrKind;
using ir::Operation;
using ir::Type;
using ir::Value;
using OpList = std::vector<std::unique_ptr<Operation>>;

// Channel handles of the collectives the partitioner adds: far above the
// ones frameworks number from 1, so that they never collide.
constexpr int64_t kFirstChannel = 1 << 20;

// The layout a value's attribute dictionary gives it: its `sdy.sharding`,
// else its `mhlo.sharding`; nullopt when it has neither or is replicated.
StatusOr<std::optional<TileLayout>> LayoutOfAttrs(
    const Attribute& attrs, const std::map<std::string, Mesh>& meshes,
    const Type& type, int num_partitions, std::string_view what) {
  if (!attrs.is(AttrKind::kDictionary)) return std::optional<TileLayout>();
  Attribute shardy = attrs.Get("sdy.sharding");
  Attribute gspmd = attrs.Get("mhlo.sharding");
  if (!shardy && !gspmd) return std::optional<TileLayout>();
  if (!type.IsTensor()) {
    return UnimplementedError(what, " is sharded but is not a tensor");
  }
  StatusOr<TileLayout> layout = [&]() -> StatusOr<TileLayout> {
    if (shardy) {
      ASSIGN_OR_RETURN(TensorSharding sharding,
                       ParseTensorSharding(shardy.ToString()));
      return LayoutOfShardy(sharding, meshes, type.rank(), num_partitions);
    }
    if (!gspmd.is(AttrKind::kString)) {
      return InvalidArgumentError("mhlo.sharding must be a string");
    }
    return LayoutOfGspmd(gspmd.string_value(), type.rank(), num_partitions);
  }();
  if (!layout.ok()) return layout.status().WithContext(what);
  if (layout->IsReplicated()) return std::optional<TileLayout>();
  return std::optional<TileLayout>(std::move(layout).value());
}

// The shape of one tile of a value of `type` under `layout`.
StatusOr<std::vector<int64_t>> TileShape(const Type& type,
                                         const TileLayout& layout,
                                         std::string_view what) {
  std::vector<int64_t> dims = type.shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return UnimplementedError(what, ": dimension ", i,
                                " is dynamic; Kiln partitions static shapes");
    }
    if (dims[i] % layout.tiles[i] != 0) {
      return UnimplementedError(what, ": dimension ", i, " of size ", dims[i],
                                " does not split into ", layout.tiles[i],
                                " equal tiles (uneven shardings need padding, "
                                "which Kiln does not do yet)");
    }
    dims[i] /= layout.tiles[i];
  }
  return dims;
}

// `replica_groups` of `count` groups laid out one after another in `ids`
// (flattened device ids), as a rank-2 i64 tensor.
Attribute ReplicaGroups(const std::vector<int64_t>& ids, int64_t count) {
  std::string bytes(ids.size() * sizeof(int64_t), '\0');
  std::memcpy(bytes.data(), ids.data(), bytes.size());
  Type type = Type::Tensor({count, static_cast<int64_t>(ids.size()) / count},
                           Type::Element(ir::ElementType::kI64));
  return Attribute::DenseElements(type, std::move(bytes), /*splat=*/false);
}

// Builds the ops that slice and assemble tiles, appending them to a list.
class TileOps {
 public:
  TileOps(OpList& out, ir::Location loc, const PartitionTarget& target,
          int64_t& next_channel)
      : out_(out),
        loc_(std::move(loc)),
        target_(target),
        next_channel_(next_channel) {}

  // The partition's own tile of `global`.
  StatusOr<Value*> Slice(Value* global, const TileLayout& layout,
                         std::string_view what) {
    ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                     TileShape(global->type(), layout, what));
    const std::vector<int64_t>& coords =
        layout.tile_of_device[target_.partition_id];
    std::vector<int64_t> start(tile.size());
    for (size_t i = 0; i < tile.size(); ++i) start[i] = coords[i] * tile[i];
    return SliceOf(global, start, tile);
  }

  // `local`, the partition's tile of a value of `global_type` in layout
  // `from`, as its tile in layout `to`, without assembling the whole
  // value; null where none of these applies:
  // - `to` cuts every dimension into a multiple of `from`'s tiles, each
  //   device's new tile inside its old one: a slice of `local`;
  // - one set of devices moves from cutting dimension a to cutting
  //   dimension b (`from` cuts a into k tiles and leaves b whole, `to` the
  //   reverse, every device's coordinate along a in `from` is its
  //   coordinate along b in `to`, the others unchanged): one all_to_all
  //   among each k such devices, a k-th of the tile to each;
  // - the same tiles on other devices (mesh axes swapped between
  //   dimensions): one collective_permute;
  // - otherwise the dimensions whose cut `to` cannot slice out of the tile
  //   are gathered among the devices holding their other tiles only, and
  //   the rest is a slice or a permutation.
  // Each is decided from every device's coordinates, so every partition
  // takes the same way (and meets its peers at the same collectives).
  Value* Reshard(Value* local, const Type& global_type, const TileLayout& from,
                 const TileLayout& to) {
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

  // The global value of `global_type` from the partition's tile `local` and
  // those of the devices that hold the other tiles (the devices with the
  // same copy number): an all_gather of every tile along a new leading
  // dimension, then a reshape and transpose that put the tiles in place.
  StatusOr<Value*> Assemble(Value* local, const Type& global_type,
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
    gather->SetAttr(
        "all_gather_dim",
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

  // `local`, the partition's tile of a value cut along `dim` in `layout`,
  // extended along `dim` by the last `left` elements of the tile before it
  // and the first `right` elements of the tile after it (a convolution
  // window's halo): one collective_permute each way among the devices that
  // differ only in their coordinate along `dim` (and hold the same copy).
  // The first tile's left halo and the last tile's right halo are zeros,
  // which is what a collective_permute gives a device no source sends to.
  // Null when a halo is longer than a tile or the devices do not form such
  // chains.
  Value* WithHalo(Value* local, const TileLayout& layout, size_t dim,
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

 private:
  // Reshard's first way: a slice of the tile the device already holds.
  Value* SliceWithin(Value* local, const TileLayout& from,
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
    const std::vector<int64_t>& coords =
        to.tile_of_device[target_.partition_id];
    std::vector<int64_t> start(rank), tile(rank);
    for (size_t i = 0; i < rank; ++i) {
      if (held[i] % ratio[i] != 0) return nullptr;
      tile[i] = held[i] / ratio[i];
      start[i] = coords[i] % ratio[i] * tile[i];
    }
    return SliceOf(local, start, tile);
  }

  // The block of `value` of shape `sizes` from `start`.
  Value* SliceOf(Value* value, const std::vector<int64_t>& start,
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

  static bool SameLayout(const TileLayout& a, const TileLayout& b) {
    return a.tiles == b.tiles && a.tile_of_device == b.tile_of_device;
  }

  // Reshard's third way: the same tiles, held by other devices (the axes
  // of a mesh swapped between dimensions, P('x', 'y') to P('y', 'x')): one
  // collective_permute from a device holding each tile to each device that
  // wants it and does not hold it already; a holder sends once. Null when
  // the tiles differ or the holders do not go round.
  Value* PermuteTiles(Value* local, const TileLayout& from,
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

  // `local`, a tile of `layout`, with dimension `dim` made whole: an
  // all_gather along it among the devices that differ only in their
  // coordinate along it (and hold the same copy), in coordinate order.
  // Updates `layout` (copies renumbered: the devices of a group now hold
  // the same tile). Null when the devices do not form such groups.
  Value* GatherDimension(Value* local, TileLayout& layout, size_t dim) {
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

  // Reshard's second way: one all_to_all.
  Value* MoveCut(Value* local, const TileLayout& from, const TileLayout& to) {
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

  // The devices of `layout` that differ only in their coordinate along
  // `dim` (and hold the same copy), each set ordered by that coordinate
  // and keyed by the rest; null unless every set holds each of the
  // dimension's tiles once.
  static std::optional<std::map<std::vector<int64_t>, std::vector<int64_t>>>
  Chains(const TileLayout& layout, size_t dim) {
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

  // A collective_permute of `value` over partition ids, `pairs` holding
  // (source, target) after one another.
  Value* CollectivePermute(Value* value, const std::vector<int64_t>& pairs) {
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

  std::unique_ptr<Operation> NewOp(std::string name, Type type) {
    return std::make_unique<Operation>(
        std::move(name), std::vector<Type>{std::move(type)}, loc_);
  }
  Value* Append(std::unique_ptr<Operation> op) {
    out_.push_back(std::move(op));
    return out_.back()->result(0);
  }
  Value* Reshape(Value* value, const std::vector<int64_t>& shape) {
    auto op = NewOp("stablehlo.reshape", value->type().WithShape(shape));
    op->AddOperand(value);
    return Append(std::move(op));
  }

  OpList& out_;
  ir::Location loc_;
  const PartitionTarget& target_;
  int64_t& next_channel_;
};

bool IsManualComputation(const Operation& op) {
  return op.name() == "sdy.manual_computation";
}

std::string CustomCallTarget(const Operation& op) {
  if (op.name() != "stablehlo.custom_call") return "";
  Attribute target = op.GetAttr("call_target_name");
  return target.is(AttrKind::kString) ? target.string_value() : "";
}

// The layout of the summed value: the same tiles, no partial sums.
TileLayout WithoutUnreduced(TileLayout layout) {
  layout.unreduced_index.clear();
  layout.unreduced_group.clear();
  return layout;
}

// A dot operand's free dimensions: those of its `rank` that are neither
// batch nor contracting, in order.
std::vector<int64_t> DotFreeDims(int64_t rank,
                                 const std::vector<int64_t>& batch,
                                 const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) ==
            contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

// Ops whose result element i depends on their operands' elements i only:
// a sharding of an operand is one of the result.
std::atomic<bool> inspect_sharding_allowed{false};

// XLA's layouts for `@InspectSharding`'s backend_config (extern "C" in
// xla/python/inspect_sharding.h): the callback gets the serialized sharding
// and may leave an error, which its free_error releases.
extern "C" {
struct InspectShardingArgs {
  char* sharding_spec;
  size_t sharding_spec_size;
  const char* error_txt;  // out
  void* error_scratch;
  void (*free_error)(InspectShardingArgs* args);
};
struct InspectShardingCallback {
  void (*call)(void* data, InspectShardingArgs* args);
  void* data;
};
}

// Calls the `@InspectSharding` callback `op` names (see spmd_partition.h)
// with `layout`, where the process allows it.
Status CallInspectSharding(const Operation& op, const TileLayout& layout) {
  if (!inspect_sharding_allowed.load()) return OkStatus();
  Attribute config = op.GetAttr("backend_config");
  if (!config.is(AttrKind::kString) ||
      config.string_value().size() != sizeof(InspectShardingCallback)) {
    return InvalidArgumentError(
        op.loc().ToString(), ": @InspectSharding's backend_config must be ",
        sizeof(InspectShardingCallback),
        " bytes, the callback JAX's inspect_array_sharding writes");
  }
  InspectShardingCallback callback;
  std::memcpy(&callback, config.string_value().data(), sizeof(callback));
  if (callback.call == nullptr) {
    return InvalidArgumentError(op.loc().ToString(),
                                ": @InspectSharding names no callback");
  }
  std::string sharding = SerializeOpSharding(layout);
  InspectShardingArgs args{};
  args.sharding_spec = sharding.data();
  args.sharding_spec_size = sharding.size();
  callback.call(callback.data, &args);
  if (args.error_txt == nullptr) return OkStatus();
  Status error = InternalError(
      op.loc().ToString(),
      ": inspect_array_sharding's callback failed: ", args.error_txt);
  if (args.free_error != nullptr) args.free_error(&args);
  return error;
}

bool IsElementwise(const Operation& op) {
  static const std::set<std::string_view> kNames = {
      "stablehlo.abs",
      "stablehlo.add",
      "stablehlo.and",
      "stablehlo.atan2",
      "stablehlo.cbrt",
      "stablehlo.ceil",
      "stablehlo.clamp",
      "stablehlo.compare",
      "stablehlo.complex",
      "stablehlo.convert",
      "stablehlo.cosine",
      "stablehlo.count_leading_zeros",
      "stablehlo.divide",
      "stablehlo.exponential",
      "stablehlo.exponential_minus_one",
      "stablehlo.floor",
      "stablehlo.imag",
      "stablehlo.is_finite",
      "stablehlo.log",
      "stablehlo.log_plus_one",
      "stablehlo.logistic",
      "stablehlo.maximum",
      "stablehlo.minimum",
      "stablehlo.multiply",
      "stablehlo.negate",
      "stablehlo.not",
      "stablehlo.or",
      "stablehlo.popcnt",
      "stablehlo.power",
      "stablehlo.real",
      "stablehlo.reduce_precision",
      "stablehlo.remainder",
      "stablehlo.round_nearest_afz",
      "stablehlo.round_nearest_even",
      "stablehlo.rsqrt",
      "stablehlo.select",
      "stablehlo.shift_left",
      "stablehlo.shift_right_arithmetic",
      "stablehlo.shift_right_logical",
      "stablehlo.sign",
      "stablehlo.sine",
      "stablehlo.sqrt",
      "stablehlo.subtract",
      "stablehlo.tan",
      "stablehlo.tanh",
      "stablehlo.xor",
      "builtin.unrealized_conversion_cast",
  };
  if (kNames.count(op.name()) > 0) return true;
  // A layout constraint changes how a value lies in memory, never its
  // elements: it keeps its operand's tiles (and sharding) like an
  // elementwise op, where dropping it would replicate its result.
  return op.name() == "stablehlo.custom_call" && op.num_operands() == 1 &&
         op.num_results() == 1 && CustomCallTarget(op) == "LayoutConstraint" &&
         op.operand(0)->type() == op.result(0)->type();
}

// The sharding a result without one of its own takes, where the program
// implies it: the value returned is a sharding constraint's, a manual
// computation's result, an argument, an elementwise op of such values that
// agree, or (for Shardy's shardings) what ShardingOf follows through the
// ops that move and contract dimensions. XLA's propagation gives the same
// in those cases; elsewhere the result stays replicated (every device has
// all of it). Any choice is correct: a result computed whole is sliced to
// it.
class ResultLayoutInference {
 public:
  ResultLayoutInference(const Operation& entry,
                        const std::map<std::string, Mesh>& meshes,
                        int num_partitions)
      : entry_(entry), meshes_(meshes), num_partitions_(num_partitions) {}

  std::optional<TileLayout> Infer(const Value* value, int depth = 0) {
    auto it = memo_.find(value);
    if (it != memo_.end()) return it->second;
    std::optional<TileLayout> layout =
        depth > kMaxDepth ? std::nullopt : Compute(value, depth);
    // Partial sums are summed where an op takes them; a result the program
    // leaves open goes out summed.
    if (layout && layout->HasUnreduced()) {
      layout = WithoutUnreduced(std::move(*layout));
      if (layout->IsReplicated()) layout.reset();
    }
    memo_[value] = layout;
    return layout;
  }

 private:
  static constexpr int kMaxDepth = 64;

  std::optional<TileLayout> Compute(const Value* value, int depth) {
    if (!value->type().IsTensor()) return std::nullopt;
    const ir::Block& body = ir::func::Body(entry_);
    if (value->IsBlockArgument()) {
      if (value->owner_block() != &body) return std::nullopt;
      return Quiet(LayoutOfAttrs(ir::func::ArgAttrs(entry_, value->index()),
                                 meshes_, value->type(), num_partitions_,
                                 "argument"));
    }
    const Operation* op = value->defining_op();
    if (op == nullptr || op->parent_block() != &body) return std::nullopt;
    if (op->name() == "sdy.sharding_constraint" ||
        op->name() == "sdy.reshard") {
      StatusOr<TensorSharding> sharding =
          ParseTensorSharding(op->GetAttr("sharding").ToString());
      if (!sharding.ok()) return std::nullopt;
      return QuietLayout(LayoutOfShardy(*sharding, meshes_,
                                        value->type().rank(), num_partitions_));
    }
    if (IsManualComputation(*op)) {
      StatusOr<std::vector<TensorSharding>> shardings =
          ParseShardingPerValue(op->GetAttr("out_shardings").ToString());
      if (!shardings.ok() ||
          value->index() >= static_cast<int>(shardings->size())) {
        return std::nullopt;
      }
      return QuietLayout(LayoutOfShardy((*shardings)[value->index()], meshes_,
                                        value->type().rank(), num_partitions_));
    }
    if (CustomCallTarget(*op) == "Sharding") {
      Attribute sharding = op->GetAttr("mhlo.sharding");
      if (!sharding.is(AttrKind::kString)) return std::nullopt;
      return QuietLayout(LayoutOfGspmd(sharding.string_value(),
                                       value->type().rank(), num_partitions_));
    }
    if (!IsElementwise(*op) || op->num_results() != 1) {
      // Ops that move or contract dimensions: what Shardy's propagation
      // gives their result, where the operands' shardings are Shardy's.
      std::optional<TensorSharding> sharding = ShardingOf(value, depth);
      if (!sharding) return std::nullopt;
      return QuietLayout(LayoutOfShardy(*sharding, meshes_,
                                        value->type().rank(), num_partitions_));
    }
    std::optional<TileLayout> agreed;
    for (const Value* operand : op->operands()) {
      if (operand->type().shape() != value->type().shape()) continue;
      std::optional<TileLayout> layout = Infer(operand, depth + 1);
      if (!layout) continue;
      if (agreed && (agreed->tiles != layout->tiles ||
                     agreed->tile_of_device != layout->tile_of_device)) {
        return std::nullopt;
      }
      agreed = std::move(layout);
    }
    return agreed;
  }

  // The Shardy sharding of `value` that the shardings written in the
  // program imply, following them forward through elementwise ops,
  // transpose, broadcast_in_dim, reduce, concatenate and dot_general, the
  // way Shardy's propagation does in the absence of conflicts: a dot's
  // batch and lhs free dimensions keep the lhs's axes, its rhs free
  // dimensions the rhs's, unless an earlier dimension took the axis
  // already; contracted and reduced axes are gone. Nullopt where nothing
  // is implied or the operands disagree.
  std::optional<TensorSharding> ShardingOf(const Value* value, int depth) {
    if (depth > kMaxDepth || !value->type().IsTensor()) return std::nullopt;
    auto it = sharding_memo_.find(value);
    if (it != sharding_memo_.end()) return it->second;
    std::optional<TensorSharding> sharding = ComputeSharding(value, depth);
    if (sharding) {
      sharding->unreduced.clear();
      if (static_cast<int64_t>(sharding->dims.size()) != value->type().rank()) {
        sharding.reset();
      }
    }
    sharding_memo_[value] = sharding;
    return sharding;
  }

  static std::optional<TensorSharding> Parsed(const Attribute& attr) {
    if (!attr) return std::nullopt;
    StatusOr<TensorSharding> sharding = ParseTensorSharding(attr.ToString());
    if (!sharding.ok()) return std::nullopt;
    return *std::move(sharding);
  }

  static bool SameAxes(const std::vector<AxisRef>& a,
                       const std::vector<AxisRef>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].name != b[i].name || a[i].pre_size != b[i].pre_size ||
          a[i].size != b[i].size) {
        return false;
      }
    }
    return true;
  }

  static bool SameMesh(const TensorSharding& a, const TensorSharding& b) {
    return a.mesh_name == b.mesh_name && !a.inline_mesh && !b.inline_mesh;
  }

  // A sharding over `from`'s mesh whose dimension i takes the axes of
  // `from`'s dimension source[i] (-1: none).
  static TensorSharding Moved(const TensorSharding& from,
                              const std::vector<int64_t>& source) {
    TensorSharding result;
    result.mesh_name = from.mesh_name;
    result.inline_mesh = from.inline_mesh;
    for (int64_t s : source) {
      result.dims.push_back(s >= 0 && s < static_cast<int64_t>(from.dims.size())
                                ? from.dims[s]
                                : std::vector<AxisRef>{});
    }
    return result;
  }

  // How many devices `axes` of `sharding`'s mesh cut a dimension into; -1
  // when an axis is not in the mesh.
  int64_t CutCount(const TensorSharding& sharding,
                   const std::vector<AxisRef>& axes) const {
    const Mesh* mesh = nullptr;
    if (sharding.inline_mesh) {
      mesh = &*sharding.inline_mesh;
    } else {
      auto it = meshes_.find(sharding.mesh_name);
      if (it != meshes_.end()) mesh = &it->second;
    }
    if (mesh == nullptr) return -1;
    int64_t count = 1;
    for (const AxisRef& axis : axes) {
      const int index = mesh->AxisIndex(axis.name);
      if (index < 0) return -1;
      count *= axis.size < 0 ? mesh->axis_sizes[index] : axis.size;
    }
    return count;
  }

  // A reshape's sharding: the dimensions are matched in groups of equal
  // element counts. A dimension split into several gives its axes to the
  // first (major) one, where they cut it evenly; dimensions merged into one
  // give it their axes major to minor, as long as each one before the last
  // sharded one is cut into single elements. Nullopt where the axes do not
  // carry over.
  std::optional<TensorSharding> Reshaped(const TensorSharding& from,
                                         const std::vector<int64_t>& in,
                                         const std::vector<int64_t>& out) {
    if (from.dims.size() != in.size()) return std::nullopt;
    TensorSharding result;
    result.mesh_name = from.mesh_name;
    result.inline_mesh = from.inline_mesh;
    result.dims.assign(out.size(), {});
    size_t i = 0, o = 0;
    while (i < in.size() || o < out.size()) {
      // One group: the fewest dimensions on both sides with equal counts.
      size_t i_end = i, o_end = o;
      int64_t in_count = 1, out_count = 1;
      if (i_end < in.size()) in_count *= in[i_end++];
      if (o_end < out.size()) out_count *= out[o_end++];
      while (in_count != out_count) {
        if (in_count < out_count && i_end < in.size()) {
          in_count *= in[i_end++];
        } else if (out_count < in_count && o_end < out.size()) {
          out_count *= out[o_end++];
        } else {
          return std::nullopt;
        }
      }
      // Size-1 dimensions that follow join the group on either side.
      std::vector<AxisRef> axes;
      bool whole_so_far = true;
      for (size_t d = i; d < i_end; ++d) {
        if (from.dims[d].empty()) continue;
        if (!whole_so_far) return std::nullopt;
        const int64_t cuts = CutCount(from, from.dims[d]);
        if (cuts < 0) return std::nullopt;
        axes.insert(axes.end(), from.dims[d].begin(), from.dims[d].end());
        whole_so_far = cuts == in[d];
      }
      if (!axes.empty()) {
        // The axes go to the group's first output dimension of size > 1.
        size_t target = o;
        while (target < o_end && out[target] == 1) ++target;
        const int64_t cuts = CutCount(from, axes);
        if (target == o_end || cuts <= 0 || out[target] % cuts != 0) {
          return std::nullopt;
        }
        // Merged dimensions: the minor ones' axes are only whole-element
        // cuts of the major ones when the group lands in one dimension.
        if (i_end - i > 1 && o_end - o > 1) return std::nullopt;
        result.dims[target] = std::move(axes);
      }
      i = i_end;
      o = o_end;
      if (i == in.size() && o == out.size()) break;
    }
    return result;
  }

  // The function of the module a func.call calls (with a body), or null.
  const Operation* Callee(const Operation& call) const {
    Attribute callee = call.GetAttr("callee");
    if (!callee.is(AttrKind::kSymbolRef) || entry_.parent_block() == nullptr) {
      return nullptr;
    }
    for (const std::unique_ptr<Operation>& op :
         entry_.parent_block()->operations()) {
      if (op->name() == "func.func" &&
          ir::func::Name(*op) == callee.symbol_root() &&
          ir::func::HasBody(*op)) {
        return op.get();
      }
    }
    return nullptr;
  }

  std::optional<TensorSharding> ComputeSharding(const Value* value, int depth) {
    const ir::Block& body = ir::func::Body(entry_);
    if (value->IsBlockArgument()) {
      if (value->owner_block() != &body) return std::nullopt;
      Attribute attrs = ir::func::ArgAttrs(entry_, value->index());
      if (!attrs.is(AttrKind::kDictionary)) return std::nullopt;
      return Parsed(attrs.Get("sdy.sharding"));
    }
    const Operation* op = value->defining_op();
    if (op == nullptr || op->parent_block() != &body) return std::nullopt;
    const std::string_view name = op->name();
    if (name == "sdy.sharding_constraint" || name == "sdy.reshard") {
      return Parsed(op->GetAttr("sharding"));
    }
    if (IsManualComputation(*op)) {
      StatusOr<std::vector<TensorSharding>> shardings =
          ParseShardingPerValue(op->GetAttr("out_shardings").ToString());
      if (!shardings.ok() ||
          value->index() >= static_cast<int>(shardings->size())) {
        return std::nullopt;
      }
      return (*shardings)[value->index()];
    }
    const std::vector<int64_t>& shape = value->type().shape();
    auto operand_sharding = [&](int i) -> std::optional<TensorSharding> {
      if (i >= op->num_operands()) return std::nullopt;
      return ShardingOf(op->operand(i), depth + 1);
    };
    if ((IsElementwise(*op) && op->num_results() == 1) ||
        name == "stablehlo.concatenate") {
      // Operands of the result's shape (a concatenation's of its rank) must
      // agree, along the concatenated dimension too; operands with no
      // sharding take any.
      int64_t along = -1;
      if (name == "stablehlo.concatenate") {
        Attribute dimension = op->GetAttr("dimension");
        if (!dimension.is(AttrKind::kInteger)) return std::nullopt;
        along = dimension.int_value();
      }
      std::optional<TensorSharding> agreed;
      for (int i = 0; i < op->num_operands(); ++i) {
        const Type& type = op->operand(i)->type();
        if (!type.IsTensor() || type.rank() != value->type().rank()) continue;
        if (along < 0 && type.shape() != shape) continue;
        std::optional<TensorSharding> sharding = operand_sharding(i);
        if (!sharding) continue;
        if (agreed) {
          if (!SameMesh(*agreed, *sharding)) return std::nullopt;
          for (size_t d = 0; d < agreed->dims.size(); ++d) {
            if (!SameAxes(agreed->dims[d], sharding->dims[d])) {
              return std::nullopt;
            }
          }
        }
        agreed = std::move(sharding);
      }
      return agreed;
    }
    if (name == "func.call") {
      // What the callee returns: its result's own sharding, else that of
      // the sharding constraint it returns, or of the argument it returns
      // (its declared sharding, else the call's operand's), as Shardy sees
      // through the call once inlined.
      const Operation* callee = Callee(*op);
      if (callee == nullptr) return std::nullopt;
      const ir::Block& callee_body = ir::func::Body(*callee);
      const int i = value->index();
      Attribute result_attrs = ir::func::ResultAttrs(*callee, i);
      if (result_attrs.is(AttrKind::kDictionary)) {
        if (auto own = Parsed(result_attrs.Get("sdy.sharding"))) return own;
      }
      const Operation* ret = callee_body.terminator();
      if (ret == nullptr || i >= ret->num_operands()) return std::nullopt;
      const Value* returned = ret->operand(i);
      // Exported functions wrap their values in identity casts.
      const Operation* maker = returned->defining_op();
      while (maker != nullptr &&
             maker->name() == "builtin.unrealized_conversion_cast" &&
             maker->num_operands() == 1 &&
             maker->operand(0)->type() == returned->type()) {
        returned = maker->operand(0);
        maker = returned->defining_op();
      }
      if (maker != nullptr && (maker->name() == "sdy.sharding_constraint" ||
                               maker->name() == "sdy.reshard")) {
        return Parsed(maker->GetAttr("sharding"));
      }
      if (!returned->IsBlockArgument() ||
          returned->owner_block() != &callee_body ||
          returned->index() >= op->num_operands()) {
        return std::nullopt;
      }
      Attribute arg_attrs = ir::func::ArgAttrs(*callee, returned->index());
      if (arg_attrs.is(AttrKind::kDictionary)) {
        if (auto declared = Parsed(arg_attrs.Get("sdy.sharding"))) {
          return declared;
        }
      }
      return operand_sharding(returned->index());
    }
    if (name == "stablehlo.transpose") {
      Attribute permutation = op->GetAttr("permutation");
      std::optional<TensorSharding> operand = operand_sharding(0);
      if (!operand || !permutation.is(AttrKind::kDenseArray)) {
        return std::nullopt;
      }
      return Moved(*operand, permutation.dense_ints());
    }
    if (name == "stablehlo.broadcast_in_dim") {
      Attribute dims = op->GetAttr("broadcast_dimensions");
      std::optional<TensorSharding> operand = operand_sharding(0);
      if (!operand || !dims.is(AttrKind::kDenseArray)) return std::nullopt;
      const std::vector<int64_t>& in_shape = op->operand(0)->type().shape();
      std::vector<int64_t> source(shape.size(), -1);
      for (size_t i = 0; i < dims.dense_ints().size(); ++i) {
        const int64_t j = dims.dense_ints()[i];
        if (j < 0 || j >= static_cast<int64_t>(shape.size()) ||
            i >= in_shape.size()) {
          return std::nullopt;
        }
        // A dimension broadcast from size 1 is new: it has no axes.
        if (in_shape[i] == shape[j]) source[j] = static_cast<int64_t>(i);
      }
      return Moved(*operand, source);
    }
    if (name == "stablehlo.reshape") {
      std::optional<TensorSharding> operand = operand_sharding(0);
      if (!operand) return std::nullopt;
      return Reshaped(*operand, op->operand(0)->type().shape(), shape);
    }
    if (name == "stablehlo.reduce") {
      Attribute dims = op->GetAttr("dimensions");
      const int inputs = op->num_operands() / 2;
      if (!dims.is(AttrKind::kDenseArray) || value->index() >= inputs) {
        return std::nullopt;
      }
      std::optional<TensorSharding> operand = operand_sharding(value->index());
      if (!operand) return std::nullopt;
      std::set<int64_t> reduced(dims.dense_ints().begin(),
                                dims.dense_ints().end());
      std::vector<int64_t> source;
      for (int64_t d = 0; d < static_cast<int64_t>(operand->dims.size()); ++d) {
        if (!reduced.count(d)) source.push_back(d);
      }
      return Moved(*operand, source);
    }
    if (name == "stablehlo.dot_general" && op->num_operands() == 2) {
      Attribute numbers = op->GetAttr("dot_dimension_numbers");
      if (!numbers.is(AttrKind::kDotDimensionNumbers)) return std::nullopt;
      const ir::DotDimensionNumbers& dot = numbers.dot();
      std::optional<TensorSharding> lhs = operand_sharding(0);
      std::optional<TensorSharding> rhs = operand_sharding(1);
      if (lhs && rhs && !SameMesh(*lhs, *rhs)) rhs.reset();
      if (!lhs && !rhs) return std::nullopt;
      const std::vector<int64_t> lhs_free = DotFreeDims(
          op->operand(0)->type().rank(), dot.lhs_batching_dimensions,
          dot.lhs_contracting_dimensions);
      const std::vector<int64_t> rhs_free = DotFreeDims(
          op->operand(1)->type().rank(), dot.rhs_batching_dimensions,
          dot.rhs_contracting_dimensions);
      const TensorSharding& any = lhs ? *lhs : *rhs;
      TensorSharding result;
      result.mesh_name = any.mesh_name;
      result.inline_mesh = any.inline_mesh;
      std::set<std::string> taken;
      auto add = [&](const std::optional<TensorSharding>& from, int64_t dim,
                     const std::optional<TensorSharding>& other,
                     int64_t other_dim) {
        std::vector<AxisRef> axes;
        if (from && dim < static_cast<int64_t>(from->dims.size())) {
          axes = from->dims[dim];
        }
        if (axes.empty() && other && other_dim >= 0 &&
            other_dim < static_cast<int64_t>(other->dims.size())) {
          axes = other->dims[other_dim];
        }
        std::vector<AxisRef> kept;
        for (AxisRef& axis : axes) {
          if (taken.count(axis.name)) break;  // the rest stay minor: drop
          kept.push_back(axis);
        }
        for (const AxisRef& axis : kept) taken.insert(axis.name);
        result.dims.push_back(std::move(kept));
      };
      for (size_t k = 0; k < dot.lhs_batching_dimensions.size(); ++k) {
        add(lhs, dot.lhs_batching_dimensions[k], rhs,
            k < dot.rhs_batching_dimensions.size()
                ? dot.rhs_batching_dimensions[k]
                : -1);
      }
      for (int64_t d : lhs_free) add(lhs, d, std::nullopt, -1);
      for (int64_t d : rhs_free) add(rhs, d, std::nullopt, -1);
      return result;
    }
    return std::nullopt;
  }

  static std::optional<TileLayout> Quiet(
      StatusOr<std::optional<TileLayout>> layout) {
    return layout.ok() ? *layout : std::nullopt;
  }
  static std::optional<TileLayout> QuietLayout(StatusOr<TileLayout> layout) {
    if (!layout.ok() || layout->IsReplicated()) return std::nullopt;
    return *layout;
  }

  const Operation& entry_;
  const std::map<std::string, Mesh>& meshes_;
  int num_partitions_;
  std::map<const Value*, std::optional<TileLayout>> memo_;
  std::map<const Value*, std::optional<TensorSharding>> sharding_memo_;
};

// The layout of each result of `func`: its own sharding, else what
// ResultLayoutInference finds.
StatusOr<std::vector<std::optional<TileLayout>>> ResultLayouts(
    const Operation& func, const std::map<std::string, Mesh>& meshes,
    int num_partitions) {
  std::vector<std::optional<TileLayout>> layouts;
  const ir::Block& body = ir::func::Body(func);
  const Operation* terminator = body.terminator();
  if (terminator == nullptr) return layouts;
  ResultLayoutInference inference(func, meshes, num_partitions);
  for (int i = 0; i < terminator->num_operands(); ++i) {
    const Value* result = terminator->operand(i);
    Attribute attrs = ir::func::ResultAttrs(func, i);
    const bool annotated =
        attrs.is(AttrKind::kDictionary) &&
        (attrs.Get("sdy.sharding") || attrs.Get("mhlo.sharding"));
    if (annotated) {
      ASSIGN_OR_RETURN(
          std::optional<TileLayout> layout,
          LayoutOfAttrs(attrs, meshes, result->type(), num_partitions,
                        StrCat("result ", i, " of @", ir::func::Name(func))));
      layouts.push_back(std::move(layout));
    } else {
      layouts.push_back(inference.Infer(result));
    }
  }
  return layouts;
}

// Two layouts put the same elements on every device.
bool SameTiles(const TileLayout& a, const TileLayout& b) {
  return a.tiles == b.tiles && a.tile_of_device == b.tile_of_device &&
         a.unreduced_index == b.unreduced_index;
}

class Partitioner {
 public:
  Partitioner(ir::Module& module, const PartitionTarget& target,
              std::map<std::string, Mesh> meshes)
      : module_(module), target_(target), meshes_(std::move(meshes)) {}

  // The layouts the entry's results go out with (after Run).
  const std::vector<std::optional<TileLayout>>& result_layouts() const {
    return chosen_result_layouts_;
  }

  Status Run() {
    Operation* entry = module_.EntryFunction();
    for (Operation* func : module_.Functions()) {
      if (func == entry) {
        RETURN_IF_ERROR(PartitionEntry(*func));
      } else if (ir::func::HasBody(*func)) {
        RETURN_IF_ERROR(RewriteBlock(ir::func::Body(*func)));
      }
    }
    return OkStatus();
  }

 private:
  // A value the partition holds as its tile (`local`) of a global value of
  // `global_type`; the global value is assembled the first time an op needs
  // it, and kept.
  struct Tiled {
    Value* local = nullptr;
    TileLayout layout;
    Type global_type;
    Value* global = nullptr;
  };

  // The entry: tiles come in and stay tiles through the ops that can work
  // on them; the partition's tiles of the results go out.
  Status PartitionEntry(Operation& func) {
    ir::Block& body = ir::func::Body(func);
    // Result layouts are read before the body is rewritten (inference
    // looks at the ops that make the results).
    ASSIGN_OR_RETURN(std::vector<std::optional<TileLayout>> result_layouts,
                     ResultLayouts(func, meshes_, target_.num_partitions));
    OpList out;
    std::vector<Type> inputs;
    for (int i = 0; i < body.num_arguments(); ++i) {
      Value* argument = body.argument(i);
      std::string what = StrCat("argument ", i, " of @", ir::func::Name(func));
      ASSIGN_OR_RETURN(
          std::optional<TileLayout> layout,
          LayoutOfAttrs(ir::func::ArgAttrs(func, i), meshes_, argument->type(),
                        target_.num_partitions, what));
      if (layout) {
        Type global = argument->type();
        ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                         TileShape(global, *layout, what));
        argument->set_type(global.WithShape(tile));
        Value* local = argument;
        if (layout->HasUnreduced()) {
          local = SumUnreduced(argument, *layout, out, argument->loc());
        }
        Value* handle = LocalHandle(local, out, argument->loc());
        tiled_[argument] =
            Tiled{handle, WithoutUnreduced(*layout), global, nullptr};
        if (layout->HasUnreduced()) {
          // The device's own partial value, where it goes on unreduced.
          partial_sums_[argument] = PartialSum{argument,
                                               GroupKeys(*layout),
                                               {local, handle},
                                               WithoutUnreduced(*layout)};
        }
      }
      inputs.push_back(argument->type());
    }
    current_block_is_entry_ = true;
    Status rewritten = RewriteOps(body.TakeOperations(), out);
    current_block_is_entry_ = false;
    RETURN_IF_ERROR(rewritten);

    Operation* terminator = out.empty() ? nullptr : out.back().get();
    if (terminator == nullptr || terminator->name() != "func.return") {
      return InvalidArgumentError("@", ir::func::Name(func),
                                  " does not end in func.return");
    }
    std::unique_ptr<Operation> ret = std::move(out.back());
    out.pop_back();
    std::vector<Type> results;
    for (int i = 0; i < ret->num_operands(); ++i) {
      Value* result = ret->operand(i);
      std::string what = StrCat("result ", i, " of @", ir::func::Name(func));
      const std::optional<TileLayout>& layout =
          i < static_cast<int>(result_layouts.size()) ? result_layouts[i]
                                                      : std::nullopt;
      Attribute attrs = ir::func::ResultAttrs(func, i);
      const bool annotated =
          attrs.is(AttrKind::kDictionary) &&
          (attrs.Get("sdy.sharding") || attrs.Get("mhlo.sharding"));
      auto tiled = tiled_.find(result);
      Value* value = nullptr;
      std::optional<TileLayout> chosen = layout;
      if (!annotated && tiled != tiled_.end() &&
          !tiled->second.layout.IsReplicated()) {
        // A result the program leaves open goes out as the tile it is.
        chosen = tiled->second.layout;
        value = tiled->second.local;
      } else if (layout) {
        value = layout->HasUnreduced()
                    ? KnownPartials(result, *layout, out, ret->loc())
                    : nullptr;
        if (value == nullptr) {
          ASSIGN_OR_RETURN(value, TileOf(result, WithoutUnreduced(*layout), out,
                                         ret->loc(), what));
          if (layout->HasUnreduced()) {
            value = SplitUnreduced(value, *layout, out, ret->loc());
          }
        }
      } else {
        ASSIGN_OR_RETURN(value, Global(result, out, ret->loc()));
      }
      ret->SetOperand(i, value);
      results.push_back(value->type());
      chosen_result_layouts_.push_back(std::move(chosen));
    }
    out.push_back(std::move(ret));
    DropUnusedSums(out);
    body.SetOperations(std::move(out));
    func.SetAttr("function_type",
                 Attribute::TypeAttr(Type::Function(inputs, results)));
    return OkStatus();
  }

  // The sdy.sharding_constraint or sdy.reshard `op` as a reshard of its
  // operand into the sharding it names: the result is the operand's tile
  // in that cut (TileOf: no data moves where the cut is already that one),
  // or the whole value for a replicated sharding. False (nothing changed)
  // for shardings with unreduced axes or that do not apply to the value.
  StatusOr<bool> Reshard(Operation& op, OpList& out) {
    Value* operand = op.operand(0);
    const Type& type = GlobalType(operand);
    if (!type.IsTensor() || !type.HasStaticShape()) return false;
    StatusOr<TensorSharding> sharding =
        ParseTensorSharding(op.GetAttr("sharding").ToString());
    if (!sharding.ok()) return false;
    StatusOr<TileLayout> layout =
        LayoutOfShardy(*sharding, meshes_, type.rank(), target_.num_partitions);
    if (!layout.ok() || layout->HasUnreduced()) return false;
    std::string what = op.Describe();
    if (layout->IsReplicated()) {
      ASSIGN_OR_RETURN(Value * whole, Global(operand, out, op.loc()));
      substitutions_[op.result(0)] = whole;
      return true;
    }
    if (!TileShape(type, *layout, what).ok()) return false;
    ASSIGN_OR_RETURN(Value * local,
                     TileOf(operand, *layout, out, op.loc(), what));
    tiled_[op.result(0)] =
        Tiled{LocalHandle(local, out, op.loc()), *layout, type, nullptr};
    return true;
  }

  // A host callback lowered with `partitioned = true` (what
  // `jax.debug.print(..., partitioned=True)` asks: the callback sees each
  // device's shard) runs on every partition with the partition's tiles of
  // its operands. It has no results but tokens. Returns false (and changes
  // nothing) for any other op.
  StatusOr<bool> RunPartitionedCallback(Operation& op, OpList& out) {
    if (CustomCallTarget(op) != "kiln_python_callback") return false;
    Attribute config = op.GetAttr("mhlo.backend_config");
    Attribute partitioned = config.is(AttrKind::kDictionary)
                                ? config.Get("partitioned")
                                : Attribute();
    if (!partitioned.is(AttrKind::kBool) || !partitioned.bool_value()) {
      return false;
    }
    for (const Value* result : op.results()) {
      if (!result->type().IsToken()) {
        return InvalidArgumentError(op.Describe(),
                                    ": a partitioned host callback returns "
                                    "only tokens");
      }
    }
    for (int i = 0; i < op.num_operands(); ++i) {
      Value* operand = op.operand(i);
      auto it = tiled_.find(operand);
      if (it == tiled_.end()) continue;  // whole on every device
      const TileLayout layout = it->second.layout;
      ASSIGN_OR_RETURN(Value * local,
                       TileOf(operand, layout, out, op.loc(), op.Describe()));
      op.SetOperand(i, local);
    }
    op.RemoveAttr("sdy.sharding");
    op.RemoveAttr("mhlo.sharding");
    return true;
  }

  // Tells an `@InspectSharding` callback its operand's `layout`, where
  // this partitioning reports them.
  Status ReportInspectedSharding(const Operation& op,
                                 const TileLayout& layout) {
    if (!target_.report_inspections) return OkStatus();
    return CallInspectSharding(op, layout);
  }

  Status RewriteBlock(ir::Block& block) {
    OpList out;
    RETURN_IF_ERROR(RewriteOps(block.TakeOperations(), out));
    block.SetOperations(std::move(out));
    return OkStatus();
  }

  // The global value of `value`: itself, or its tiles assembled (once).
  StatusOr<Value*> Global(Value* value, OpList& out, const ir::Location& loc) {
    auto it = tiled_.find(value);
    if (it == tiled_.end()) return value;
    Tiled& tiled = it->second;
    // A layout of one tile: every device has the whole value.
    if (tiled.layout.IsReplicated()) return tiled.local;
    if (tiled.global == nullptr) {
      TileOps ops(out, loc, target_, next_channel_);
      ASSIGN_OR_RETURN(
          tiled.global,
          ops.Assemble(tiled.local, tiled.global_type, tiled.layout));
    }
    return tiled.global;
  }

  // The partition's tile of `value` under `layout`: the tile it holds when
  // the layouts agree, else sliced from the global value.
  StatusOr<Value*> TileOf(Value* value, const TileLayout& layout, OpList& out,
                          const ir::Location& loc, std::string_view what) {
    auto it = tiled_.find(value);
    if (it != tiled_.end() && SameTiles(it->second.layout, layout)) {
      return it->second.local;
    }
    if (!layout.IsReplicated() && !layout.HasUnreduced() &&
        !tiled_.count(value)) {
      std::string key;
      for (int64_t t : layout.tiles) key += StrCat(t, ",");
      for (const auto& tile : layout.tile_of_device) {
        for (int64_t c : tile) key += StrCat(c, ",");
      }
      ASSIGN_OR_RETURN(Value * made, Rematerialize(value, layout, key, out));
      if (made != nullptr) return made;
    }
    if (it != tiled_.end() && !it->second.layout.IsReplicated() &&
        !it->second.layout.HasUnreduced() && !layout.IsReplicated() &&
        !layout.HasUnreduced()) {
      // From one cut to another without the whole value, where it can.
      TileOps ops(out, loc, target_, next_channel_);
      if (Value* moved = ops.Reshard(it->second.local, it->second.global_type,
                                     it->second.layout, layout)) {
        return moved;
      }
    }
    ASSIGN_OR_RETURN(Value * global, Global(value, out, loc));
    if (layout.IsReplicated()) return global;
    TileOps ops(out, loc, target_, next_channel_);
    return ops.Slice(global, layout, what);
  }

  // Gives every operand of `op`, and every value its regions use from
  // outside, as a global value.
  Status UseGlobals(Operation& op, OpList& out) {
    for (int i = 0; i < op.num_operands(); ++i) {
      ASSIGN_OR_RETURN(Value * global, Global(op.operand(i), out, op.loc()));
      op.SetOperand(i, global);
    }
    if (op.num_regions() == 0) return OkStatus();
    // Values of this block that the regions read: their global values are
    // made here, where every region can see them.
    std::vector<Value*> outer;
    for (const auto& region : op.regions()) {
      for (const auto& block : region->blocks()) {
        for (const auto& inner : block->operations()) {
          inner->Walk([&](Operation& nested) {
            for (Value* operand : nested.operands()) {
              if (tiled_.count(operand)) outer.push_back(operand);
            }
          });
        }
      }
    }
    for (Value* value : outer) {
      ASSIGN_OR_RETURN(Value * global, Global(value, out, op.loc()));
      substitutions_[value] = global;
    }
    return OkStatus();
  }

  // An elementwise op whose operands include tiles of one layout runs on
  // tiles of that layout: its other full-shape operands are sliced, scalars
  // stay. Returns false (and changes nothing) when that does not apply.
  StatusOr<bool> RunOnTiles(Operation& op, OpList& out) {
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

  // Shape ops that keep a tiled operand tiled: a transpose (the tiles move
  // with the dimensions), a broadcast_in_dim (kept dimensions keep their
  // tiles, new ones are whole), a slice that keeps every cut dimension
  // whole, and a reshape that only adds or drops dimensions of size 1. The
  // op is rewritten in place over the operand's tile; false (nothing
  // changed) when it is none of these.
  StatusOr<bool> RunShapeOpOnTiles(Operation& op, OpList& out) {
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
          partial[i] = it->second.layout.tiles[i] > 1 &&
                       (start.dense_ints()[i] != 0 ||
                        limit.dense_ints()[i] != shape[i] ||
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
      if (!start.is(AttrKind::kDenseArray) ||
          !limit.is(AttrKind::kDenseArray) ||
          !strides.is(AttrKind::kDenseArray)) {
        return false;
      }
      for (size_t i = 0; i < in_rank; ++i) {
        if (source.layout.tiles[i] > 1 &&
            (start.dense_ints()[i] != 0 ||
             limit.dense_ints()[i] != in_shape[i] ||
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

  // A layout's copy numbers made afresh from `key` per device (devices with
  // the same tile and different keys are different copies); false when the
  // tiles do not each have the same number of holders, all of them present.
  static bool RenumberCopies(TileLayout& layout,
                             const std::vector<std::vector<int64_t>>& key) {
    const size_t devices = layout.tile_of_device.size();
    std::map<std::vector<int64_t>, int64_t> holders;
    std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>, int64_t>
        seen;
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

  // An all_reduce of `local` with the binary `combiner` over the groups of
  // devices that `group_key` gives the same key, ordered by device.
  Value* AllReduce(Value* local, const std::string& combiner,
                   const std::vector<std::vector<int64_t>>& group_key,
                   OpList& out, const ir::Location& loc) {
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
        ReplicaGroups(flattened,
                      static_cast<int64_t>(flattened.size()) / size));
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
    auto ret = std::make_unique<Operation>("stablehlo.return",
                                           std::vector<Type>{}, loc);
    ret->AddOperand(combined);
    block.Append(std::move(ret));
    out.push_back(std::move(reduce));
    return out.back()->result(0);
  }

  // The combiner of a reduce whose body is one binary op of its two
  // arguments, when partial results over tiles may be combined again: max,
  // min, and, or (idempotent: the init taken once per tile changes
  // nothing), and add from a zero init. Empty otherwise.
  static std::string TileCombiner(const Operation& reduce) {
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

  // The op of a body that combines its two arguments with one add,
  // maximum, minimum, and or or (a reduction's or a scatter's), else "".
  static std::string RegionCombiner(const Operation& op) {
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

  // A reduce of a tile: reduced dimensions that are whole reduce locally;
  // a reduced dimension that is cut leaves partial results, combined by an
  // all_reduce among the devices holding its other tiles.
  StatusOr<bool> RunReduceOnTiles(Operation& op, OpList& out) {
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

  // How the dimensions of a contraction's result (dot_general,
  // convolution) come from its operands'.
  struct ContractionDims {
    // Dimensions paired between the operands, cut alike on both: batch
    // (kept in the result) and contracting (summed over).
    std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
    // Per result dimension: the operand (0 or 1) and its dimension that
    // gives its cut, or operand -1 for a dimension never cut.
    std::vector<std::pair<int, int64_t>> result_from;
    // Operand dimensions that must not be cut (convolution windows).
    std::vector<int64_t> lhs_whole, rhs_whole;
    // Cut operand-0 dimensions whose tiles first take `left` elements of
    // the tile before and `right` of the tile after (TileOps::WithHalo).
    struct Halo {
      int64_t dim, left, right;
    };
    std::vector<Halo> lhs_halos;
  };

  // A dot_general of tiles: batch and contracting dimensions must be cut
  // alike on both sides (a whole operand is sliced to match), free
  // dimensions keep their cuts; cut contracting dimensions leave partial
  // sums, added by an all_reduce among the devices holding the other
  // contracting tiles. False when the operands' cuts do not fit.
  StatusOr<bool> RunDotOnTiles(Operation& op, OpList& out) {
    if (op.name() != "stablehlo.dot_general" || op.num_operands() != 2) {
      return false;
    }
    Attribute numbers = op.GetAttr("dot_dimension_numbers");
    if (!numbers.is(AttrKind::kDotDimensionNumbers)) return false;
    const ir::DotDimensionNumbers& dot = numbers.dot();
    const Type& lhs_type = GlobalType(op.operand(0));
    const Type& rhs_type = GlobalType(op.operand(1));
    ContractionDims dims;
    dims.lhs_batch = dot.lhs_batching_dimensions;
    dims.rhs_batch = dot.rhs_batching_dimensions;
    dims.lhs_contracting = dot.lhs_contracting_dimensions;
    dims.rhs_contracting = dot.rhs_contracting_dimensions;
    // The result: batch dims, lhs free dims, rhs free dims.
    for (int64_t i : dot.lhs_batching_dimensions) {
      dims.result_from.push_back({0, i});
    }
    for (int64_t i : DotFreeDims(lhs_type.rank(), dot.lhs_batching_dimensions,
                                 dot.lhs_contracting_dimensions)) {
      dims.result_from.push_back({0, i});
    }
    for (int64_t i : DotFreeDims(rhs_type.rank(), dot.rhs_batching_dimensions,
                                 dot.rhs_contracting_dimensions)) {
      dims.result_from.push_back({1, i});
    }
    return RunContractionOnTiles(op, out, dims);
  }

  // A convolution of tiles: the lhs batch and the kernel's output features
  // keep their cuts in the result (data and tensor parallelism), the input
  // features and the kernel's input features are contracting dimensions
  // (JAX's weight gradient contracts the batch this way). A cut spatial
  // dimension of the input (spatial parallelism) keeps its cut in the
  // result where every output tile reads its own input tile and a halo
  // from its neighbours (ConvolutionHalos); the kernel's windows stay
  // whole. Grouped features are not cut; batch groups are left to the
  // whole value.
  StatusOr<bool> RunConvolutionOnTiles(Operation& op, OpList& out) {
    if (op.name() != "stablehlo.convolution" || op.num_operands() != 2) {
      return false;
    }
    Attribute numbers = op.GetAttr("dimension_numbers");
    if (!numbers.is(AttrKind::kConvDimensionNumbers)) return false;
    const ir::ConvDimensionNumbers& conv = numbers.conv();
    auto count = [&](std::string_view name) -> int64_t {
      Attribute attr = op.GetAttr(name);
      return attr.is(AttrKind::kInteger) ? attr.int_value() : 1;
    };
    if (count("batch_group_count") != 1) return false;
    const bool grouped = count("feature_group_count") != 1;
    const size_t spatial = conv.input_spatial_dimensions.size();
    if (conv.kernel_spatial_dimensions.size() != spatial ||
        conv.output_spatial_dimensions.size() != spatial ||
        op.result(0)->type().rank() != static_cast<int64_t>(spatial) + 2) {
      return false;
    }
    ContractionDims dims;
    dims.lhs_whole = conv.input_spatial_dimensions;
    dims.rhs_whole = conv.kernel_spatial_dimensions;
    if (grouped) {
      dims.lhs_whole.push_back(conv.input_feature_dimension);
      dims.rhs_whole.push_back(conv.kernel_input_feature_dimension);
      dims.rhs_whole.push_back(conv.kernel_output_feature_dimension);
    } else {
      dims.lhs_contracting = {conv.input_feature_dimension};
      dims.rhs_contracting = {conv.kernel_input_feature_dimension};
    }
    dims.result_from.assign(spatial + 2, {-1, 0});
    dims.result_from[conv.output_batch_dimension] = {
        0, conv.input_batch_dimension};
    dims.result_from[conv.output_feature_dimension] = {
        1, conv.kernel_output_feature_dimension};
    std::vector<int64_t> padding;
    if (!ConvolutionHalos(op, conv, dims, padding)) return false;
    ASSIGN_OR_RETURN(bool on_tiles, RunContractionOnTiles(op, out, dims));
    if (on_tiles && !dims.lhs_halos.empty()) {
      // The halos are the padding inside the value; what is left is the
      // padding of the first and last tiles, which the halos' zeros give.
      const Type pairs_type =
          Type::Tensor({static_cast<int64_t>(spatial), 2},
                       Type::Element(ir::ElementType::kI64));
      std::string bytes(padding.size() * sizeof(int64_t), '\0');
      std::memcpy(bytes.data(), padding.data(), bytes.size());
      op.SetAttr("padding", Attribute::DenseElements(
                                pairs_type, std::move(bytes), /*splat=*/false));
    }
    return on_tiles;
  }

  // For each spatial dimension of the convolution `op` whose input is cut
  // into T tiles, decides whether the convolution can run on the tiles
  // with halos: every device reads its own input tile and at most a
  // tile's worth of each neighbour's, the same amounts on every device.
  // - Kernel window whole: the output keeps the cut when its tiles start
  //   as far apart as the input's (stride * O / T = dilated input tile).
  //   Output tile t then reads from lo before input tile t to
  //   window - stride - lo past it.
  // - Kernel window cut alike (a weight gradient): the dimension is
  //   contracted, each device adding its part.
  // Zeros stand for what lies beyond the first and last tiles, which is
  // the padding (a collective_permute gives zeros to a device no source
  // sends to, and convolutions pad with zeros). Records the halos in
  // `dims` and returns in `padding` what the convolution of extended
  // tiles pads with. Cuts it cannot serve stay in `dims.lhs_whole`, where
  // the contraction refuses them. False on attributes it cannot read.
  bool ConvolutionHalos(const Operation& op,
                        const ir::ConvDimensionNumbers& conv,
                        ContractionDims& dims, std::vector<int64_t>& padding) {
    const size_t spatial = conv.input_spatial_dimensions.size();
    auto ints = [&](std::string_view name, int64_t fallback,
                    size_t count) -> std::optional<std::vector<int64_t>> {
      Attribute attr = op.GetAttr(name);
      if (!attr) return std::vector<int64_t>(count, fallback);
      std::optional<std::vector<int64_t>> values = attr.AsIntVector();
      if (!values || values->size() != count) return std::nullopt;
      return values;
    };
    auto strides = ints("window_strides", 1, spatial);
    auto lhs_dilation = ints("lhs_dilation", 1, spatial);
    auto rhs_dilation = ints("rhs_dilation", 1, spatial);
    auto pads = ints("padding", 0, 2 * spatial);
    auto reversal = ints("window_reversal", 0, spatial);
    if (!strides || !lhs_dilation || !rhs_dilation || !pads || !reversal) {
      return false;
    }
    padding = *pads;
    auto it = tiled_.find(op.operand(0));
    if (it == tiled_.end()) return true;
    const TileLayout& layout = it->second.layout;
    const Type& input = it->second.global_type;
    const Type& output = op.result(0)->type();
    const Type& kernel = GlobalType(op.operand(1));
    if (!input.HasStaticShape() || !output.HasStaticShape() ||
        !kernel.HasStaticShape()) {
      return true;
    }
    auto kernel_it = tiled_.find(op.operand(1));
    for (size_t j = 0; j < spatial; ++j) {
      const int64_t in_dim = conv.input_spatial_dimensions[j];
      const int64_t k_dim = conv.kernel_spatial_dimensions[j];
      const int64_t tiles = layout.tiles[in_dim];
      if (tiles <= 1) continue;
      const int64_t kernel_tiles =
          kernel_it == tiled_.end() ? 1 : kernel_it->second.layout.tiles[k_dim];
      const int64_t n = input.shape()[in_dim];
      const int64_t o = output.shape()[conv.output_spatial_dimensions[j]];
      const int64_t k = kernel.shape()[k_dim];
      // The high padding needs no check: the last tile reads no further
      // than the whole convolution does, and zeros stand for what lies
      // past the value.
      const int64_t stride = (*strides)[j], lo = padding[2 * j],
                    dilation = (*rhs_dilation)[j];
      const int64_t base = (*lhs_dilation)[j];
      if ((*reversal)[j] != 0 || stride < 1 || dilation < 1 || base < 1 ||
          n % tiles != 0 || lo < 0) {
        continue;
      }
      const int64_t tile = n / tiles;
      const int64_t window = (k - 1) * dilation + 1;
      int64_t new_lo = 0, new_hi = 0;
      if (kernel_tiles == 1) {
        // The output keeps the cut. In the input dilated by `base`, tile
        // t spans tile * base positions from t * tile * base, and output
        // tile t reads from lo before that to r past it, r = window -
        // stride - lo. Whole elements of the neighbours cover that; what
        // is left is holes (zeros), padded: `left` elements with lo %
        // base positions before them, `right` elements covering r with
        // the holes up to r after them. A negative r (a stride longer
        // than the window) leaves too few positions at the tile's end for
        // another output: the convolution's rounding drops them.
        if (o % tiles != 0 || stride * (o / tiles) != tile * base) continue;
        const int64_t left = lo / base;
        const int64_t r = window - stride - lo;
        const int64_t right = r > 0 ? (r - 1) / base + 1 : 0;
        new_lo = lo % base;
        new_hi = r > 0 ? r - 1 - (right - 1) * base
                       : std::max<int64_t>(0, base - 1 + r);
        const int64_t length =
            new_lo + (left + tile + right - 1) * base + 1 + new_hi;
        if (left > tile || right > tile || length < window ||
            (length - window) / stride + 1 != o / tiles) {
          continue;
        }
        dims.result_from[conv.output_spatial_dimensions[j]] = {0, in_dim};
        dims.lhs_halos.push_back({in_dim, left, right});
      } else if (kernel_tiles == tiles && base == 1) {
        // The window itself is cut alike (JAX's weight gradient: the
        // output's gradient as the kernel): every device's kernel tile
        // of m elements meets the input from its own tile's start - lo
        // when m * dilation is the input tile, and the devices' partial
        // results are added. The whole output reaches (o - 1) * stride + 1
        // - dilation - lo past each tile.
        const int64_t right = (o - 1) * stride + 1 - dilation - lo;
        if (k % tiles != 0 || (k / tiles) * dilation != tile || lo > tile ||
            right < 0 || right > tile) {
          continue;
        }
        dims.rhs_whole.erase(
            std::find(dims.rhs_whole.begin(), dims.rhs_whole.end(), k_dim));
        dims.lhs_contracting.push_back(in_dim);
        dims.rhs_contracting.push_back(k_dim);
        dims.lhs_halos.push_back({in_dim, lo, right});
      } else {
        continue;
      }
      dims.lhs_whole.erase(
          std::find(dims.lhs_whole.begin(), dims.lhs_whole.end(), in_dim));
      padding[2 * j] = new_lo;
      padding[2 * j + 1] = new_hi;
    }
    return true;
  }

  // The layout of a value of `rank` dimensions held whole by every device.
  TileLayout WholeLayout(int64_t rank) const {
    const size_t devices = target_.num_partitions;
    TileLayout layout;
    layout.tiles.assign(rank, 1);
    layout.tile_of_device.assign(devices, std::vector<int64_t>(rank, 0));
    layout.copy_of_device.resize(devices);
    std::iota(layout.copy_of_device.begin(), layout.copy_of_device.end(), 0);
    return layout;
  }

  // Whether every device holds `value` whole (summed, where it was partial).
  bool IsWhole(Value* value) const {
    auto it = tiled_.find(value);
    return it == tiled_.end() || it->second.layout.IsReplicated();
  }

  // The layout that a gather's result or a scatter's updates (`type`, with
  // `window_dims` from the operand) take from the cut `indices`: their
  // other dimensions are the indices' dimensions but `index_vector_dim`,
  // in order, with the same cuts. Null unless the indices are cut only
  // along such dimensions, not along the batching dimensions that pair
  // with the operand's.
  std::optional<TileLayout> LayoutFromIndices(
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
        layout.tile_of_device[d].push_back(
            dim < 0 ? 0 : from.tile_of_device[d][dim]);
      }
    }
    if (layout.TileCount() != from.TileCount()) return std::nullopt;
    return layout;
  }

  // A gather from a whole operand at cut indices (an embedding lookup of a
  // batch cut over devices): each device gathers at its own indices, and
  // the result takes the indices' cuts (LayoutFromIndices); its offset
  // dimensions are whole. False where that does not apply.
  StatusOr<bool> RunGatherOnTiles(Operation& op, OpList& out) {
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
                     TileOf(op.operand(0), WholeLayout(operand_type.rank()),
                            out, op.loc(), op.Describe()));
    op.SetOperand(0, operand);
    op.SetOperand(1, tiled_.at(op.operand(1)).local);
    op.result(0)->set_type(result_type.WithShape(tile));
    pending_tiled_ = Tiled{nullptr, *layout, result_type, nullptr};
    pending_combine_.clear();
    return true;
  }

  // A gather from an operand cut along the dimension its one-number
  // indices select (a vocabulary-parallel embedding lookup), with whole
  // indices: each device gathers from its own rows at the indices less
  // its first row, and rows whose index falls outside its tile (which a
  // gather would clamp into it) become zeros; the devices' results add up
  // to the gather. Other cuts of the operand must be in dimensions the
  // slices take whole, and keep their cut in the result. Returns the
  // device's partial result, with the result's `layout` and the partial
  // sums' groups (`group_key`); null, with nothing emitted, where this
  // does not apply.
  StatusOr<Value*> GatherFromCutOperand(
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
    auto append = [&](std::string name, Type type,
                      std::vector<Value*> operands) {
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
      if (d != g.index_vector_dim)
        batch_shape.push_back(indices_type.shape()[d]);
    }
    for (int64_t d = 0; d < result_type.rank(); ++d) {
      if (!contains(g.offset_dims, d)) batch_dims.push_back(d);
    }
    if (batch_dims.size() != batch_shape.size())
      return InternalError(
          op.Describe(), ": gather batch dimensions do not match its indices");
    Value* mask = inside;
    if (batch_shape != indices_type.shape()) {
      mask = append("stablehlo.reshape", mask_type.WithShape(batch_shape),
                    {inside})
                 ->result(0);
    }
    Operation* spread =
        append("stablehlo.broadcast_in_dim", mask_type.WithShape(tile), {mask});
    spread->SetAttr("broadcast_dimensions",
                    Attribute::DenseI64Array(batch_dims));
    Value* zeros = Zeros(result_type.WithShape(tile), out, loc);
    return append("stablehlo.select", result_type.WithShape(tile),
                  {spread->result(0), gather->result(0), zeros})
        ->result(0);
  }

  // A scatter into an operand cut along the dimension its one-number
  // indices select (the gradient of a table whose rows are cut over
  // devices, as in a vocabulary-parallel embedding), with whole indices
  // and updates: each device scatters into its own rows at the indices
  // less its first row (the updates sliced alike where the operand is also
  // cut along dimensions the update windows cover whole). Updates for other
  // devices' rows fall outside the tile, and a scatter skips what does not fit,
  // so every row is updated once, on its device, with any update computation.
  // The result keeps the operand's cut. False where that does not apply.
  StatusOr<bool> RunScatterIntoCutOperand(Operation& op, OpList& out) {
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
    const int64_t first =
        layout.tile_of_device[target_.partition_id][dim] * tile;
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
                     TileOf(op.operand(2), WholeLayout(updates_type.rank()),
                            out, op.loc(), op.Describe()));
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

  // A splat constant of integer type `type` holding `value`.
  static Value* IntegerSplat(const Type& type, int64_t value, OpList& out,
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

  // A scatter into a whole operand at cut indices (the gradient of an
  // embedding lookup): each device scatters its own updates (taken in the
  // indices' cuts) into a whole result, and an all_reduce among the
  // devices of the other tiles combines them. With maximum, minimum, and,
  // or every device starts from the operand (combining it again changes
  // nothing); with add only the first tile's device does and the others
  // start from zeros, so that the operand is counted once. False where
  // that does not apply (other update computations, several operands).
  StatusOr<bool> RunScatterOnTiles(Operation& op, OpList& out) {
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
    ASSIGN_OR_RETURN(Value * updates, TileOf(op.operand(2), *updates_layout,
                                             out, op.loc(), op.Describe()));
    Value* operand;
    if (combiner == "stablehlo.add" &&
        indices_layout.LinearTile(target_.partition_id) != 0) {
      operand = Zeros(result_type, out, op.loc());
    } else {
      ASSIGN_OR_RETURN(
          operand, TileOf(op.operand(0), WholeLayout(result_type.rank()), out,
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

  // The type of `value` as a whole value (its global type when tiled).
  const Type& GlobalType(Value* value) const {
    auto it = tiled_.find(value);
    return it != tiled_.end() ? it->second.global_type : value->type();
  }

  // The contraction `op` (two operands, `dims`) on tiles: see
  // RunDotOnTiles. False (nothing changed) when the cuts do not fit.
  StatusOr<bool> RunContractionOnTiles(Operation& op, OpList& out,
                                       const ContractionDims& dims) {
    Value* lhs = op.operand(0);
    Value* rhs = op.operand(1);
    auto lhs_it = tiled_.find(lhs);
    auto rhs_it = tiled_.find(rhs);
    if (lhs_it == tiled_.end() && rhs_it == tiled_.end()) return false;
    const Type result_type = op.result(0)->type();
    if (!result_type.IsTensor() || !result_type.HasStaticShape()) return false;
    if (static_cast<int64_t>(dims.result_from.size()) != result_type.rank()) {
      return false;
    }
    const Type& lhs_type = GlobalType(lhs);
    const Type& rhs_type = GlobalType(rhs);
    if (!lhs_type.HasStaticShape() || !rhs_type.HasStaticShape()) return false;
    const size_t devices = target_.num_partitions;
    TileLayout lhs_layout = lhs_it != tiled_.end()
                                ? lhs_it->second.layout
                                : WholeLayout(lhs_type.rank());
    TileLayout rhs_layout = rhs_it != tiled_.end()
                                ? rhs_it->second.layout
                                : WholeLayout(rhs_type.rank());
    // A whole operand takes the other's cuts of the paired dimensions.
    auto pair_cuts = [&](TileLayout& to, const TileLayout& from,
                         const std::vector<int64_t>& to_dims,
                         const std::vector<int64_t>& from_dims) {
      for (size_t k = 0; k < to_dims.size(); ++k) {
        to.tiles[to_dims[k]] = from.tiles[from_dims[k]];
        for (size_t d = 0; d < devices; ++d) {
          to.tile_of_device[d][to_dims[k]] =
              from.tile_of_device[d][from_dims[k]];
        }
      }
    };
    if (lhs_it == tiled_.end()) {
      pair_cuts(lhs_layout, rhs_layout, dims.lhs_batch, dims.rhs_batch);
      pair_cuts(lhs_layout, rhs_layout, dims.lhs_contracting,
                dims.rhs_contracting);
    } else if (rhs_it == tiled_.end()) {
      pair_cuts(rhs_layout, lhs_layout, dims.rhs_batch, dims.lhs_batch);
      pair_cuts(rhs_layout, lhs_layout, dims.rhs_contracting,
                dims.lhs_contracting);
    }
    // Paired dimensions must be cut alike on every device.
    auto paired_alike = [&](const std::vector<int64_t>& a,
                            const std::vector<int64_t>& b) {
      for (size_t k = 0; k < a.size(); ++k) {
        if (lhs_layout.tiles[a[k]] != rhs_layout.tiles[b[k]]) return false;
        for (size_t d = 0; d < devices; ++d) {
          if (lhs_layout.tile_of_device[d][a[k]] !=
              rhs_layout.tile_of_device[d][b[k]]) {
            return false;
          }
        }
      }
      return true;
    };
    if (!paired_alike(dims.lhs_batch, dims.rhs_batch) ||
        !paired_alike(dims.lhs_contracting, dims.rhs_contracting)) {
      return false;
    }
    for (int64_t i : dims.lhs_whole) {
      if (lhs_layout.tiles[i] != 1) return false;
    }
    for (int64_t i : dims.rhs_whole) {
      if (rhs_layout.tiles[i] != 1) return false;
    }
    const TileLayout* operand_layouts[] = {&lhs_layout, &rhs_layout};
    TileLayout layout;
    layout.tile_of_device.resize(devices);
    std::vector<std::vector<int64_t>> group_key(devices), copy_key(devices);
    for (const auto& [operand, dim] : dims.result_from) {
      layout.tiles.push_back(
          operand < 0 ? 1 : operand_layouts[operand]->tiles[dim]);
    }
    bool partial = false;
    for (int64_t i : dims.lhs_contracting) {
      partial |= lhs_layout.tiles[i] > 1;
    }
    for (size_t d = 0; d < devices; ++d) {
      std::vector<int64_t>& coords = layout.tile_of_device[d];
      for (const auto& [operand, dim] : dims.result_from) {
        coords.push_back(
            operand < 0 ? 0 : operand_layouts[operand]->tile_of_device[d][dim]);
      }
      std::vector<int64_t> contracting;
      for (int64_t i : dims.lhs_contracting) {
        contracting.push_back(lhs_layout.tile_of_device[d][i]);
      }
      // Devices that differ only in their contracting tiles sum together.
      group_key[d] = coords;
      group_key[d].push_back(lhs_layout.copy_of_device[d]);
      group_key[d].push_back(rhs_layout.copy_of_device[d]);
      copy_key[d] = {lhs_layout.copy_of_device[d],
                     rhs_layout.copy_of_device[d]};
      copy_key[d].insert(copy_key[d].end(), contracting.begin(),
                         contracting.end());
    }
    if (!RenumberCopies(layout, copy_key)) return false;
    if (partial) {
      // Every group must hold each contracting tile once.
      std::map<std::vector<int64_t>, int64_t> members;
      int64_t contracting_tiles = 1;
      for (int64_t i : dims.lhs_contracting) {
        contracting_tiles *= lhs_layout.tiles[i];
      }
      for (const auto& key : group_key) ++members[key];
      for (const auto& [key, count] : members) {
        if (count != contracting_tiles) return false;
      }
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                     TileShape(result_type, layout, op.Describe()));
    ASSIGN_OR_RETURN(Value * lhs_local,
                     TileOf(lhs, lhs_layout, out, op.loc(), op.Describe()));
    for (const ContractionDims::Halo& halo : dims.lhs_halos) {
      TileOps ops(out, op.loc(), target_, next_channel_);
      lhs_local =
          ops.WithHalo(lhs_local, lhs_layout, static_cast<size_t>(halo.dim),
                       halo.left, halo.right);
      if (lhs_local == nullptr) {
        return InternalError(op.Describe(),
                             ": no halo exchange along dimension ", halo.dim);
      }
    }
    ASSIGN_OR_RETURN(Value * rhs_local,
                     TileOf(rhs, rhs_layout, out, op.loc(), op.Describe()));
    op.SetOperand(0, lhs_local);
    op.SetOperand(1, rhs_local);
    op.result(0)->set_type(result_type.WithShape(tile));
    pending_tiled_ = Tiled{nullptr, layout, result_type, nullptr};
    pending_combine_.clear();
    if (partial) {
      pending_combine_ = "stablehlo.add";
      pending_group_key_ = std::move(group_key);
    }
    return true;
  }

  // Whether devices with equal keys are the devices of equal groups.
  static bool SameGroups(const std::vector<std::vector<int64_t>>& keys,
                         const std::vector<int64_t>& groups) {
    if (keys.size() != groups.size()) return false;
    for (size_t a = 0; a < keys.size(); ++a) {
      for (size_t b = a + 1; b < keys.size(); ++b) {
        if ((keys[a] == keys[b]) != (groups[a] == groups[b])) return false;
      }
    }
    return true;
  }

  // Removes the all_reduces (and their handles) of partial sums that
  // nothing reads any more, since the result left unreduced: every
  // partition drops the same ones, so the collectives still pair up.
  void DropUnusedSums(OpList& ops) {
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

  // The sum of the partial values `local` of a layout with unreduced axes,
  // among the devices that differ only along them.
  Value* SumUnreduced(Value* local, const TileLayout& layout, OpList& out,
                      const ir::Location& loc) {
    return AllReduce(local, "stablehlo.add", GroupKeys(layout), out, loc);
  }

  // The key of each device's group of unreduced axes (AllReduce's form).
  static std::vector<std::vector<int64_t>> GroupKeys(const TileLayout& layout) {
    std::vector<std::vector<int64_t>> keys;
    for (int64_t group : layout.unreduced_group) keys.push_back({group});
    return keys;
  }

  // The partition's partial value of `global` for a layout with unreduced
  // axes, where `global` is a sum of partial values over the same groups
  // and tiles (an unreduced argument or manual-computation result, a
  // contraction's partial products): the partial values themselves, as
  // XLA's partitioner leaves them, through a handle of their own (the
  // value that holds them may be registered as the tile of the sum); or
  // the tiles of a cut value, placed among zeros (below). Null otherwise.
  Value* KnownPartials(const Value* global, const TileLayout& layout,
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
    const std::vector<int64_t>& coords =
        cut.tile_of_device[target_.partition_id];
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

  // A partial value of `tile` for a layout with unreduced axes: the tile on
  // the first device of each group, zeros on the others (their sum is the
  // tile). The tile is then kept read on every partition: the devices that
  // take zeros would otherwise drop its all_reduce alone (DropUnusedSums).
  Value* SplitUnreduced(Value* tile, const TileLayout& layout, OpList& out,
                        const ir::Location& loc) {
    split_tiles_.insert(tile);
    if (layout.unreduced_index[target_.partition_id] == 0) return tile;
    return Zeros(tile->type(), out, loc);
  }

  // A constant of `type` whose elements are all zero (or false): a splat of
  // zero bytes, which is zero in every element type.
  static Value* Zeros(const Type& type, OpList& out, const ir::Location& loc) {
    auto zeros = std::make_unique<Operation>("stablehlo.constant",
                                             std::vector<Type>{type}, loc);
    zeros->SetAttr(
        "value",
        Attribute::DenseElements(
            type,
            std::string(ir::StorageBytes(type.StorageElementType()), '\0'),
            /*splat=*/true));
    out.push_back(std::move(zeros));
    return out.back()->result(0);
  }

  // The partition's tile of a value made whole only by ops that can be made
  // at tile size as well (iota, splat constants, broadcasts of scalars and
  // elementwise ops of such values): those ops again, over the tile, so
  // that the whole value need not be computed at all (random bits from an
  // iota, masks, position ids). Null when the value is made otherwise.
  StatusOr<Value*> Rematerialize(Value* value, const TileLayout& layout,
                                 const std::string& layout_key, OpList& out,
                                 int depth = 0) {
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
      constant->SetAttr(
          "value",
          Attribute::DenseElements(local_type, value_attr.dense_data(), true));
      out.push_back(std::move(constant));
      made = out.back()->result(0);
    } else if (op->name() == "stablehlo.broadcast_in_dim" &&
               op->num_operands() == 1 && op->operand(0)->type().IsTensor() &&
               op->operand(0)->type().rank() == 0 &&
               !tiled_.count(op->operand(0))) {
      auto broadcast =
          std::make_unique<Operation>("stablehlo.broadcast_in_dim",
                                      std::vector<Type>{local_type}, op->loc());
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
        ASSIGN_OR_RETURN(
            Value * local,
            Rematerialize(operand, layout, layout_key, out, depth + 1));
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

  // The bytes of `value` in element type `type` (integers and floats).
  static std::optional<std::string> ScalarBytes(ir::ElementType type,
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

  // `tiled` with the dimensions in `dims` made whole: an all_gather among
  // the devices that differ only in those dimensions' tiles; the other cuts
  // stay. Nullopt when the devices do not form such groups.
  StatusOr<std::optional<Tiled>> GatherDims(const Tiled& tiled,
                                            const std::vector<bool>& dims,
                                            OpList& out,
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
      group_of[d] =
          group_ids.emplace(key, static_cast<int64_t>(group_ids.size()))
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

  // A value standing for `local` where ops want the tile itself: the ops
  // that refer to a tiled value by its own name want the global value
  // (Global) or a tile of some layout (TileOf), so the tile needs a name
  // of its own. An identity, free once lowered.
  Value* LocalHandle(Value* local, OpList& out, const ir::Location& loc) {
    auto cast =
        std::make_unique<Operation>("builtin.unrealized_conversion_cast",
                                    std::vector<Type>{local->type()}, loc);
    cast->AddOperand(local);
    out.push_back(std::move(cast));
    return out.back()->result(0);
  }

  // Rewrites `ops` in order into `out`: operands of replaced values are
  // redirected, tiles kept through elementwise ops, manual computations
  // inlined, GSPMD's shard/full-shape calls turned into slices and
  // assemblies, ops placed on one device run there only, and every other
  // op given global values.
  Status RewriteOps(OpList ops, OpList& out) {
    for (std::unique_ptr<Operation>& op : ops) {
      const std::string target = CustomCallTarget(*op);
      // The sharding of @SPMDFullToShardShape's operand, from the @Sharding
      // call that makes it (read before that call is folded away).
      std::string full_to_shard_sharding;
      if (target == "SPMDFullToShardShape" && op->num_operands() == 1) {
        const Operation* producer = op->operand(0)->defining_op();
        if (producer != nullptr && CustomCallTarget(*producer) == "Sharding") {
          Attribute sharding = producer->GetAttr("mhlo.sharding");
          if (sharding.is(AttrKind::kString)) {
            full_to_shard_sharding = sharding.string_value();
          }
        }
      }
      for (int i = 0; i < op->num_operands(); ++i) {
        auto it = substitutions_.find(op->operand(i));
        if (it != substitutions_.end()) op->SetOperand(i, it->second);
      }
      if (IsManualComputation(*op)) {
        RETURN_IF_ERROR(InlineManualComputation(*op, out));
        removed_.push_back(std::move(op));
        continue;
      }
      if (op->name() == "func.call" && inline_depth_ < kMaxInlineDepth) {
        ASSIGN_OR_RETURN(bool inlined, InlineCall(*op, out));
        if (inlined) {
          removed_.push_back(std::move(op));
          continue;
        }
      }
      if (target == "SPMDFullToShardShape" ||
          target == "SPMDShardToFullShape") {
        RETURN_IF_ERROR(
            RewriteGspmdShapeCall(*op, target, full_to_shard_sharding, out));
        removed_.push_back(std::move(op));
        continue;
      }
      ASSIGN_OR_RETURN(bool per_tile, RunPartitionedCallback(*op, out));
      if (per_tile) {
        out.push_back(std::move(op));
        continue;
      }
      if (target == "InspectSharding" && op->num_operands() == 1 &&
          op->num_results() == 1) {
        // The operand's sharding, then the operand itself.
        Value* operand = op->operand(0);
        auto it = tiled_.find(operand);
        RETURN_IF_ERROR(ReportInspectedSharding(
            *op, it != tiled_.end() ? it->second.layout : TileLayout{}));
        if (it != tiled_.end()) {
          Tiled forwarded = it->second;
          tiled_[op->result(0)] = forwarded;
        } else {
          substitutions_[op->result(0)] = operand;
        }
        removed_.push_back(std::move(op));
        continue;
      }
      // A Shardy constraint or reshard of the entry's values (not in a
      // manual computation's body, nor in a region) puts its value in the
      // constraint's cut, as XLA does: a sharding_constraint is where the
      // user fixes a layout, and the result's sharding is that one.
      if ((op->name() == "sdy.sharding_constraint" ||
           op->name() == "sdy.reshard") &&
          op->num_operands() == 1 && op->num_results() == 1 &&
          current_block_is_entry_ && manual_depth_ == 0) {
        ASSIGN_OR_RETURN(bool resharded, Reshard(*op, out));
        if (resharded) {
          removed_.push_back(std::move(op));
          continue;
        }
      }
      // Other sharding annotations are identities once the program is
      // partitioned; they leave the partition's program.
      if ((op->name() == "sdy.sharding_constraint" ||
           op->name() == "sdy.reshard" ||
           op->name() == "sdy.propagation_barrier" || target == "Sharding") &&
          op->num_operands() == 1 && op->num_results() == 1) {
        substitutions_[op->result(0)] = op->operand(0);
        removed_.push_back(std::move(op));
        continue;
      }
      ASSIGN_OR_RETURN(std::optional<int64_t> device, MaximalDevice(*op));
      if (device) {
        RETURN_IF_ERROR(UseGlobals(*op, out));
        RETURN_IF_ERROR(RunOnOneDevice(std::move(op), *device, out));
        continue;
      }
      if (!target.empty()) {
        ASSIGN_OR_RETURN(bool batched, RunBatchPartitionedCall(*op, out));
        if (batched) {
          Operation& call = *op;
          out.push_back(std::move(op));
          for (Value* result : call.results()) {
            pending_batched_[result].local =
                LocalHandle(result, out, call.loc());
            tiled_[result] = std::move(pending_batched_[result]);
          }
          pending_batched_.clear();
          continue;
        }
      }
      // An identity cast of a summed tile keeps the partials it sums.
      const Value* cast_of =
          op->name() == "builtin.unrealized_conversion_cast" &&
                  op->num_operands() == 1 && op->num_results() == 1 &&
                  op->operand(0)->type() == op->result(0)->type()
              ? op->operand(0)
              : nullptr;
      if (cast_of != nullptr && partial_sums_.count(cast_of) &&
          !tiled_.count(cast_of)) {
        // A whole sum: the cast is the sum itself, and keeps its partials.
        substitutions_[op->result(0)] = op->operand(0);
        removed_.push_back(std::move(op));
        continue;
      }
      {
        // A gather from a cut table: each device's partial rows, added.
        TileLayout layout;
        std::vector<std::vector<int64_t>> keys;
        ASSIGN_OR_RETURN(Value * partial,
                         GatherFromCutOperand(*op, out, layout, keys));
        if (partial != nullptr) {
          Value* result = op->result(0);
          Value* summed =
              AllReduce(partial, "stablehlo.add", keys, out, op->loc());
          Value* handle = LocalHandle(summed, out, op->loc());
          partial_sums_[result] =
              PartialSum{partial, keys, {summed, handle}, layout};
          tiled_[result] = Tiled{handle, layout, result->type(), nullptr};
          removed_.push_back(std::move(op));
          continue;
        }
      }
      ASSIGN_OR_RETURN(bool on_tiles, RunOnTiles(*op, out));
      if (!on_tiles) {
        ASSIGN_OR_RETURN(on_tiles, RunShapeOpOnTiles(*op, out));
      }
      pending_combine_.clear();
      if (!on_tiles) {
        ASSIGN_OR_RETURN(on_tiles, RunReduceOnTiles(*op, out));
      }
      if (!on_tiles) {
        ASSIGN_OR_RETURN(on_tiles, RunDotOnTiles(*op, out));
      }
      if (!on_tiles) {
        ASSIGN_OR_RETURN(on_tiles, RunConvolutionOnTiles(*op, out));
      }
      if (!on_tiles) {
        ASSIGN_OR_RETURN(on_tiles, RunGatherOnTiles(*op, out));
      }
      if (!on_tiles) {
        ASSIGN_OR_RETURN(on_tiles, RunScatterOnTiles(*op, out));
      }
      if (on_tiles) {
        Value* result = op->result(0);
        const ir::Location loc = op->loc();
        out.push_back(std::move(op));
        Value* local = result;
        const bool summed = pending_combine_ == "stablehlo.add";
        if (!pending_combine_.empty()) {
          local =
              AllReduce(result, pending_combine_, pending_group_key_, out, loc);
          pending_combine_.clear();
        }
        pending_tiled_.local = LocalHandle(local, out, loc);
        if (summed) {
          partial_sums_[result] = PartialSum{result,
                                             pending_group_key_,
                                             {local, pending_tiled_.local},
                                             pending_tiled_.layout};
        } else if (auto sum = cast_of == nullptr ? partial_sums_.end()
                                                 : partial_sums_.find(cast_of);
                   sum != partial_sums_.end()) {
          PartialSum forwarded = sum->second;
          forwarded.chain.push_back(result);
          forwarded.chain.push_back(pending_tiled_.local);
          partial_sums_[result] = std::move(forwarded);
        }
        tiled_[result] = std::move(pending_tiled_);
        continue;
      }
      {
        // The entry's return takes tiles as they are (PartitionEntry).
        const bool entry_return = op->name() == "func.return" &&
                                  op->parent_block() == nullptr &&
                                  current_block_is_entry_;
        if (!entry_return) RETURN_IF_ERROR(UseGlobals(*op, out));
        for (const auto& region : op->regions()) {
          for (const auto& block : region->blocks()) {
            const bool saved = current_block_is_entry_;
            current_block_is_entry_ = false;
            Status status = RewriteBlock(*block);
            current_block_is_entry_ = saved;
            RETURN_IF_ERROR(status);
          }
        }
      }
      out.push_back(std::move(op));
    }
    return OkStatus();
  }

  // A call of a batch-partitionable target (RegisterBatchPartitionableTarget)
  // with `num_batch_dims` b runs on the partition's share of the batch: its
  // first tiled operand must be cut along its b leading dimensions only,
  // every operand and result must have those b leading dimensions, and
  // each operand is taken in that layout (the one it is in, or sliced);
  // results are tiles of the same batch layout. False (nothing changed)
  // when that does not apply: the call then gets global values.
  StatusOr<bool> RunBatchPartitionedCall(Operation& op, OpList& out) {
    if (op.num_regions() != 0 || op.num_results() == 0 ||
        !IsBatchPartitionableTarget(CustomCallTarget(op))) {
      return false;
    }
    Attribute frontend = op.GetAttr("mhlo.frontend_attributes");
    if (!frontend.is(AttrKind::kDictionary)) return false;
    Attribute batch_attr = frontend.Get("num_batch_dims");
    if (!batch_attr.is(AttrKind::kString)) return false;
    std::optional<int64_t> parsed = ParseInt64(batch_attr.string_value());
    if (!parsed || *parsed <= 0) return false;
    const size_t b = static_cast<size_t>(*parsed);
    const Tiled* reference = nullptr;
    for (Value* operand : op.operands()) {
      auto it = tiled_.find(operand);
      if (it != tiled_.end() && !it->second.layout.IsReplicated()) {
        reference = &it->second;
        break;
      }
    }
    if (reference == nullptr) return false;
    const TileLayout& ref = reference->layout;
    const std::vector<int64_t>& ref_shape = reference->global_type.shape();
    if (ref_shape.size() < b) return false;
    for (size_t d = b; d < ref.tiles.size(); ++d) {
      if (ref.tiles[d] != 1) return false;
    }
    const std::vector<int64_t> batch(ref_shape.begin(), ref_shape.begin() + b);
    auto fits = [&](const Type& type) {
      return type.IsTensor() && type.HasStaticShape() &&
             type.shape().size() >= b &&
             std::equal(batch.begin(), batch.end(), type.shape().begin());
    };
    // The batch layout over a value of `rank` dimensions.
    auto layout_of_rank = [&](size_t rank) {
      TileLayout layout = ref;
      layout.tiles.assign(ref.tiles.begin(), ref.tiles.begin() + b);
      layout.tiles.resize(rank, 1);
      for (std::vector<int64_t>& tile : layout.tile_of_device) {
        tile.resize(b);
        tile.resize(rank, 0);
      }
      return layout;
    };
    for (Value* operand : op.operands()) {
      auto it = tiled_.find(operand);
      const Type& global =
          it != tiled_.end() ? it->second.global_type : operand->type();
      if (!fits(global)) return false;
    }
    for (Value* result : op.results()) {
      if (!fits(result->type())) return false;
    }
    for (int i = 0; i < op.num_operands(); ++i) {
      Value* operand = op.operand(i);
      auto it = tiled_.find(operand);
      const Type& global =
          it != tiled_.end() ? it->second.global_type : operand->type();
      ASSIGN_OR_RETURN(Value * local,
                       TileOf(operand, layout_of_rank(global.rank()), out,
                              op.loc(), op.Describe()));
      op.SetOperand(i, local);
    }
    for (Value* result : op.results()) {
      const Type global = result->type();
      TileLayout layout = layout_of_rank(global.rank());
      ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                       TileShape(global, layout, op.Describe()));
      result->set_type(global.WithShape(tile));
      pending_batched_[result] =
          Tiled{nullptr, std::move(layout), global, nullptr};
    }
    // The result layouts XLA would report for the call are the operands';
    // the op's own sharding annotation no longer describes its tiles.
    op.RemoveAttr("sdy.sharding");
    op.RemoveAttr("mhlo.sharding");
    return true;
  }

  // The device an op is placed on by a maximal sharding
  // (`sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>`,
  // or `mhlo.sharding = "{maximal device=0}"`), as JAX places host
  // callbacks; nullopt for any other op.
  StatusOr<std::optional<int64_t>> MaximalDevice(const Operation& op) const {
    Attribute shardy = op.attributes().Get("sdy.sharding");
    if (shardy) {
      StatusOr<std::vector<TensorSharding>> shardings =
          ParseShardingPerValue(shardy.ToString());
      if (!shardings.ok() || shardings->empty()) return std::nullopt;
      const TensorSharding& first = (*shardings)[0];
      const Mesh* mesh = nullptr;
      if (first.inline_mesh) {
        mesh = &*first.inline_mesh;
      } else if (auto it = meshes_.find(first.mesh_name); it != meshes_.end()) {
        mesh = &it->second;
      }
      if (mesh == nullptr || !mesh->axis_names.empty() ||
          mesh->device_ids.size() != 1) {
        return std::nullopt;
      }
      return std::optional<int64_t>(mesh->device_ids[0]);
    }
    Attribute gspmd = op.attributes().Get("mhlo.sharding");
    if (gspmd.is(AttrKind::kString)) {
      const std::string& text = gspmd.string_value();
      size_t at = text.find("maximal device=");
      if (at == std::string::npos) return std::nullopt;
      std::optional<int64_t> device = ParseInt64(
          text.substr(at + 15, text.find_first_of(" }", at + 15) - (at + 15)));
      if (device) return device;
    }
    return std::nullopt;
  }

  // An op placed on one device runs there only; the other partitions get
  // its results from that device (a collective_broadcast), tokens made
  // afresh. Every partition emits the same collectives, in order.
  Status RunOnOneDevice(std::unique_ptr<Operation> op, int64_t device,
                        OpList& out) {
    if (device < 0 || device >= target_.num_partitions) {
      return InvalidArgumentError(op->Describe(), ": placed on device ", device,
                                  " of a program of ", target_.num_partitions,
                                  " partitions");
    }
    const bool here = device == target_.partition_id;
    Operation& placed = *op;
    const ir::Location loc = op->loc();
    std::vector<Value*> results;
    if (here) {
      op->RemoveAttr("sdy.sharding");
      out.push_back(std::move(op));
      results = placed.results();
    }
    // The group: the placed device first (the broadcast's source), then
    // the others, in every replica.
    std::vector<int64_t> group = {device};
    for (int64_t d = 0; d < target_.num_partitions; ++d) {
      if (d != device) group.push_back(d);
    }
    for (int i = 0; i < placed.num_results(); ++i) {
      const Type& type = placed.result(i)->type();
      Value* value = here ? results[i] : nullptr;
      if (type.IsToken()) {
        if (!here) {
          auto token = std::make_unique<Operation>(
              "stablehlo.after_all", std::vector<Type>{type}, loc);
          out.push_back(std::move(token));
          value = out.back()->result(0);
        }
        substitutions_[placed.result(i)] = value;
        continue;
      }
      if (!type.IsTensor() || !type.HasStaticShape()) {
        return UnimplementedError(placed.Describe(), ": result ", i, " (",
                                  type.ToString(),
                                  ") of an op placed on one device");
      }
      if (!here) value = Zeros(type, out, loc);
      auto broadcast = std::make_unique<Operation>(
          "stablehlo.collective_broadcast", std::vector<Type>{type}, loc);
      broadcast->AddOperand(value);
      broadcast->SetAttr("replica_groups", ReplicaGroups(group, 1));
      broadcast->SetAttr("channel_handle", Attribute::Channel(ir::ChannelHandle{
                                               next_channel_++, 1}));
      out.push_back(std::move(broadcast));
      substitutions_[placed.result(i)] = out.back()->result(0);
    }
    if (!here) removed_.push_back(std::move(op));
    return OkStatus();
  }

  // A call, inlined so that the callee's ops see the tiles its arguments
  // are (JAX puts random bit generation, and much else, in functions).
  // False when the callee is not a function of the module.
  StatusOr<bool> InlineCall(Operation& call, OpList& out) {
    Attribute callee_attr = call.GetAttr("callee");
    if (!callee_attr.is(AttrKind::kSymbolRef)) return false;
    const Operation* callee = module_.LookupFunction(callee_attr.symbol_root());
    if (callee == nullptr || !ir::func::HasBody(*callee)) return false;
    const ir::Block& body = ir::func::Body(*callee);
    if (body.num_arguments() != call.num_operands()) return false;
    const Operation* terminator = body.terminator();
    if (terminator == nullptr || terminator->name() != "func.return" ||
        terminator->num_operands() != call.num_results()) {
      return false;
    }
    std::map<const Value*, Value*> value_map;
    for (int i = 0; i < call.num_operands(); ++i) {
      value_map[body.argument(i)] = call.operand(i);
    }
    OpList cloned;
    for (const auto& inner : body.operations()) {
      if (inner.get() == terminator) break;
      cloned.push_back(inner->Clone(value_map));
    }
    ++inline_depth_;
    Status status = RewriteOps(std::move(cloned), out);
    --inline_depth_;
    RETURN_IF_ERROR(status);
    for (int i = 0; i < call.num_results(); ++i) {
      Value* result = terminator->operand(i);
      if (auto it = value_map.find(result); it != value_map.end()) {
        result = it->second;
      }
      if (auto it = substitutions_.find(result); it != substitutions_.end()) {
        result = it->second;
      }
      substitutions_[call.result(i)] = result;
    }
    return true;
  }

  // `sdy.manual_computation`: operands sliced along the manual axes, the
  // body inlined on the tiles, results assembled along the manual axes.
  Status InlineManualComputation(Operation& op, OpList& out) {
    ASSIGN_OR_RETURN(
        std::vector<TensorSharding> in_shardings,
        ParseShardingPerValue(op.GetAttr("in_shardings").ToString()));
    ASSIGN_OR_RETURN(
        std::vector<TensorSharding> out_shardings,
        ParseShardingPerValue(op.GetAttr("out_shardings").ToString()));
    ASSIGN_OR_RETURN(std::vector<std::string> manual_axes,
                     ParseManualAxes(op.GetAttr("manual_axes").ToString()));
    if (op.num_regions() != 1 || op.region(0).num_blocks() != 1) {
      return InvalidArgumentError(op.Describe(), ": needs one body block");
    }
    ir::Block& body = op.region(0).front();
    if (static_cast<int>(in_shardings.size()) != op.num_operands() ||
        body.num_arguments() != op.num_operands() ||
        static_cast<int>(out_shardings.size()) != op.num_results()) {
      return InvalidArgumentError(
          op.Describe(), ": ", op.num_operands(), " operands, ",
          in_shardings.size(), " in_shardings, ", body.num_arguments(),
          " body arguments, ", op.num_results(), " results and ",
          out_shardings.size(), " out_shardings do not match");
    }
    std::map<const Value*, Value*> value_map;
    for (int i = 0; i < op.num_operands(); ++i) {
      Value* global = op.operand(i);
      std::string what = StrCat(op.Describe(), ": operand ", i);
      if (!global->type().IsTensor()) {
        // Tokens (ordered effects) pass into the body as they are.
        value_map[body.argument(i)] = global;
        continue;
      }
      StatusOr<TileLayout> in_layout =
          LayoutOfShardy(in_shardings[i], meshes_, global->type().rank(),
                         target_.num_partitions, &manual_axes);
      if (!in_layout.ok()) return in_layout.status().WithContext(what);
      Value* tile = in_layout->HasUnreduced()
                        ? KnownPartials(global, *in_layout, out, op.loc())
                        : nullptr;
      if (tile == nullptr) {
        ASSIGN_OR_RETURN(tile, TileOf(global, WithoutUnreduced(*in_layout), out,
                                      op.loc(), what));
        if (in_layout->HasUnreduced()) {
          tile = SplitUnreduced(tile, *in_layout, out, op.loc());
        }
      }
      if (tile->type() != body.argument(i)->type()) {
        return InvalidArgumentError(
            what, ": its tile is ", tile->type().ToString(),
            " but the body takes ", body.argument(i)->type().ToString());
      }
      value_map[body.argument(i)] = tile;
    }
    // The body, cloned in front of where the op was and rewritten in turn
    // (it may hold manual computations of its own).
    OpList cloned;
    const Operation* terminator = body.terminator();
    if (terminator == nullptr || terminator->name() != "sdy.return") {
      return InvalidArgumentError(op.Describe(),
                                  ": the body does not end in sdy.return");
    }
    for (const auto& inner : body.operations()) {
      if (inner.get() == terminator) break;
      cloned.push_back(inner->Clone(value_map));
    }
    ++manual_depth_;
    Status rewritten = RewriteOps(std::move(cloned), out);
    --manual_depth_;
    RETURN_IF_ERROR(rewritten);
    for (int i = 0; i < op.num_results(); ++i) {
      Value* tile = terminator->operand(i);
      if (auto it = value_map.find(tile); it != value_map.end()) {
        tile = it->second;
      }
      if (auto it = substitutions_.find(tile); it != substitutions_.end()) {
        tile = it->second;
      }
      // A tile of a manual computation nested in the body is, for this
      // one, a whole value.
      ASSIGN_OR_RETURN(tile, Global(tile, out, op.loc()));
      const Type& global_type = op.result(i)->type();
      std::string what = StrCat(op.Describe(), ": result ", i);
      if (!global_type.IsTensor()) {
        substitutions_[op.result(i)] = tile;
        continue;
      }
      StatusOr<TileLayout> out_layout =
          LayoutOfShardy(out_shardings[i], meshes_, global_type.rank(),
                         target_.num_partitions, &manual_axes);
      if (!out_layout.ok()) return out_layout.status().WithContext(what);
      // With unreduced axes, the body's values are partial values: they
      // are summed where the program reads the result, and go on as they
      // are where it passes it on unreduced (KnownPartials).
      std::optional<PartialSum> partials;
      if (out_layout->HasUnreduced()) {
        Value* partial = tile;
        std::vector<std::vector<int64_t>> keys = GroupKeys(*out_layout);
        tile = SumUnreduced(tile, *out_layout, out, op.loc());
        *out_layout = WithoutUnreduced(*out_layout);
        partials = PartialSum{partial, std::move(keys), {tile}, *out_layout};
      }
      const TileLayout& layout = *out_layout;
      Value* global = tile;
      if (!layout.IsReplicated()) {
        ASSIGN_OR_RETURN(std::vector<int64_t> expected,
                         TileShape(global_type, layout, what));
        if (tile->type().shape() != expected) {
          return InvalidArgumentError(
              what, ": the body returns ", tile->type().ToString(),
              " for a tile of ", StrJoin(expected, "x"));
        }
        // Kept as the partition's tile; assembled if an op needs it whole.
        Value* handle = LocalHandle(tile, out, op.loc());
        tiled_[op.result(i)] = Tiled{handle, layout, global_type, nullptr};
        if (partials) {
          partials->chain.push_back(handle);
          partial_sums_[op.result(i)] = std::move(*partials);
        }
        continue;
      } else if (tile->type() != global_type) {
        return InvalidArgumentError(what, ": the body returns ",
                                    tile->type().ToString(), " for ",
                                    global_type.ToString());
      }
      substitutions_[op.result(i)] = global;
      if (partials) partial_sums_[global] = std::move(*partials);
    }
    return OkStatus();
  }

  // GSPMD's manual regions: `@SPMDFullToShardShape` takes the tile of its
  // operand (whose sharding the `@Sharding` call that makes the operand
  // gives), and `@SPMDShardToFullShape` makes a tiled value of the layout
  // its own `mhlo.sharding` describes.
  Status RewriteGspmdShapeCall(Operation& op, const std::string& target,
                               const std::string& operand_sharding,
                               OpList& out) {
    if (op.num_operands() != 1 || op.num_results() != 1) {
      return InvalidArgumentError(op.Describe(), ": @", target,
                                  " takes one operand and has one result");
    }
    Value* operand = op.operand(0);
    const bool to_shard = target == "SPMDFullToShardShape";
    std::string sharding;
    if (to_shard) {
      if (operand_sharding.empty()) {
        return UnimplementedError(op.Describe(),
                                  ": @SPMDFullToShardShape of a value without "
                                  "an @Sharding custom call before it");
      }
      sharding = operand_sharding;
    } else {
      Attribute own = op.GetAttr("mhlo.sharding");
      if (!own.is(AttrKind::kString)) {
        return InvalidArgumentError(op.Describe(), ": no mhlo.sharding string");
      }
      sharding = own.string_value();
    }
    const Type& global_type = to_shard ? operand->type() : op.result(0)->type();
    StatusOr<TileLayout> parsed =
        LayoutOfGspmd(sharding, global_type.rank(), target_.num_partitions);
    if (!parsed.ok()) return parsed.status().WithContext(op.Describe());
    const TileLayout& layout = *parsed;
    if (to_shard) {
      ASSIGN_OR_RETURN(Value * tile,
                       TileOf(operand, layout, out, op.loc(), op.Describe()));
      if (tile->type() != op.result(0)->type()) {
        return InvalidArgumentError(
            op.Describe(), ": gives ", op.result(0)->type().ToString(),
            " but the sharding makes ", tile->type().ToString());
      }
      substitutions_[op.result(0)] = tile;
      return OkStatus();
    }
    ASSIGN_OR_RETURN(Value * tile, Global(operand, out, op.loc()));
    if (layout.IsReplicated()) {
      substitutions_[op.result(0)] = tile;
      return OkStatus();
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> expected,
                     TileShape(global_type, layout, op.Describe()));
    if (tile->type().shape() != expected) {
      return InvalidArgumentError(op.Describe(), ": takes ",
                                  tile->type().ToString(), " for a tile of ",
                                  StrJoin(expected, "x"));
    }
    tiled_[op.result(0)] =
        Tiled{LocalHandle(tile, out, op.loc()), layout, global_type, nullptr};
    return OkStatus();
  }

  ir::Module& module_;
  const PartitionTarget& target_;
  std::map<std::string, Mesh> meshes_;
  std::map<const Value*, Value*> substitutions_;
  std::map<const Value*, Tiled> tiled_;
  std::vector<std::optional<TileLayout>> chosen_result_layouts_;
  std::map<std::pair<const Value*, std::string>, Value*> rematerialized_;
  static constexpr int kMaxInlineDepth = 32;
  int inline_depth_ = 0;
  // How many manual computations' bodies are being rewritten.
  int manual_depth_ = 0;
  // What RunOnTiles and its kin made, for RewriteOps to register: the
  // result's layout, and the all_reduce that completes partial results.
  // The results of a batch-partitioned call, before they are added.
  std::map<Value*, Tiled> pending_batched_;
  Tiled pending_tiled_;
  std::string pending_combine_;
  // Tiles summed over devices (by an all_reduce of a dot's partial
  // products), by the value summed: the partial each device had, and the
  // devices that summed together (same key) — what an unreduced result of
  // the same groups leaves as, as XLA's partitioner does.
  struct PartialSum {
    Value* partial = nullptr;
    std::vector<std::vector<int64_t>> group_key;
    // The sum, its handle, and identity casts of it with theirs: what
    // becomes dead when the partials leave instead.
    std::vector<const Value*> chain;
    // The tiles of the partial values (no unreduced axes).
    TileLayout layout;
  };
  std::map<const Value*, PartialSum> partial_sums_;
  // Tiles split into one device's value and zeros (PartialsOf): read on
  // every partition, whether or not this one reads them.
  std::set<const Value*> split_tiles_;
  std::vector<std::vector<int64_t>> pending_group_key_;
  // Ops taken out of the program, kept until the partitioner is done: the
  // maps above hold their results' addresses.
  OpList removed_;
  bool current_block_is_entry_ = false;
  int64_t next_channel_ = kFirstChannel;
};

}  // namespace

// Ops the partitioner may drop when nothing uses their results: pure
// StableHLO ops, ops with regions (while, case, reduce, sort, ...) whose
// every nested op is pure, and calls of functions whose every op is.
// Collectives never go (every partition must meet at each of them), nor
// custom calls or side effects. `visiting` holds the functions being looked
// into (a recursive call counts as impure).
bool IsRemovableWhenUnused(const Operation& op, const ir::Module& module,
                           std::set<const Operation*>& visiting) {
  static const std::set<std::string_view> kKept = {
      "stablehlo.custom_call",
      "stablehlo.all_gather",
      "stablehlo.all_reduce",
      "stablehlo.all_to_all",
      "stablehlo.reduce_scatter",
      "stablehlo.collective_permute",
      "stablehlo.collective_broadcast",
      "stablehlo.send",
      "stablehlo.recv",
      "stablehlo.infeed",
      "stablehlo.outfeed",
      "stablehlo.optimization_barrier",
      "stablehlo.return",
      "stablehlo.rng",
      "stablehlo.rng_bit_generator",
  };
  auto all_pure = [&](const Operation& holder) {
    for (const auto& region : holder.regions()) {
      for (const auto& block : region->blocks()) {
        for (const auto& inner : block->operations()) {
          const std::string_view name = inner->name();
          if (name != "stablehlo.return" && name != "func.return" &&
              !IsRemovableWhenUnused(*inner, module, visiting)) {
            return false;
          }
        }
      }
    }
    return true;
  };
  if (op.name() == "func.call") {
    Attribute callee_attr = op.GetAttr("callee");
    if (!callee_attr.is(AttrKind::kSymbolRef)) return false;
    const Operation* callee = module.LookupFunction(callee_attr.symbol_root());
    if (callee == nullptr || !ir::func::HasBody(*callee) ||
        !visiting.insert(callee).second) {
      return false;
    }
    const bool pure = all_pure(*callee);
    visiting.erase(callee);
    return pure;
  }
  if (kKept.count(op.name()) ||
      (op.dialect() != "stablehlo" &&
       op.name() != "builtin.unrealized_conversion_cast")) {
    return false;
  }
  return all_pure(op);
}

bool IsRemovableWhenUnused(const Operation& op, const ir::Module& module) {
  std::set<const Operation*> visiting;
  return IsRemovableWhenUnused(op, module, visiting);
}

// Drops the ops whose results nothing uses (what partitioning leaves of
// values that were only needed whole), until none is left.
void RemoveDeadOps(ir::Module& module) {
  for (bool changed = true; changed;) {
    changed = false;
    std::map<const Value*, int> uses;
    module.op().Walk([&](Operation& op) {
      for (Value* operand : op.operands()) ++uses[operand];
    });
    std::function<void(ir::Block&)> sweep = [&](ir::Block& block) {
      OpList kept;
      for (std::unique_ptr<Operation>& op : block.TakeOperations()) {
        bool used = false;
        for (int i = 0; i < op->num_results(); ++i) {
          used |= uses.count(op->result(i)) > 0;
        }
        if (!used && op->num_results() > 0 &&
            IsRemovableWhenUnused(*op, module)) {
          changed = true;
          continue;
        }
        for (const auto& region : op->regions()) {
          for (const auto& inner : region->blocks()) sweep(*inner);
        }
        kept.push_back(std::move(op));
      }
      block.SetOperations(std::move(kept));
    };
    for (Operation* func : module.Functions()) {
      if (ir::func::HasBody(*func)) sweep(ir::func::Body(*func));
    }
  }
  // Private functions nothing refers to any more (their calls were
  // inlined). Any symbol in any attribute counts as a reference: calls'
  // `callee`, composites' `decomposition`, custom calls'
  // `called_computations`.
  std::set<std::string> called;
  std::function<void(const Attribute&)> collect = [&](const Attribute& attr) {
    if (attr.is(AttrKind::kSymbolRef)) {
      called.insert(attr.symbol_root());
    } else if (attr.is(AttrKind::kArray)) {
      for (const Attribute& element : attr.array()) collect(element);
    } else if (attr.is(AttrKind::kDictionary)) {
      for (const auto& [name, value] : attr.dictionary()) collect(value);
    }
  };
  module.op().Walk([&](Operation& op) {
    if (op.name() == "func.func") return;  // its own sym_name is not a use
    for (const auto& [name, value] : op.properties().entries()) collect(value);
    for (const auto& [name, value] : op.attributes().entries()) collect(value);
  });
  const Operation* entry = module.EntryFunction();
  OpList kept;
  for (std::unique_ptr<Operation>& op : module.body().TakeOperations()) {
    const bool unused_private = op->name() == "func.func" &&
                                op.get() != entry && !ir::func::IsPublic(*op) &&
                                !called.count(std::string(ir::func::Name(*op)));
    if (!unused_private) kept.push_back(std::move(op));
  }
  module.body().SetOperations(std::move(kept));
}

StatusOr<EntryLayouts> ReadEntryLayouts(const ir::Module& module,
                                        int num_partitions) {
  EntryLayouts layouts;
  const Operation* entry = module.EntryFunction();
  if (entry == nullptr || num_partitions <= 1) return layouts;
  ASSIGN_OR_RETURN(auto meshes, ModuleMeshes(module));
  const ir::Block& body = ir::func::Body(*entry);
  for (int i = 0; i < body.num_arguments(); ++i) {
    ASSIGN_OR_RETURN(
        std::optional<TileLayout> layout,
        LayoutOfAttrs(ir::func::ArgAttrs(*entry, i), meshes,
                      body.argument(i)->type(), num_partitions,
                      StrCat("argument ", i, " of @", ir::func::Name(*entry))));
    layouts.arguments.push_back(std::move(layout));
  }
  ASSIGN_OR_RETURN(layouts.results,
                   ResultLayouts(*entry, meshes, num_partitions));
  return layouts;
}

StatusOr<bool> NeedsPartitioning(const ir::Module& module, int num_partitions) {
  if (num_partitions <= 1) return false;
  bool manual = false;
  module.op().Walk([&](Operation& op) {
    std::string target = CustomCallTarget(op);
    manual |= IsManualComputation(op) || target == "SPMDFullToShardShape" ||
              target == "SPMDShardToFullShape";
  });
  if (manual) return true;
  ASSIGN_OR_RETURN(EntryLayouts layouts,
                   ReadEntryLayouts(module, num_partitions));
  for (const auto* list : {&layouts.arguments, &layouts.results}) {
    for (const auto& layout : *list) {
      if (layout) return true;
    }
  }
  return false;
}

namespace {
std::mutex& BatchPartitionableMutex() {
  static std::mutex mutex;
  return mutex;
}
std::set<std::string, std::less<>>& BatchPartitionableTargets() {
  static auto* targets = new std::set<std::string, std::less<>>();
  return *targets;
}
}  // namespace

void RegisterBatchPartitionableTarget(std::string name) {
  std::lock_guard<std::mutex> lock(BatchPartitionableMutex());
  BatchPartitionableTargets().insert(std::move(name));
}

bool IsBatchPartitionableTarget(std::string_view name) {
  std::lock_guard<std::mutex> lock(BatchPartitionableMutex());
  return BatchPartitionableTargets().count(name) > 0;
}

void AllowInspectShardingCallbacks(bool allow) {
  inspect_sharding_allowed.store(allow);
}

Status ReportReplicatedInspections(const ir::Module& module) {
  Status status = OkStatus();
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& block) {
    for (const std::unique_ptr<Operation>& op : block.operations()) {
      if (!status.ok()) return;
      if (CustomCallTarget(*op) == "InspectSharding") {
        status = CallInspectSharding(*op, TileLayout{});
      }
      for (int r = 0; r < op->num_regions(); ++r) {
        for (const std::unique_ptr<ir::Block>& nested :
             op->region(r).blocks()) {
          walk(*nested);
        }
      }
    }
  };
  walk(module.body());
  return status;
}

Status PartitionModule(ir::Module& module, const PartitionTarget& target,
                       std::vector<std::optional<TileLayout>>* result_layouts) {
  if (target.partition_id < 0 || target.partition_id >= target.num_partitions) {
    return InvalidArgumentError("partition ", target.partition_id,
                                " is outside the program's ",
                                target.num_partitions, " partitions");
  }
  // What nothing uses goes first, as XLA's DCE runs before its SPMD
  // partitioner: a dead loop (the permutation JAX's lu computes beside the
  // pivots, say) would otherwise make the partitioner assemble its operands.
  // Every partition starts from the same program, so all drop the same ops.
  RemoveDeadOps(module);
  ASSIGN_OR_RETURN(auto meshes, ModuleMeshes(module));
  Partitioner partitioner(module, target, std::move(meshes));
  RETURN_IF_ERROR(partitioner.Run());
  if (result_layouts != nullptr) *result_layouts = partitioner.result_layouts();
  RemoveDeadOps(module);
  return OkStatus();
}

}  // namespace kiln::compile

namespace kiln::compile {
namespace {

// A dictionary without its `sdy.` entries (null when nothing is left).
Attribute WithoutShardy(const Attribute& dictionary) {
  if (!dictionary.is(AttrKind::kDictionary)) return dictionary;
  std::vector<ir::NamedAttribute> kept;
  for (const ir::NamedAttribute& entry : dictionary.dictionary()) {
    if (entry.first.rfind("sdy.", 0) != 0) kept.push_back(entry);
  }
  return Attribute::Dictionary(std::move(kept));
}

}  // namespace

void StripShardy(ir::Module& module) {
  ir::Block& body = module.body();
  std::vector<std::unique_ptr<Operation>> kept;
  for (std::unique_ptr<Operation>& op : body.TakeOperations()) {
    if (op->dialect() != "sdy") kept.push_back(std::move(op));
  }
  body.SetOperations(std::move(kept));
  for (Operation* func : module.Functions()) {
    for (const char* list : {"arg_attrs", "res_attrs"}) {
      Attribute attrs = func->GetAttr(list);
      if (!attrs.is(AttrKind::kArray)) continue;
      std::vector<Attribute> stripped;
      for (const Attribute& dictionary : attrs.array()) {
        stripped.push_back(WithoutShardy(dictionary));
      }
      func->SetAttr(list, Attribute::Array(std::move(stripped)));
    }
  }
  module.op().Walk([](Operation& op) { op.RemoveAttr("sdy.sharding"); });
}

}  // namespace kiln::compile
