// reduce and reduce_window.
#ifndef KILN_EXEC_KERNELS_REDUCE_H_
#define KILN_EXEC_KERNELS_REDUCE_H_

#include <memory>
#include <optional>
#include <vector>

#include "exec/kernels/elementwise.h"
#include "exec/kernels/region_call.h"
#include "exec/plan.h"

namespace kiln::exec {

struct ReduceParams {
  std::vector<ArrayShape> inputs;   // N inputs of one shape
  std::vector<int64_t> dimensions;  // reduced dimensions
  Combiner combiner = Combiner::kGeneric;
};

// Inputs: N inputs then N init scalars; outputs: N results (the input
// shape without the reduced dimensions). Each result element starts at
// the init value and combines the input elements in row-major order, so an
// empty reduction gives the init value. `body` is null for a fast
// combiner.
std::unique_ptr<Kernel> MakeReduceKernel(ReduceParams params,
                                         std::unique_ptr<Region> body);

// A reduce of two inputs, values and their indices (inputs: values,
// indices, their two inits; outputs: the reduced values and indices),
// whose body is JAX's argmax (`max`) or argmin reducer: the accumulator
// (av, ai) and an element (x, xi) give (av, ai) if av compares past x
// (greater for argmax, less for argmin) or is a NaN, else (x, xi), except
// that ai stays where av == x and ai < xi. Folded in row-major order from
// the inits, as the generic path calls the body, so its results are that
// path's. Null where the types are not served: values f32, f64 or an
// integer type of 8 to 64 bits, indices i32 or i64.
std::unique_ptr<Kernel> MakeArgReduceKernel(ReduceParams params, bool max);
// Whether `kernel` is one MakeArgReduceKernel made (for tests).
bool IsArgReduceKernel(const Kernel& kernel);

struct ReduceWindowParams {
  std::vector<ArrayShape> inputs;  // N inputs of one shape
  std::vector<int64_t> output_dims;
  std::vector<int64_t> window_dimensions;
  std::vector<int64_t> window_strides;
  std::vector<int64_t> base_dilations;
  std::vector<int64_t> window_dilations;
  std::vector<int64_t> padding_low;  // per dimension
  Combiner combiner = Combiner::kGeneric;
};

// Inputs: N inputs then N init scalars; outputs: N results. Window
// positions that fall in padding or between dilated base elements are
// skipped (they hold the init value, which the combination starts from).
std::unique_ptr<Kernel> MakeReduceWindowKernel(ReduceWindowParams params,
                                               std::unique_ptr<Region> body);

struct SelectAndScatterParams {
  ArrayShape operand;
  std::vector<int64_t> source_dims;
  std::vector<int64_t> window_dimensions;
  std::vector<int64_t> window_strides;
  std::vector<int64_t> padding_low;
  // Set when the select region is `compare direction(a, b)` comparing as
  // C++ does and the scatter region a combiner ApplyCombiner knows (a max
  // pool's gradient: GE and add): the kernel then runs typed, without
  // region calls, and over the cores along a leading dimension whose
  // windows do not overlap.
  std::optional<CompareDirection> select_direction;
  Combiner scatter_combiner = Combiner::kGeneric;
};

// Inputs: operand, source, init scalar; output: the result. For each
// source element, the `select` region picks one element of its operand
// window (padding is never picked; `select(a, b)` true keeps a), and the
// `scatter` region combines the source value into the result there (the
// result starts at the init value).
std::unique_ptr<Kernel> MakeSelectAndScatterKernel(
    SelectAndScatterParams params, std::unique_ptr<Region> select,
    std::unique_ptr<Region> scatter);

// map: output[i] = body(input_0[i], ..., input_{N-1}[i]) for every element.
std::unique_ptr<Kernel> MakeMapKernel(std::vector<ArrayShape> inputs,
                                      ArrayShape output,
                                      std::unique_ptr<Region> body);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_REDUCE_H_
