// Batched matrix multiplication, the kernel behind dot_general and dot
// (the lowering transposes operands into [batch, m, k] x [batch, k, n]).
#ifndef KILN_EXEC_KERNELS_DOT_H_
#define KILN_EXEC_KERNELS_DOT_H_

#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

// out[b, i, j] = sum_k lhs[b, i, k] * rhs[b, k, j], in native type `type`
// (accumulating in that type; integers wrap). Null for types without a
// kernel.
std::unique_ptr<Kernel> MakeMatmulKernel(ElementType type, int64_t batch,
                                         int64_t m, int64_t k, int64_t n);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_DOT_H_
