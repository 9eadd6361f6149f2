// batch_norm_inference, batch_norm_training and batch_norm_grad, computed
// in double precision per feature.
#ifndef KILN_EXEC_KERNELS_BATCH_NORM_H_
#define KILN_EXEC_KERNELS_BATCH_NORM_H_

#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

enum class BatchNormKind { kInference, kTraining, kGrad };

// Inputs and outputs as the ops list them (spec: batch_norm_*): inference
// (operand, scale, offset, mean, variance) -> result; training (operand,
// scale, offset) -> (result, batch_mean, batch_var); grad (operand, scale,
// mean, variance, grad_output) -> (grad_operand, grad_scale, grad_offset).
// `operand` is the operand's shape; all arrays share its float type.
std::unique_ptr<Kernel> MakeBatchNormKernel(BatchNormKind kind,
                                            ArrayShape operand,
                                            int64_t feature_index,
                                            double epsilon);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_BATCH_NORM_H_
