// LAPACK's routines over batches of matrices, as JAX's LAPACK FFI targets
// define them (lapack_{s,d,c,z}<routine>_ffi): the same inputs and outputs,
// the same factored forms (Householder vectors below the diagonal, 1-based
// pivots), the same `info` codes.
//
// Every operand is a row-major Kiln array whose logical element (..., i, j)
// is the matrix element (i, j): the FFI's column-major layouts are a
// physical detail XLA honours by transposing, which Kiln's kernels do when
// they load a matrix. `type` is f32, f64, c64 or c128 and the kernels
// compute in it, as LAPACK's s/d/c/z routines do. Real outputs of complex
// routines (eigenvalues, singular values, tridiagonal d and e) have the
// matching real type; pivots and info are i32. Factories return null for
// other types.
#ifndef KILN_EXEC_KERNELS_LAPACK_H_
#define KILN_EXEC_KERNELS_LAPACK_H_

#include <cstdint>
#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

// getrf: a [batch, m, n] -> lu (L below the unit diagonal, U on and above),
// ipiv [batch, min(m, n)] (row i was swapped with row ipiv[i] - 1), info
// [batch] (k > 0: U(k-1, k-1) is exactly zero).
std::unique_ptr<Kernel> MakeGetrfKernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n);

// geqrf: a [batch, m, n] -> a (R on and above the diagonal, reflectors
// below), tau [batch, min(m, n)].
std::unique_ptr<Kernel> MakeGeqrfKernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n);

// geqp3: a [batch, m, n], jpvt [batch, n] (non-zero: the column is moved to
// the front and not pivoted) -> a (QR of a P), jpvt (1-based columns of P),
// tau [batch, min(m, n)].
std::unique_ptr<Kernel> MakeGeqp3Kernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n);

// orgqr / ungqr: a [batch, m, n] holding k reflectors, tau [batch, k] ->
// the first n columns of Q (m >= n >= k).
std::unique_ptr<Kernel> MakeOrgqrKernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n, int64_t k);

// ormqr / unmqr: a [batch, q, a_cols] holding k <= a_cols reflectors (q = m
// when `left`, else n), tau [batch, k], c [batch, m, n] -> Q c, Q^H c, c Q
// or c Q^H.
struct OrmqrParams {
  ElementType type = ElementType::kF32;
  int64_t batch = 1;
  int64_t a_cols = 0;
  int64_t k = 0;
  int64_t m = 0, n = 0;
  bool left = true;
  bool transpose = false;  // Q^H (Q^T for real types)
};
std::unique_ptr<Kernel> MakeOrmqrKernel(const OrmqrParams& params);

// potrf: a [batch, n, n] -> the Cholesky factor in the `lower` (L L^H) or
// upper (U^H U) triangle, the other triangle as given; info [batch] (k > 0:
// the leading minor of order k is not positive definite).
std::unique_ptr<Kernel> MakePotrfKernel(ElementType type, int64_t batch,
                                        int64_t n, bool lower);

// gtsv: dl, d, du [batch, m] (dl[i] = A(i, i-1), du[i] = A(i, i+1)), b
// [batch, m, nrhs] -> dl, d, du (LAPACK's factorization), x, info.
std::unique_ptr<Kernel> MakeGtsvKernel(ElementType type, int64_t batch,
                                       int64_t m, int64_t nrhs);

// JAX's tridiagonal_solve_perturbed_ffi: the same system as gtsv -> x,
// solved by Gaussian elimination with partial pivoting in which tiny
// pivots of U are perturbed by about eps * max |U| so that singular
// systems give large finite solutions (as inverse iteration needs).
std::unique_ptr<Kernel> MakeTridiagonalSolvePerturbedKernel(ElementType type,
                                                            int64_t batch,
                                                            int64_t m,
                                                            int64_t nrhs);

// syevd / heevd: a [batch, n, n] (the `lower` or upper triangle is read) ->
// v (eigenvectors as columns; with `vectors` false, sytrd's output), w
// [batch, n] ascending, info [batch].
std::unique_ptr<Kernel> MakeSyevdKernel(ElementType type, int64_t batch,
                                        int64_t n, bool lower, bool vectors);

// sytrd / hetrd: a [batch, n, n] -> a (T's diagonals and the reflectors in
// the chosen triangle), d [batch, n], e [batch, n - 1], tau [batch, n - 1],
// info [batch].
std::unique_ptr<Kernel> MakeSytrdKernel(ElementType type, int64_t batch,
                                        int64_t n, bool lower);

// gehrd: a [batch, n, n] -> a (upper Hessenberg H, reflectors below its
// subdiagonal), tau [batch, n - 1], info. Rows and columns outside
// [low, high] (1-based) are taken as already reduced.
std::unique_ptr<Kernel> MakeGehrdKernel(ElementType type, int64_t batch,
                                        int64_t n, int64_t low, int64_t high);

// gees: a [batch, n, n] -> t (the Schur form; real types: quasi-triangular
// with standardized 2x2 blocks), z (Schur vectors, zero without
// `vectors`), eigenvalues (real types: wr and wi; complex: w), sdim (0),
// info (k > 0: QR iterations failed).
std::unique_ptr<Kernel> MakeGeesKernel(ElementType type, int64_t batch,
                                       int64_t n, bool vectors);

// geev: a [batch, n, n] -> eigenvalues (real types: wr and wi; complex: w),
// vl, vr [batch, n, n] of the complex type (left and right eigenvectors,
// unit norm with the largest component real; zero when not asked), info
// (-4: a is not finite; k > 0: QR iterations failed).
std::unique_ptr<Kernel> MakeGeevKernel(ElementType type, int64_t batch,
                                       int64_t n, bool left, bool right);

// gesdd (`divide_and_conquer`) / gesvd: a [batch, m, n] -> a (unchanged),
// s [batch, min(m, n)] descending, u [batch, m, m or min(m, n)], vt
// [batch, n or min(m, n), n] (zero when `compute_uv` is false), info (-4
// and NaN results for a matrix that is not finite).
std::unique_ptr<Kernel> MakeSvdKernel(ElementType type, int64_t batch,
                                      int64_t m, int64_t n, bool compute_uv,
                                      bool full_matrices,
                                      bool divide_and_conquer);

// jaxlib's GPU lu_pivots_to_permutation: pivots [batch, k] (0-based row
// swaps: row i was swapped with row pivots[i]; values outside [0,
// permutation_size) are skipped, as the GPU kernel does) -> permutation
// [batch, permutation_size] (i32), the swaps applied in order to 0, 1, ...
std::unique_ptr<Kernel> MakeLuPivotsToPermutationKernel(
    int64_t batch, int64_t pivots, int64_t permutation_size);

// a [batch, rows, cols] -> its conjugate transpose [batch, cols, rows]
// (the transpose for real types): what the GPU's Jacobi SVD returns as V
// where LAPACK returns V^H.
std::unique_ptr<Kernel> MakeAdjointKernel(ElementType type, int64_t batch,
                                          int64_t rows, int64_t cols);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_LAPACK_H_
