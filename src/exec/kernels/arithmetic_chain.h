// A chain of f32 arithmetic ops, each taking the result of the one before:
// r = start; r = r op v1; r = v2 op r; ... where each v is an array read
// element by element, one element serving every element (a scalar), or r
// itself. A fused kernel (exec/fusion.h) replaces runs of add, subtract,
// multiply and divide nodes whose intermediate values nothing else reads
// by one chain, which keeps r in registers across the chain instead of
// passing it through a tile buffer per op: a polynomial (JAX's erf, erfc
// and exp decompositions are long ones) costs one pass, not two per
// coefficient. Every op is the IEEE operation its own kernel computes, in
// the same order, so the bits are the same.
#ifndef KILN_EXEC_KERNELS_ARITHMETIC_CHAIN_H_
#define KILN_EXEC_KERNELS_ARITHMETIC_CHAIN_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/elementwise_kernel.h"

namespace kiln::exec {

struct ChainLink {
  ArithmeticOp op;
  // v: input `input` of the chain kernel (1 or more), or r itself (-1).
  int input = -1;
  bool r_on_left = true;  // r op v, else v op r
};

// Input 0 is r's start, read element by element; the other inputs are the
// links' operands, read element by element (4 bytes) or as one element
// (0, as ElementwiseKernel::input_bytes says). `cost` is the links'
// summed cost per element.
std::unique_ptr<ElementwiseKernel> MakeArithmeticChainKernel(
    int64_t count, std::vector<int> input_bytes, std::vector<ChainLink> links,
    int cost);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_ARITHMETIC_CHAIN_H_
