// while, if and case: kernels that run nested regions of the plan.
#ifndef KILN_EXEC_KERNELS_CONTROL_FLOW_H_
#define KILN_EXEC_KERNELS_CONTROL_FLOW_H_

#include <memory>
#include <optional>
#include <vector>

#include "exec/kernels/elementwise.h"  // CompareDirection
#include "exec/plan.h"

namespace kiln::exec {

// The slots over one loop value's memory in a while's regions: the slot
// itself and every view of it (exec/plan.h's aliases share its bytes).
struct LoopValueSlots {
  std::vector<SlotId> cond_param;
  std::vector<SlotId> body_param;
  // Empty when the result is not memory the body writes: the param itself
  // (a value the loop does not change or updates in place) or a constant,
  // copied instead.
  std::vector<SlotId> body_result;
  // Whether the result is copied into the param after each iteration (an
  // empty body_result, or a value small enough that a copy costs less
  // than rebinding) rather than trading memory with it.
  bool copied = false;
  // For a copied value: whether its state lives in the while's output
  // from the start (the body's param borrows that memory), so that the
  // loop ends with no copy: a large value updated in place or unchanged.
  bool in_output = false;
};

// A while's cond that is one comparison of two integer scalars (a loop
// counter against its bound, as in every fori_loop and scan JAX writes):
// the while kernel compares them itself instead of running the cond's
// region. lhs and rhs are slots of the cond region (its params, or
// constants).
struct LoopCondition {
  SlotId lhs = -1;
  SlotId rhs = -1;
  CompareDirection direction = CompareDirection::kLT;
  // A signed integer type, or an unsigned one of up to 32 bits (compared
  // as int64 values, which hold them all).
  ElementType type = ElementType::kI32;
};

// while: inputs are the initial state (one slot per leaf), outputs the final
// state. Each body result is a slot of the body of its own memory, held for
// the whole loop, or a constant, or the body's param at the same position
// (a value the loop does not change). The cond reads the body's params
// where they are. After each iteration a moved result and its param trade
// memory (`values` lists the slots to rebind), and a copied one is copied
// into its param (LoopValueSlots::copied), whose memory may be the while's
// output (LoopValueSlots::in_output). Otherwise only the initial state and
// the final state of values not kept in the output are copied. With a
// `condition`, the cond region is not run: the kernel evaluates the
// comparison. Checks for cancellation every iteration.
std::unique_ptr<Kernel> MakeWhileKernel(
    std::unique_ptr<Region> cond, std::unique_ptr<Region> body,
    std::vector<LoopValueSlots> values, std::vector<int64_t> value_bytes,
    std::optional<LoopCondition> condition = std::nullopt);

// case (and if, with branches {true, false} chosen by an i1): input 0 is the
// index (an i32 scalar; out-of-range indices pick the last branch) or the
// predicate; outputs receive the chosen branch's results.
std::unique_ptr<Kernel> MakeCaseKernel(
    std::vector<std::unique_ptr<Region>> branches, bool is_if);

// chlo.scan: inputs are N arrays then M initial carries; outputs are K
// arrays then the M final carries. The body runs once per position along
// `dimension` (backwards when `reverse`) on the inputs' slices there and the
// carries; it returns the K output slices and the new carries.
std::unique_ptr<Kernel> MakeScanKernel(std::vector<ArrayShape> inputs,
                                       std::vector<ArrayShape> outputs,
                                       int64_t num_carries, int64_t dimension,
                                       bool reverse,
                                       std::unique_ptr<Region> body);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_CONTROL_FLOW_H_
