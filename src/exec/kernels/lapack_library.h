// LAPACK routines through the library's LAPACK (lapack_library.cc), with
// the semantics lapack.h gives the targets they serve. Null where a
// dimension does not fit the library's 32-bit integers or the type is not
// f32, f64, c64 or c128 (the caller then uses Kiln's own kernels).
#ifndef KILN_EXEC_KERNELS_LAPACK_LIBRARY_H_
#define KILN_EXEC_KERNELS_LAPACK_LIBRARY_H_

#include <cstdint>
#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

std::unique_ptr<Kernel> MakeLibraryGetrfKernel(ElementType type, int64_t batch,
                                               int64_t m, int64_t n);
std::unique_ptr<Kernel> MakeLibraryPotrfKernel(ElementType type, int64_t batch,
                                               int64_t n, bool lower);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_LAPACK_LIBRARY_H_
