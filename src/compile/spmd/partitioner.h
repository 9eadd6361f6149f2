// The SPMD partitioner: the state of one partitioning and the methods that
// rewrite each family of ops, one file a family. Internal to compile/.
#ifndef KILN_COMPILE_SPMD_PARTITIONER_H_
#define KILN_COMPILE_SPMD_PARTITIONER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compile/spmd/common.h"

namespace kiln::compile::spmd {

// Channel handles of the collectives the partitioner adds: far above the
// ones frameworks number from 1, so that they never collide.
constexpr int64_t kFirstChannel = 1 << 20;

// Rewrites a module into the program of one partition (PartitionModule).
class Partitioner {
 public:
  Partitioner(ir::Module& module, const PartitionTarget& target,
              std::map<std::string, Mesh> meshes)
      : module_(module), target_(target), meshes_(std::move(meshes)) {}

  // The layouts the entry's results go out with (after Run).
  const std::vector<std::optional<TileLayout>>& result_layouts() const {
    return chosen_result_layouts_;
  }

  Status Run();

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

  // --- The driver (partitioner.cc) -------------------------------------------
  // The entry: tiles come in and stay tiles through the ops that can work
  // on them; the partition's tiles of the results go out.
  Status PartitionEntry(Operation& func);

  Status RewriteBlock(ir::Block& block);

  // The global value of `value`: itself, or its tiles assembled (once).
  StatusOr<Value*> Global(Value* value, OpList& out, const ir::Location& loc);

  // The partition's tile of `value` under `layout`: the tile it holds when
  // the layouts agree, else sliced from the global value.
  StatusOr<Value*> TileOf(Value* value, const TileLayout& layout, OpList& out,
                          const ir::Location& loc, std::string_view what);

  // Gives every operand of `op`, and every value its regions use from
  // outside, as a global value.
  Status UseGlobals(Operation& op, OpList& out);

  // The layout of a value of `rank` dimensions held whole by every device.
  TileLayout WholeLayout(int64_t rank) const;

  // Whether every device holds `value` whole (summed, where it was partial).
  bool IsWhole(Value* value) const;

  // The type of `value` as a whole value (its global type when tiled).
  const Type& GlobalType(Value* value) const;

  // A value standing for `local` where ops want the tile itself: the ops
  // that refer to a tiled value by its own name want the global value
  // (Global) or a tile of some layout (TileOf), so the tile needs a name
  // of its own. An identity, free once lowered.
  Value* LocalHandle(Value* local, OpList& out, const ir::Location& loc);

  // Rewrites `ops` in order into `out`: operands of replaced values are
  // redirected, tiles kept through elementwise ops, manual computations
  // inlined, GSPMD's shard/full-shape calls turned into slices and
  // assemblies, ops placed on one device run there only, and every other
  // op given global values.
  Status RewriteOps(OpList ops, OpList& out);

  // --- Elementwise and shape ops (elementwise_shape.cc) ----------------------
  // An elementwise op whose operands include tiles of one layout runs on
  // tiles of that layout: its other full-shape operands are sliced, scalars
  // stay. Returns false (and changes nothing) when that does not apply.
  StatusOr<bool> RunOnTiles(Operation& op, OpList& out);

  // Shape ops that keep a tiled operand tiled: a transpose (the tiles move
  // with the dimensions), a broadcast_in_dim (kept dimensions keep their
  // tiles, new ones are whole), a slice that keeps every cut dimension
  // whole, and a reshape that only adds or drops dimensions of size 1. The
  // op is rewritten in place over the operand's tile; false (nothing
  // changed) when it is none of these.
  StatusOr<bool> RunShapeOpOnTiles(Operation& op, OpList& out);

  // The partition's tile of a value made whole only by ops that can be made
  // at tile size as well (iota, splat constants, broadcasts of scalars and
  // elementwise ops of such values): those ops again, over the tile, so
  // that the whole value need not be computed at all (random bits from an
  // iota, masks, position ids). Null when the value is made otherwise.
  StatusOr<Value*> Rematerialize(Value* value, const TileLayout& layout,
                                 const std::string& layout_key, OpList& out,
                                 int depth = 0);

  // The bytes of `value` in element type `type` (integers and floats).
  static std::optional<std::string> ScalarBytes(ir::ElementType type,
                                                int64_t value);

  // `tiled` with the dimensions in `dims` made whole: an all_gather among
  // the devices that differ only in those dimensions' tiles; the other cuts
  // stay. Nullopt when the devices do not form such groups.
  StatusOr<std::optional<Tiled>> GatherDims(const Tiled& tiled,
                                            const std::vector<bool>& dims,
                                            OpList& out,
                                            const ir::Location& loc);

  // --- Reductions and partial sums (reduce.cc) -------------------------------
  // A layout's copy numbers made afresh from `key` per device (devices with
  // the same tile and different keys are different copies); false when the
  // tiles do not each have the same number of holders, all of them present.
  static bool RenumberCopies(TileLayout& layout,
                             const std::vector<std::vector<int64_t>>& key);

