// LAPACK's factorizations and solvers Kiln still computes itself: geqrf,
// geqp3, orgqr, ormqr, gtsv. Each is the unblocked form of the LAPACK
// routine (xGEQR2, xLAQP2, xORG2R, xORM2R, xGTSV), which computes the same
// factors as the blocked one up to rounding. getrf and potrf are the BLAS
// library's (lapack_library.cc).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "exec/executor.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/lapack_util.h"

namespace kiln::exec {
namespace {

using lapack::Abs1;
using lapack::ApplyReflectorLeft;
using lapack::ApplyReflectorRight;
using lapack::Conj;
using lapack::Matrix;
using lapack::MatrixView;
using lapack::Real;
using lapack::RealPart;

template <typename T>
class GeqrfKernel : public Kernel {
 public:
  GeqrfKernel(int64_t batch, int64_t m, int64_t n)
      : batch_(batch), m_(m), n_(n) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    T* tau = ctx.Out<T>(step, 1);
    const int64_t k = std::min(m_, n_);
    Matrix<T> a(m_, n_);
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      lapack::LoadMatrix(in + b * m_ * n_, a);
      lapack::HouseholderQr(a.view(), tau + b * k);
      lapack::StoreMatrix(a, out + b * m_ * n_);
    }
    return OkStatus();
  }

 private:
  int64_t batch_, m_, n_;
};

// QR with column pivoting (xGEQP3 with its unblocked step xLAQP2): the
// columns marked in jpvt go first, unpivoted; the others are chosen by
// largest remaining norm, with LAPACK's norm downdating.
template <typename T>
void PivotedQr(MatrixView<T> a, int32_t* jpvt, T* tau) {
  using R = Real<T>;
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  auto swap_columns = [&](int64_t x, int64_t y) {
    for (int64_t i = 0; i < m; ++i) std::swap(a(i, x), a(i, y));
  };
  int64_t fixed = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (jpvt[j] != 0) {
      if (j != fixed) {
        swap_columns(j, fixed);
        jpvt[j] = jpvt[fixed];
        jpvt[fixed] = static_cast<int32_t>(j + 1);
      } else {
        jpvt[j] = static_cast<int32_t>(j + 1);
      }
      ++fixed;
    } else {
      jpvt[j] = static_cast<int32_t>(j + 1);
    }
  }
  if (fixed > 0) {
    int64_t na = std::min(m, fixed);
    lapack::HouseholderQr(a.Block(0, 0, m, na), tau);
    for (int64_t i = 0; i < na && na < n; ++i) {
      std::vector<T> v = lapack::StoredReflector(a, i, i);
      ApplyReflectorLeft(v.data(), Conj(tau[i]), a.Block(i, na, m - i, n - na));
    }
  }
  if (fixed >= k) return;
  // Partial column norms: vn1 is the current estimate, vn2 the value when
  // it was last computed exactly.
  std::vector<R> vn1(n, 0), vn2(n, 0);
  for (int64_t j = fixed; j < n; ++j) {
    vn1[j] = vn2[j] = lapack::Norm2(&a(fixed, j), m - fixed);
  }
  const R tol3z = std::sqrt(lapack::Ulp<T>() / 2);
  for (int64_t i = fixed; i < k; ++i) {
    int64_t pivot = i;
    for (int64_t j = i + 1; j < n; ++j) {
      if (vn1[j] > vn1[pivot]) pivot = j;
    }
    if (pivot != i) {
      swap_columns(pivot, i);
      std::swap(jpvt[pivot], jpvt[i]);
      vn1[pivot] = vn1[i];
      vn2[pivot] = vn2[i];
    }
    tau[i] =
        lapack::MakeReflector(m - i, a(i, i), &a(std::min(i + 1, m - 1), i), 1);
    if (i + 1 < n) {
      std::vector<T> v = lapack::StoredReflector(a, i, i);
      ApplyReflectorLeft(v.data(), Conj(tau[i]),
                         a.Block(i, i + 1, m - i, n - i - 1));
    }
    for (int64_t j = i + 1; j < n; ++j) {
      if (vn1[j] == 0) continue;
      R ratio = std::abs(a(i, j)) / vn1[j];
      R temp = std::max(R(0), 1 - ratio * ratio);
      R temp2 = temp * (vn1[j] / vn2[j]) * (vn1[j] / vn2[j]);
      if (temp2 <= tol3z) {
        // Cancellation: recompute the norm.
        vn1[j] = i + 1 < m ? lapack::Norm2(&a(i + 1, j), m - i - 1) : R(0);
        vn2[j] = vn1[j];
      } else {
        vn1[j] *= std::sqrt(temp);
      }
    }
  }
}

