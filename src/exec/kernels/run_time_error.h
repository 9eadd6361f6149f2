// A step that fails when it runs: what a custom call whose operands its
// target cannot decode lowers to. XLA decodes an FFI call's arguments when
// the call runs, so such a program compiles (and its text can be read) and
// fails only if the call is reached.
#ifndef KILN_EXEC_KERNELS_RUN_TIME_ERROR_H_
#define KILN_EXEC_KERNELS_RUN_TIME_ERROR_H_

#include <memory>

#include "base/status.h"
#include "exec/plan.h"

namespace kiln::exec {

// A kernel whose every run returns `error`.
std::unique_ptr<Kernel> MakeRunTimeErrorKernel(Status error);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_RUN_TIME_ERROR_H_
