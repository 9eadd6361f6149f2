// sort (stable, any comparator) and top_k.
#ifndef KILN_EXEC_KERNELS_SORT_H_
#define KILN_EXEC_KERNELS_SORT_H_

#include <memory>
#include <vector>

#include "exec/kernels/elementwise.h"
#include "exec/plan.h"

namespace kiln::exec {

// A comparator `(a0, b0, ...) -> compare(a_k, b_k)` known to the kernel.
struct KnownComparator {
  int operand = 0;  // which input is the key
  CompareDirection direction = CompareDirection::kLT;
  CompareType type = CompareType::kDefault;
  // Float keys are canonicalized before a total-order compare: -0 as +0
  // and every NaN as one positive NaN (JAX's comparator for jnp.sort).
  bool canonical = false;
};

struct SortParams {
  std::vector<ArrayShape> inputs;  // N inputs of one shape
  int64_t dimension = 0;
  // Set when the comparator is a single known compare.
  bool known = false;
  KnownComparator comparator;
};

// Inputs: N arrays; outputs: N arrays sorted along `dimension` by the
// comparator region (params: lhs/rhs pairs per input), stably: elements
// the comparator does not order keep their input order.
std::unique_ptr<Kernel> MakeSortKernel(SortParams params,
                                       std::unique_ptr<Region> comparator);

// Whether `kernel` is a sort kernel that compares by a known comparator
// rather than calling the comparator region (for tests).
bool SortsByKnownComparator(const Kernel& kernel);

// chlo.top_k: the k largest elements of the last dimension (NaN above
// everything, stable among equals) and their indices (i32 or i64).
std::unique_ptr<Kernel> MakeTopKKernel(ArrayShape operand, int64_t k,
                                       ElementType index_type);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_SORT_H_
