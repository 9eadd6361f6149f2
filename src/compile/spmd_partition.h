// SPMD partitioning: turns a program over global shapes, whose values carry
// shardings (Shardy's `sdy.sharding` and `sdy.manual_computation`, or
// GSPMD's `mhlo.sharding` and its shard/full-shape custom calls), into the
// program one partition runs on its tiles.
//
// Sharded arguments enter as the partition's tiles and stay tiles through
// the ops that can work on them (elementwise ops, transposes, broadcasts,
// slices, dot_general, reduce; with the collectives that finish partial
// sums); any other op gets the global value, assembled once by an
// all_gather. A manual computation (`shard_map`) is inlined: its operands
// are sliced to the partition's tile along the manual axes, its body runs
// on the tiles with the collectives it has, and its results are assembled
// again. Results leave as the tiles of their sharding, written or implied
// (docs/compile.md, SPMD partitioning). The program a partition runs is
// correct whichever ops are on tiles; more of them on tiles is faster.
#ifndef KILN_COMPILE_SPMD_PARTITION_H_
#define KILN_COMPILE_SPMD_PARTITION_H_

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compile/sharding.h"
#include "ir/operation.h"

namespace kiln::compile {

// Where the partitioned program runs.
struct PartitionTarget {
  int partition_id = 0;
  int num_partitions = 1;
  int num_replicas = 1;
  // Whether this partitioning tells `@InspectSharding` callbacks the
  // sharding of their operand (see AllowInspectShardingCallbacks); one of
  // the partitionings of a program does, so each callback runs once.
  bool report_inspections = false;
};

// JAX's `inspect_array_sharding` lowers to `@InspectSharding`, whose
// backend_config holds the address of a callback in the process that
// compiles (XLA's JAX_InspectSharding_Callback: a function and its data);
// the partitioner calls it with the operand's serialized xla.OpSharding and
// the call then forwards its operand. Calling an address a program names
// is only sound when the program comes from the process itself, so it is
// off until the embedding process allows it (Kiln's JAX package does, with
// its host callback trampoline); until then the call is only an identity.
void AllowInspectShardingCallbacks(bool allow);

// For a program of several devices that is not partitioned (every value
// whole on every device): tells each `@InspectSharding` callback in it that
// its operand is replicated, where the process allows.
Status ReportReplicatedInspections(const ir::Module& module);

// Whether `module` needs partitioning on `num_partitions` partitions: a
// sharded entry argument or result, or a manual computation anywhere.
StatusOr<bool> NeedsPartitioning(const ir::Module& module, int num_partitions);

// The layouts of the entry function's arguments and results across
// `num_partitions` partitions (nullopt: replicated or no sharding given).
struct EntryLayouts {
  std::vector<std::optional<TileLayout>> arguments;
  std::vector<std::optional<TileLayout>> results;
};
StatusOr<EntryLayouts> ReadEntryLayouts(const ir::Module& module,
                                        int num_partitions);

// Rewrites `module` in place into the program of `target.partition_id`.
// Unsupported shardings are refused with a message naming the value and the
// sharding; nothing is partitioned half-way into wrong results. With
// `result_layouts`, it receives the layout each result of the entry goes
// out with (its own sharding, else the tiles the program left it in;
// nullopt: whole on every device), the same for every partition.
Status PartitionModule(
    ir::Module& module, const PartitionTarget& target,
    std::vector<std::optional<TileLayout>>* result_layouts = nullptr);

// Custom-call targets registered as batch partitionable (jax.ffi's
// register_ffi_target_as_batch_partitionable reaches it through PJRT's
// custom partitioner extension, pjrt/partitioner.cc). A call of one with
// `num_batch_dims = "b"` in its `mhlo.frontend_attributes` runs on every
// partition's share of the batch when its tiled operands are cut along
// their b leading dimensions only; otherwise on global values, as any
// other custom call. Process-wide, as XLA's registry is; thread-safe.
void RegisterBatchPartitionableTarget(std::string name);
bool IsBatchPartitionableTarget(std::string_view name);

// Drops what is left of Shardy in a partitioned module (its `sdy.mesh` ops
// and `sdy.*` attributes), so that the program a partition runs reads as
// plain StableHLO (what `OptimizedProgram` returns).
void StripShardy(ir::Module& module);

}  // namespace kiln::compile

#endif  // KILN_COMPILE_SPMD_PARTITION_H_
