// Running a Plan: the caller owns the argument buffers and provides the
// output buffers through an OutputAllocator; everything else a run needs
// lives in a RunContext created for that run.
#ifndef KILN_EXEC_EXECUTOR_H_
#define KILN_EXEC_EXECUTOR_H_

#include <atomic>
#include <cstddef>
#include <span>
#include <vector>

#include "base/status.h"
#include "exec/collectives.h"
#include "exec/plan.h"
#include "exec/profile.h"

namespace kiln::exec {

class FfiUserData;  // exec/ffi.h

// Gives memory for a plan's outputs. The runtime implements it to place
// outputs in its own buffers (or to hand back a donated argument's memory
// for an output with `Plan::output_aliases()[index] >= 0`).
class OutputAllocator {
 public:
  virtual ~OutputAllocator() = default;
  // At least `spec.byte_size()` bytes, aligned to 16 bytes at least (64
  // preferred), valid until the run ends and owned by the caller.
  virtual StatusOr<void*> Allocate(int index, const ValueSpec& spec) = 0;
};

// An OutputAllocator that owns what it allocates: for tools and tests.
class OwningOutputAllocator : public OutputAllocator {
 public:
  StatusOr<void*> Allocate(int index, const ValueSpec& spec) override;
  // The buffer of output `index` (after a successful run).
  const AlignedBuffer& buffer(int index) const { return buffers_[index]; }
  std::vector<AlignedBuffer> TakeBuffers() { return std::move(buffers_); }

 private:
  std::vector<AlignedBuffer> buffers_;
};

struct RunOptions {
  // When set and it becomes true, the run stops between steps (and between
  // loop iterations) with a CANCELLED error.
  const std::atomic<bool>* cancel = nullptr;
  // Run with subnormals flushed to zero (inputs and results), as XLA:CPU
  // runs programs: what the PJRT plugin does, so that frameworks see the
  // numbers their CPU backend gives. Off: IEEE arithmetic, as the StableHLO
  // spec and its interpreter define it (`kiln check`).
  bool flush_denormals = false;
  // The launch this run takes part in (exec/collectives.h), and the run's
  // flattened id there (replica_id * num_partitions + partition_id). Null
  // for a run on its own: its collectives must then have one participant.
  // Execute aborts the communicator when the run fails and marks the
  // participant finished when it succeeds.
  Communicator* communicator = nullptr;
  int participant = 0;
  // When set, every step run records an event here (exec/profile.h).
  Profile* profile = nullptr;
  // What FFI handlers see of the run (exec/ffi.h): the execution's user
  // data (PJRT_ExecuteContext; may be null), the device's id and the run's
  // id.
  const FfiUserData* ffi_user_data = nullptr;
  int device_ordinal = 0;
  int64_t run_id = 0;
};

// Per-run state: the address of every slot, and the run's options.
class RunContext {
 public:
  // A context over `slots` (normally plan.slots(); the compiler also runs
  // single steps over its slot table while folding constants).
  RunContext(const std::vector<Slot>& slots, const RunOptions& options);

  const Slot& slot_info(SlotId id) const { return slot_infos_[id]; }
  std::byte* slot(SlotId id) const { return slots_[id]; }
  void set_slot(SlotId id, std::byte* address) { slots_[id] = address; }

  template <typename T>
  const T* In(const Step& step, int i) const {
    return reinterpret_cast<const T*>(slots_[step.inputs[i]]);
  }
  template <typename T>
  T* Out(const Step& step, int i) const {
    return reinterpret_cast<T*>(slots_[step.outputs[i]]);
  }

  bool cancelled() const {
    return options_.cancel != nullptr &&
           options_.cancel->load(std::memory_order_relaxed);
  }
  Status CancelledStatus() const;
  const std::atomic<bool>* cancel_flag() const { return options_.cancel; }

  // The run's communicator (null when it runs alone) and its participant
  // id.
  Communicator* communicator() const { return options_.communicator; }
  int participant() const { return options_.participant; }
  const RunOptions& options() const { return options_; }

  // Runs every step of `region` in order (its params must be written).
  Status RunRegion(const Region& region);

  // Copies `bytes` from slot `from` to slot `to` (no-op when they share
  // memory).
  void CopySlot(SlotId from, SlotId to) const;

 private:
  friend StatusOr<std::vector<void*>> Execute(const Plan&,
                                              std::span<const void* const>,
                                              OutputAllocator&,
                                              const RunOptions&);
  const std::vector<Slot>& slot_infos_;
  RunOptions options_;
  int depth_ = 0;  // regions being run inside a step, for the profile
  std::vector<std::byte*> slots_;
  AlignedBuffer arena_;
};

// Runs `plan` with `arguments[i]` holding argument i (laid out as
// plan.arguments()[i]; tokens may be null). Returns the output addresses
// (from `allocator`) in order. Run-time failures (a failed check, a
// cancelled run, memory exhaustion) come back as a Status; what the
// allocator handed out stays the caller's either way.
StatusOr<std::vector<void*>> Execute(const Plan& plan,
                                     std::span<const void* const> arguments,
                                     OutputAllocator& allocator,
                                     const RunOptions& options = {});

}  // namespace kiln::exec

#endif  // KILN_EXEC_EXECUTOR_H_
