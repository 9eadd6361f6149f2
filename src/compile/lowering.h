// Lowering: from IR ops to exec::Plan steps.
//
// The Lowering walks the entry function once. Each op is handed to the
// lowering function registered for its OpCode (one file per op family,
// lower_*.cc), which reads its operands' slots, creates result slots and
// emits kernel steps. Calls are inlined and composites replaced by their
// decompositions as they are met (the callee's body is lowered with its
// arguments bound to the caller's slots).
//
// Shapes come from the operands' slots, not from the IR's result types, so
// a program with dynamic shapes lowers as soon as its argument shapes (and
// the values that shape operands depend on) are known: values computed
// from constants are folded while lowering by running their kernels (the
// same kernels a run uses), which makes shape operands compile-time
// constants.
//
// Lifetimes: every step gets an index in one depth-first numbering (the
// steps of an op's regions come before the op's own step), and every temp
// slot an interval [first def, last use] in it, which the buffer planner
// turns into arena offsets.
#ifndef KILN_COMPILE_LOWERING_H_
#define KILN_COMPILE_LOWERING_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "compile/compiler.h"
#include "exec/plan.h"
#include "ir/operation.h"

namespace kiln::compile {

using exec::ArrayShape;
using exec::SlotId;
using ir::ElementType;

class Lowering;
class CustomCallRegistry;

// Lowers one op (all of its results must be bound when it returns).
using LowerFn = std::function<Status(Lowering&, const ir::Operation&)>;

// The table of lowering functions by OpCode.
const LowerFn* FindLowering(ir::OpCode code);

class Lowering {
 public:
  Lowering(const ir::Module& module, const CustomCallRegistry& custom_calls,
           exec::Plan& plan);

  // Lowers `func` as the plan's entry: its arguments (of `argument_types`,
  // which may refine dynamic shapes) become argument slots; its results
  // output slots.
  Status LowerEntry(const ir::Operation& func,
                    const std::vector<ir::Type>& argument_types,
                    const std::map<int, std::string>& argument_values);

  // --- Values and slots ---------------------------------------------------
  // Binds an op result (or block argument) to its slots: one per leaf of a
  // tuple type, exactly one for a tensor or token.
  void Bind(const ir::Value* value, std::vector<SlotId> leaves);
  void Bind(const ir::Value* value, SlotId slot) {
    Bind(value, std::vector<SlotId>{slot});
  }
  // The slots of a bound value (error if unbound).
  StatusOr<std::vector<SlotId>> Leaves(const ir::Value* value) const;
  // The slot of a value that must be a tensor or a token.
  StatusOr<SlotId> Slot(const ir::Value* value) const;
  // The slot of operand `i` of `op` (error naming the op otherwise).
  StatusOr<SlotId> Operand(const ir::Operation& op, int i) const;
  // Copies: references into the slot table do not survive new slots.
  exec::Slot slot(SlotId id) const { return plan_.slots()[id]; }
  ArrayShape shape(SlotId id) const { return plan_.slots()[id].shape; }

  // A fresh scratch slot in the current region.
  SlotId NewTemp(ArrayShape shape);
  SlotId NewToken();
  // A slot with another shape over the same memory as `base` (same element
  // count and bytes): reshape without a copy.
  SlotId NewAlias(SlotId base, ArrayShape shape);
  // A constant slot holding `data` (row-major, StorageBytes per element).
  StatusOr<SlotId> NewConstant(ArrayShape shape, std::string_view data);
  // A constant holding one value repeated; `value` is StorageBytes long.
  StatusOr<SlotId> NewSplatConstant(ArrayShape shape, std::string_view value);
  // The bytes of a constant slot, or null when the slot is not a constant.
  const std::byte* ConstantData(SlotId id) const;
  // The integer elements of a constant slot of integer or bool type.
  std::optional<std::vector<int64_t>> ConstantInts(SlotId id) const;
  // Same, as an error naming `op` and `what` when not a compile-time value.
  StatusOr<std::vector<int64_t>> RequireConstantInts(
      const ir::Operation& op, int operand, std::string_view what) const;

