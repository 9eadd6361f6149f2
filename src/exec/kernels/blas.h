// The vector loops of Kiln's own linear algebra (the reductions of
// lapack_util.h, lapack_eigen.cc and lapack_svd.cc), in the widest
// vectors the CPU has.
#ifndef KILN_EXEC_KERNELS_BLAS_H_
#define KILN_EXEC_KERNELS_BLAS_H_

#include <cstdint>

#include "base/status.h"

namespace kiln::exec {

// y[i] = y[i] - f * x[i] for i in [0, n): a product, then a difference,
// each rounded (kernels build with -ffp-contract=off), as the plain loop
// computes them.
void SubtractScaled(float* y, const float* x, float f, int64_t n);

// The plane rotation of x and y (xROT): x[i] := c x[i] + s y[i] and
// y[i] := c y[i] - s x[i] for i in [0, n), each product and sum rounded as
// the plain loop rounds them. The eigenvector and singular-vector
// accumulations of syevd and gesdd are these, one per Givens rotation.
void RotatePair(float* x, float* y, float c, float s, int64_t n);
void RotatePair(double* x, double* y, double c, double s, int64_t n);

// The real-typed vector loops of the unblocked reductions (Householder
// reflections, the tridiagonal and bidiagonal reductions of syevd and
// gesdd; lapack_util.h), in the widest vectors the CPU has. Each gives the
// bits of the plain loop it stands for.
//
// sum of v[i] x[i] in eight interleaved partial sums, combined pairwise
// (lapack::DotConjugated's order).
float DotInterleaved(const float* v, const float* x, int64_t n);
double DotInterleaved(const double* v, const double* x, int64_t n);
// y[i] -= f x[i], and y[i] += f x[i].
void SubtractScaled(double* y, const double* x, double f, int64_t n);
void AddScaled(float* y, const float* x, float f, int64_t n);
void AddScaled(double* y, const double* x, double f, int64_t n);
// a[i] -= v[i] yc + y[i] vc: a symmetric rank-two update of one column.
void SubtractRank2(float* a, const float* v, float yc, const float* y, float vc,
                   int64_t n);
void SubtractRank2(double* a, const double* v, double yc, const double* y,
                   double vc, int64_t n);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_BLAS_H_
