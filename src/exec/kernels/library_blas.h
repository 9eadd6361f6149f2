// Kiln's door to the BLAS library it links (OpenBLAS, the scipy-openblas32
// build NumPy and SciPy ship; docs/exec.md, "Libraries"): the products
// oneDNN has no path for (f64 and complex), on Kiln's threads.
//
// OpenBLAS's own threads are turned off (one thread per call): Kiln splits a
// product into tiles chosen from its shape alone and runs them on its own
// parallel loops, so that the bits of a result do not depend on how many
// threads ran it (docs/exec.md, "Bits"), and no second pool of threads
// spins beside oneDNN's OpenMP team.
#ifndef KILN_EXEC_KERNELS_LIBRARY_BLAS_H_
#define KILN_EXEC_KERNELS_LIBRARY_BLAS_H_

#include <cstdint>
#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

// Whether the library has a product for `type` (f32, f64, c64, c128).
bool LibraryHasGemm(ElementType type);

// out[b] = lhs[b] x rhs[b] over row-major [batch, m, k] x [batch, k, n]
// through the library's gemm (no conjugation: dot_general's product). Null
// where the library has no product for `type` or a dimension does not fit
// its 32-bit integers.
std::unique_ptr<Kernel> MakeLibraryMatmulKernel(ElementType type,
                                                int64_t batch, int64_t m,
                                                int64_t k, int64_t n);

// triangular_solve through the library's trsm: op(a) x = b (left side) or
// x op(a) = b over row-major [batch, m, m] and [batch, rows, cols], reading
// only a's chosen triangle; `transpose` 1 none, 2 transpose, 3 adjoint. The
// columns (left side) or rows (right side) of x, each solved on its own,
// in blocks chosen from the shape over the cores. Null where the library
// has no trsm for `type` or a dimension does not fit its integers.
std::unique_ptr<Kernel> MakeLibraryTriangularSolveKernel(
    ElementType type, int64_t batch, int64_t m, int64_t rows, int64_t cols,
    bool left_side, bool lower, bool unit_diagonal, int transpose);

// Whether `value` fits the library's integers (32 bits).
bool FitsBlasInt(int64_t value);

// Sets the library to one thread per call, once for the process: every
// kernel calls it before its first call into the library.
void UseOneLibraryThreadPerCall();

// The tiles a product of [m, k] x [k, n] is split into: rows and columns of
// C per tile. From the shape alone, never the thread count (the bits
// promise). Exposed for the tests.
struct GemmTiles {
  int64_t rows = 0;
  int64_t columns = 0;
};
GemmTiles ChooseGemmTiles(int64_t m, int64_t k, int64_t n);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_LIBRARY_BLAS_H_
