// The singular value decomposition behind gesdd and gesvd (Golub-Kahan-
// Reinsch): Householder bidiagonalization of the tall orientation of A
// (A^H when m < n) as xGEBD2 does it, which leaves a real upper bidiagonal
// B = Q^H A P also for complex A, then implicitly shifted QR sweeps on B
// (Wilkinson shifts from B^T B, zero-diagonal chasing), whose rotations
// accumulate into Q and P. A full U comes from the whole product of the
// left reflectors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/blas.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/lapack_util.h"

namespace kiln::exec {
namespace {

using lapack::Conj;
using lapack::Matrix;
using lapack::Real;
using lapack::RealPart;

// Applies the plane rotation [c s; -s c] to columns i and j of `x` (when
// non-null): x_i := c x_i + s x_j, x_j := c x_j - s x_i.
template <typename T>
void RotateColumns(Matrix<T>* x, int64_t i, int64_t j, Real<T> c, Real<T> s) {
  if (x == nullptr) return;
  if constexpr (std::is_same_v<T, Real<T>>) {
    RotatePair(&(*x)(0, i), &(*x)(0, j), c, s, x->rows());
    return;
  }
  for (int64_t r = 0; r < x->rows(); ++r) {
    T xi = (*x)(r, i), xj = (*x)(r, j);
    (*x)(r, i) = c * xi + s * xj;
    (*x)(r, j) = c * xj - s * xi;
  }
}

// The SVD of the real upper bidiagonal matrix with diagonal d[0..n) and
// superdiagonal e[0..n-1): on return d holds the singular values
// (non-negative, unsorted), and the left and right rotations have been
// applied to the first n columns of u and of v (either may be null).
// Returns 0, or 1 when the sweeps did not converge.
template <typename R, typename T>
int32_t BidiagonalSvd(int64_t n, std::vector<R>& d, std::vector<R>& e,
                      Matrix<T>* u, Matrix<T>* v) {
  if (n == 0) return 0;
  const R eps = std::numeric_limits<R>::epsilon();
  R norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    norm = std::max(norm, std::abs(d[i]) + (i + 1 < n ? std::abs(e[i]) : 0));
  }
  const R tiny_diagonal = eps * norm;
  const int64_t max_sweeps = 100 * n;
  int64_t sweeps = 0;
  int64_t h = n - 1;
  while (h > 0) {
    for (int64_t i = 0; i < h; ++i) {
      if (std::abs(e[i]) <= eps * (std::abs(d[i]) + std::abs(d[i + 1]))) {
        e[i] = 0;
      }
    }
    if (e[h - 1] == 0) {
      --h;
      continue;
    }
    // The unreduced block [l, h].
    int64_t l = h - 1;
    while (l > 0 && e[l - 1] != 0) --l;
    // A zero on its diagonal splits it once its row (or, for the last
    // one, its column) is rotated to zero.
    bool split = false;
    for (int64_t k = l; k <= h && !split; ++k) {
      if (std::abs(d[k]) > tiny_diagonal) continue;
      d[k] = 0;
      split = true;
      if (k < h) {
        // Zero row k: rotate it against rows k+1.. from the left.
        R f = e[k];
        e[k] = 0;
        for (int64_t j = k + 1; j <= h && f != 0; ++j) {
          R r = std::hypot(d[j], f);
          R c = d[j] / r, s = f / r;
          d[j] = r;
          RotateColumns(u, j, k, c, s);
          if (j < h) {
            f = -s * e[j];
            e[j] = c * e[j];
          }
        }
      } else {
        // Zero column h: rotate it against columns h-1.. from the right.
        R f = e[h - 1];
        e[h - 1] = 0;
        for (int64_t j = h - 1; j >= l && f != 0; --j) {
          R r = std::hypot(d[j], f);
          R c = d[j] / r, s = f / r;
          d[j] = r;
          RotateColumns(v, j, h, c, s);
          if (j > l) {
            f = -s * e[j - 1];
            e[j - 1] = c * e[j - 1];
          }
        }
      }
    }
    if (split) continue;
    if (++sweeps > max_sweeps) return 1;
    // Wilkinson's shift: the eigenvalue of the trailing 2x2 of B^T B
    // nearer its last diagonal element.
    R t11 = d[h - 1] * d[h - 1] + (h - 1 > l ? e[h - 2] * e[h - 2] : R(0));
    R t12 = d[h - 1] * e[h - 1];
    R t22 = d[h] * d[h] + e[h - 1] * e[h - 1];
    R delta = (t11 - t22) / 2;
    R root = std::hypot(delta, t12);
    R shift = t22 - t12 * t12 / (delta + std::copysign(root, delta));
    if (!std::isfinite(shift)) shift = t22;
    // Chase the bulge from l down to h: a rotation from the right on
    // columns (k, k+1), then one from the left on rows (k, k+1).
    R y = d[l] * d[l] - shift, z = d[l] * e[l];
    R bulge = 0;
    for (int64_t k = l; k < h; ++k) {
      R r = std::hypot(y, z);
      R c = r == 0 ? R(1) : y / r, s = r == 0 ? R(0) : z / r;
      if (k > l) e[k - 1] = r;
      R dk = c * d[k] + s * e[k];
      e[k] = c * e[k] - s * d[k];
      bulge = s * d[k + 1];
      d[k + 1] = c * d[k + 1];
      d[k] = dk;
      RotateColumns(v, k, k + 1, c, s);
      r = std::hypot(d[k], bulge);
      c = r == 0 ? R(1) : d[k] / r;
      s = r == 0 ? R(0) : bulge / r;
      d[k] = r;
      R ek = c * e[k] + s * d[k + 1];
      d[k + 1] = c * d[k + 1] - s * e[k];
      e[k] = ek;
      RotateColumns(u, k, k + 1, c, s);
      if (k + 1 < h) {
        bulge = s * e[k + 1];
        e[k + 1] = c * e[k + 1];
        y = e[k];
        z = bulge;
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (d[i] < 0) {
      d[i] = -d[i];
      if (v != nullptr) {
        for (int64_t r = 0; r < v->rows(); ++r) (*v)(r, i) = -(*v)(r, i);
      }
    }
  }
  return 0;
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
      Matrix<T> w(rows, cols);
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
      const R scale = lapack::RangeScale(w);
      lapack::Scale(w, scale);
      // Bidiagonalize: B = Q^H w P, Q = H(0)...H(cols-1) (reflectors kept
      // below w's diagonal), P = G(0)...G(cols-2).
      std::vector<R> d(cols, 0), e(std::max<int64_t>(cols - 1, 0), 0);
      std::vector<T> tau_q(cols, T(0)), tau_p(cols, T(0));
      std::vector<std::vector<T>> p_vectors(cols);
      for (int64_t i = 0; i < cols; ++i) {
        tau_q[i] = lapack::MakeReflector(rows - i, w(i, i),
                                         &w(std::min(i + 1, rows - 1), i), 1);
        d[i] = RealPart(w(i, i));
        if (i + 1 < cols) {
          std::vector<T> v = lapack::StoredReflector(w.view(), i, i);
          lapack::ApplyReflectorLeft(
              v.data(), Conj(tau_q[i]),
              w.view().Block(i, i + 1, rows - i, cols - i - 1));
          // Row i's tail, conjugated: the reflector that makes w G real
          // in (i, i+1) and zero beyond.
          const int64_t len = cols - i - 1;
          std::vector<T> x(len);
          for (int64_t j = 0; j < len; ++j) x[j] = Conj(w(i, i + 1 + j));
          tau_p[i] = lapack::MakeReflector(len, x[0], x.data() + 1, 1);
          e[i] = RealPart(x[0]);
          x[0] = T(1);
          lapack::ApplyReflectorRight(
              x.data(), tau_p[i],
              w.view().Block(i + 1, i + 1, rows - i - 1, len));
          p_vectors[i] = std::move(x);
        }
      }
      Matrix<T> q, p;
      if (compute_uv_) {
        const int64_t q_cols = full_ ? rows : cols;
        q = Matrix<T>(rows, q_cols);
        for (int64_t j = 0; j < cols; ++j)
          for (int64_t i = j + 1; i < rows; ++i) q(i, j) = w(i, j);
        lapack::FormQ(q.view(), tau_q.data(), cols);
        p = Matrix<T>(cols, cols);
        p.SetIdentity();
        for (int64_t i = cols - 2; i >= 0; --i) {
          lapack::ApplyReflectorLeft(
              p_vectors[i].data(), tau_p[i],
              p.view().Block(i + 1, i + 1, cols - i - 1, cols - i - 1));
        }
      }
      info[b] = BidiagonalSvd(cols, d, e, compute_uv_ ? &q : nullptr,
                              compute_uv_ ? &p : nullptr);
      std::vector<int64_t> order(cols);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t x, int64_t y) { return d[x] > d[y]; });
      for (int64_t j = 0; j < cols; ++j) s[j] = d[order[j]] / scale;
      if (!compute_uv_) continue;
      // Left vectors of the tall orientation (q, its columns past `cols`
      // untouched) and right vectors (p), in descending order.
      Matrix<T> left(rows, q.cols()), right(cols, cols);
      for (int64_t j = 0; j < q.cols(); ++j) {
        int64_t src = j < cols ? order[j] : j;
        for (int64_t i = 0; i < rows; ++i) left(i, j) = q(i, src);
      }
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < cols; ++i) right(i, j) = p(i, order[j]);
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
