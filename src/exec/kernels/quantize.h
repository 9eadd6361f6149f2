// Uniform quantization: storage integers <-> expressed floats.
#ifndef KILN_EXEC_KERNELS_QUANTIZE_H_
#define KILN_EXEC_KERNELS_QUANTIZE_H_

#include <memory>
#include <vector>

#include "exec/plan.h"

namespace kiln::exec {

// The parameters of a !quant.uniform type.
struct QuantizationParams {
  ElementType storage_type = ElementType::kI8;
  int64_t storage_min = -128;
  int64_t storage_max = 127;
  ElementType expressed_type = ElementType::kF32;
  int64_t axis = -1;  // per-axis quantization dimension, or -1
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
};

// expressed = (storage - zero_point) * scale, computed in the expressed
// type's precision (f64 for f64, f32 otherwise). `shape` is the storage
// array's shape.
std::unique_ptr<Kernel> MakeDequantizeKernel(const ArrayShape& shape,
                                             QuantizationParams params);

// storage = clamp(round_nearest_even(expressed / scale + zero_point),
// storage_min, storage_max). `shape` is the expressed array's shape.
std::unique_ptr<Kernel> MakeQuantizeKernel(const ArrayShape& shape,
                                           QuantizationParams params);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_QUANTIZE_H_
