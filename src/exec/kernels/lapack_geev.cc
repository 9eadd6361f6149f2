// LAPACK's general eigensolver geev: balances the matrix by diagonal
// scaling (xGEBAL's scaling; permutations are not needed for the result),
// computes the Schur form (lapack_schur.cc), then each eigenvector by back
// substitution on it (forward substitution for left eigenvectors, through
// T's 2x2 blocks for real types), transforms back and normalizes as xGEEV
// does.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/lapack_schur.h"
#include "exec/kernels/lapack_util.h"

namespace kiln::exec {
namespace {

using lapack::Abs1;
using lapack::Matrix;
using lapack::Real;
using lapack::Schur;
using lapack::SchurResult;

// Balances `a` by a diagonal similarity D^-1 A D with powers of 2 that
// make each row and column norm comparable (xGEBAL's scaling step);
// returns D.
template <typename T>
std::vector<Real<T>> Balance(Matrix<T>& a) {
  using R = Real<T>;
  const int64_t n = a.rows();
  const R radix = 2, factor = R(0.95);
  const R sfmin1 = lapack::SafeMin<T>() / lapack::Ulp<T>();
  const R sfmax1 = 1 / sfmin1;
  const R sfmin2 = sfmin1 * radix, sfmax2 = 1 / sfmin2;
  std::vector<R> scale(n, 1);
  bool changed = true;
  while (changed) {
    changed = false;
    for (int64_t i = 0; i < n; ++i) {
      R c = lapack::Norm2(&a(0, i), n);
      R r = lapack::Norm2(&a(i, 0), n, n);
      // The largest elements of the column and the row (IxAMAX's choice).
      int64_t ica = 0, ira = 0;
      for (int64_t k = 1; k < n; ++k) {
        if (Abs1(a(k, i)) > Abs1(a(ica, i))) ica = k;
        if (Abs1(a(i, k)) > Abs1(a(i, ira))) ira = k;
      }
      R ca = std::abs(a(ica, i)), ra = std::abs(a(i, ira));
      if (c == 0 || r == 0) continue;
      if (!std::isfinite(c + ca + r + ra)) return scale;
      R g = r / radix, f = 1, s = c + r;
      while (c < g && std::max({f, c, ca}) < sfmax2 &&
             std::min({r, g, ra}) > sfmin2) {
        f *= radix;
        c *= radix;
        ca *= radix;
        r /= radix;
        g /= radix;
        ra /= radix;
      }
      g = c / radix;
      while (g >= r && std::max(r, ra) < sfmax2 &&
             std::min({f, c, g, ca}) > sfmin2) {
        f /= radix;
        c /= radix;
        g /= radix;
        ca /= radix;
        r *= radix;
        ra *= radix;
      }
      if (c + r >= factor * s) continue;
      if (f < 1 && scale[i] < 1 && f * scale[i] <= sfmin1) continue;
      if (f > 1 && scale[i] > 1 && scale[i] >= sfmax1 / f) continue;
      scale[i] *= f;
      changed = true;
      for (int64_t k = 0; k < n; ++k) a(i, k) /= f;
      for (int64_t k = 0; k < n; ++k) a(k, i) *= f;
    }
  }
  return scale;
}

// Solves the 2x2 system m x = rhs (complex), perturbing a pivot smaller
// than `smin` up to it.
template <typename C, typename R>
void Solve2x2(C m00, C m01, C m10, C m11, C& x0, C& x1, R smin) {
  // Partial pivoting on the first column.
  bool swap = Abs1(m10) > Abs1(m00);
  if (swap) {
    std::swap(m00, m10);
    std::swap(m01, m11);
    std::swap(x0, x1);
  }
  if (Abs1(m00) < smin) m00 = C(smin);
  C l = m10 / m00;
  C u11 = m11 - l * m01;
  if (Abs1(u11) < smin) u11 = C(smin);
  C rhs1 = x1 - l * x0;
  x1 = rhs1 / u11;
  x0 = (x0 - m01 * x1) / m00;
}

// Where T's diagonal block containing index j starts and its size (2 for
// the complex-pair blocks of a real Schur form).
template <typename T>
int64_t BlockStart(const Matrix<T>& t, int64_t j) {
  if constexpr (!kIsComplex<T>) {
    if (j > 0 && t(j, j - 1) != T(0)) return j - 1;
  }
  return j;
}

// The eigenvectors of the (quasi-)triangular Schur form `t` for the
// eigenvalue `lambda` whose diagonal block is [p, p + size): x with
// (T - lambda) x = 0 (right, zero below the block) or u with
// u (T - lambda) = 0 (left, zero above it, returned conjugated so that it
// transforms like a right eigenvector).
template <typename T>
std::vector<std::complex<Real<T>>> SchurEigenvector(
    const Matrix<T>& t, std::complex<Real<T>> lambda, int64_t p, int64_t size,
    bool left) {
  using R = Real<T>;
  using C = std::complex<R>;
  const int64_t n = t.rows();
  const R ulp = lapack::Ulp<T>();
  const R smlnum = lapack::SafeMin<T>() * (R(n) / ulp);
  const R smin = std::max(ulp * Abs1(lambda), smlnum);
  const R big = std::sqrt(std::numeric_limits<R>::max());
  auto at = [&](int64_t i, int64_t j) { return C(t(i, j)); };
  std::vector<C> x(n, C(0));
  if (size == 1) {
    x[p] = C(1);
  } else {
    // A null vector of the 2x2 block minus lambda (or of its transpose).
    C a = at(p, p) - lambda, b = at(p, p + 1), c = at(p + 1, p),
      d = at(p + 1, p + 1) - lambda;
    if (left) std::swap(b, c);
    if (Abs1(b) >= Abs1(c)) {
      x[p] = C(1);
      x[p + 1] = -a / b;
    } else {
      x[p] = -d / c;
      x[p + 1] = C(1);
    }
  }
  auto rescale = [&](C value) {
    if (Abs1(value) <= big) return;
    R f = 1 / Abs1(value);
    for (C& e : x) e *= f;
  };
  if (!left) {
    for (int64_t j = p - 1; j >= 0;) {
      int64_t start = BlockStart(t, j);
      auto rhs = [&](int64_t row) {
        C sum = C(0);
        for (int64_t i = j + 1; i < p + size; ++i) sum += at(row, i) * x[i];
        return -sum;
      };
      if (start == j) {
        C denom = at(j, j) - lambda;
        if (Abs1(denom) < smin) denom = C(smin);
        x[j] = rhs(j) / denom;
        rescale(x[j]);
      } else {
        C x0 = rhs(j - 1), x1 = rhs(j);
        Solve2x2(at(j - 1, j - 1) - lambda, at(j - 1, j), at(j, j - 1),
                 at(j, j) - lambda, x0, x1, smin);
        x[j - 1] = x0;
        x[j] = x1;
        rescale(Abs1(x0) > Abs1(x1) ? x0 : x1);
      }
      j = start - 1;
    }
  } else {
    for (int64_t j = p + size; j < n;) {
      bool pair = j + 1 < n && BlockStart(t, j + 1) == j;
      auto rhs = [&](int64_t col) {
        C sum = C(0);
        for (int64_t i = p; i < j; ++i) sum += x[i] * at(i, col);
        return -sum;
      };
      if (!pair) {
        C denom = at(j, j) - lambda;
        if (Abs1(denom) < smin) denom = C(smin);
        x[j] = rhs(j) / denom;
        rescale(x[j]);
        j += 1;
      } else {
        C x0 = rhs(j), x1 = rhs(j + 1);
        Solve2x2(at(j, j) - lambda, at(j + 1, j), at(j, j + 1),
                 at(j + 1, j + 1) - lambda, x0, x1, smin);
        x[j] = x0;
        x[j + 1] = x1;
        rescale(Abs1(x0) > Abs1(x1) ? x0 : x1);
        j += 2;
      }
    }
    for (C& e : x) e = std::conj(e);
  }
  return x;
}

// v := Z x, undoes the balancing (times D for right eigenvectors, divided
// for left ones) and normalizes as xGEEV: unit 2-norm; for complex
// eigenvalues the largest component is made real (positive for complex
// types, with the sign of its real part for real types, as xLARTG leaves
// it).
template <typename T>
std::vector<std::complex<Real<T>>> FinishEigenvector(
    const Matrix<T>& z, const std::vector<Real<T>>& scale,
    const std::vector<std::complex<Real<T>>>& x, bool left, bool real_value) {
  using R = Real<T>;
  using C = std::complex<R>;
  const int64_t n = z.rows();
  std::vector<C> v(n, C(0));
  for (int64_t k = 0; k < n; ++k) {
    if (x[k] == C(0)) continue;
    for (int64_t i = 0; i < n; ++i) v[i] += C(z(i, k)) * x[k];
  }
  for (int64_t i = 0; i < n; ++i)
    v[i] = left ? v[i] / scale[i] : v[i] * scale[i];
  R norm = lapack::Norm2(v.data(), n);
  if (norm > 0) {
    for (C& e : v) e /= norm;
  }
  if (real_value && !kIsComplex<T>) {
    for (C& e : v) e = C(e.real(), 0);
    return v;
  }
  int64_t largest = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (lapack::AbsSquared(v[i]) > lapack::AbsSquared(v[largest])) largest = i;
  }
  C pivot = v[largest];
  R magnitude = std::abs(pivot);
  if (magnitude > 0) {
    C phase = std::conj(pivot) / magnitude;
    if constexpr (!kIsComplex<T>) {
      if (pivot.real() != 0 && std::signbit(pivot.real())) phase = -phase;
    }
    for (C& e : v) e *= phase;
    v[largest] = C(v[largest].real(), 0);
  }
  return v;
}

template <typename T>
class GeevKernel : public Kernel {
 public:
  GeevKernel(int64_t batch, int64_t n, bool left, bool right)
      : batch_(batch), n_(n), left_(left), right_(right) {}
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
    const R nan = std::numeric_limits<R>::quiet_NaN();
    Matrix<T> a(n, n);
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      lapack::LoadMatrix(in + b * n * n, a);
      std::vector<C> w(n);
      C* vl = vl_out + b * n * n;
      C* vr = vr_out + b * n * n;
      std::fill(vl, vl + n * n, C(0));
      std::fill(vr, vr + n * n, C(0));
      bool finite = true;
      for (int64_t j = 0; j < n && finite; ++j)
        for (int64_t i = 0; i < n; ++i)
          finite = finite && lapack::IsFinite(a(i, j));
      if (!finite) {
        // As JAX's kernel: info -4 and nothing computed.
        info[b] = -4;
        std::fill(w.begin(), w.end(), C(nan, nan));
        std::fill(vl, vl + n * n, C(nan, nan));
        std::fill(vr, vr + n * n, C(nan, nan));
      } else {
        const R range = lapack::RangeScale(a);
        lapack::Scale(a, range);
        std::vector<R> scale = Balance(a);
        SchurResult<T> schur = Schur(a, left_ || right_);
        info[b] = schur.info;
        for (int64_t k = 0; k < n; ++k) {
          if constexpr (kComplex) {
            w[k] = schur.w[k] / range;
          } else {
            w[k] = C(schur.wr[k], schur.wi[k]) / range;
          }
        }
        for (int64_t k = 0; k < n && schur.info == 0; ++k) {
          // Real types: a complex pair's second eigenvector is the
          // conjugate of the first.
          if (!kComplex && w[k].imag() < 0) continue;
          int64_t size = !kComplex && w[k].imag() > 0 ? 2 : 1;
          C lambda = kComplex ? C(a(k, k)) : w[k] * range;
          for (bool is_left : {false, true}) {
            if (!(is_left ? left_ : right_)) continue;
            std::vector<C> x = SchurEigenvector(a, lambda, k, size, is_left);
            std::vector<C> v =
                FinishEigenvector(schur.z, scale, x, is_left, w[k].imag() == 0);
            C* out = is_left ? vl : vr;
            for (int64_t i = 0; i < n; ++i) {
              out[i * n + k] = v[i];
              if (size == 2) out[i * n + k + 1] = std::conj(v[i]);
            }
          }
        }
      }
      if constexpr (kComplex) {
        std::copy(w.begin(), w.end(), ctx.Out<C>(step, 0) + b * n);
      } else {
        R* wr = ctx.Out<R>(step, 0) + b * n;
        R* wi = ctx.Out<R>(step, 1) + b * n;
        for (int64_t k = 0; k < n; ++k) {
          wr[k] = w[k].real();
          wi[k] = w[k].imag();
        }
      }
    }
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool left_, right_;
};

}  // namespace

std::unique_ptr<Kernel> MakeGeevKernel(ElementType type, int64_t batch,
                                       int64_t n, bool left, bool right) {
  return lapack::MakeForType<GeevKernel>(type, batch, n, left, right);
}

}  // namespace kiln::exec