  // An all_reduce of `local` with the binary `combiner` over the groups of
  // devices that `group_key` gives the same key, ordered by device.
  Value* AllReduce(Value* local, const std::string& combiner,
                   const std::vector<std::vector<int64_t>>& group_key,
                   OpList& out, const ir::Location& loc);

  // The combiner of a reduce whose body is one binary op of its two
  // arguments, when partial results over tiles may be combined again: max,
  // min, and, or (idempotent: the init taken once per tile changes
  // nothing), and add from a zero init. Empty otherwise.
  static std::string TileCombiner(const Operation& reduce);

  // The op of a body that combines its two arguments with one add,
  // maximum, minimum, and or or (a reduction's or a scatter's), else "".
  static std::string RegionCombiner(const Operation& op);

  // A reduce of a tile: reduced dimensions that are whole reduce locally;
  // a reduced dimension that is cut leaves partial results, combined by an
  // all_reduce among the devices holding its other tiles.
  StatusOr<bool> RunReduceOnTiles(Operation& op, OpList& out);

  // Whether devices with equal keys are the devices of equal groups.
  static bool SameGroups(const std::vector<std::vector<int64_t>>& keys,
                         const std::vector<int64_t>& groups);

  // Removes the all_reduces (and their handles) of partial sums that
  // nothing reads any more, since the result left unreduced: every
  // partition drops the same ones, so the collectives still pair up.
  void DropUnusedSums(OpList& ops);

  // The sum of the partial values `local` of a layout with unreduced axes,
  // among the devices that differ only along them.
  Value* SumUnreduced(Value* local, const TileLayout& layout, OpList& out,
                      const ir::Location& loc);

  // The key of each device's group of unreduced axes (AllReduce's form).
  static std::vector<std::vector<int64_t>> GroupKeys(const TileLayout& layout);

  // The partition's partial value of `global` for a layout with unreduced
  // axes, where `global` is a sum of partial values over the same groups
  // and tiles (an unreduced argument or manual-computation result, a
  // contraction's partial products): the partial values themselves, as
  // XLA's partitioner leaves them, through a handle of their own (the
  // value that holds them may be registered as the tile of the sum); or
  // the tiles of a cut value, placed among zeros (below). Null otherwise.
  Value* KnownPartials(const Value* global, const TileLayout& layout,
                       OpList& out, const ir::Location& loc);

  // A partial value of `tile` for a layout with unreduced axes: the tile on
  // the first device of each group, zeros on the others (their sum is the
  // tile). The tile is then kept read on every partition: the devices that
  // take zeros would otherwise drop its all_reduce alone (DropUnusedSums).
  Value* SplitUnreduced(Value* tile, const TileLayout& layout, OpList& out,
                        const ir::Location& loc);

  // A constant of `type` whose elements are all zero (or false): a splat of
  // zero bytes, which is zero in every element type.
  static Value* Zeros(const Type& type, OpList& out, const ir::Location& loc);

  // --- Dots and convolutions (dot_conv.cc) -----------------------------------
  // A dot_general of tiles: batch and contracting dimensions must be cut
  // alike on both sides (a whole operand is sliced to match), free
  // dimensions keep their cuts; cut contracting dimensions leave partial
  // sums, added by an all_reduce among the devices holding the other
  // contracting tiles. False when the operands' cuts do not fit.
  StatusOr<bool> RunDotOnTiles(Operation& op, OpList& out);

  // A convolution of tiles: the lhs batch and the kernel's output features
  // keep their cuts in the result (data and tensor parallelism), the input
  // features and the kernel's input features are contracting dimensions
  // (JAX's weight gradient contracts the batch this way). A cut spatial
  // dimension of the input (spatial parallelism) keeps its cut in the
  // result where every output tile reads its own input tile and a halo
  // from its neighbours (ConvolutionHalos); the kernel's windows stay
  // whole. Grouped features are not cut; batch groups are left to the
  // whole value.
  StatusOr<bool> RunConvolutionOnTiles(Operation& op, OpList& out);

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
                        ContractionDims& dims, std::vector<int64_t>& padding);

  // The contraction `op` (two operands, `dims`) on tiles: see
  // RunDotOnTiles. False (nothing changed) when the cuts do not fit.
  StatusOr<bool> RunContractionOnTiles(Operation& op, OpList& out,
                                       const ContractionDims& dims);

  // --- Gathers and scatters (gather_scatter.cc) ------------------------------
  // The layout that a gather's result or a scatter's updates (`type`, with
  // `window_dims` from the operand) take from the cut `indices`: their
  // other dimensions are the indices' dimensions but `index_vector_dim`,
  // in order, with the same cuts. Null unless the indices are cut only
  // along such dimensions, not along the batching dimensions that pair
  // with the operand's.
  std::optional<TileLayout> LayoutFromIndices(
      Value* indices, int64_t index_vector_dim,
      const std::vector<int64_t>& batching_dims, const Type& type,
      const std::vector<int64_t>& window_dims) const;

