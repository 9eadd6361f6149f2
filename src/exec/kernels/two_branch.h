// f32 functions of two branches, each evaluated only where it is taken.
//
// erf and erfc (fast_math.h) are a cheap polynomial for |x| < 1 and, beyond,
// an exponential times a rational function that costs five times as much.
// A vectorized loop has lanes of both kinds in most vectors, so it evaluates
// both branches for every element and selects. On a CPU with AVX-512, a
// kernel can do better: it compresses the elements of a chunk into two
// lists, one per branch (vcompressps), runs each branch's loop over its own
// list, and expands the results back into place (vexpandps). An element
// goes through the same IEEE operations either way, so the bits are those
// of the select form in every version of the kernel; the work is each
// branch's share of the elements instead of both branches for all of them.
// On gelu's erfc (x*1.5+0.25 for standard normal x: two thirds of the
// elements below 1) the split form takes half the time.
//
// A function opts in by naming its branches (a `Branches` type):
//   static float Small(float x);  // for |x| < 1
//   static float Large(float x);  // for |x| >= 1, defined for every x
// and its value is x for a NaN, Small(x) for |x| < 1, else Large(x).
#ifndef KILN_EXEC_KERNELS_TWO_BRANCH_H_
#define KILN_EXEC_KERNELS_TWO_BRANCH_H_

#include <concepts>
#include <cstdint>

namespace kiln::exec {

template <typename Op>
concept HasTwoBranches = requires(float x) {
  { Op::Branches::Small(x) } -> std::same_as<float>;
  { Op::Branches::Large(x) } -> std::same_as<float>;
};

// Whether this CPU runs the split form (an x86-64 CPU with AVX-512F).
bool TwoBranchSplitAvailable();

// The function whose branches are `Branches` over n elements in the split
// form, where TwoBranchSplitAvailable; `out` may be `in`. Defined in
// two_branch.cc, with the kernels' floating-point options (no contraction
// of a multiply and an add), for the branches of ops::Erf, ops::Erfc and
// ops::ErfcSingle (elementwise_ops.h).
template <typename Branches>
void RunTwoBranchSplit(const float* in, float* out, int64_t n);

// Elements per chunk: each chunk's two lists are on the stack.
inline constexpr int64_t kTwoBranchChunk = 2048;

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_TWO_BRANCH_H_
