// gather and scatter with every dimension numbering of the spec (batching
// dimensions included).
#ifndef KILN_EXEC_KERNELS_GATHER_SCATTER_H_
#define KILN_EXEC_KERNELS_GATHER_SCATTER_H_

#include <memory>
#include <vector>

#include "exec/kernels/region_call.h"
#include "exec/plan.h"
#include "ir/attributes.h"

namespace kiln::exec {

struct GatherParams {
  ArrayShape operand;
  ArrayShape indices;
  std::vector<int64_t> output_dims;
  // The op's dimension numbers, as the IR holds them.
  ir::GatherDimensionNumbers dims;
  std::vector<int64_t> slice_sizes;
  // Inputs 2 and 3 are a mask with one bool per window, in row-major order
  // of the output's batch dimensions, and a one-element fill value: a
  // window whose mask is false is filled with the value instead of
  // gathered. It is the select JAX writes after a gather in its default
  // `mode="fill"` (NaN, or an integer's extreme, where an index is out of
  // bounds), computed as the windows are written instead of as a second
  // pass over the result.
  bool masked = false;
};

// Inputs: operand, start indices (and with `masked`, the mask and the fill
// value). Start indices are clamped so every slice lies inside the operand
// (spec: gather).
std::unique_ptr<Kernel> MakeGatherKernel(GatherParams params);

struct ScatterParams {
  std::vector<ArrayShape> operands;  // N operands of one shape
  ArrayShape indices;
  std::vector<int64_t> update_dims;
  ir::ScatterDimensionNumbers dims;
  Combiner combiner = Combiner::kGeneric;
};

// Inputs: N operands, the indices, N updates; outputs: N results. An update
// window that does not lie entirely inside the operand is skipped, as XLA
// does. Updates apply in row-major order of the update scatter indices.
std::unique_ptr<Kernel> MakeScatterKernel(ScatterParams params,
                                          std::unique_ptr<Region> body);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_GATHER_SCATTER_H_
