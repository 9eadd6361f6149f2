// getrf and potrf (lapack.h) through the LAPACK of Kiln's BLAS library (OpenBLAS's,
// the code jaxlib's own LAPACK targets run; docs/exec.md, "Libraries"):
// blocked, on the library's tuned BLAS-3, with LAPACK's own handling of
// scaling, NaN and singular pivots. Each matrix is copied into a
// column-major work array (lapack_util.h's tiled transposes), factored
// there on one thread, and copied back; a batch's matrices over the cores.
#include "exec/kernels/lapack.h"

#include <cblas.h>

#include <complex>
#include <limits>

#include "exec/executor.h"
#include "exec/kernels/lapack_util.h"
#include "exec/kernels/library_blas.h"
#include "exec/kernels/run_time_error.h"
#include "exec/parallel.h"

// LAPACK's Fortran entry points in the library, under its `scipy_` prefix:
// declared here because its lapack.h names them without the prefix. Each
// character argument's hidden length comes last (gfortran's convention).
extern "C" {
void scipy_sgetrf_(const blasint* m, const blasint* n, float* a,
                   const blasint* lda, blasint* ipiv, blasint* info);
void scipy_dgetrf_(const blasint* m, const blasint* n, double* a,
                   const blasint* lda, blasint* ipiv, blasint* info);
void scipy_cgetrf_(const blasint* m, const blasint* n, std::complex<float>* a,
                   const blasint* lda, blasint* ipiv, blasint* info);
void scipy_zgetrf_(const blasint* m, const blasint* n, std::complex<double>* a,
                   const blasint* lda, blasint* ipiv, blasint* info);
void scipy_spotrf_(const char* uplo, const blasint* n, float* a,
                   const blasint* lda, blasint* info, size_t uplo_length);
void scipy_dpotrf_(const char* uplo, const blasint* n, double* a,
                   const blasint* lda, blasint* info, size_t uplo_length);
void scipy_cpotrf_(const char* uplo, const blasint* n, std::complex<float>* a,
                   const blasint* lda, blasint* info, size_t uplo_length);
void scipy_zpotrf_(const char* uplo, const blasint* n, std::complex<double>* a,
                   const blasint* lda, blasint* info, size_t uplo_length);
}

namespace kiln::exec {
namespace {

template <typename T>
blasint Getrf(blasint m, blasint n, T* a, blasint lda, blasint* ipiv) {
  blasint info = 0;
  if constexpr (std::is_same_v<T, float>) {
    scipy_sgetrf_(&m, &n, a, &lda, ipiv, &info);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_dgetrf_(&m, &n, a, &lda, ipiv, &info);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    scipy_cgetrf_(&m, &n, a, &lda, ipiv, &info);
  } else {
    scipy_zgetrf_(&m, &n, a, &lda, ipiv, &info);
  }
  return info;
}

template <typename T>
blasint Potrf(bool lower, blasint n, T* a, blasint lda) {
  blasint info = 0;
  const char uplo = lower ? 'L' : 'U';
  if constexpr (std::is_same_v<T, float>) {
    scipy_spotrf_(&uplo, &n, a, &lda, &info, 1);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_dpotrf_(&uplo, &n, a, &lda, &info, 1);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    scipy_cpotrf_(&uplo, &n, a, &lda, &info, 1);
  } else {
    scipy_zpotrf_(&uplo, &n, a, &lda, &info, 1);
  }
  return info;
}

// Runs `factor(b)` for each matrix of a batch, the matrices over the cores
// when there are several (each factors on one thread).
template <typename Factor>
void ForEachMatrix(int64_t batch, Factor&& factor) {
  if (batch == 1) {
    factor(int64_t{0});
    return;
  }
  ParallelFor(batch, 1, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) factor(b);
  });
}

template <typename T>
class LibraryGetrfKernel : public Kernel {
 public:
  LibraryGetrfKernel(int64_t batch, int64_t m, int64_t n)
      : batch_(batch), m_(m), n_(n) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    int32_t* ipiv = ctx.Out<int32_t>(step, 1);
    int32_t* info = ctx.Out<int32_t>(step, 2);
    const int64_t k = std::min(m_, n_);
    UseOneLibraryThreadPerCall();
    ForEachMatrix(batch_, [&](int64_t b) {
      lapack::Matrix<T> a(m_, n_);
      lapack::LoadMatrix(in + b * m_ * n_, a);
      static_assert(sizeof(blasint) == sizeof(int32_t));
      info[b] = Getrf<T>(m_, n_, a.data(), std::max<int64_t>(1, m_),
                         reinterpret_cast<blasint*>(ipiv + b * k));
      lapack::StoreMatrix(a, out + b * m_ * n_);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, m_, n_;
};

template <typename T>
class LibraryPotrfKernel : public Kernel {
 public:
  LibraryPotrfKernel(int64_t batch, int64_t n, bool lower)
      : batch_(batch), n_(n), lower_(lower) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    int32_t* info = ctx.Out<int32_t>(step, 1);
    UseOneLibraryThreadPerCall();
    ForEachMatrix(batch_, [&](int64_t b) {
      lapack::Matrix<T> a(n_, n_);
      lapack::LoadMatrix(in + b * n_ * n_, a);
      info[b] = Potrf<T>(lower_, n_, a.data(), std::max<int64_t>(1, n_));
      lapack::StoreMatrix(a, out + b * n_ * n_);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool lower_;
};

// A matrix with a dimension past the library's 32-bit integers (2^31
// rows) fails when it runs, saying so.
std::unique_ptr<Kernel> TooLargeForTheLibrary(const char* routine, int64_t m,
                                              int64_t n) {
  return MakeRunTimeErrorKernel(UnimplementedError(
      routine, " of a ", m, " x ", n,
      " matrix: a dimension is past the BLAS library's 32-bit integers"));
}

}  // namespace

std::unique_ptr<Kernel> MakeGetrfKernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n) {
  if (!FitsBlasInt(m) || !FitsBlasInt(n)) {
    return TooLargeForTheLibrary("getrf", m, n);
  }
  return lapack::MakeForType<LibraryGetrfKernel>(type, batch, m, n);
}

std::unique_ptr<Kernel> MakePotrfKernel(ElementType type, int64_t batch,
                                        int64_t n, bool lower) {
  if (!FitsBlasInt(n)) return TooLargeForTheLibrary("potrf", n, n);
  return lapack::MakeForType<LibraryPotrfKernel>(type, batch, n, lower);
}

}  // namespace kiln::exec
