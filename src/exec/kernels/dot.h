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

// chlo.ragged_dot with a ragged non-contracting lhs dimension: lhs [batch,
// m, k], rhs [groups, batch, k, n], group sizes (input 2, any integer type,
// `groups` elements). Row i of m belongs to group g when the ragged
// coordinate of i, (i / ragged_inner) % ragged_size, falls in group g's
// range; rows past every group are zero.
std::unique_ptr<Kernel> MakeRaggedMatmulKernel(ElementType type, int64_t batch,
                                               int64_t m, int64_t k, int64_t n,
                                               int64_t groups,
                                               int64_t ragged_size,
                                               int64_t ragged_inner,
                                               ElementType sizes_type);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_DOT_H_
