// einsum and unary_einsum (deprecated StableHLO ops kept for old programs).
#ifndef KILN_EXEC_KERNELS_EINSUM_H_
#define KILN_EXEC_KERNELS_EINSUM_H_

#include <memory>
#include <vector>

#include "exec/plan.h"

namespace kiln::exec {

// One operand of an einsum: its dimensions' label indices.
struct EinsumOperand {
  std::vector<int> labels;
  std::vector<int64_t> dims;
};

// result[result labels] = sum over the other labels of the product of the
// operands, in native type `type`. `label_sizes` gives every label's size.
std::unique_ptr<Kernel> MakeEinsumKernel(ElementType type,
                                         std::vector<EinsumOperand> operands,
                                         std::vector<int> result_labels,
                                         std::vector<int64_t> label_sizes);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_EINSUM_H_
