// Steps that fail when they run: what a custom call whose operands its
// target cannot decode lowers to (XLA decodes an FFI call's arguments when
// the call runs, so such a program compiles, and its text can be read, and
// fails only if the call is reached), and JAX's shape assertions, which
// fail only when their predicate is false.
#ifndef KILN_EXEC_KERNELS_RUN_TIME_ERROR_H_
#define KILN_EXEC_KERNELS_RUN_TIME_ERROR_H_

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "exec/plan.h"

namespace kiln::exec {

// A kernel whose every run returns `error`.
std::unique_ptr<Kernel> MakeRunTimeErrorKernel(Status error);

// jax.export's shape_assertion: input 0 is an i1 scalar, inputs 1.. are
// integer scalars of `value_types`. When input 0 is false the run fails
// with INVALID_ARGUMENT and `error_message` in which each "{i}" is input
// i + 1 in decimal (other braces are kept as written, as XLA's shape
// refinement formats it).
std::unique_ptr<Kernel> MakeShapeAssertionKernel(
    std::string error_message, std::vector<ElementType> value_types);

// The message a failing shape assertion gives (exposed for tests).
std::string FormatShapeAssertionMessage(std::string_view format,
                                        const std::vector<int64_t>& values);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_RUN_TIME_ERROR_H_
