// LAPACK's symmetric / Hermitian eigensolvers: sytrd / hetrd (Householder
// tridiagonalization, as xSYTD2 / xHETD2) and syevd / heevd, which
// tridiagonalizes, forms Q (xORGTR) and diagonalizes the real tridiagonal
// matrix with implicitly shifted QL iterations, accumulating the rotations
// into Q (the algorithm of xSTEQR).
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/blas.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/lapack_util.h"

namespace kiln::exec {
namespace {

using lapack::ApplyReflectorLeft;
using lapack::Conj;
using lapack::Matrix;
using lapack::MatrixView;
using lapack::Real;
using lapack::RealPart;

// Reduces the Hermitian matrix held in the `lower` (or upper) triangle of
// `a` to real symmetric tridiagonal form T = Q^H A Q, as xSYTD2 / xHETD2
// leave it: d and e are T's diagonal and off-diagonal (also written to the
// chosen triangle), the reflectors' vectors fill the rest of that
// triangle, the other triangle is not touched.
template <typename T>
void TridiagonalReduce(MatrixView<T> a, bool lower, Real<T>* d, Real<T>* e,
                       T* tau) {
  using R = Real<T>;
  const int64_t n = a.rows;
  if (n == 0) return;
  // y := tau * A v over the block [first, first + len) of the stored
  // triangle; then y -= 1/2 tau (y^H v) v; then A -= v y^H + y v^H.
  auto update = [&](int64_t first, int64_t len, const std::vector<T>& v,
                    T taui) {
    auto at = [&](int64_t r, int64_t c) -> T& {
      return a(first + r, first + c);
    };
    std::vector<T> y(len, T(0));
    for (int64_t c = 0; c < len; ++c) {
      y[c] += T(RealPart(at(c, c))) * v[c];
      if (lower) {
        // Column c below the diagonal is contiguous: an axpy into y and a
        // dot product into y[c], each vectorized (one loop doing both
        // was a chain of dependent additions).
        const T* column = &at(0, c);
        const T vc = v[c];
        if constexpr (std::is_same_v<T, R>) {
          AddScaled(y.data() + c + 1, column + c + 1, vc, len - c - 1);
        } else {
          for (int64_t r = c + 1; r < len; ++r) y[r] += column[r] * vc;
        }
        y[c] += lapack::DotConjugated(column + c + 1, v.data() + c + 1,
                                      len - c - 1);
        continue;
      }
      for (int64_t r = c + 1; r < len; ++r) {
        // The stored element of the pair (r, c), r > c, and its conjugate.
        T arc = lower ? at(r, c) : Conj(at(c, r));
        y[r] += arc * v[c];
        y[c] += Conj(arc) * v[r];
      }
    }
    T dot = T(0);
    for (int64_t r = 0; r < len; ++r) {
      y[r] *= taui;
      dot += Conj(y[r]) * v[r];
    }
    T alpha = T(R(-0.5)) * taui * dot;
    for (int64_t r = 0; r < len; ++r) y[r] += alpha * v[r];
    for (int64_t c = 0; c < len; ++c) {
      at(c, c) = T(RealPart(at(c, c)) -
                   RealPart(v[c] * Conj(y[c]) + y[c] * Conj(v[c])));
      if constexpr (std::is_same_v<T, R>) {
        if (lower) {
          SubtractRank2(&at(c + 1, c), v.data() + c + 1, y[c], y.data() + c + 1,
                        v[c], len - c - 1);
          continue;
        }
      }
      for (int64_t r = c + 1; r < len; ++r) {
        if (lower) {
          at(r, c) -= v[r] * Conj(y[c]) + y[r] * Conj(v[c]);
        } else {
          at(c, r) -= v[c] * Conj(y[r]) + y[c] * Conj(v[r]);
        }
      }
    }
  };
  if (lower) {
    a(0, 0) = T(RealPart(a(0, 0)));
    for (int64_t i = 0; i + 1 < n; ++i) {
      const int64_t len = n - i - 1;
      T alpha = a(i + 1, i);
      T taui =
          lapack::MakeReflector(len, alpha, &a(std::min(i + 2, n - 1), i), 1);
      e[i] = RealPart(alpha);
      if (taui != T(0)) {
        a(i + 1, i) = T(1);
        std::vector<T> v(len);
        for (int64_t r = 0; r < len; ++r) v[r] = a(i + 1 + r, i);
        update(i + 1, len, v, taui);
      } else {
        a(i + 1, i + 1) = T(RealPart(a(i + 1, i + 1)));
      }
      a(i + 1, i) = T(e[i]);
      d[i] = RealPart(a(i, i));
      tau[i] = taui;
    }
    d[n - 1] = RealPart(a(n - 1, n - 1));
  } else {
    a(n - 1, n - 1) = T(RealPart(a(n - 1, n - 1)));
    for (int64_t i = n - 2; i >= 0; --i) {
      const int64_t len = i + 1;
      T alpha = a(i, i + 1);
      T taui = lapack::MakeReflector(len, alpha, &a(0, i + 1), 1);
      e[i] = RealPart(alpha);
      if (taui != T(0)) {
        a(i, i + 1) = T(1);
        std::vector<T> v(len);
        for (int64_t r = 0; r < len; ++r) v[r] = a(r, i + 1);
        update(0, len, v, taui);
      } else {
        a(i, i) = T(RealPart(a(i, i)));
      }
      a(i, i + 1) = T(e[i]);
      d[i + 1] = RealPart(a(i + 1, i + 1));
      tau[i] = taui;
    }
    d[0] = RealPart(a(0, 0));
  }
}

// Q of TridiagonalReduce (xORGTR / xUNGTR).
template <typename T>
Matrix<T> TridiagonalQ(MatrixView<T> a, bool lower, const T* tau) {
  const int64_t n = a.rows;
  Matrix<T> q(n, n);
  q.SetIdentity();
  if (lower) {
    // Q = H(0) H(1) ... H(n-2); H(i) acts on rows i + 1 .. n - 1.
    for (int64_t i = n - 2; i >= 0; --i) {
      std::vector<T> v = lapack::StoredReflector(a, i + 1, i);
      ApplyReflectorLeft(v.data(), tau[i],
                         q.view().Block(i + 1, i + 1, n - i - 1, n - i - 1));
    }
  } else {
    // Q = H(n-2) ... H(1) H(0); H(i) acts on rows 0 .. i, its vector ends
    // with the implicit 1 at row i.
    for (int64_t i = 0; i + 1 < n; ++i) {
      std::vector<T> v(i + 1);
      for (int64_t r = 0; r < i; ++r) v[r] = a(r, i + 1);
      v[i] = T(1);
      ApplyReflectorLeft(v.data(), tau[i], q.view().Block(0, 0, i + 1, i + 1));
    }
  }
  return q;
}

// Eigenvalues (ascending, into d) of the symmetric tridiagonal matrix with
// diagonal d and off-diagonal e[0..n-2], by implicitly shifted QL; the
// rotations are applied to the columns of `z` when it is non-null, which
// then holds the eigenvectors (times its initial value). Returns 0, or
// k > 0 when k eigenvalues did not converge in 30 n iterations.
template <typename R, typename T>
int32_t TridiagonalEigen(int64_t n, R* d, const R* e_in, Matrix<T>* z) {
  if (n == 0) return 0;
  std::vector<R> e(n, R(0));
  std::copy(e_in, e_in + n - 1, e.begin());
  const R eps = lapack::Ulp<T>();
  const int64_t max_iterations = 30 * n;
  int64_t iterations = 0;
  for (int64_t l = 0; l < n; ++l) {
    while (true) {
      // The first negligible off-diagonal element at or after l.
      int64_t m = l;
      for (; m + 1 < n; ++m) {
        R scale = std::abs(d[m]) + std::abs(d[m + 1]);
        if (std::abs(e[m]) <= eps * scale) break;
      }
      if (m == l) break;
      if (++iterations > max_iterations) {
        int32_t unconverged = 0;
        for (int64_t i = 0; i + 1 < n; ++i) unconverged += e[i] != 0;
        return std::max(unconverged, 1);
      }
      // Wilkinson's shift from the leading 2x2 block, then one implicit QL
      // sweep from m up to l with Givens rotations.
      R g = (d[l + 1] - d[l]) / (2 * e[l]);
      R r = std::hypot(g, R(1));
      g = d[m] - d[l] + e[l] / (g + std::copysign(r, g));
      R s = 1, c = 1, p = 0;
      bool underflow = false;
      for (int64_t i = m - 1; i >= l; --i) {
        R f = s * e[i], b = c * e[i];
        r = std::hypot(f, g);
        e[i + 1] = r;
        if (r == 0) {
          // The rotation underflowed: deflate at i + 1 and start again.
          d[i + 1] -= p;
          e[m] = 0;
          underflow = true;
          break;
        }
        s = f / r;
        c = g / r;
        g = d[i + 1] - p;
        r = (d[i] - g) * s + 2 * c * b;
        p = s * r;
        d[i + 1] = g + p;
        g = c * r - b;
        if constexpr (std::is_same_v<T, R>) {
          // Columns i + 1 and i: the same sums, added in the other order.
          if (z != nullptr) RotatePair(&(*z)(0, i + 1), &(*z)(0, i), c, s, n);
        } else if (z != nullptr) {
          for (int64_t k = 0; k < n; ++k) {
            T upper = (*z)(k, i + 1);
            (*z)(k, i + 1) = s * (*z)(k, i) + c * upper;
            (*z)(k, i) = c * (*z)(k, i) - s * upper;
          }
        }
      }
      if (underflow) continue;
      d[l] -= p;
      e[l] = g;
      e[m] = 0;
    }
  }
  // Selection sort, as xSTEQR does, moving the vectors with the values.
  for (int64_t i = 0; i + 1 < n; ++i) {
    int64_t smallest = i;
    for (int64_t j = i + 1; j < n; ++j) {
      if (d[j] < d[smallest]) smallest = j;
    }
    if (smallest == i) continue;
    std::swap(d[i], d[smallest]);
    if (z != nullptr) {
      for (int64_t k = 0; k < n; ++k) std::swap((*z)(k, i), (*z)(k, smallest));
    }
  }
  return 0;
}

template <typename T>
class SytrdKernel : public Kernel {
 public:
  SytrdKernel(int64_t batch, int64_t n, bool lower)
      : batch_(batch), n_(n), lower_(lower) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    using R = Real<T>;
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    R* d = ctx.Out<R>(step, 1);
    R* e = ctx.Out<R>(step, 2);
    T* tau = ctx.Out<T>(step, 3);
    int32_t* info = ctx.Out<int32_t>(step, 4);
    const int64_t n1 = std::max<int64_t>(n_ - 1, 0);
    Matrix<T> a(n_, n_);
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      lapack::LoadMatrix(in + b * n_ * n_, a);
      TridiagonalReduce(a.view(), lower_, d + b * n_, e + b * n1, tau + b * n1);
      lapack::StoreMatrix(a, out + b * n_ * n_);
      info[b] = 0;
    }
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool lower_;
};

template <typename T>
class SyevdKernel : public Kernel {
 public:
  SyevdKernel(int64_t batch, int64_t n, bool lower, bool vectors)
      : batch_(batch), n_(n), lower_(lower), vectors_(vectors) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    using R = Real<T>;
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    R* w = ctx.Out<R>(step, 1);
    int32_t* info = ctx.Out<int32_t>(step, 2);
    const int64_t n = n_;
    Matrix<T> a(n, n);
    std::vector<R> e(std::max<int64_t>(n - 1, 0));
    std::vector<T> tau(std::max<int64_t>(n - 1, 0));
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      lapack::LoadMatrix(in + b * n * n, a);
      R* d = w + b * n;
      const R scale = lapack::RangeScale(a);
      lapack::Scale(a, scale);
      TridiagonalReduce(a.view(), lower_, d, e.data(), tau.data());
      if (vectors_) {
        Matrix<T> z = TridiagonalQ(a.view(), lower_, tau.data());
        info[b] = TridiagonalEigen(n, d, e.data(), &z);
        lapack::StoreMatrix(z, out + b * n * n);
      } else {
        info[b] = TridiagonalEigen<R, T>(n, d, e.data(), nullptr);
        lapack::StoreMatrix(a, out + b * n * n);
      }
      for (int64_t i = 0; i < n; ++i) d[i] /= scale;
    }
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool lower_, vectors_;
};

}  // namespace

std::unique_ptr<Kernel> MakeSytrdKernel(ElementType type, int64_t batch,
                                        int64_t n, bool lower) {
  return lapack::MakeForType<SytrdKernel>(type, batch, n, lower);
}

std::unique_ptr<Kernel> MakeSyevdKernel(ElementType type, int64_t batch,
                                        int64_t n, bool lower, bool vectors) {
  return lapack::MakeForType<SyevdKernel>(type, batch, n, lower, vectors);
}

}  // namespace kiln::exec
