// The Schur form behind gees and geev (lapack_schur.cc), internal to
// exec/.
#ifndef KILN_EXEC_KERNELS_LAPACK_SCHUR_H_
#define KILN_EXEC_KERNELS_LAPACK_SCHUR_H_

#include <cstdint>
#include <vector>

#include "exec/kernels/lapack_util.h"

namespace kiln::exec::lapack {

template <typename T>
struct SchurResult {
  Matrix<T> z;                  // Schur vectors (zero when not wanted)
  std::vector<T> w;             // eigenvalues, complex types
  std::vector<Real<T>> wr, wi;  // eigenvalues, real types
  int32_t info = 0;             // k > 0: rows k.. (1-based) did not converge
};

// Reduces the square `a` to Hessenberg form, forms Q when `want_z`, and
// overwrites `a` with its Schur form T (real types: quasi-triangular with
// standardized 2x2 blocks), A = Z T Z^H. Instantiated for float, double,
// c64 and c128.
template <typename T>
SchurResult<T> Schur(Matrix<T>& a, bool want_z);

}  // namespace kiln::exec::lapack

#endif  // KILN_EXEC_KERNELS_LAPACK_SCHUR_H_