  // --- Types ----------------------------------------------------------------
  // The element type a slot of IR tensor type `type` holds: the element type,
  // or a quantized type's storage type (its expressed type while a quantized
  // op is being lowered through float, see `lowering_quantized_as_float`).
  StatusOr<ElementType> SlotElementType(const ir::Type& type) const;
  // The shape of result `i` of `op`: `inferred` when given (checked against
  // the static dimensions of the IR type), else the IR type's, which must
  // then be static.
  StatusOr<ArrayShape> ResultShape(
      const ir::Operation& op, int i,
      std::optional<std::vector<int64_t>> inferred = std::nullopt) const;
  // ResultShape, then a new temp of that shape bound to result `i`.
  StatusOr<SlotId> NewResult(
      const ir::Operation& op, int i,
      std::optional<std::vector<int64_t>> inferred = std::nullopt);

  // --- Steps ----------------------------------------------------------------
  // Appends a step to the current region. `foldable` steps whose inputs are
  // all constants are run at once and their outputs become constants.
  void Emit(const ir::Operation& op, std::unique_ptr<exec::Kernel> kernel,
            std::vector<SlotId> inputs, std::vector<SlotId> outputs,
            bool foldable = true);
  // A step copying `from` into `to` (same byte size).
  void EmitCopy(const ir::Operation& op, SlotId from, SlotId to);

  // Lowers the ops of block `block` (its arguments must be bound) into the
  // current region, stopping at its terminator, whose operands are returned.
  StatusOr<std::vector<const ir::Value*>> LowerBlockBody(
      const ir::Block& block);
  // What an exec::Region's results may be.
  enum class RegionResults {
    kAny,        // the terminator's operand slots, whatever they are
    kDedicated,  // distinct temps of the region, held for the whole op
                 // (copies are added for params, constants, outer values
                 // and repeats): a loop copies them back into its params
    kLoopState,  // kDedicated, except that the param at a result's own
                 // position is returned as itself: a while's unchanged
                 // value, which needs neither a copy nor a move
  };
  // Lowers an op's region into a new exec::Region whose params are fresh
  // slots of `param_shapes` (or of the block's argument types when empty)
  // and whose results are the terminator's operand slots, as `results`
  // says.
  StatusOr<std::unique_ptr<exec::Region>> LowerRegion(
      const ir::Region& region, const std::vector<exec::ValueSpec>& param_specs,
      RegionResults results);
  // Every slot over `id`'s memory: its owner and the owner's views.
  std::vector<SlotId> SlotsSharingMemory(SlotId id) const;
  // Marks `id`'s memory as lent at run time: the kernel running its region
  // binds it (and its views) to memory it owns elsewhere before the region
  // reads it, so it takes no bytes of the arena.
  void BorrowMemory(SlotId id) { first_def_[alias_root_[id]] = -1; }
  // ValueSpecs of a list of slots.
  std::vector<exec::ValueSpec> Specs(const std::vector<SlotId>& slots) const;

  // Lowers one op through the registries (used by LowerBlockBody; callable
  // for decompositions built on the fly).
  Status LowerOp(const ir::Operation& op);
  // Lowers the body of function `callee` in place with its arguments bound
  // to `arguments`; returns its results' slots. `at` names the caller in
  // errors.
  StatusOr<std::vector<std::vector<SlotId>>> LowerFunction(
      const ir::Operation& at, const ir::Operation& callee,
      const std::vector<std::vector<SlotId>>& arguments);
  // Inlines `callee` with its arguments bound to `arguments`; binds the
  // call's results.
  Status InlineCall(const ir::Operation& call, const ir::Operation& callee,
                    const std::vector<std::vector<SlotId>>& arguments);

