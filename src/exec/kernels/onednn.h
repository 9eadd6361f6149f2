// Dense math through oneDNN: the matmul behind dot_general and the
// convolution behind stablehlo.convolution, for the element types and
// dimension numbers oneDNN implements on this CPU. Primitives are created
// when the kernel is made (at compile time); a factory returns no kernel
// where oneDNN refuses the case or has only its reference implementation,
// and the lowering then uses Kiln's own kernels (dot.h, convolution.h),
// which stay the reference tier.
//
// Kernels run concurrently from several threads: primitives are created
// with a user scratchpad, which each run takes from the plan's arena (the
// step's output 1, `scratch_bytes` long), so that a run shares no mutable
// state with another. Each run holds AllCoresMutex() (base/thread_pool.h)
// while oneDNN's OpenMP team computes.
#ifndef KILN_EXEC_KERNELS_ONEDNN_H_
#define KILN_EXEC_KERNELS_ONEDNN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/plan.h"

namespace kiln::exec {

// A kernel made over oneDNN and the per-run scratch memory it needs: when
// `scratch_bytes` > 0 the step passes a slot of that many bytes as its
// output 1.
struct OneDnnKernel {
  std::unique_ptr<Kernel> kernel;
  int64_t scratch_bytes = 0;
  // oneDNN's name of the implementation it chose ("brg:avx512_core", ...),
  // for tests and benchmarks.
  std::string implementation;
};

// A matmul over operands in place: lhs [batch..., m, k] and rhs [batch...,
// k, n] at any element strides (a transposed operand is a stride, not a
// copy), written to a row-major [batch..., m, n] result.
struct OneDnnMatmulParams {
  ElementType lhs_type = ElementType::kF32;
  ElementType rhs_type = ElementType::kF32;
  ElementType result_type = ElementType::kF32;
  std::vector<int64_t> batch;  // sizes of the batch dimensions
  int64_t m = 1, k = 1, n = 1;
  std::vector<int64_t> lhs_strides;  // for [batch..., m, k], in elements
  std::vector<int64_t> rhs_strides;  // for [batch..., k, n], in elements
  // Input 2 is an f32 [n] added to every row of the result (a dense
  // layer's bias), in the same pass: the result is filled with it and the
  // product accumulated onto it. Only the sgemm kernel takes it (no
  // kernel otherwise).
  bool bias = false;
};

// Input 0 lhs, input 1 rhs, output 0 the result (accumulated in f32 for
// float types, s32 for s8/u8). No kernel where oneDNN does not implement
// the types, or where a size is 0.
OneDnnKernel MakeOneDnnMatmulKernel(const OneDnnMatmulParams& params);

// Which arrays of a convolution oneDNN may lay out as it computes fastest
// (blocked formats, `format_tag::any`), reordered from and to the
// program's layout around the convolution in each run.
enum class OneDnnLayouts {
  kProgram,         // none: compute on the program's layouts directly
  kBlockedWeights,  // the kernel (weights) only
  kBlocked,         // input, kernel and result
};

// A convolution over the program's arrays in place. Dimensions are listed
// in oneDNN's logical order, each with its element stride in the array as
// the program lays it out (so NHWC input and HWIO kernel are strides of
// the same logical [N, C, H, W] and [O, I, H, W]).
struct OneDnnConvolutionParams {
  ElementType input_type = ElementType::kF32;
  ElementType kernel_type = ElementType::kF32;
  ElementType result_type = ElementType::kF32;
  std::vector<int64_t> input_dims, input_strides;    // [N, C, spatial...]
  std::vector<int64_t> kernel_dims, kernel_strides;  // [O, I, spatial...]
  std::vector<int64_t> output_dims, output_strides;  // [N, O, spatial...]
  std::vector<int64_t> window_strides;
  std::vector<int64_t> padding_low, padding_high;
  std::vector<int64_t> rhs_dilation;  // 1: none (StableHLO's convention)
  // Input dilation, empty or all 1 for none. A dilated input (a transposed
  // convolution) runs as oneDNN's deconvolution, which needs window
  // strides of 1 and reads the kernel spatially reversed: the caller
  // passes it reversed (a copy, or the program's own window_reversal).
  std::vector<int64_t> lhs_dilation;
  int64_t feature_group_count = 1;
  OneDnnLayouts layouts = OneDnnLayouts::kBlockedWeights;
  // Input 2 is an f32 [O] bias the primitive adds to each output feature
  // (f32 results, no input dilation).
  bool bias = false;
};

// Input 0 the input, input 1 the kernel, output 0 the result. No kernel
// for 0 or more than 3 spatial dimensions, negative padding (with input
// dilation: padding outside the dilated input's full correlation), or
// what oneDNN does not implement.
OneDnnKernel MakeOneDnnConvolutionKernel(const OneDnnConvolutionParams& params);

// Whether `kernel` is one of the kernels above (for tests that check which
// path a program took).
bool IsOneDnnKernel(const Kernel& kernel);

// Whether the CPU has VNNI (AVX512-VNNI or AVX-VNNI): oneDNN's int8 sums
// are exact in s32 only with it.
bool CpuHasVnni();

// Whether oneDNN runs bf16 products on the CPU's own bf16 instructions
// (AVX512-BF16 or AMX). Elsewhere it emulates them, slower than converting
// to f32 and running its f32 kernels: 1024^3 bf16 on an AVX2 CPU took 48 ms
// in bf16, 2.7x XLA:CPU's time, which converts to f32.
bool CpuHasNativeBf16Matmul();

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_ONEDNN_H_
