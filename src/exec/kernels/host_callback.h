// Host callbacks: a step that calls back into the process that loaded the
// plugin (JAX's pure_callback, io_callback and jax.debug.print).
//
// The host registers one trampoline per process (Kiln's Python package passes
// its address as the client option `kiln_host_callback_trampoline`); each
// callback step names the host's callback by an id the host chose when it
// lowered the program. The trampoline gets the step's array arguments (with
// their dimensions: `arg_ranks[i]` of them for argument i, all arguments'
// concatenated in `arg_dims`; a partitioned callback's are its tiles') and
// the result buffers to fill (tokens are left out), and returns 0, or
// non-zero with a message in `error`.
#ifndef KILN_EXEC_KERNELS_HOST_CALLBACK_H_
#define KILN_EXEC_KERNELS_HOST_CALLBACK_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "exec/plan.h"

namespace kiln::exec {

using HostCallbackTrampoline = int (*)(uint64_t callback_id, int64_t num_args,
                                       const void* const* args,
                                       int64_t num_results,
                                       void* const* results, char* error,
                                       int64_t error_size,
                                       const int64_t* arg_ranks,
                                       const int64_t* arg_dims);

// Sets the process's trampoline (null clears it).
void SetHostCallbackTrampoline(HostCallbackTrampoline trampoline);

// A step calling host callback `callback_id`. `input_is_token` and
// `output_is_token` mark the step's token slots, which carry no data;
// `input_dims` are the dimensions of the other inputs, in order.
std::unique_ptr<Kernel> MakeHostCallbackKernel(
    uint64_t callback_id, std::vector<bool> input_is_token,
    std::vector<bool> output_is_token,
    std::vector<std::vector<int64_t>> input_dims);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_HOST_CALLBACK_H_