  const ir::Module& module() const { return module_; }
  void set_fold_constants(bool fold) { fold_constants_ = fold; }
  void set_fuse_elementwise(bool fuse) { fuse_elementwise_ = fuse; }
  bool fuse_elementwise() const { return fuse_elementwise_; }
  // Whether dense ops of at least `min_multiply_adds` lower to oneDNN
  // kernels where oneDNN implements them (CompileOptions::use_onednn).
  void set_use_onednn(bool use, int64_t min_multiply_adds) {
    use_onednn_ = use;
    onednn_min_multiply_adds_ = min_multiply_adds;
  }
  bool use_onednn() const { return use_onednn_; }
  bool UseOneDnnFor(double multiply_adds) const {
    return use_onednn_ &&
           multiply_adds >= static_cast<double>(onednn_min_multiply_adds_);
  }
  int64_t onednn_min_multiply_adds() const { return onednn_min_multiply_adds_; }
  void set_position(const ProcessPosition& position) { position_ = position; }
  const ProcessPosition& position() const { return position_; }
  void set_host_transfers_between_participants(bool between) {
    host_transfers_between_participants_ = between;
  }
  bool host_transfers_between_participants() const {
    return host_transfers_between_participants_;
  }
  const CustomCallRegistry& custom_calls() const { return custom_calls_; }
  // A fresh id for a collective step. Collectives are numbered in the
  // order they are lowered, which is the same in the plan of every
  // position, so participants running different plans of one program
  // agree on which step they meet at.
  int64_t NewCollectiveId() { return next_collective_id_++; }
  // The number of steps emitted so far.
  int64_t step_count() const { return counter_; }
  // Marks `later`, an op after the one being lowered in the same block, as
  // lowered already: the op being lowered bound its results (a dot that
  // computes the transpose reading it, lower_dot.cc). LowerOp then emits
  // nothing for it.
  void LowerAhead(const ir::Operation& later) { lowered_ahead_.insert(&later); }
  // Notes that a consumer of `view`, the result of a view's step (a
  // transposing copy), read the view's source instead: when its region is
  // complete and no one read `view` after all, FuseElementwiseSteps drops
  // the step that writes it (a dot_general of a transpose, lower_dot.cc).
  void NoteBypassedView(SlotId view) { bypassed_views_.insert(view); }
  // The same for the result of `later`, an op after the one being lowered
  // in the same block (a bias's broadcast that the dot it is added to
  // reads as a vector), noted when `later` is lowered.
  void NoteBypassedOp(const ir::Operation& later) {
    bypassed_ops_.insert(&later);
  }

  // Finishes the plan: assigns arena offsets to temps.
  Status Finish();

 private:
  struct Frame {
    exec::Region* region;
    int id;
    // Slots defined outside this frame and used inside it.
    std::set<SlotId> captures;
  };
  SlotId AddSlot(exec::Slot slot);
  void NoteUse(SlotId id, int64_t index);
  Status FoldIfConstant(size_t first_step);
  Status LowerQuantizedThroughFloat(const ir::Operation& op, const LowerFn& fn);
  Status LowerOpNoLifetimes(const ir::Operation& op);
  // Replaces what a custom call emitted since `steps_before` with a step
  // that fails with `error` when it runs, its results bound to fresh slots.
  Status DeferCustomCallError(const ir::Operation& op, size_t steps_before,
                              Status error);
  // Replaces runs of elementwise steps of the innermost frame's region,
  // which is complete, by fused kernels (fuse_elementwise.cc).
  void FuseElementwiseSteps();
  // Gives an elementwise step that reads a broadcast scalar the scalar
  // itself, read whole (ElementwiseKernel::WithScalarInput), where its
  // kernel has that form; FuseElementwiseSteps then drops broadcasts no
  // one reads any more.
  void ReadBroadcastScalars(exec::Step& step);
  // Whether the entry region's value `value` (an ordinary scratch slot of
  // the entry frame), an output donated argument `argument` may hand its
  // memory to, can be computed straight into that output: no later step reads
  // the argument, the defining step reads it (if at all) element by
  // element or updates it in place (UpdatesInPlace), and no elementwise
  // step before it reads it whole (a view fusion could run beside the
  // write).
  bool CanComputeIntoDonatedOutput(const exec::Region& main, SlotId value,
                                   SlotId argument,
                                   const std::vector<SlotId>& returned) const;
  // Whether output `output` of `step` (an index past its outputs: none)
  // is its input over `root`'s memory with some elements replaced
  // (exec::Kernel::UpdatedInput: dynamic_update_slice, scatter), no other
  // input being a view of that memory: the output may then be written
  // into it, wherever the input's value is not read later.
  bool UpdatesInPlace(const exec::Step& step, int output, SlotId root) const;
  // Whether a step of another frame than the innermost one took an index
  // strictly between `a` and `b`: a nested region's step lies between two
  // steps of this region (the step at `b` runs regions when `a` is the
  // index of the step before it).
  bool OtherFrameStepBetween(int64_t a, int64_t b) const;
  // In the loop body being lowered (RegionResults::kLoopState), makes each
  // result that a dynamic_update_slice or scatter computes from the param
  // at its own position (exec::Kernel::UpdatedInput) update that param in
  // place, when no later step reads it; and so each result written after
  // the param's last reader where WritesOverLoopParam allows it.
  void UpdateLoopStateInPlace();
  // Whether `result`, written by step `writer` of the loop body `region`,
  // may be written into the memory of `param` (of the same size), given
  // that no step after the writer reads the param: the writer reads the
  // param element by element if at all, and no elementwise step before it
  // reads the param whole.
  bool WritesOverLoopParam(const exec::Region& region, size_t writer,
                           SlotId result, SlotId param) const;
  // Whether `root` is an ordinary scratch array (not a token, argument,
  // output or constant) that no step after `index` reads.
  bool ScratchDeadAfter(SlotId root, int64_t index) const;
  // Notes, for each elementwise step of a region's final steps (first
  // and last step indices given), an output that may take over the memory
  // of a scratch input that dies at the step (ElementwiseKernel::
  // CanWriteOver); Finish keeps those whose lifetimes still end and begin
  // there (same file).
  void NoteInPlaceWrites(const std::vector<exec::Step>& steps,
                         const std::vector<int64_t>& indices,
                         const std::vector<int64_t>& last_indices);
  // Notes an output of `step` (spanning step indices [first, last]) that
  // is an input with some elements replaced (exec::Kernel::UpdatedInput:
  // a dynamic_update_slice, a scatter) for writing into that input's
  // memory, when the input is scratch that dies at the step and no other
  // input is a view of it.
  void NoteInPlaceUpdates(const exec::Step& step, int64_t first,
                          int64_t last);
  // Gives row reductions their elementwise producer (same file).
  void FuseRowReductions(
      std::vector<exec::Step>& steps, std::vector<int64_t>& indices,
      std::vector<int64_t>& last_indices,
      const std::function<bool(int64_t, int64_t)>& foreign_between);

