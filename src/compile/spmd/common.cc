// The helpers of common.h: layouts read from attributes, tile shapes,
// replica groups, and the ops the partitioner treats alike.
#include "compile/spmd/common.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "ir/elementwise_traits.h"

namespace kiln::compile::spmd {

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

Attribute ReplicaGroups(const std::vector<int64_t>& ids, int64_t count) {
  std::string bytes(ids.size() * sizeof(int64_t), '\0');
  std::memcpy(bytes.data(), ids.data(), bytes.size());
  Type type = Type::Tensor({count, static_cast<int64_t>(ids.size()) / count},
                           Type::Element(ir::ElementType::kI64));
  return Attribute::DenseElements(type, std::move(bytes), /*splat=*/false);
}

bool IsManualComputation(const Operation& op) {
  return op.name() == "sdy.manual_computation";
}

std::string CustomCallTarget(const Operation& op) {
  if (op.name() != "stablehlo.custom_call") return "";
  Attribute target = op.GetAttr("call_target_name");
  return target.is(AttrKind::kString) ? target.string_value() : "";
}

TileLayout WithoutUnreduced(TileLayout layout) {
  layout.unreduced_index.clear();
  layout.unreduced_group.clear();
  return layout;
}

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

bool IsElementwise(const Operation& op) {
  // StableHLO's elementwise math (elementwise_traits.h), and the other ops
  // that map elements one to one.
  const ir::ElementwiseTraits* traits = ir::FindElementwiseTraits(op.code());
  if (traits != nullptr && op.dialect() == "stablehlo") {
    return true;
  }
  static const std::set<std::string_view> kNames = {
      "stablehlo.clamp",   "stablehlo.compare",
      "stablehlo.convert", "stablehlo.reduce_precision",
      "stablehlo.select",  "builtin.unrealized_conversion_cast",
  };
  if (kNames.count(op.name()) > 0) return true;
  // A layout constraint changes how a value lies in memory, never its
  // elements: it keeps its operand's tiles (and sharding) like an
  // elementwise op, where dropping it would replicate its result.
  return op.name() == "stablehlo.custom_call" && op.num_operands() == 1 &&
         op.num_results() == 1 && CustomCallTarget(op) == "LayoutConstraint" &&
         op.operand(0)->type() == op.result(0)->type();
}

bool SameTiles(const TileLayout& a, const TileLayout& b) {
  return a.tiles == b.tiles && a.tile_of_device == b.tile_of_device &&
         a.unreduced_index == b.unreduced_index;
}

}  // namespace kiln::compile::spmd