template <typename T>
class Geqp3Kernel : public Kernel {
 public:
  Geqp3Kernel(int64_t batch, int64_t m, int64_t n)
      : batch_(batch), m_(m), n_(n) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    const int32_t* jpvt_in = ctx.In<int32_t>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    int32_t* jpvt = ctx.Out<int32_t>(step, 1);
    T* tau = ctx.Out<T>(step, 2);
    const int64_t k = std::min(m_, n_);
    if (jpvt != jpvt_in) std::memmove(jpvt, jpvt_in, batch_ * n_ * 4);
    Matrix<T> a(m_, n_);
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      lapack::LoadMatrix(in + b * m_ * n_, a);
      PivotedQr(a.view(), jpvt + b * n_, tau + b * k);
      lapack::StoreMatrix(a, out + b * m_ * n_);
    }
    return OkStatus();
  }

 private:
  int64_t batch_, m_, n_;
};

template <typename T>
class OrgqrKernel : public Kernel {
 public:
  OrgqrKernel(int64_t batch, int64_t m, int64_t n, int64_t k)
      : batch_(batch), m_(m), n_(n), k_(k) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    const T* tau = ctx.In<T>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    Matrix<T> a(m_, n_);
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      lapack::LoadMatrix(in + b * m_ * n_, a);
      lapack::FormQ(a.view(), tau + b * k_, k_);
      lapack::StoreMatrix(a, out + b * m_ * n_);
    }
    return OkStatus();
  }

 private:
  int64_t batch_, m_, n_, k_;
};

// xORM2R / xUNM2R: applies the k reflectors in the order that multiplies
// by Q or Q^H from the chosen side.
template <typename T>
class OrmqrKernel : public Kernel {
 public:
  explicit OrmqrKernel(const OrmqrParams& p) : p_(p) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const int64_t q = p_.left ? p_.m : p_.n;
    const int64_t k = p_.k;
    const T* a_in = ctx.In<T>(step, 0);
    const T* tau_in = ctx.In<T>(step, 1);
    const T* c_in = ctx.In<T>(step, 2);
    T* out = ctx.Out<T>(step, 0);
    Matrix<T> a(q, p_.a_cols), c(p_.m, p_.n);
    const bool forward = p_.left == p_.transpose;
    for (int64_t b = 0; b < p_.batch; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      lapack::LoadMatrix(a_in + b * q * p_.a_cols, a);
      lapack::LoadMatrix(c_in + b * p_.m * p_.n, c);
      const T* tau = tau_in + b * k;
      for (int64_t step_i = 0; step_i < k; ++step_i) {
        int64_t i = forward ? step_i : k - 1 - step_i;
        T t = p_.transpose ? Conj(tau[i]) : tau[i];
        std::vector<T> v = lapack::StoredReflector(a.view(), i, i);
        if (p_.left) {
          ApplyReflectorLeft(v.data(), t, c.view().Block(i, 0, p_.m - i, p_.n));
        } else {
          ApplyReflectorRight(v.data(), t,
                              c.view().Block(0, i, p_.m, p_.n - i));
        }
      }
      lapack::StoreMatrix(c, out + b * p_.m * p_.n);
    }
    return OkStatus();
  }

 private:
  OrmqrParams p_;
};

