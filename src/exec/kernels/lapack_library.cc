// LAPACK's factorizations and solvers (lapack.h) through the LAPACK of
// Kiln's BLAS library (lapack_library.h): getrf, potrf, geqrf, geqp3,
// orgqr / ungqr, ormqr / unmqr, gtsv, and stablehlo.cholesky (linalg.h). The library's blocked routines on its
// tuned BLAS-3, with LAPACK's own handling of scaling, NaN and singular
// pivots: the code jaxlib's targets run. Each matrix is copied into a
// column-major work array (lapack_util.h's tiled transposes), computed
// there on one thread, and copied back; a batch's matrices over the cores.
// Workspace sizes are asked of the library once, when the kernel is made.
#include <algorithm>
#include <cstring>

#include "exec/executor.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/lapack_library.h"
#include "exec/kernels/linalg.h"

namespace kiln::exec {
namespace {

using lapack::ForEachMatrix;
using lapack::Matrix;
using lapack::Pick;
using lapack::QueriedSize;
using lapack::Real;

template <typename T>
lapack_int Getrf(lapack_int m, lapack_int n, T* a, lapack_int* ipiv) {
  lapack_int info = 0, lda = std::max(1, m);
  Pick<T>(LAPACK_sgetrf, LAPACK_dgetrf, LAPACK_cgetrf, LAPACK_zgetrf)(
      &m, &n, a, &lda, ipiv, &info);
  return info;
}

template <typename T>
lapack_int Potrf(bool lower, lapack_int n, T* a) {
  lapack_int info = 0, lda = std::max(1, n);
  const char uplo = lower ? 'L' : 'U';
  Pick<T>(LAPACK_spotrf_base, LAPACK_dpotrf_base, LAPACK_cpotrf_base,
          LAPACK_zpotrf_base)(&uplo, &n, a, &lda, &info, 1);
  return info;
}

// geqrf with `lwork` elements of `work` (lwork = -1: the size into work[0]).
template <typename T>
void Geqrf(lapack_int m, lapack_int n, T* a, T* tau, T* work,
           lapack_int lwork) {
  lapack_int info = 0, lda = std::max(1, m);
  Pick<T>(LAPACK_sgeqrf, LAPACK_dgeqrf, LAPACK_cgeqrf, LAPACK_zgeqrf)(
      &m, &n, a, &lda, tau, work, &lwork, &info);
}

template <typename T>
void Geqp3(lapack_int m, lapack_int n, T* a, lapack_int* jpvt, T* tau,
           T* work, lapack_int lwork, Real<T>* rwork) {
  lapack_int info = 0, lda = std::max(1, m);
  if constexpr (kIsComplex<T>) {
    Pick<T>(nullptr, nullptr, LAPACK_cgeqp3, LAPACK_zgeqp3)(
        &m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, &info);
  } else {
    Pick<T>(LAPACK_sgeqp3, LAPACK_dgeqp3, nullptr, nullptr)(
        &m, &n, a, &lda, jpvt, tau, work, &lwork, &info);
  }
}

template <typename T>
void Orgqr(lapack_int m, lapack_int n, lapack_int k, T* a, const T* tau,
           T* work, lapack_int lwork) {
  lapack_int info = 0, lda = std::max(1, m);
  Pick<T>(LAPACK_sorgqr, LAPACK_dorgqr, LAPACK_cungqr, LAPACK_zungqr)(
      &m, &n, &k, a, &lda, tau, work, &lwork, &info);
}

template <typename T>
void Ormqr(bool left, bool transpose, lapack_int m, lapack_int n,
           lapack_int k, const T* a, lapack_int lda, const T* tau, T* c,
           T* work, lapack_int lwork) {
  lapack_int info = 0, ldc = std::max(1, m);
  const char side = left ? 'L' : 'R';
  const char trans = !transpose ? 'N' : kIsComplex<T> ? 'C' : 'T';
  Pick<T>(LAPACK_sormqr_base, LAPACK_dormqr_base, LAPACK_cunmqr_base,
          LAPACK_zunmqr_base)(&side, &trans, &m, &n, &k, a, &lda, tau, c,
                              &ldc, work, &lwork, &info, 1, 1);
}

template <typename T>
class GetrfKernel : public Kernel {
 public:
  GetrfKernel(int64_t batch, int64_t m, int64_t n)
      : batch_(batch), m_(m), n_(n) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    int32_t* ipiv = ctx.Out<int32_t>(step, 1);
    int32_t* info = ctx.Out<int32_t>(step, 2);
    const int64_t k = std::min(m_, n_);
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> a(m_, n_);
      lapack::LoadMatrix(in + b * m_ * n_, a);
      info[b] = Getrf<T>(m_, n_, a.data(), ipiv + b * k);
      lapack::StoreMatrix(a, out + b * m_ * n_);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, m_, n_;
};

template <typename T>
class PotrfKernel : public Kernel {
 public:
  PotrfKernel(int64_t batch, int64_t n, bool lower)
      : batch_(batch), n_(n), lower_(lower) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    int32_t* info = ctx.Out<int32_t>(step, 1);
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> a(n_, n_);
      lapack::LoadMatrix(in + b * n_ * n_, a);
      info[b] = Potrf<T>(lower_, n_, a.data());
      lapack::StoreMatrix(a, out + b * n_ * n_);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool lower_;
};

// stablehlo.cholesky (linalg.h) through potrf: the factor in the chosen
// triangle, zeros in the other, and NaN throughout for a matrix that is
// not positive definite (the spec leaves it implementation-defined; JAX's
// LAPACK path gives NaN so).
template <typename T>
class CholeskyKernel : public Kernel {
 public:
  CholeskyKernel(int64_t batch, int64_t n, bool lower)
      : batch_(batch), n_(n), lower_(lower) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    const int64_t n = n_;
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> a(n, n);
      lapack::LoadMatrix(in + b * n * n, a);
      const lapack_int info = Potrf<T>(lower_, n, a.data());
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < n; ++i) {
          const bool kept = lower_ ? i >= j : i <= j;
          if (info != 0) {
            a(i, j) = lapack::NotANumber<T>();
          } else if (!kept) {
            a(i, j) = T(0);
          }
        }
      }
      lapack::StoreMatrix(a, out + b * n * n);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool lower_;
};

