// Kernels that generate or rearrange data without arithmetic: iota,
// reduce_precision, and the shape-changing family (transpose, broadcast,
// slice, pad, concatenate, reverse, dynamic slices) in shape.h.
#ifndef KILN_EXEC_KERNELS_DATA_MOVEMENT_H_
#define KILN_EXEC_KERNELS_DATA_MOVEMENT_H_

#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

// result[i...] = i_dimension, in the result's element type.
std::unique_ptr<Kernel> MakeIotaKernel(const ArrayShape& result,
                                       int64_t dimension);

// Rounds floats of native type `type` (f32 or f64) to `exponent_bits` and
// `mantissa_bits` (round to nearest even; overflow to infinity, values
// below the reduced normal range to zero; NaN stays NaN).
std::unique_ptr<Kernel> MakeReducePrecisionKernel(ElementType type,
                                                  int64_t count,
                                                  int exponent_bits,
                                                  int mantissa_bits);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_DATA_MOVEMENT_H_
