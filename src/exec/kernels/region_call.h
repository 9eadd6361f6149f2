// Calling a region once per element (reduce bodies, scatter update
// computations, sort comparators, ...), and the common bodies recognized
// so kernels can skip the call.
#ifndef KILN_EXEC_KERNELS_REGION_CALL_H_
#define KILN_EXEC_KERNELS_REGION_CALL_H_

#include <cstring>
#include <memory>
#include <vector>

#include "exec/executor.h"
#include "exec/plan.h"

namespace kiln::exec {

// A body `(a, b) -> op(a, b)` known to the kernels, so they apply it
// directly; kGeneric calls the region. kReplace is `(a, b) -> b` (scatter's
// plain update), kKeep `(a, b) -> a`.
enum class Combiner {
  kGeneric,
  kAdd,
  kMultiply,
  kMaximum,
  kMinimum,
  kAnd,
  kOr,
  kXor,
  kReplace,
  kKeep,
};

// A region whose params are scalars read in place: each call points the
// param slots at the caller's element addresses, runs the steps, and the
// caller reads the results' addresses.
class ScalarRegion {
 public:
  explicit ScalarRegion(std::unique_ptr<Region> region)
      : region_(std::move(region)) {}
  const Region& region() const { return *region_; }
  int num_params() const { return static_cast<int>(region_->params.size()); }
  int num_results() const { return static_cast<int>(region_->results.size()); }

  Status Call(RunContext& ctx, const std::byte* const* args) const {
    for (size_t i = 0; i < region_->params.size(); ++i) {
      ctx.set_slot(region_->params[i], const_cast<std::byte*>(args[i]));
    }
    return ctx.RunRegion(*region_);
  }
  const std::byte* Result(RunContext& ctx, int i) const {
    return ctx.slot(region_->results[i]);
  }

  // Calls a reduction-style body (params: n accumulators, then n values;
  // n results) and writes result i over accumulator i, at args[i]. The
  // results may alias the params, so they go through `stage` (16 bytes per
  // result) first. `bytes[i]` is the element size of result i.
  Status CallAndUpdate(RunContext& ctx, const std::byte* const* args,
                       const int64_t* bytes, std::byte* stage) const {
    RETURN_IF_ERROR(Call(ctx, args));
    const size_t n = region_->results.size();
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(stage + 16 * i, Result(ctx, static_cast<int>(i)), bytes[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(const_cast<std::byte*>(args[i]), stage + 16 * i, bytes[i]);
    }
    return OkStatus();
  }

 private:
  std::unique_ptr<Region> region_;
};

// Applies a known combiner to `count` pairs: target[i] = op(target[i],
// value[i]) in native type `type`; false when the combiner or type has no
// fast path. `target` and `value` do not overlap, except for kReplace.
bool ApplyCombiner(Combiner combiner, ElementType type, std::byte* target,
                   const std::byte* value, int64_t count);

// ApplyCombiner over `rows` rows of `count` pairs, dispatched once: target
// row r at element r * count, value row r at element r * value_stride.
bool ApplyCombinerRows(Combiner combiner, ElementType type, std::byte* target,
                       const std::byte* value, int64_t rows, int64_t count,
                       int64_t value_stride);

// ApplyCombiner on single elements at scattered places, in order: for each
// i, target[target_offsets[i]] = op(target[target_offsets[i]],
// value[value_offsets[i]]) (offsets in elements), dispatched once. A scatter
// of single elements (jnp's x.at[i].add(u), segment_sum) runs through it.
// False when the combiner or type has no fast path.
bool ApplyCombinerAt(Combiner combiner, ElementType type, std::byte* target,
                     const std::byte* value, const int64_t* target_offsets,
                     const int64_t* value_offsets, int64_t count);

// Whether ApplyCombiner handles (combiner, type).
bool HasFastCombiner(Combiner combiner, ElementType type);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_REGION_CALL_H_