template <typename T>
class GeqrfKernel : public Kernel {
 public:
  GeqrfKernel(int64_t batch, int64_t m, int64_t n)
      : batch_(batch), m_(m), n_(n) {
    T query{};
    Geqrf<T>(m, n, nullptr, nullptr, &query, -1);
    lwork_ = QueriedSize(query, std::max<lapack_int>(1, n));
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    T* tau = ctx.Out<T>(step, 1);
    const int64_t k = std::min(m_, n_);
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> a(m_, n_);
      std::vector<T> work(lwork_);
      lapack::LoadMatrix(in + b * m_ * n_, a);
      Geqrf<T>(m_, n_, a.data(), tau + b * k, work.data(), lwork_);
      lapack::StoreMatrix(a, out + b * m_ * n_);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, m_, n_;
  lapack_int lwork_;
};

template <typename T>
class Geqp3Kernel : public Kernel {
 public:
  Geqp3Kernel(int64_t batch, int64_t m, int64_t n)
      : batch_(batch), m_(m), n_(n) {
    T query{};
    Real<T> rwork[8] = {};
    Geqp3<T>(m, n, nullptr, nullptr, nullptr, &query, -1, rwork);
    lwork_ = QueriedSize(query, std::max<lapack_int>(1, 3 * n + 1));
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    const int32_t* jpvt_in = ctx.In<int32_t>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    int32_t* jpvt = ctx.Out<int32_t>(step, 1);
    T* tau = ctx.Out<T>(step, 2);
    const int64_t k = std::min(m_, n_);
    if (jpvt != jpvt_in) {
      std::memmove(jpvt, jpvt_in, batch_ * n_ * sizeof(int32_t));
    }
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> a(m_, n_);
      std::vector<T> work(lwork_);
      std::vector<Real<T>> rwork(kIsComplex<T> ? 2 * n_ : 0);
      lapack::LoadMatrix(in + b * m_ * n_, a);
      Geqp3<T>(m_, n_, a.data(), jpvt + b * n_, tau + b * k, work.data(),
               lwork_, rwork.data());
      lapack::StoreMatrix(a, out + b * m_ * n_);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, m_, n_;
  lapack_int lwork_;
};

template <typename T>
class OrgqrKernel : public Kernel {
 public:
  OrgqrKernel(int64_t batch, int64_t m, int64_t n, int64_t k)
      : batch_(batch), m_(m), n_(n), k_(k) {
    T query{};
    Orgqr<T>(m, n, k, nullptr, nullptr, &query, -1);
    lwork_ = QueriedSize(query, std::max<lapack_int>(1, n));
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    const T* tau = ctx.In<T>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> a(m_, n_);
      std::vector<T> work(lwork_);
      lapack::LoadMatrix(in + b * m_ * n_, a);
      Orgqr<T>(m_, n_, k_, a.data(), tau + b * k_, work.data(), lwork_);
      lapack::StoreMatrix(a, out + b * m_ * n_);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, m_, n_, k_;
  lapack_int lwork_;
};

template <typename T>
class OrmqrKernel : public Kernel {
 public:
  explicit OrmqrKernel(const OrmqrParams& p) : p_(p) {
    T query{};
    const lapack_int q = p.left ? p.m : p.n;
    Ormqr<T>(p.left, p.transpose, p.m, p.n, p.k, nullptr, std::max(1, q),
             nullptr, nullptr, &query, -1);
    lwork_ = QueriedSize(
        query, std::max<lapack_int>(1, p.left ? p.n : p.m));
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const int64_t q = p_.left ? p_.m : p_.n;
    const T* a_in = ctx.In<T>(step, 0);
    const T* tau = ctx.In<T>(step, 1);
    const T* c_in = ctx.In<T>(step, 2);
    T* out = ctx.Out<T>(step, 0);
    ForEachMatrix(p_.batch, [&](int64_t b) {
      Matrix<T> a(q, p_.a_cols), c(p_.m, p_.n);
      std::vector<T> work(lwork_);
      lapack::LoadMatrix(a_in + b * q * p_.a_cols, a);
      lapack::LoadMatrix(c_in + b * p_.m * p_.n, c);
      Ormqr<T>(p_.left, p_.transpose, p_.m, p_.n, p_.k, a.data(),
               std::max<lapack_int>(1, q), tau + b * p_.k, c.data(),
               work.data(), lwork_);
      lapack::StoreMatrix(c, out + b * p_.m * p_.n);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  OrmqrParams p_;
  lapack_int lwork_;
};

// gtsv on JAX's operands: JAX's dl[i] is A(i, i-1) with dl[0] unused, so
// LAPACK's subdiagonal starts at dl + 1 (as jaxlib passes it); b is
// row-major [m, nrhs], the library's column-major.
template <typename T>
class GtsvKernel : public Kernel {
 public:
  GtsvKernel(int64_t batch, int64_t m, int64_t nrhs)
      : batch_(batch), m_(m), nrhs_(nrhs) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const int64_t sizes[4] = {m_, m_, m_, m_ * nrhs_};
    T* out[4];
    for (int i = 0; i < 3; ++i) {
      out[i] = ctx.Out<T>(step, i);
      const T* in = ctx.In<T>(step, i);
      if (in != out[i]) std::memmove(out[i], in, batch_ * sizes[i] * sizeof(T));
    }
    const T* b_in = ctx.In<T>(step, 3);
    out[3] = ctx.Out<T>(step, 3);
    int32_t* info = ctx.Out<int32_t>(step, 4);
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> x(m_, nrhs_);
      lapack::LoadMatrix(b_in + b * sizes[3], x);
      T* dl = out[0] + b * m_;
      lapack_int n = m_, nrhs = nrhs_, ldb = std::max<lapack_int>(1, n);
      info[b] = 0;
      if (n > 0) {
        Pick<T>(LAPACK_sgtsv, LAPACK_dgtsv, LAPACK_cgtsv, LAPACK_zgtsv)(
            &n, &nrhs, dl + 1, out[1] + b * m_, out[2] + b * m_, x.data(),
            &ldb, &info[b]);
      }
      lapack::StoreMatrix(x, out[3] + b * sizes[3]);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, m_, nrhs_;
};

}  // namespace

std::unique_ptr<Kernel> MakeGetrfKernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n) {
  if (!lapack::FitsTheLibrary({m, n})) {
    return lapack::TooLargeForTheLibrary("getrf", m, n);
  }
  return lapack::MakeForType<GetrfKernel>(type, batch, m, n);
}

std::unique_ptr<Kernel> MakePotrfKernel(ElementType type, int64_t batch,
                                        int64_t n, bool lower) {
  if (!lapack::FitsTheLibrary({n})) {
    return lapack::TooLargeForTheLibrary("potrf", n, n);
  }
  return lapack::MakeForType<PotrfKernel>(type, batch, n, lower);
}

std::unique_ptr<Kernel> MakeCholeskyKernel(ElementType type, int64_t batch,
                                           int64_t n, bool lower) {
  if (!lapack::FitsTheLibrary({n})) {
    return lapack::TooLargeForTheLibrary("cholesky", n, n);
  }
  return lapack::MakeForType<CholeskyKernel>(type, batch, n, lower);
}

std::unique_ptr<Kernel> MakeGeqrfKernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n) {
  if (!lapack::FitsTheLibrary({m, n})) {
    return lapack::TooLargeForTheLibrary("geqrf", m, n);
  }
  return lapack::MakeForType<GeqrfKernel>(type, batch, m, n);
}

std::unique_ptr<Kernel> MakeGeqp3Kernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n) {
  if (!lapack::FitsTheLibrary({m, n, 3 * n + 1})) {
    return lapack::TooLargeForTheLibrary("geqp3", m, n);
  }
  return lapack::MakeForType<Geqp3Kernel>(type, batch, m, n);
}

std::unique_ptr<Kernel> MakeOrgqrKernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n, int64_t k) {
  if (!lapack::FitsTheLibrary({m, n})) {
    return lapack::TooLargeForTheLibrary("orgqr", m, n);
  }
  return lapack::MakeForType<OrgqrKernel>(type, batch, m, n, k);
}

std::unique_ptr<Kernel> MakeOrmqrKernel(const OrmqrParams& params) {
  if (!lapack::FitsTheLibrary({params.m, params.n, params.a_cols})) {
    return lapack::TooLargeForTheLibrary("ormqr", params.m, params.n);
  }
  return lapack::MakeForType<OrmqrKernel>(params.type, params);
}

std::unique_ptr<Kernel> MakeGtsvKernel(ElementType type, int64_t batch,
                                       int64_t m, int64_t nrhs) {
  if (!lapack::FitsTheLibrary({m, nrhs})) {
    return lapack::TooLargeForTheLibrary("gtsv", m, nrhs);
  }
  return lapack::MakeForType<GtsvKernel>(type, batch, m, nrhs);
}

}  // namespace kiln::exec