// Gaussian elimination with partial pivoting on a tridiagonal system
// (xGTSV), over rows of the row-major [m, nrhs] right-hand side `b`. `dl`
// is JAX's subdiagonal: dl[i] = A(i, i-1), dl[0] unused. Returns info.
template <typename T>
int32_t TridiagonalSolve(int64_t m, int64_t nrhs, T* dl, T* d, T* du, T* b) {
  auto row = [&](int64_t i) { return b + i * nrhs; };
  auto eliminate = [&](int64_t i, bool last) -> bool {
    if (Abs1(d[i]) >= Abs1(dl[i + 1])) {
      if (d[i] == T(0)) return false;
      T fact = dl[i + 1] / d[i];
      d[i + 1] -= fact * du[i];
      for (int64_t j = 0; j < nrhs; ++j) row(i + 1)[j] -= fact * row(i)[j];
      if (!last) dl[i + 1] = T(0);
    } else {
      // Interchange rows i and i + 1; dl[i + 1] becomes U(i, i + 2).
      T fact = d[i] / dl[i + 1];
      d[i] = dl[i + 1];
      T temp = d[i + 1];
      d[i + 1] = du[i] - fact * temp;
      if (!last) {
        dl[i + 1] = du[i + 1];
        du[i + 1] = -fact * dl[i + 1];
      }
      du[i] = temp;
      for (int64_t j = 0; j < nrhs; ++j) {
        T upper = row(i)[j];
        row(i)[j] = row(i + 1)[j];
        row(i + 1)[j] = upper - fact * row(i + 1)[j];
      }
    }
    return true;
  };
  for (int64_t i = 0; i + 2 < m; ++i) {
    if (!eliminate(i, false)) return static_cast<int32_t>(i + 1);
  }
  if (m > 1 && !eliminate(m - 2, true)) return static_cast<int32_t>(m - 1);
  if (m > 0 && d[m - 1] == T(0)) return static_cast<int32_t>(m);
  for (int64_t j = 0; j < nrhs; ++j) {
    if (m == 0) break;
    row(m - 1)[j] /= d[m - 1];
    if (m > 1) {
      row(m - 2)[j] = (row(m - 2)[j] - du[m - 2] * row(m - 1)[j]) / d[m - 2];
    }
    for (int64_t i = m - 3; i >= 0; --i) {
      row(i)[j] =
          (row(i)[j] - du[i] * row(i + 1)[j] - dl[i + 1] * row(i + 2)[j]) /
          d[i];
    }
  }
  return 0;
}

template <typename T>
class GtsvKernel : public Kernel {
 public:
  GtsvKernel(int64_t batch, int64_t m, int64_t nrhs)
      : batch_(batch), m_(m), nrhs_(nrhs) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const int64_t sizes[4] = {m_, m_, m_, m_ * nrhs_};
    T* out[4];
    for (int i = 0; i < 4; ++i) {
      out[i] = ctx.Out<T>(step, i);
      const T* in = ctx.In<T>(step, i);
      if (in != out[i]) {
        std::memmove(out[i], in, batch_ * sizes[i] * sizeof(T));
      }
    }
    int32_t* info = ctx.Out<int32_t>(step, 4);
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      info[b] = TridiagonalSolve(m_, nrhs_, out[0] + b * m_, out[1] + b * m_,
                                 out[2] + b * m_, out[3] + b * m_ * nrhs_);
    }
    return OkStatus();
  }

 private:
  int64_t batch_, m_, nrhs_;
};

