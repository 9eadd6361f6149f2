// TileOps: the ops that slice tiles out of values, assemble them, and move
// them between devices (reshards, halo exchanges). Internal to compile/.
#ifndef KILN_COMPILE_SPMD_TILE_OPS_H_
#define KILN_COMPILE_SPMD_TILE_OPS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compile/spmd/common.h"

namespace kiln::compile::spmd {

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
                         std::string_view what);

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
                 const TileLayout& to);

  // The global value of `global_type` from the partition's tile `local` and
  // those of the devices that hold the other tiles (the devices with the
  // same copy number): an all_gather of every tile along a new leading
  // dimension, then a reshape and transpose that put the tiles in place.
  StatusOr<Value*> Assemble(Value* local, const Type& global_type,
                            const TileLayout& layout);

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
                  int64_t left, int64_t right);

 private:
  // Reshard's first way: a slice of the tile the device already holds.
  Value* SliceWithin(Value* local, const TileLayout& from,
                     const TileLayout& to);

  // The block of `value` of shape `sizes` from `start`.
  Value* SliceOf(Value* value, const std::vector<int64_t>& start,
                 const std::vector<int64_t>& sizes);

  static bool SameLayout(const TileLayout& a, const TileLayout& b);

  // Reshard's third way: the same tiles, held by other devices (the axes
  // of a mesh swapped between dimensions, P('x', 'y') to P('y', 'x')): one
  // collective_permute from a device holding each tile to each device that
  // wants it and does not hold it already; a holder sends once. Null when
  // the tiles differ or the holders do not go round.
  Value* PermuteTiles(Value* local, const TileLayout& from,
                      const TileLayout& to);

  // `local`, a tile of `layout`, with dimension `dim` made whole: an
  // all_gather along it among the devices that differ only in their
  // coordinate along it (and hold the same copy), in coordinate order.
  // Updates `layout` (copies renumbered: the devices of a group now hold
  // the same tile). Null when the devices do not form such groups.
  Value* GatherDimension(Value* local, TileLayout& layout, size_t dim);

  // Reshard's second way: one all_to_all.
  Value* MoveCut(Value* local, const TileLayout& from, const TileLayout& to);

  // The devices of `layout` that differ only in their coordinate along
  // `dim` (and hold the same copy), each set ordered by that coordinate
  // and keyed by the rest; null unless every set holds each of the
  // dimension's tiles once.
  static std::optional<std::map<std::vector<int64_t>, std::vector<int64_t>>>
  Chains(const TileLayout& layout, size_t dim);

  // A collective_permute of `value` over partition ids, `pairs` holding
  // (source, target) after one another.
  Value* CollectivePermute(Value* value, const std::vector<int64_t>& pairs);

  std::unique_ptr<Operation> NewOp(std::string name, Type type);
  Value* Append(std::unique_ptr<Operation> op);
  Value* Reshape(Value* value, const std::vector<int64_t>& shape);

  OpList& out_;
  ir::Location loc_;
  const PartitionTarget& target_;
  int64_t& next_channel_;
};

}  // namespace kiln::compile::spmd

#endif  // KILN_COMPILE_SPMD_TILE_OPS_H_
