// gather and scatter with every dimension numbering of the spec (batching
// dimensions included).
#ifndef KILN_EXEC_KERNELS_GATHER_SCATTER_H_
#define KILN_EXEC_KERNELS_GATHER_SCATTER_H_

#include <memory>
#include <vector>

#include "exec/kernels/region_call.h"
#include "exec/plan.h"

namespace kiln::exec {

struct GatherParams {
  ArrayShape operand;
  ArrayShape indices;
  std::vector<int64_t> output_dims;
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> slice_sizes;
};

// Inputs: operand, start indices. Start indices are clamped so every slice
// lies inside the operand (spec: gather).
std::unique_ptr<Kernel> MakeGatherKernel(GatherParams params);

struct ScatterParams {
  std::vector<ArrayShape> operands;  // N operands of one shape
  ArrayShape indices;
  std::vector<int64_t> update_dims;
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  Combiner combiner = Combiner::kGeneric;
};

// Inputs: N operands, the indices, N updates; outputs: N results. An update
// window that does not lie entirely inside the operand is skipped, as XLA
// does. Updates apply in row-major order of the update scatter indices.
std::unique_ptr<Kernel> MakeScatterKernel(ScatterParams params,
                                          std::unique_ptr<Region> body);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_GATHER_SCATTER_H_
