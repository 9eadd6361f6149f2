// LAPACK's eigensolvers, reductions and SVD (lapack.h) through the LAPACK
// of Kiln's BLAS library (lapack_library.h): syevd / heevd, sytrd / hetrd,
// gehrd, gees, geev, gesdd and gesvd, the routines jaxlib's targets run.
// Each matrix is copied into a column-major work array, computed there on
// one thread, and its results copied out; a batch's matrices over the
// cores. Workspace sizes are asked of the library once, when the kernel is
// made.
//
// Where jaxlib's kernel does more than call the routine, so does Kiln's:
// geev refuses a matrix that is not finite (info -4) and unpacks real
// eigenvectors into complex ones; the SVDs give NaN for a matrix that is
// not finite (info -4, LAPACK's own answer for NaN; JAX then reads NaN
// whatever the info).
#include <algorithm>
#include <complex>
#include <cstring>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/lapack_library.h"

namespace kiln::exec {
namespace {

using lapack::ForEachMatrix;
using lapack::Matrix;
using lapack::Pick;
using lapack::QueriedSize;
using lapack::Real;

// --- syevd / heevd -------------------------------------------------------

// The workspaces of syevd / heevd: work (T), rwork (real, complex types
// only) and iwork.
struct SyevdSizes {
  lapack_int work = 1, rwork = 1, iwork = 1;
};

template <typename T>
lapack_int Syevd(bool vectors, bool lower, lapack_int n, T* a, Real<T>* w,
                 T* work, Real<T>* rwork, lapack_int* iwork,
                 const SyevdSizes& sizes) {
  lapack_int info = 0, lda = std::max(1, n);
  const char jobz = vectors ? 'V' : 'N', uplo = lower ? 'L' : 'U';
  lapack_int lwork = sizes.work, lrwork = sizes.rwork, liwork = sizes.iwork;
  if constexpr (kIsComplex<T>) {
    Pick<T>(nullptr, nullptr, LAPACK_cheevd_base, LAPACK_zheevd_base)(
        &jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork,
        &liwork, &info, 1, 1);
  } else {
    Pick<T>(LAPACK_ssyevd_base, LAPACK_dsyevd_base, nullptr, nullptr)(
        &jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1,
        1);
  }
  return info;
}

template <typename T>
class SyevdKernel : public Kernel {
 public:
  SyevdKernel(int64_t batch, int64_t n, bool lower, bool vectors)
      : batch_(batch), n_(n), lower_(lower), vectors_(vectors) {
    T work{};
    Real<T> rwork{};
    lapack_int iwork = 0;
    Syevd<T>(vectors, lower, n, nullptr, nullptr, &work, &rwork, &iwork,
             {-1, -1, -1});
    sizes_.work = QueriedSize(work);
    sizes_.rwork = QueriedSize(rwork);
    sizes_.iwork = std::max<lapack_int>(iwork, 1);
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    using R = Real<T>;
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    R* w = ctx.Out<R>(step, 1);
    int32_t* info = ctx.Out<int32_t>(step, 2);
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> a(n_, n_);
      std::vector<T> work(sizes_.work);
      std::vector<R> rwork(sizes_.rwork);
      std::vector<lapack_int> iwork(sizes_.iwork);
      lapack::LoadMatrix(in + b * n_ * n_, a);
      info[b] = Syevd<T>(vectors_, lower_, n_, a.data(), w + b * n_,
                         work.data(), rwork.data(), iwork.data(), sizes_);
      lapack::StoreMatrix(a, out + b * n_ * n_);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool lower_, vectors_;
  SyevdSizes sizes_;
};

// --- sytrd / hetrd -------------------------------------------------------

template <typename T>
lapack_int Sytrd(bool lower, lapack_int n, T* a, Real<T>* d, Real<T>* e,
                 T* tau, T* work, lapack_int lwork) {
  lapack_int info = 0, lda = std::max(1, n);
  const char uplo = lower ? 'L' : 'U';
  Pick<T>(LAPACK_ssytrd_base, LAPACK_dsytrd_base, LAPACK_chetrd_base,
          LAPACK_zhetrd_base)(&uplo, &n, a, &lda, d, e, tau, work, &lwork,
                              &info, 1);
  return info;
}

template <typename T>
class SytrdKernel : public Kernel {
 public:
  SytrdKernel(int64_t batch, int64_t n, bool lower)
      : batch_(batch), n_(n), lower_(lower) {
    T query{};
    Sytrd<T>(lower, n, nullptr, nullptr, nullptr, nullptr, &query, -1);
    lwork_ = QueriedSize(query);
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    using R = Real<T>;
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    R* d = ctx.Out<R>(step, 1);
    R* e = ctx.Out<R>(step, 2);
    T* tau = ctx.Out<T>(step, 3);
    int32_t* info = ctx.Out<int32_t>(step, 4);
    const int64_t n1 = std::max<int64_t>(n_ - 1, 0);
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> a(n_, n_);
      std::vector<T> work(lwork_);
      lapack::LoadMatrix(in + b * n_ * n_, a);
      info[b] = Sytrd<T>(lower_, n_, a.data(), d + b * n_, e + b * n1,
                         tau + b * n1, work.data(), lwork_);
      lapack::StoreMatrix(a, out + b * n_ * n_);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool lower_;
  lapack_int lwork_;
};

// --- gehrd ---------------------------------------------------------------

template <typename T>
lapack_int Gehrd(lapack_int n, lapack_int low, lapack_int high, T* a, T* tau,
                 T* work, lapack_int lwork) {
  lapack_int info = 0, lda = std::max(1, n);
  Pick<T>(LAPACK_sgehrd, LAPACK_dgehrd, LAPACK_cgehrd, LAPACK_zgehrd)(
      &n, &low, &high, a, &lda, tau, work, &lwork, &info);
  return info;
}

template <typename T>
class GehrdKernel : public Kernel {
 public:
  GehrdKernel(int64_t batch, int64_t n, int64_t low, int64_t high)
      : batch_(batch), n_(n), low_(low), high_(high) {
    T query{};
    Gehrd<T>(n, low, high, nullptr, nullptr, &query, -1);
    lwork_ = QueriedSize(query, std::max<lapack_int>(1, n));
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    T* tau = ctx.Out<T>(step, 1);
    int32_t* info = ctx.Out<int32_t>(step, 2);
    const int64_t n1 = std::max<int64_t>(n_ - 1, 0);
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> a(n_, n_);
      std::vector<T> work(lwork_);
      lapack::LoadMatrix(in + b * n_ * n_, a);
      info[b] = Gehrd<T>(n_, low_, high_, a.data(), tau + b * n1, work.data(),
                         lwork_);
      lapack::StoreMatrix(a, out + b * n_ * n_);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, n_, low_, high_;
  lapack_int lwork_;
};

// --- gees ----------------------------------------------------------------

// gees without sorting. Real types: eigenvalues into wr and wi; complex:
// into w (passed as wr).
template <typename T>
lapack_int Gees(bool vectors, lapack_int n, T* a, lapack_int* sdim, T* wr,
                T* wi, T* vs, T* work, lapack_int lwork, Real<T>* rwork) {
  lapack_int info = 0, lda = std::max(1, n);
  const char jobvs = vectors ? 'V' : 'N', sort = 'N';
  if constexpr (kIsComplex<T>) {
    Pick<T>(nullptr, nullptr, LAPACK_cgees_base, LAPACK_zgees_base)(
        &jobvs, &sort, nullptr, &n, a, &lda, sdim, wr, vs, &lda, work, &lwork,
        rwork, nullptr, &info, 1, 1);
  } else {
    Pick<T>(LAPACK_sgees_base, LAPACK_dgees_base, nullptr, nullptr)(
        &jobvs, &sort, nullptr, &n, a, &lda, sdim, wr, wi, vs, &lda, work,
        &lwork, nullptr, &info, 1, 1);
  }
  return info;
}

template <typename T>
class GeesKernel : public Kernel {
 public:
  GeesKernel(int64_t batch, int64_t n, bool vectors)
      : batch_(batch), n_(n), vectors_(vectors) {
    // Queries get small arrays where the routines may write anyway.
    T query{};
    lapack_int sdim = 0;
    Real<T> rwork[8] = {};
    Gees<T>(vectors, n, nullptr, &sdim, nullptr, nullptr, nullptr, &query, -1,
            rwork);
    lwork_ = QueriedSize(query, std::max<lapack_int>(1, 3 * n));
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const int64_t n = n_;
    constexpr bool kComplex = kIsComplex<T>;
    const T* in = ctx.In<T>(step, 0);
    T* t_out = ctx.Out<T>(step, 0);
    T* z_out = ctx.Out<T>(step, 1);
    T* wr = ctx.Out<T>(step, 2);
    T* wi = kComplex ? nullptr : ctx.Out<T>(step, 3);
    const int first_int = kComplex ? 3 : 4;
    int32_t* sdim = ctx.Out<int32_t>(step, first_int);
    int32_t* info = ctx.Out<int32_t>(step, first_int + 1);
    ForEachMatrix(batch_, [&](int64_t b) {
      Matrix<T> a(n, n), z(n, n);
      std::vector<T> work(lwork_);
      std::vector<Real<T>> rwork(kComplex ? n : 0);
      lapack::LoadMatrix(in + b * n * n, a);
      info[b] = Gees<T>(vectors_, n, a.data(), &sdim[b], wr + b * n,
                        kComplex ? nullptr : wi + b * n, z.data(),
                        work.data(), lwork_, rwork.data());
      lapack::StoreMatrix(a, t_out + b * n * n);
      lapack::StoreMatrix(z, z_out + b * n * n);
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool vectors_;
  lapack_int lwork_;
};

// --- geev ----------------------------------------------------------------

// geev. Real types: eigenvalues into wr and wi, eigenvectors packed into
// real vl and vr (a complex pair's real and imaginary parts in two
// columns); complex: into w (passed as wr) and complex vl and vr.
template <typename T>
lapack_int Geev(bool left, bool right, lapack_int n, T* a, T* wr, T* wi,
                T* vl, T* vr, T* work, lapack_int lwork, Real<T>* rwork) {
  lapack_int info = 0, lda = std::max(1, n);
  const char jobvl = left ? 'V' : 'N', jobvr = right ? 'V' : 'N';
  if constexpr (kIsComplex<T>) {
    Pick<T>(nullptr, nullptr, LAPACK_cgeev_base, LAPACK_zgeev_base)(
        &jobvl, &jobvr, &n, a, &lda, wr, vl, &lda, vr, &lda, work, &lwork,
        rwork, &info, 1, 1);
  } else {
    Pick<T>(LAPACK_sgeev_base, LAPACK_dgeev_base, nullptr, nullptr)(
        &jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &lda, vr, &lda, work, &lwork,
        &info, 1, 1);
  }
  return info;
}

// Real geev's packed eigenvectors (column-major n x n) as complex ones in
// Kiln's row-major [n, n]: a real eigenvalue's vector is its column; a
// complex pair (wi > 0, then its conjugate) holds the real part in column
// j and the imaginary part in column j + 1.
template <typename R>
void UnpackEigenvectors(int64_t n, const R* wi, const Matrix<R>& packed,
                        std::complex<R>* out) {
  for (int64_t j = 0; j < n;) {
    if (wi[j] == 0 || std::isnan(wi[j]) || j + 1 == n) {
      for (int64_t i = 0; i < n; ++i) out[i * n + j] = packed(i, j);
      ++j;
      continue;
    }
    for (int64_t i = 0; i < n; ++i) {
      const std::complex<R> v(packed(i, j), packed(i, j + 1));
      out[i * n + j] = v;
      out[i * n + j + 1] = std::conj(v);
    }
    j += 2;
  }
}

template <typename T>
class GeevKernel : public Kernel {
 public:
  GeevKernel(int64_t batch, int64_t n, bool left, bool right)
      : batch_(batch), n_(n), left_(left), right_(right) {
    // The complex routine writes rwork even when queried (as jaxlib notes).
    T query{};
    Real<T> rwork[8] = {};
    Geev<T>(left, right, n, nullptr, nullptr, nullptr, nullptr, nullptr,
            &query, -1, rwork);
    lwork_ = QueriedSize(query, std::max<lapack_int>(1, 4 * n));
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    using R = Real<T>;
    using C = std::complex<R>;
    constexpr bool kComplex = kIsComplex<T>;
    const int64_t n = n_;
    const T* in = ctx.In<T>(step, 0);
    const int first_vector = kComplex ? 1 : 2;
    C* vl_out = ctx.Out<C>(step, first_vector);
    C* vr_out = ctx.Out<C>(step, first_vector + 1);
    int32_t* info = ctx.Out<int32_t>(step, first_vector + 2);
    ForEachMatrix(batch_, [&](int64_t b) {
      T* wr = ctx.Out<T>(step, 0) + b * n;
      T* wi = kComplex ? nullptr : ctx.Out<T>(step, 1) + b * n;
      C* vl = vl_out + b * n * n;
      C* vr = vr_out + b * n * n;
      std::fill(vl, vl + n * n, C(0));
      std::fill(vr, vr + n * n, C(0));
      if (!lapack::AllFinite(in + b * n * n, n * n)) {
        // As jaxlib's kernel: info -4, nothing computed (NaN here).
        info[b] = -4;
        std::fill(wr, wr + n, lapack::NotANumber<T>());
        if (!kComplex) std::fill(wi, wi + n, lapack::NotANumber<T>());
        std::fill(vl, vl + n * n, lapack::NotANumber<C>());
        std::fill(vr, vr + n * n, lapack::NotANumber<C>());
        return;
      }
      Matrix<T> a(n, n), left(left_ ? n : 1, left_ ? n : 1),
          right(right_ ? n : 1, right_ ? n : 1);
      std::vector<T> work(lwork_);
      std::vector<R> rwork(kComplex ? 2 * n : 0);
      lapack::LoadMatrix(in + b * n * n, a);
      info[b] = Geev<T>(left_, right_, n, a.data(), wr, wi, left.data(),
                        right.data(), work.data(), lwork_, rwork.data());
      if (info[b] != 0) return;
      if constexpr (kComplex) {
        if (left_) lapack::StoreMatrix(left, vl);
        if (right_) lapack::StoreMatrix(right, vr);
      } else {
        if (left_) UnpackEigenvectors(n, wi, left, vl);
        if (right_) UnpackEigenvectors(n, wi, right, vr);
      }
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool left_, right_;
  lapack_int lwork_;
};

// --- gesdd / gesvd -------------------------------------------------------

// gesdd (divide and conquer) or gesvd (QR iterations) of the m x n `a`,
// job 'A' (full U and V^H), 'S' (the first min(m, n) columns and rows) or
// 'N' (values only). rwork and iwork are sized by the kernel.
template <typename T>
lapack_int Svd(bool divide_and_conquer, char job, lapack_int m, lapack_int n,
               T* a, Real<T>* s, T* u, lapack_int ldu, T* vt, lapack_int ldvt,
               T* work, lapack_int lwork, Real<T>* rwork, lapack_int* iwork) {
  lapack_int info = 0, lda = std::max(1, m);
  if (divide_and_conquer) {
    if constexpr (kIsComplex<T>) {
      Pick<T>(nullptr, nullptr, LAPACK_cgesdd_base, LAPACK_zgesdd_base)(
          &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork,
          iwork, &info, 1);
    } else {
      Pick<T>(LAPACK_sgesdd_base, LAPACK_dgesdd_base, nullptr, nullptr)(
          &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork,
          &info, 1);
    }
  } else if constexpr (kIsComplex<T>) {
    Pick<T>(nullptr, nullptr, LAPACK_cgesvd_base, LAPACK_zgesvd_base)(
        &job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork,
        rwork, &info, 1, 1);
  } else {
    Pick<T>(LAPACK_sgesvd_base, LAPACK_dgesvd_base, nullptr, nullptr)(
        &job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork,
        &info, 1, 1);
  }
  return info;
}

template <typename T>
class SvdKernel : public Kernel {
 public:
  SvdKernel(int64_t batch, int64_t m, int64_t n, bool compute_uv, bool full,
            bool divide_and_conquer)
      : batch_(batch),
        m_(m),
        n_(n),
        compute_uv_(compute_uv),
        full_(full),
        divide_and_conquer_(divide_and_conquer) {
    const int64_t k = std::min(m, n), big = std::max(m, n);
    u_cols_ = full ? m : k;
    vt_rows_ = full ? n : k;
    job_ = !compute_uv ? 'N' : full ? 'A' : 'S';
    // The real workspace of the complex routines, as LAPACK documents it.
    if (!kIsComplex<T>) {
      rwork_ = 0;
    } else if (!divide_and_conquer) {
      rwork_ = 5 * k;
    } else if (!compute_uv) {
      rwork_ = 7 * k;
    } else {
      rwork_ = std::max(5 * k * k + 5 * k, 2 * big * k + 2 * k * k + k);
    }
    T query{};
    const auto ldu = static_cast<lapack_int>(std::max<int64_t>(1, m));
    const auto ldvt = static_cast<lapack_int>(std::max<int64_t>(1, vt_rows_));
    Real<T> rwork[8] = {};
    lapack_int iwork[8] = {};
    Svd<T>(divide_and_conquer, job_, m, n, nullptr, nullptr, nullptr, ldu,
           nullptr, ldvt, &query, -1, rwork, iwork);
    lwork_ = QueriedSize(query);
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    using R = Real<T>;
    const int64_t m = m_, n = n_, k = std::min(m, n);
    const T* in = ctx.In<T>(step, 0);
    T* a_out = ctx.Out<T>(step, 0);
    R* s_out = ctx.Out<R>(step, 1);
    T* u_out = ctx.Out<T>(step, 2);
    T* vt_out = ctx.Out<T>(step, 3);
    int32_t* info = ctx.Out<int32_t>(step, 4);
    if (a_out != in) std::memmove(a_out, in, batch_ * m * n * sizeof(T));
    ForEachMatrix(batch_, [&](int64_t b) {
      R* s = s_out + b * k;
      T* u = u_out + b * m * u_cols_;
      T* vt = vt_out + b * vt_rows_ * n;
      if (!lapack::AllFinite(in + b * m * n, m * n)) {
        info[b] = -4;
        std::fill(s, s + k, lapack::NotANumber<R>());
        const T fill = compute_uv_ ? lapack::NotANumber<T>() : T(0);
        std::fill(u, u + m * u_cols_, fill);
        std::fill(vt, vt + vt_rows_ * n, fill);
        return;
      }
      Matrix<T> a(m, n);
      Matrix<T> uu(compute_uv_ ? m : 1, compute_uv_ ? u_cols_ : 1);
      Matrix<T> vv(compute_uv_ ? vt_rows_ : 1, compute_uv_ ? n : 1);
      std::vector<T> work(lwork_);
      std::vector<R> rwork(std::max<int64_t>(rwork_, 1));
      std::vector<lapack_int> iwork(8 * std::max<int64_t>(k, 1));
      lapack::LoadMatrix(in + b * m * n, a);
      info[b] = Svd<T>(divide_and_conquer_, job_, m, n, a.data(), s,
                       uu.data(), static_cast<lapack_int>(std::max<int64_t>(1, uu.rows())),
                       vv.data(), static_cast<lapack_int>(std::max<int64_t>(1, vv.rows())),
                       work.data(), lwork_, rwork.data(), iwork.data());
      if (compute_uv_) {
        lapack::StoreMatrix(uu, u);
        lapack::StoreMatrix(vv, vt);
      } else {
        std::fill(u, u + m * u_cols_, T(0));
        std::fill(vt, vt + vt_rows_ * n, T(0));
      }
    });
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, m_, n_;
  bool compute_uv_, full_, divide_and_conquer_;
  int64_t u_cols_ = 0, vt_rows_ = 0, rwork_ = 0;
  char job_ = 'N';
  lapack_int lwork_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> MakeSyevdKernel(ElementType type, int64_t batch,
                                        int64_t n, bool lower, bool vectors) {
  if (!lapack::WorkspaceFitsTheLibrary(n)) {
    return lapack::TooLargeForTheLibrary("syevd", n, n);
  }
  return lapack::MakeForType<SyevdKernel>(type, batch, n, lower, vectors);
}

std::unique_ptr<Kernel> MakeSytrdKernel(ElementType type, int64_t batch,
                                        int64_t n, bool lower) {
  if (!lapack::FitsTheLibrary({n})) {
    return lapack::TooLargeForTheLibrary("sytrd", n, n);
  }
  return lapack::MakeForType<SytrdKernel>(type, batch, n, lower);
}

std::unique_ptr<Kernel> MakeGehrdKernel(ElementType type, int64_t batch,
                                        int64_t n, int64_t low, int64_t high) {
  if (!lapack::FitsTheLibrary({n})) {
    return lapack::TooLargeForTheLibrary("gehrd", n, n);
  }
  return lapack::MakeForType<GehrdKernel>(type, batch, n, low, high);
}

std::unique_ptr<Kernel> MakeGeesKernel(ElementType type, int64_t batch,
                                       int64_t n, bool vectors) {
  if (!lapack::FitsTheLibrary({n, 3 * n})) {
    return lapack::TooLargeForTheLibrary("gees", n, n);
  }
  return lapack::MakeForType<GeesKernel>(type, batch, n, vectors);
}

std::unique_ptr<Kernel> MakeGeevKernel(ElementType type, int64_t batch,
                                       int64_t n, bool left, bool right) {
  if (!lapack::FitsTheLibrary({n, 4 * n})) {
    return lapack::TooLargeForTheLibrary("geev", n, n);
  }
  return lapack::MakeForType<GeevKernel>(type, batch, n, left, right);
}

std::unique_ptr<Kernel> MakeSvdKernel(ElementType type, int64_t batch,
                                      int64_t m, int64_t n, bool compute_uv,
                                      bool full_matrices,
                                      bool divide_and_conquer) {
  if (!lapack::FitsTheLibrary({m, n}) ||
      !lapack::WorkspaceFitsTheLibrary(std::max(m, n))) {
    return lapack::TooLargeForTheLibrary(
        divide_and_conquer ? "gesdd" : "gesvd", m, n);
  }
  return lapack::MakeForType<SvdKernel>(type, batch, m, n, compute_uv,
                                        full_matrices, divide_and_conquer);
}

}  // namespace kiln::exec
