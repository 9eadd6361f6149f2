// Copying a whole buffer.
#ifndef KILN_EXEC_KERNELS_COPY_H_
#define KILN_EXEC_KERNELS_COPY_H_

#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

// Copies input 0 into output 0 (`bytes` bytes; may be the same buffer).
std::unique_ptr<Kernel> MakeCopyKernel(int64_t bytes);

// Copies input i into output i for every i.
std::unique_ptr<Kernel> MakeMultiCopyKernel();

// Does nothing (token producers, annotations kept for their ordering).
std::unique_ptr<Kernel> MakeNoOpKernel();

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_COPY_H_
