// JAX's tridiagonal_solve_perturbed_ffi (lapack.h): jaxlib's own solver,
// not a LAPACK routine, so Kiln's own too. Gaussian elimination with row
// pivoting as xLAGTF chooses pivots, then back substitution in which tiny
// pivots are perturbed as xLAGTS perturbs them, so that a singular system
// gives a large finite solution (what inverse iteration needs).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/lapack_util.h"

namespace kiln::exec {
namespace {

using lapack::Real;
using lapack::RealPart;

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

}  // namespace kiln::exec
