// Loop fusion: one kernel that runs a chain of elementwise kernels
// (exec/kernels/elementwise_kernel.h) together, tile by tile, so that the
// values passed between them live in a small per-thread buffer instead of
// whole arrays in memory. The compiler builds fused kernels from runs of
// elementwise steps (compile/fuse_elementwise.cc); exec/ only runs them.
#ifndef KILN_EXEC_FUSION_H_
#define KILN_EXEC_FUSION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/elementwise_kernel.h"

namespace kiln::exec {

// Where a node of a fused kernel reads an operand or writes a result.
struct FusedOperand {
  enum class Kind : uint8_t {
    kInput,   // input `index` of the fused kernel
    kOutput,  // output `index` of the fused kernel (written by an earlier node)
    kTile,    // tile buffer `index`: a value no one outside the fusion reads
  };
  Kind kind = Kind::kInput;
  int index = 0;
};

struct FusedNode {
  std::unique_ptr<ElementwiseKernel> kernel;
  std::vector<FusedOperand> inputs;   // one per kernel input
  std::vector<FusedOperand> outputs;  // one per kernel output (kOutput/kTile)
  // The node's outputs are tile buffers that hold the same values for
  // every tile (ElementwiseKernel::range_invariant): it runs on the first
  // tile of a range only, and its buffers serve no other node.
  bool once_per_range = false;
  // Every reader takes the range-invariant value as a scalar
  // (ElementwiseKernel::WithScalarInput): the node computes one element.
  bool first_element_only = false;
};

// Elements per tile: small enough that the tiles of a chain stay in the
// core's L1/L2 caches, large enough that each node's loop amortizes its
// call and the setting up of its operands. On 2 cores, 2048 against 1024:
// gelu 16.8 -> 15.8 ms, the BERT layer 1% faster, ResNet-50 the same;
// 4096 was slower than 2048 on both.
inline constexpr int64_t kFusionTileElements = 2048;

// The most inputs, and the most outputs, one node may have (an arithmetic
// chain's inputs are its links' operands).
inline constexpr int kMaxFusedNodeOperands = 32;

// A fused kernel over `count` elements with inputs of `input_bytes` (0:
// read whole) and outputs of `output_bytes`; `tile_bytes[k]` is the element
// size of tile buffer k. Nodes run in order on each tile, except that runs
// of f32 arithmetic nodes each reading the one before, whose values nothing
// else reads, become one arithmetic chain (kernels/arithmetic_chain.h).
std::unique_ptr<ElementwiseKernel> MakeFusedKernel(
    int64_t count, std::vector<int> input_bytes, std::vector<int> output_bytes,
    std::vector<int> tile_bytes, std::vector<FusedNode> nodes);

}  // namespace kiln::exec

#endif  // KILN_EXEC_FUSION_H_
