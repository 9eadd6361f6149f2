// Shardings of values across the partitions of an SPMD program: Shardy's
// (`#sdy.mesh`, `#sdy.sharding`, manual axes) and GSPMD's (`mhlo.sharding`
// strings), read into one device-level description, a TileLayout.
//
// A sharding cuts a value of global shape S into equal tiles: dimension i
// into tiles[i] parts. Every device holds one tile; devices holding the same
// tile are copies of each other. The partitioner slices a device's tile out
// of a global value and assembles a global value from the tiles of a group of
// devices that together hold one of each (see spmd_partition.h).
#ifndef KILN_COMPILE_SHARDING_H_
#define KILN_COMPILE_SHARDING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/operation.h"

namespace kiln::compile {

// A Shardy device mesh: named axes, and which device sits at each point
// (row-major over the axes; the identity when device_ids is empty).
struct Mesh {
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
  std::vector<int64_t> device_ids;

  int64_t size() const;
  // The axis named `name`, or -1.
  int AxisIndex(std::string_view name) const;
  // The device at each point of the mesh, in row-major order.
  std::vector<int64_t> Devices() const;
};

// One mesh axis, or a sub-axis `"x":(pre)size`: the coordinate of a device
// along it is (coordinate along x / pre) % size.
struct AxisRef {
  std::string name;
  int64_t pre_size = 1;
  int64_t size = -1;  // -1: the whole axis
};

// `#sdy.sharding<@mesh, [{"x"}, {}], replicated={"y"}>`: the mesh axes that
// split each dimension, major to minor.
struct TensorSharding {
  std::string mesh_name;  // `@mesh`; empty with an inline mesh
  std::optional<Mesh> inline_mesh;
  std::vector<std::vector<AxisRef>> dims;
  std::vector<AxisRef> unreduced;
};

// Which tile each of the program's devices holds.
struct TileLayout {
  // Tiles along each dimension of the value.
  std::vector<int64_t> tiles;
  // Per device: the tile's coordinates, and which copy of the tile it is
  // (devices with the same copy number hold one tile each, together all of
  // them, and form one group when the value is assembled).
  std::vector<std::vector<int64_t>> tile_of_device;
  std::vector<int64_t> copy_of_device;
  // With unreduced mesh axes (`unreduced={"x"}`), each device holds a
  // partial value of its tile, and the tile is the sum of the partials of
  // the devices that differ only along those axes: per device, its index
  // along them and the id of that group. Empty without unreduced axes.
  std::vector<int64_t> unreduced_index;
  std::vector<int64_t> unreduced_group;

  int64_t TileCount() const;
  // The row-major index of device `device`'s tile among all tiles.
  int64_t LinearTile(size_t device) const;
  bool HasUnreduced() const { return !unreduced_index.empty(); }
  // One tile, held whole by every device.
  bool IsReplicated() const { return TileCount() == 1 && !HasUnreduced(); }
};

// Parses `#sdy.mesh<["x"=4, "y"=2], device_ids=[...]>` (with or without the
// `#sdy.mesh` prefix).
StatusOr<Mesh> ParseMesh(std::string_view text);
// Parses `#sdy.sharding<...>` or its body `<@mesh, [...]>`.
StatusOr<TensorSharding> ParseTensorSharding(std::string_view text);
// Parses `#sdy.sharding_per_value<[<...>, <...>]>`.
StatusOr<std::vector<TensorSharding>> ParseShardingPerValue(
    std::string_view text);
// Parses `#sdy<manual_axes{"x", "y"}>` into the axis names.
StatusOr<std::vector<std::string>> ParseManualAxes(std::string_view text);

// The meshes a module declares (`sdy.mesh @name = <...>`), by name.
StatusOr<std::map<std::string, Mesh>> ModuleMeshes(const ir::Module& module);

// The layout of a value of `rank` dimensions under a Shardy sharding on a
// program of `num_devices` devices. Only the axes in `only_axes` cut the
// value when it is given (a manual computation slices along its manual axes
// only); sub-axes and the device order of the mesh are honoured.
StatusOr<TileLayout> LayoutOfShardy(
    const TensorSharding& sharding, const std::map<std::string, Mesh>& meshes,
    int64_t rank, int num_devices,
    const std::vector<std::string>* only_axes = nullptr);

// The layout of a GSPMD sharding string (`{devices=[2,1]0,1}`,
// `{devices=[4,1,2]<=[8] last_tile_dim_replicate}`, `{replicated}`,
// `{maximal device=0}`); `{manual}` is refused by the caller.
StatusOr<TileLayout> LayoutOfGspmd(std::string_view text, int64_t rank,
                                   int num_devices);

// The serialized `xla.OpSharding` proto of a layout: REPLICATED, or OTHER
// with its tile assignment (and a last replicated tile dimension when tiles
// have copies), as frameworks read an executable's shardings.
std::string SerializeOpSharding(const TileLayout& layout);

}  // namespace kiln::compile

#endif  // KILN_COMPILE_SHARDING_H_