  // A gather from a whole operand at cut indices (an embedding lookup of a
  // batch cut over devices): each device gathers at its own indices, and
  // the result takes the indices' cuts (LayoutFromIndices); its offset
  // dimensions are whole. False where that does not apply.
  StatusOr<bool> RunGatherOnTiles(Operation& op, OpList& out);

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
      std::vector<std::vector<int64_t>>& group_key);

  // A scatter into an operand cut along the dimension its one-number
  // indices select (the gradient of a table whose rows are cut over
  // devices, as in a vocabulary-parallel embedding), with whole indices
  // and updates: each device scatters into its own rows at the indices
  // less its first row (the updates sliced alike where the operand is also
  // cut along dimensions the update windows cover whole). Updates for other
  // devices' rows fall outside the tile, and a scatter skips what does not fit,
  // so every row is updated once, on its device, with any update computation.
  // The result keeps the operand's cut. False where that does not apply.
  StatusOr<bool> RunScatterIntoCutOperand(Operation& op, OpList& out);

  // A splat constant of integer type `type` holding `value`.
  static Value* IntegerSplat(const Type& type, int64_t value, OpList& out,
                             const ir::Location& loc);

  // A scatter into a whole operand at cut indices (the gradient of an
  // embedding lookup): each device scatters its own updates (taken in the
  // indices' cuts) into a whole result, and an all_reduce among the
  // devices of the other tiles combines them. With maximum, minimum, and,
  // or every device starts from the operand (combining it again changes
  // nothing); with add only the first tile's device does and the others
  // start from zeros, so that the operand is counted once. False where
  // that does not apply (other update computations, several operands).
  StatusOr<bool> RunScatterOnTiles(Operation& op, OpList& out);

  // --- Calls, manual computations and placed ops (calls.cc) ------------------
  // The sdy.sharding_constraint or sdy.reshard `op` as a reshard of its
  // operand into the sharding it names: the result is the operand's tile
  // in that cut (TileOf: no data moves where the cut is already that one),
  // or the whole value for a replicated sharding. False (nothing changed)
  // for shardings with unreduced axes or that do not apply to the value.
  StatusOr<bool> Reshard(Operation& op, OpList& out);

  // A host callback lowered with `partitioned = true` (what
  // `jax.debug.print(..., partitioned=True)` asks: the callback sees each
  // device's shard) runs on every partition with the partition's tiles of
  // its operands. It has no results but tokens. Returns false (and changes
  // nothing) for any other op.
  StatusOr<bool> RunPartitionedCallback(Operation& op, OpList& out);

  // Tells an `@InspectSharding` callback its operand's `layout`, where
  // this partitioning reports them.
  Status ReportInspectedSharding(const Operation& op, const TileLayout& layout);

  // A call of a batch-partitionable target (RegisterBatchPartitionableTarget)
  // with `num_batch_dims` b runs on the partition's share of the batch: its
  // first tiled operand must be cut along its b leading dimensions only,
  // every operand and result must have those b leading dimensions, and
  // each operand is taken in that layout (the one it is in, or sliced);
  // results are tiles of the same batch layout. False (nothing changed)
  // when that does not apply: the call then gets global values.
  StatusOr<bool> RunBatchPartitionedCall(Operation& op, OpList& out);

  // The device an op is placed on by a maximal sharding
  // (`sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>`,
  // or `mhlo.sharding = "{maximal device=0}"`), as JAX places host
  // callbacks; nullopt for any other op.
  StatusOr<std::optional<int64_t>> MaximalDevice(const Operation& op) const;

  // An op placed on one device runs there only; the other partitions get
  // its results from that device (a collective_broadcast), tokens made
  // afresh. Every partition emits the same collectives, in order.
  Status RunOnOneDevice(std::unique_ptr<Operation> op, int64_t device,
                        OpList& out);

  // A call, inlined so that the callee's ops see the tiles its arguments
  // are (JAX puts random bit generation, and much else, in functions).
  // False when the callee is not a function of the module.
  StatusOr<bool> InlineCall(Operation& call, OpList& out);

  // `sdy.manual_computation`: operands sliced along the manual axes, the
  // body inlined on the tiles, results assembled along the manual axes.
  Status InlineManualComputation(Operation& op, OpList& out);

  // GSPMD's manual regions: `@SPMDFullToShardShape` takes the tile of its
  // operand (whose sharding the `@Sharding` call that makes the operand
  // gives), and `@SPMDShardToFullShape` makes a tiled value of the layout
  // its own `mhlo.sharding` describes.
  Status RewriteGspmdShapeCall(Operation& op, const std::string& target,
                               const std::string& operand_sharding,
                               OpList& out);

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
  // Tiles split into one device's value and zeros (SplitUnreduced): read on
  // every partition, whether or not this one reads them.
  std::set<const Value*> split_tiles_;
  std::vector<std::vector<int64_t>> pending_group_key_;
  // Ops taken out of the program, kept until the partitioner is done: the
  // maps above hold their results' addresses.
  OpList removed_;
  bool current_block_is_entry_ = false;
  int64_t next_channel_ = kFirstChannel;
};

}  // namespace kiln::compile::spmd

#endif  // KILN_COMPILE_SPMD_PARTITIONER_H_
