// Helpers the SPMD partitioner's files share: reading layouts, tile shapes,
// replica groups, and which ops are what. Internal to compile/.
#ifndef KILN_COMPILE_SPMD_COMMON_H_
#define KILN_COMPILE_SPMD_COMMON_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compile/sharding.h"
#include "compile/spmd_partition.h"
#include "ir/operation.h"

namespace kiln::compile::spmd {

using ir::Attribute;
using ir::AttrKind;
using ir::Operation;
using ir::Type;
using ir::Value;
using OpList = std::vector<std::unique_ptr<Operation>>;

// The layout a value's attribute dictionary gives it: its `sdy.sharding`,
// else its `mhlo.sharding`; nullopt when it has neither or is replicated.
StatusOr<std::optional<TileLayout>> LayoutOfAttrs(
    const Attribute& attrs, const std::map<std::string, Mesh>& meshes,
    const Type& type, int num_partitions, std::string_view what);

// The shape of one tile of a value of `type` under `layout`.
StatusOr<std::vector<int64_t>> TileShape(const Type& type,
                                         const TileLayout& layout,
                                         std::string_view what);

// `replica_groups` of `count` groups laid out one after another in `ids`
// (flattened device ids), as a rank-2 i64 tensor.
Attribute ReplicaGroups(const std::vector<int64_t>& ids, int64_t count);

bool IsManualComputation(const Operation& op);

std::string CustomCallTarget(const Operation& op);

// The layout of the summed value: the same tiles, no partial sums.
TileLayout WithoutUnreduced(TileLayout layout);

// A dot operand's free dimensions: those of its `rank` that are neither
// batch nor contracting, in order.
std::vector<int64_t> DotFreeDims(int64_t rank,
                                 const std::vector<int64_t>& batch,
                                 const std::vector<int64_t>& contracting);

// Ops whose result element i depends on their operands' elements i only:
// a sharding of an operand is one of the result.
bool IsElementwise(const Operation& op);

// Two layouts put the same elements on every device.
bool SameTiles(const TileLayout& a, const TileLayout& b);

// The layout of each result of `func`: its own sharding, else what
// ResultLayoutInference finds.
// Defined in propagation.cc.
StatusOr<std::vector<std::optional<TileLayout>>> ResultLayouts(
    const Operation& func, const std::map<std::string, Mesh>& meshes,
    int num_partitions);

// Calls the `@InspectSharding` callback `op` names (see spmd_partition.h)
// with `layout`, where the process allows it.
// Defined in spmd_partition.cc, beside AllowInspectShardingCallbacks.
Status CallInspectSharding(const Operation& op, const TileLayout& layout);

}  // namespace kiln::compile::spmd

#endif  // KILN_COMPILE_SPMD_COMMON_H_