  const ir::Module& module_;
  const CustomCallRegistry& custom_calls_;
  exec::Plan& plan_;
  std::map<const ir::Value*, std::vector<SlotId>> values_;
  std::vector<Frame> frames_;
  int next_frame_id_ = 0;
  std::vector<int> slot_frame_;     // frame id defining each slot; -1 global
  std::vector<int64_t> first_def_;  // per slot
  std::vector<int64_t> last_use_;   // per slot
  std::vector<SlotId> alias_root_;  // per slot: the slot owning its memory
  // An output that may be written into the memory of an input that dies
  // at the step spanning step indices [first, last] (NoteInPlaceWrites).
  struct InPlaceWrite {
    SlotId output, input;
    int64_t first, last;
  };
  std::vector<InPlaceWrite> in_place_writes_;
  // Slots written by a broadcast of one element -> the slot holding it
  // (at index 0).
  std::map<SlotId, SlotId> scalar_broadcasts_;
  // Views a consumer read through (NoteBypassedView).
  std::set<SlotId> bypassed_views_;
  // Ops whose results are noted as bypassed views once lowered.
  std::set<const ir::Operation*> bypassed_ops_;
  // Ops whose results an earlier op bound (LowerAhead).
  std::set<const ir::Operation*> lowered_ahead_;
  int64_t counter_ = 0;
  int64_t next_collective_id_ = 0;
  // Index of the first step of the op being lowered.
  int64_t op_start_ = 0;
  // Whether the op being lowered has lowered a region so far.
  bool regions_in_op_ = false;
  // Slots to keep alive to the end of the op being lowered: outer values
  // its regions use, and its regions' params and results.
  std::vector<SlotId> pending_captures_;
  std::vector<SlotId> pending_whole_op_;
  std::vector<const ir::Operation*> call_stack_;
  bool quantized_as_float_ = false;
  bool fold_constants_ = true;
  bool fuse_elementwise_ = true;
  // The step index of every step of each frame's region, in the region's
  // order (by frame id), and the frame that emitted each step index (-1:
  // none; indices also mark op boundaries).
  std::map<int, std::vector<int64_t>> frame_step_indices_;
  std::vector<int> index_frame_;
  // Steps that fusion removed (each fused run of n steps counts n - 1).
  int64_t fused_away_ = 0;
  bool use_onednn_ = true;
  bool host_transfers_between_participants_ = false;
  int64_t onednn_min_multiply_adds_ = 0;
  ProcessPosition position_;
};

// Registration of the lowering functions of one op family (lower_*.cc).
void RegisterLowering(ir::OpCode code, LowerFn fn);

}  // namespace kiln::compile

#endif  // KILN_COMPILE_LOWERING_H_
