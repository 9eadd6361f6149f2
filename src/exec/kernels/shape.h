// Kernels that move elements between layouts without arithmetic:
// transpose, broadcast, slice, reverse, pad, concatenate, dynamic_slice
// and dynamic_update_slice. All are built on one strided copy.
#ifndef KILN_EXEC_KERNELS_SHAPE_H_
#define KILN_EXEC_KERNELS_SHAPE_H_

#include <memory>
#include <vector>

#include "exec/plan.h"

namespace kiln::exec {

// Copies the elements of an index space `dims` from a source layout to a
// destination layout, both given as an offset and per-dimension strides in
// elements (strides may be 0 for broadcasting, or negative for reversal).
struct StridedCopy {
  std::vector<int64_t> dims;
  int64_t source_offset = 0;
  std::vector<int64_t> source_strides;
  int64_t target_offset = 0;
  std::vector<int64_t> target_strides;

  // Merges dimensions that are contiguous in both layouts and drops size-1
  // ones, so the innermost loop is as long as possible.
  void Simplify();
  int64_t num_elements() const;
  void Run(const std::byte* source, std::byte* target,
           int64_t element_bytes) const;
};

// One strided copy from input 0 to output 0.
std::unique_ptr<Kernel> MakeStridedCopyKernel(StridedCopy copy,
                                              int64_t element_bytes);

// Output 0 filled with the scalar input 1 (`count` elements), then the
// strided copy of input 0 into it (pad).
std::unique_ptr<Kernel> MakePadKernel(StridedCopy copy, int64_t count,
                                      int64_t element_bytes);

// Output 0 receives one strided copy per input (concatenate).
std::unique_ptr<Kernel> MakeConcatenateKernel(std::vector<StridedCopy> copies,
                                              int64_t element_bytes);

// dynamic_slice: input 0 is the operand, inputs 1..rank the start indices
// (scalars of `index_type`; or, with `index_vector`, input 1 holds them all
// as a 1-D array), clamped so the slice stays inside the operand.
std::unique_ptr<Kernel> MakeDynamicSliceKernel(ArrayShape operand,
                                               std::vector<int64_t> sizes,
                                               ElementType index_type,
                                               bool index_vector = false);

// dynamic_update_slice: input 0 the operand, input 1 the update, inputs
// 2.. the start indices (clamped).
// The kernel copies the operand to the output unless both are the same
// memory (an update in place).
std::unique_ptr<Kernel> MakeDynamicUpdateSliceKernel(
    ArrayShape operand, std::vector<int64_t> update_dims,
    ElementType index_type);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_SHAPE_H_
