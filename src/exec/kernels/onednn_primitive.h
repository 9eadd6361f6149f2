// What the oneDNN kernels share (internal to exec/kernels): the CPU engine,
// element types, descriptors over Kiln's strided arrays, and one kernel
// class that runs a primitive with reorders around it.
#ifndef KILN_EXEC_KERNELS_ONEDNN_PRIMITIVE_H_
#define KILN_EXEC_KERNELS_ONEDNN_PRIMITIVE_H_

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <vector>

#include "exec/kernels/onednn.h"

namespace kiln::exec::onednn {

// The process's CPU engine, created on first use.
const dnnl::engine& Engine();

// oneDNN's name for `type` (f32, bf16, f16, s8, u8, s32); none otherwise.
std::optional<dnnl::memory::data_type> DataType(ElementType type);

// A descriptor of `dims` at element `strides`; none where oneDNN refuses
// it.
std::optional<dnnl::memory::desc> StridedDesc(
    const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
    ElementType type);

// Attributes every Kiln primitive is created with: the caller owns the
// scratchpad, so one primitive runs from several threads at once.
dnnl::primitive_attr UserScratchpad();

// Whether `pd` holds an implementation other than oneDNN's reference
// loops ("ref:any", "ref_int8:any"), which are slower than Kiln's own.
bool IsOptimized(const dnnl::primitive_desc_base& pd);

// A step's array as a primitive sees it. `user` is the slot's layout;
// `compute` the layout the primitive was created for. When they differ, a
// reorder copies between the slot and a buffer at `offset` in the step's
// scratch (before the primitive for inputs, after it for outputs).
struct PrimitiveArg {
  int dnnl_arg = 0;  // DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST
  bool is_output = false;
  int index = 0;  // input or output number in the step
  dnnl::memory::desc user;
  dnnl::memory::desc compute;
  std::optional<dnnl::reorder> reorder;
  int64_t offset = 0;
};

// Builds a kernel around `primitive` (created from `pd` with
// UserScratchpad()): lays out its scratchpad and each reordered argument's
// buffer in one scratch slot. `compute` of each argument must be set;
// reorders are made here where `user` differs. Null when a reorder is
// unimplemented.
OneDnnKernel MakePrimitiveKernel(const dnnl::primitive_desc_base& pd,
                                 dnnl::primitive primitive,
                                 std::vector<PrimitiveArg> args);

}  // namespace kiln::exec::onednn

#endif  // KILN_EXEC_KERNELS_ONEDNN_PRIMITIVE_H_
