// An execution plan: what compile/ produces and exec/ runs.
//
// A plan is a list of steps over buffer slots. Each slot is one dense array
// (or a token) whose shape is known when the plan is built; where it lives
// (a caller's argument, a caller-allocated output, a constant held by the
// plan, or an offset in the per-run arena) is decided ahead of time by the
// buffer planner. Each step is a pre-resolved kernel call: an immutable
// Kernel object holding everything the op needs as plain C++ values
// (shapes, strides, attribute values), plus the slots it reads and writes.
// Ops with regions (while, reduce, sort, ...) hold their regions as nested
// `Region`s over the same slot table.
//
// A Plan is immutable once built and may be run from several threads at
// once; all per-run state lives in a RunContext (exec/executor.h).
#ifndef KILN_EXEC_PLAN_H_
#define KILN_EXEC_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "exec/array_shape.h"

namespace kiln::exec {

using SlotId = int32_t;

enum class SlotKind : uint8_t {
  kTemp,      // in the per-run arena, at `offset`
  kArgument,  // the caller's argument `index`
  kOutput,    // output `index`, allocated through the caller's allocator
  kConstant,  // constant `index` of the plan
};

struct Slot {
  ArrayShape shape;
  bool is_token = false;
  SlotKind kind = SlotKind::kTemp;
  int64_t offset = 0;  // kTemp: byte offset in the arena
  int32_t index = -1;  // kArgument / kOutput / kConstant: which one

  int64_t byte_size() const { return is_token ? 0 : shape.byte_size(); }
};

class RunContext;
struct Step;

// One pre-resolved kernel call. Implementations hold the op's parameters as
// plain values; `Run` reads its inputs and writes its outputs through the
// context's slot table (`ctx.In<T>(step, i)`, `ctx.Out<T>(step, i)`).
// Run is const and must not keep state between calls: a plan is run
// concurrently from several threads.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status Run(RunContext& ctx, const Step& step) const = 0;

  // For an output that is one of the inputs with some elements replaced
  // (dynamic_update_slice, scatter): that input's index; else -1. Such a
  // kernel copies the input into the output first, skipping the copy when
  // both are the same memory, and afterwards reads it only through the
  // output; so where the input dies at the step, the output may be written
  // into its memory (a loop's carried buffer updated in place).
  virtual int UpdatedInput(int output) const { return -1; }
};

struct Step {
  std::unique_ptr<Kernel> kernel;
  std::vector<SlotId> inputs;
  std::vector<SlotId> outputs;
  // The op this step comes from, for error messages: "stablehlo.divide at
  // main.mlir:12:7".
  std::string where;
};

// A straight-line list of steps with parameter and result slots: the body
// of a function or of an op's region. Whoever runs a region writes its
// `params` first and reads its `results` after.
struct Region {
  std::vector<Step> steps;
  std::vector<SlotId> params;
  std::vector<SlotId> results;
};

// An argument or output of a plan: a dense array or a token.
struct ValueSpec {
  ArrayShape shape;
  bool is_token = false;
  int64_t byte_size() const { return is_token ? 0 : shape.byte_size(); }
};

// Memory aligned to kBufferAlignment bytes.
inline constexpr size_t kBufferAlignment = 64;
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes);
  AlignedBuffer(AlignedBuffer&& other) noexcept { *this = std::move(other); }
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  ~AlignedBuffer();
  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// Allocates `bytes` aligned to kBufferAlignment; a ResourceExhausted error
// (not a crash) for more than the machine's memory or when the system
// refuses.
StatusOr<AlignedBuffer> AllocateAligned(int64_t bytes);

// Scratch arenas that finished runs of a plan hand back for its next run,
// so that a repeated execute allocates no scratch memory (and touches no
// fresh pages). Holds at most kMaxKept arenas: as many as runs usually
// overlap.
class ArenaCache {
 public:
  static constexpr size_t kMaxKept = 4;
  // An arena of at least `bytes`: a kept one, or a new one.
  StatusOr<AlignedBuffer> Take(int64_t bytes);
  void Give(AlignedBuffer arena);

 private:
  std::mutex mutex_;
  std::vector<AlignedBuffer> kept_;
};

class Plan {
 public:
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // The entry function: params are the argument slots in order (one per
  // argument leaf; tuples are flattened), results the output slots.
  const Region& main() const { return main_; }
  const std::vector<Slot>& slots() const { return slots_; }
  const Slot& slot(SlotId id) const { return slots_[id]; }
  const std::vector<ValueSpec>& arguments() const { return arguments_; }
  const std::vector<ValueSpec>& outputs() const { return outputs_; }
  // For each output, the argument the program asks it to alias (donation:
  // tf.aliasing_output / jax.buffer_donor / mhlo.input_output_alias), or -1.
  // The plan is correct whether or not the caller's allocator hands out the
  // donated argument's memory for that output: no element of the argument
  // is read after the output's element in the same memory is written
  // (the output is computed in place only by the argument's last reader,
  // and only where that step reads it element by element; otherwise it is
  // copied there once every read is done).
  const std::vector<int>& output_aliases() const { return output_aliases_; }
  // Bytes of scratch memory each run needs.
  int64_t arena_bytes() const { return arena_bytes_; }
  // The most scratch bytes live at one step (compile/buffer_planner.h):
  // the least any placement of the arena could take.
  int64_t live_peak_bytes() const { return live_peak_bytes_; }
  const std::vector<AlignedBuffer>& constants() const { return constants_; }
  // Number of steps, nested regions included.
  int64_t num_steps() const { return num_steps_; }
  // Number of collective ops whose steps meet peers (exec/collectives.h);
  // 0 when the plan runs alone.
  int64_t num_collectives() const { return num_collectives_; }

  // Where runs take their arenas from (the one mutable part of a plan).
  ArenaCache& arena_cache() const { return arena_cache_; }

  // Builder access, used by compile/.
  Region& mutable_main() { return main_; }
  std::vector<Slot>& mutable_slots() { return slots_; }
  std::vector<ValueSpec>& mutable_arguments() { return arguments_; }
  std::vector<ValueSpec>& mutable_outputs() { return outputs_; }
  std::vector<int>& mutable_output_aliases() { return output_aliases_; }
  std::vector<AlignedBuffer>& mutable_constants() { return constants_; }
  void set_arena_bytes(int64_t bytes) { arena_bytes_ = bytes; }
  void set_live_peak_bytes(int64_t bytes) { live_peak_bytes_ = bytes; }
  void set_num_steps(int64_t steps) { num_steps_ = steps; }
  void set_num_collectives(int64_t count) { num_collectives_ = count; }

 private:
  Region main_;
  std::vector<Slot> slots_;
  std::vector<ValueSpec> arguments_;
  std::vector<ValueSpec> outputs_;
  std::vector<int> output_aliases_;
  std::vector<AlignedBuffer> constants_;
  int64_t arena_bytes_ = 0;
  int64_t live_peak_bytes_ = 0;
  int64_t num_steps_ = 0;
  int64_t num_collectives_ = 0;
  mutable ArenaCache arena_cache_;
};

// The plan as text, for a compiler engineer (`kiln print --stop-after
// lower` or `plan`): its sizes, the entry's steps in order (kernel, input
// and output slots, the op they come from; a region's steps are inside its
// kernel and not listed), and every slot with its shape and place.
std::string DescribePlan(const Plan& plan);

}  // namespace kiln::exec

#endif  // KILN_EXEC_PLAN_H_
