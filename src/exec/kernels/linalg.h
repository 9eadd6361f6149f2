// cholesky and triangular_solve over batches of matrices.
#ifndef KILN_EXEC_KERNELS_LINALG_H_
#define KILN_EXEC_KERNELS_LINALG_H_

#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

// a: [batch, n, n] -> the lower (or upper) Cholesky factor with zeros in
// the other triangle; a matrix that is not positive definite gives NaN
// throughout. f32, f64, c64 or c128 (the library's potrf:
// lapack_library.cc).
std::unique_ptr<Kernel> MakeCholeskyKernel(ElementType type, int64_t batch,
                                           int64_t n, bool lower);

struct TriangularSolveParams {
  ElementType type = ElementType::kF32;
  int64_t batch = 1;
  int64_t m = 0;               // a is [batch, m, m]
  int64_t rows = 0, cols = 0;  // b and the result are [batch, rows, cols]
  bool left_side = true;
  bool lower = true;
  bool unit_diagonal = false;
  int transpose = 1;  // 1: none, 2: transpose, 3: adjoint
};

// Solves op(a) x = b (left side) or x op(a) = b, reading only a's chosen
// triangle.
std::unique_ptr<Kernel> MakeTriangularSolveKernel(TriangularSolveParams params);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_LINALG_H_
