// Reductions of an array's trailing dimensions with a combiner Kiln knows
// (add, multiply, maximum, minimum, and, or, xor): every result element
// reduces one contiguous row of the operand. Rows are independent, so a
// large reduction splits its rows over the cores; and the operand may be
// computed row by row by an elementwise producer (a fused chain, see
// exec/fusion.h) that never writes it to memory: softmax's exp(x - max)
// and layer norm's (x - mean)^2 reduce as they are computed.
//
// A row is combined through 16 lanes (element i into lane i mod 16) and a
// fixed tree over the lanes, then its last length mod 16 elements in
// order (rows shorter than 32 combine in order). The order does not
// depend on the vector width, the threads or how a fused producer cuts
// the row, so every variant gives the same bits.
#ifndef KILN_EXEC_KERNELS_ROW_REDUCE_H_
#define KILN_EXEC_KERNELS_ROW_REDUCE_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "exec/kernels/elementwise_kernel.h"
#include "exec/kernels/reduce.h"
#include "exec/plan.h"

namespace kiln::exec {

struct RowReduceParams {
  ElementType type;  // native
  int64_t rows = 0;
  int64_t row_length = 0;
  Combiner combiner = Combiner::kAdd;
};

// The row form of a reduce, when it has one input, no body, a combiner
// with a fast path for its type, and reduces exactly the trailing
// dimensions.
std::optional<RowReduceParams> AsRowReduce(const ReduceParams& params,
                                           bool has_body);

// Inputs {operand, init}, output {result}.
std::unique_ptr<Kernel> MakeRowReduceKernel(const RowReduceParams& params);

// The params of a kernel MakeRowReduceKernel made (not yet fused with a
// producer), else null.
const RowReduceParams* RowReduceParamsOf(const Kernel& kernel);

// The operand computed by `producer` (over rows * row_length elements,
// its output `reduced_output` being the operand). Inputs: the producer's,
// then init. Outputs: the producer's other outputs (written in full), then
// the result. With `write_reduced` the operand is one of those outputs, in
// its place among them, for readers after the reduction: it is written as
// it is reduced, and never read back.
std::unique_ptr<Kernel> MakeFusedRowReduceKernel(
    const RowReduceParams& params, std::unique_ptr<ElementwiseKernel> producer,
    int reduced_output, bool write_reduced = false);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_ROW_REDUCE_H_
