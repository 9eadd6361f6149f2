// The singular value decomposition behind gesdd and gesvd, by one-sided
// (Hestenes) Jacobi: plane rotations orthogonalize the columns of the tall
// orientation of A (A^H when m < n) while accumulating V; the column norms
// are the singular values and the normalized columns U. Jacobi is slower
// than LAPACK's bidiagonal divide and conquer but at least as accurate
// (small singular values to high relative accuracy). Columns of U that the
// data does not determine (zero singular values, the rest of a full U) are
// completed to an orthonormal basis by Gram-Schmidt.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/lapack_util.h"

namespace kiln::exec {
namespace {

using lapack::Conj;
using lapack::Matrix;
using lapack::Real;

// Orthogonalizes the columns of w (rows >= cols) by one-sided Jacobi
// sweeps, applying the same rotations to v. Returns 0, or 1 when the
// sweeps did not converge.
template <typename T>
int32_t JacobiOrthogonalize(Matrix<T>& w, Matrix<T>& v) {
  using R = Real<T>;
  const int64_t rows = w.rows(), cols = w.cols();
  const R tol = lapack::Ulp<T>() * R(std::max<int64_t>(rows, 1));
  constexpr int kMaxSweeps = 80;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p + 1 < cols; ++p) {
      for (int64_t q = p + 1; q < cols; ++q) {
        R alpha = 0, beta = 0;
        T gamma = T(0);
        for (int64_t i = 0; i < rows; ++i) {
          alpha += lapack::AbsSquared(w(i, p));
          beta += lapack::AbsSquared(w(i, q));
          gamma += Conj(w(i, p)) * w(i, q);
        }
        R g = std::abs(gamma);
        if (alpha == 0 || beta == 0 ||
            g <= tol * std::sqrt(alpha) * std::sqrt(beta)) {
          continue;
        }
        rotated = true;
        // Rotate (w_p, w_q conj(phase)), whose inner product g is real.
        T phase_conj = Conj(gamma / T(g));
        R zeta = (beta - alpha) / (2 * g);
        R t = std::copysign(R(1), zeta) /
              (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        R c = 1 / std::sqrt(1 + t * t), s = c * t;
        auto rotate = [&](Matrix<T>& x) {
          for (int64_t i = 0; i < x.rows(); ++i) {
            T xp = x(i, p), xq = x(i, q) * phase_conj;
            x(i, p) = c * xp - s * xq;
            x(i, q) = s * xp + c * xq;
          }
        };
        rotate(w);
        rotate(v);
      }
    }
    if (!rotated) return 0;
  }
  return 1;
}

// Fills columns [filled, u.cols) of u, whose first `filled` columns are
// orthonormal, with further orthonormal columns (Gram-Schmidt, twice, over
// the standard basis). `missing[j]` marks columns before `filled` that
// must be replaced too.
template <typename T>
void CompleteBasis(Matrix<T>& u, const std::vector<bool>& missing) {
  using R = Real<T>;
  const int64_t rows = u.rows();
  std::vector<int64_t> known;
  for (int64_t j = 0; j < u.cols(); ++j) {
    if (j < static_cast<int64_t>(missing.size()) && !missing[j]) {
      known.push_back(j);
    }
  }
  int64_t candidate = 0;
  for (int64_t j = 0; j < u.cols(); ++j) {
    if (j < static_cast<int64_t>(missing.size()) && !missing[j]) continue;
    std::vector<T> x(rows);
    for (; candidate < rows; ++candidate) {
      std::fill(x.begin(), x.end(), T(0));
      x[candidate] = T(1);
      for (int pass = 0; pass < 2; ++pass) {
        for (int64_t k : known) {
          T dot = T(0);
          for (int64_t i = 0; i < rows; ++i) dot += Conj(u(i, k)) * x[i];
          for (int64_t i = 0; i < rows; ++i) x[i] -= dot * u(i, k);
        }
      }
      R norm = lapack::Norm2(x.data(), rows);
      if (norm > R(0.5)) {
        for (int64_t i = 0; i < rows; ++i) u(i, j) = x[i] / norm;
        break;
      }
    }
    ++candidate;
    known.push_back(j);
  }
}

template <typename T>
class SvdKernel : public Kernel {
 public:
  SvdKernel(int64_t batch, int64_t m, int64_t n, bool compute_uv, bool full)
      : batch_(batch), m_(m), n_(n), compute_uv_(compute_uv), full_(full) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    using R = Real<T>;
    const int64_t m = m_, n = n_, k = std::min(m, n);
    const int64_t u_cols = full_ ? m : k, vt_rows = full_ ? n : k;
    const T* in = ctx.In<T>(step, 0);
    T* a_out = ctx.Out<T>(step, 0);
    R* s_out = ctx.Out<R>(step, 1);
    T* u_out = ctx.Out<T>(step, 2);
    T* vt_out = ctx.Out<T>(step, 3);
    int32_t* info = ctx.Out<int32_t>(step, 4);
    if (a_out != in) std::memmove(a_out, in, batch_ * m * n * sizeof(T));
    std::fill(u_out, u_out + batch_ * m * u_cols, T(0));
    std::fill(vt_out, vt_out + batch_ * vt_rows * n, T(0));
    // The tall orientation: w = A (m >= n) or A^H (m < n), rows >= cols.
    const bool transposed = m < n;
    const int64_t rows = std::max(m, n), cols = k;
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      const T* a = in + b * m * n;
      R* s = s_out + b * k;
      T* u = u_out + b * m * u_cols;
      T* vt = vt_out + b * vt_rows * n;
      Matrix<T> w(rows, cols), v(cols, cols);
      bool finite = true;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          T x = a[i * n + j];
          finite = finite && lapack::IsFinite(x);
          if (transposed) {
            w(j, i) = Conj(x);
          } else {
            w(i, j) = x;
          }
        }
      }
      if (!finite) {
        const R nan = std::numeric_limits<R>::quiet_NaN();
        std::fill(s, s + k, nan);
        if (compute_uv_) {
          std::fill(u, u + m * u_cols, T(nan));
          std::fill(vt, vt + vt_rows * n, T(nan));
        }
        info[b] = 0;
        continue;
      }
      v.SetIdentity();
      // Keep the sums of squares within range.
      const R scale = lapack::RangeScale(w);
      lapack::Scale(w, scale);
      info[b] = JacobiOrthogonalize(w, v);
      std::vector<R> sigma(cols);
      for (int64_t j = 0; j < cols; ++j) {
        sigma[j] = lapack::Norm2(&w(0, j), rows);
      }
      std::vector<int64_t> order(cols);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        return sigma[x] > sigma[y];
      });
      for (int64_t j = 0; j < cols; ++j) s[j] = sigma[order[j]] / scale;
      if (!compute_uv_) continue;
      // Left vectors of the tall orientation (rows x (full ? rows : cols))
      // and its right vectors (cols x cols), in descending order.
      const int64_t left_cols = full_ ? rows : cols;
      Matrix<T> left(rows, left_cols), right(cols, cols);
      std::vector<bool> missing(left_cols, true);
      const R tiny = lapack::SafeMin<T>() / lapack::Ulp<T>();
      for (int64_t j = 0; j < cols; ++j) {
        int64_t src = order[j];
        for (int64_t i = 0; i < cols; ++i) right(i, j) = v(i, src);
        if (sigma[src] > tiny) {
          for (int64_t i = 0; i < rows; ++i)
            left(i, j) = w(i, src) / T(sigma[src]);
          missing[j] = false;
        }
      }
      CompleteBasis(left, missing);
      // A = left S right^H (or its conjugate transpose when transposed).
      Matrix<T>& uu = transposed ? right : left;
      Matrix<T>& vv = transposed ? left : right;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < u_cols; ++j) u[i * u_cols + j] = uu(i, j);
      for (int64_t i = 0; i < vt_rows; ++i)
        for (int64_t j = 0; j < n; ++j) vt[i * n + j] = Conj(vv(j, i));
    }
    return OkStatus();
  }

 private:
  int64_t batch_, m_, n_;
  bool compute_uv_, full_;
};

}  // namespace

std::unique_ptr<Kernel> MakeSvdKernel(ElementType type, int64_t batch,
                                      int64_t m, int64_t n, bool compute_uv,
                                      bool full_matrices) {
  return lapack::MakeForType<SvdKernel>(type, batch, m, n, compute_uv,
                                        full_matrices);
}

}  // namespace kiln::exec