// Moves a pivot of magnitude below 1 away from zero (by `perturb`,
// doubling) or scales it and its row up until row / pivot cannot overflow
// (the safeguard of xLAGTS).
template <typename T>
void PerturbPivot(Real<T> perturb, T& pivot, T* row, int64_t nrhs) {
  using R = Real<T>;
  const R tiny = std::numeric_limits<R>::min();
  const R small = 1 / std::numeric_limits<R>::max();
  const R safemin =
      small < tiny ? tiny : small * (1 + std::numeric_limits<R>::epsilon());
  const R bignum = 1 / safemin;
  R abs_pivot = std::abs(pivot);
  if (abs_pivot >= 1) return;
  perturb =
      std::copysign(std::max(std::abs(perturb), safemin), RealPart(pivot));
  R max_factor = 0;
  for (int64_t j = 0; j < nrhs; ++j)
    max_factor = std::max(max_factor, R(std::abs(row[j])));
  while (abs_pivot < 1) {
    if (abs_pivot < safemin) {
      if (abs_pivot == 0 || max_factor * safemin > abs_pivot) {
        pivot += perturb;
        perturb *= 2;
      } else {
        pivot *= bignum;
        for (int64_t j = 0; j < nrhs; ++j) row[j] *= bignum;
        return;
      }
    } else if (max_factor > abs_pivot * bignum) {
      pivot += perturb;
      perturb *= 2;
    } else {
      return;
    }
    abs_pivot = std::abs(pivot);
  }
}

// Solves the tridiagonal system (dl[i] = A(i, i-1), du[i] = A(i, i+1))
// for the row-major [m, nrhs] b into x, factoring with row pivoting (as
// xLAGTF, choosing pivots relative to the rows' scales) and solving U x = z
// with perturbed tiny pivots.
template <typename T>
void TridiagonalSolvePerturbed(int64_t m, int64_t nrhs, const T* dl, const T* d,
                               const T* du, const T* b, T* x) {
  using R = Real<T>;
  const R eps = std::numeric_limits<R>::epsilon();
  auto b_row = [&](int64_t i) { return b + i * nrhs; };
  auto x_row = [&](int64_t i) { return x + i * nrhs; };
  std::vector<T> row(nrhs);
  if (m == 0) return;
  if (m == 1) {
    T p = d[0];
    std::copy(b_row(0), b_row(0) + nrhs, row.begin());
    PerturbPivot(eps * std::abs(p), p, row.data(), nrhs);
    for (int64_t j = 0; j < nrhs; ++j) x_row(0)[j] = row[j] / p;
    return;
  }
  // U's diagonal and two superdiagonals.
  std::vector<T> u0(m, T(0)), u1(m, T(0)), u2(m, T(0));
  u0[0] = d[0];
  u1[0] = du[0];
  R max_abs_u = std::max(std::abs(u0[0]), std::abs(u1[0]));
  R scale1 = std::abs(u0[0]) + std::abs(u1[0]);
  std::copy(b_row(0), b_row(0) + nrhs, x_row(0));
  for (int64_t k = 0; k + 1 < m; ++k) {
    u0[k + 1] = d[k + 1];
    R scale2 = std::abs(dl[k + 1]) + std::abs(u0[k + 1]);
    if (k + 2 < m) scale2 += std::abs(du[k + 1]);
    if (dl[k + 1] == T(0)) {
      scale1 = scale2;
      u1[k + 1] = du[k + 1];
      u2[k] = T(0);
      std::copy(b_row(k + 1), b_row(k + 1) + nrhs, x_row(k + 1));
    } else {
      R piv1 = u0[k] == T(0) ? R(0) : std::abs(u0[k]) / scale1;
      R piv2 = std::abs(dl[k + 1]) / scale2;
      if (piv2 <= piv1) {
        scale1 = scale2;
        T factor = dl[k + 1] / u0[k];
        u0[k + 1] -= factor * u1[k];
        u1[k + 1] = du[k + 1];
        u2[k] = T(0);
        for (int64_t j = 0; j < nrhs; ++j)
          x_row(k + 1)[j] = b_row(k + 1)[j] - factor * x_row(k)[j];
      } else {
        // Swap rows k and k + 1.
        T factor = u0[k] / dl[k + 1];
        T upper = u1[k];
        u0[k] = dl[k + 1];
        u0[k + 1] = upper - factor * d[k + 1];
        u1[k] = d[k + 1];
        if (k + 2 < m) {
          u2[k] = du[k + 1];
          u1[k + 1] = -factor * du[k + 1];
        }
        for (int64_t j = 0; j < nrhs; ++j) {
          x_row(k + 1)[j] = x_row(k)[j] - factor * b_row(k + 1)[j];
          x_row(k)[j] = b_row(k + 1)[j];
        }
        scale1 = std::abs(u0[k + 1]) + std::abs(u1[k + 1]);
      }
    }
    if (k + 2 < m) {
      max_abs_u = std::max({max_abs_u, R(std::abs(u0[k])), R(std::abs(u1[k])),
                            R(std::abs(u2[k]))});
    }
  }
  max_abs_u = std::max(max_abs_u, R(std::abs(u0[m - 1])));
  const R perturb = eps * max_abs_u;
  for (int64_t k = m - 1; k >= 0; --k) {
    T p = u0[k];
    for (int64_t j = 0; j < nrhs; ++j) {
      T value = x_row(k)[j];
      if (k + 1 < m) value -= u1[k] * x_row(k + 1)[j];
      if (k + 2 < m) value -= u2[k] * x_row(k + 2)[j];
      row[j] = value;
    }
    PerturbPivot(perturb, p, row.data(), nrhs);
    T reciprocal = T(1) / p;
    for (int64_t j = 0; j < nrhs; ++j) x_row(k)[j] = row[j] * reciprocal;
  }
}

