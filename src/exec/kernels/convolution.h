// Convolution in a canonical layout: input [N, C, spatial...], kernel
// [O, I, spatial...], output [N', O, spatial...] (the lowering transposes
// to and from the program's dimension numbers).
#ifndef KILN_EXEC_KERNELS_CONVOLUTION_H_
#define KILN_EXEC_KERNELS_CONVOLUTION_H_

#include <memory>
#include <vector>

#include "exec/plan.h"

namespace kiln::exec {

struct ConvolutionParams {
  ElementType type = ElementType::kF32;  // native compute type
  std::vector<int64_t> input_dims;       // [N, C, spatial...]
  std::vector<int64_t> kernel_dims;      // [O, I, spatial...]
  std::vector<int64_t> output_dims;      // [N / batch_groups, O, spatial...]
  std::vector<int64_t> strides;
  std::vector<int64_t> padding_low;
  std::vector<int64_t> lhs_dilation;
  std::vector<int64_t> rhs_dilation;
  std::vector<bool> reversal;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
};

// Null for types without a kernel.
std::unique_ptr<Kernel> MakeConvolutionKernel(ConvolutionParams params);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_CONVOLUTION_H_