template <typename T>
class TridiagonalSolvePerturbedKernel : public Kernel {
 public:
  TridiagonalSolvePerturbedKernel(int64_t batch, int64_t m, int64_t nrhs)
      : batch_(batch), m_(m), nrhs_(nrhs) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* dl = ctx.In<T>(step, 0);
    const T* d = ctx.In<T>(step, 1);
    const T* du = ctx.In<T>(step, 2);
    const T* b = ctx.In<T>(step, 3);
    T* x = ctx.Out<T>(step, 0);
    std::vector<T> rhs(m_ * nrhs_);
    for (int64_t i = 0; i < batch_; ++i) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      // b may share x's memory: solve from a copy.
      std::copy(b + i * m_ * nrhs_, b + (i + 1) * m_ * nrhs_, rhs.begin());
      TridiagonalSolvePerturbed(m_, nrhs_, dl + i * m_, d + i * m_, du + i * m_,
                                rhs.data(), x + i * m_ * nrhs_);
    }
    return OkStatus();
  }

 private:
  int64_t batch_, m_, nrhs_;
};

}  // namespace

std::unique_ptr<Kernel> MakeTridiagonalSolvePerturbedKernel(ElementType type,
                                                            int64_t batch,
                                                            int64_t m,
                                                            int64_t nrhs) {
  return lapack::MakeForType<TridiagonalSolvePerturbedKernel>(type, batch, m,
                                                              nrhs);
}

std::unique_ptr<Kernel> MakeGeqrfKernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n) {
  return lapack::MakeForType<GeqrfKernel>(type, batch, m, n);
}

std::unique_ptr<Kernel> MakeGeqp3Kernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n) {
  return lapack::MakeForType<Geqp3Kernel>(type, batch, m, n);
}

std::unique_ptr<Kernel> MakeOrgqrKernel(ElementType type, int64_t batch,
                                        int64_t m, int64_t n, int64_t k) {
  return lapack::MakeForType<OrgqrKernel>(type, batch, m, n, k);
}

std::unique_ptr<Kernel> MakeOrmqrKernel(const OrmqrParams& params) {
  return lapack::MakeForType<OrmqrKernel>(params.type, params);
}

std::unique_ptr<Kernel> MakeGtsvKernel(ElementType type, int64_t batch,
                                       int64_t m, int64_t nrhs) {
  return lapack::MakeForType<GtsvKernel>(type, batch, m, nrhs);
}

}  // namespace kiln::exec
