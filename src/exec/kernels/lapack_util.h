// Building blocks of the LAPACK kernels (lapack_*.cc), internal to exec/:
// column-major matrix views, LAPACK's machine constants, Householder
// reflectors and their products, Givens rotations.
//
// The kernels follow LAPACK's own conventions wherever a result is not
// unique (the sign of a reflector's beta, where a reflector's vector is
// stored, which pivot wins a tie), so that programs which read factored
// forms (geqrf's reflectors, gehrd's Hessenberg form) get LAPACK's answer.
// Everything computes in the precision of its element type, as LAPACK's
// s/d/c/z routines do.
#ifndef KILN_EXEC_KERNELS_LAPACK_UTIL_H_
#define KILN_EXEC_KERNELS_LAPACK_UTIL_H_

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "exec/kernels/blas.h"
#include "exec/kernels/element.h"
#include "exec/parallel.h"
#include "exec/plan.h"

namespace kiln::exec::lapack {

template <typename T>
struct RealOf {
  using type = T;
};
template <typename R>
struct RealOf<std::complex<R>> {
  using type = R;
};
template <typename T>
using Real = typename RealOf<T>::type;

template <typename T>
T Conj(T x) {
  if constexpr (kIsComplex<T>) {
    return std::conj(x);
  } else {
    return x;
  }
}

template <typename T>
Real<T> RealPart(T x) {
  if constexpr (kIsComplex<T>) {
    return x.real();
  } else {
    return x;
  }
}

template <typename T>
Real<T> ImagPart(T x) {
  if constexpr (kIsComplex<T>) {
    return x.imag();
  } else {
    return Real<T>(0);
  }
}

// |re| + |im|: the magnitude LAPACK's complex routines compare (CABS1).
template <typename T>
Real<T> Abs1(T x) {
  if constexpr (kIsComplex<T>) {
    return std::abs(x.real()) + std::abs(x.imag());
  } else {
    return std::abs(x);
  }
}

// |x|^2.
template <typename T>
Real<T> AbsSquared(T x) {
  if constexpr (kIsComplex<T>) {
    return x.real() * x.real() + x.imag() * x.imag();
  } else {
    return x * x;
  }
}

// LAPACK's xLAMCH('P'): the distance from 1 to the next larger number.
template <typename T>
Real<T> Ulp() {
  return std::numeric_limits<Real<T>>::epsilon();
}

// xLAMCH('S'): the smallest number whose reciprocal does not overflow.
template <typename T>
Real<T> SafeMin() {
  return std::numeric_limits<Real<T>>::min();
}

template <typename T>
bool IsFinite(T x) {
  return std::isfinite(RealPart(x)) && std::isfinite(ImagPart(x));
}

// A column-major matrix: element (i, j) at data[i + j * ld].
template <typename T>
struct MatrixView {
  T* data = nullptr;
  int64_t rows = 0, cols = 0, ld = 0;

  T& operator()(int64_t i, int64_t j) const { return data[i + j * ld]; }
  T* column(int64_t j) const { return data + j * ld; }
  // The block starting at (i, j).
  MatrixView Block(int64_t i, int64_t j, int64_t block_rows,
                   int64_t block_cols) const {
    return {data + i + j * ld, block_rows, block_cols, ld};
  }
};

// A column-major matrix that owns its elements.
template <typename T>
class Matrix {
 public:
  Matrix() = default;
  Matrix(int64_t rows, int64_t cols)
      : rows_(rows), cols_(cols), data_(rows * cols, T(0)) {}
  T& operator()(int64_t i, int64_t j) { return data_[i + j * rows_]; }
  const T& operator()(int64_t i, int64_t j) const {
    return data_[i + j * rows_];
  }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  MatrixView<T> view() { return {data_.data(), rows_, cols_, rows_}; }
  void SetIdentity() {
    std::fill(data_.begin(), data_.end(), T(0));
    for (int64_t i = 0; i < std::min(rows_, cols_); ++i) (*this)(i, i) = T(1);
  }

 private:
  int64_t rows_ = 0, cols_ = 0;
  std::vector<T> data_;
};

// Kiln's buffers are row-major; the kernels work on column-major copies
// (as LAPACK does), one matrix of a batch at a time. The copies go in
// square tiles, so that the lines of both sides a tile touches stay in
// cache: element by element, every write of a column-major copy of a 256 x
// 256 f32 matrix went to another line, and the copies took a third of a
// getrf.
inline constexpr int64_t kTransposeTile = 32;

// out[c * rows + r] = in[r * cols + c]: the transpose of the row-major
// rows x cols matrix `in`, a tile at a time.
template <typename T>
void TransposeTiled(const T* in, int64_t rows, int64_t cols, T* out) {
  for (int64_t r0 = 0; r0 < rows; r0 += kTransposeTile) {
    const int64_t r1 = std::min(rows, r0 + kTransposeTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTransposeTile) {
      const int64_t c1 = std::min(cols, c0 + kTransposeTile);
      for (int64_t c = c0; c < c1; ++c) {
        for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
      }
    }
  }
}

// A column-major matrix is the row-major storage of its transpose.
template <typename T>
void LoadMatrix(const T* row_major, Matrix<T>& out) {
  TransposeTiled(row_major, out.rows(), out.cols(), out.data());
}

template <typename T>
void StoreMatrix(const Matrix<T>& in, T* row_major) {
  TransposeTiled(in.data(), in.cols(), in.rows(), row_major);
}

// A power of two that brings the largest |a(i, j)| into [smlnum, 1 /
// smlnum] with smlnum = sqrt(safmin) / ulp when it lies outside (where
// xGEEV, xGEES, xSYEVD and xGESDD scale their input); 1 otherwise. Powers
// of two keep every result exactly proportional.
template <typename T>
Real<T> RangeScale(const Matrix<T>& a) {
  using R = Real<T>;
  R largest = 0;
  for (int64_t j = 0; j < a.cols(); ++j)
    for (int64_t i = 0; i < a.rows(); ++i)
      largest = std::max(largest, R(std::abs(a(i, j))));
  const R smlnum = std::sqrt(SafeMin<T>()) / Ulp<T>();
  const R bignum = 1 / smlnum;
  if (!std::isfinite(largest) || largest == 0 ||
      (largest >= smlnum && largest <= bignum)) {
    return 1;
  }
  R target = largest < smlnum ? smlnum : bignum;
  return std::ldexp(R(1), std::ilogb(target) - std::ilogb(largest));
}

template <typename T>
void Scale(Matrix<T>& a, Real<T> factor) {
  if (factor == 1) return;
  for (int64_t j = 0; j < a.cols(); ++j)
    for (int64_t i = 0; i < a.rows(); ++i) a(i, j) *= factor;
}

// The Euclidean norm of n elements `stride` apart, scaled so that it
// neither overflows nor underflows (xNRM2).
template <typename T>
Real<T> Norm2(const T* x, int64_t n, int64_t stride = 1) {
  using R = Real<T>;
  R scale = 0, sum = 1;
  auto add = [&](R v) {
    if (v == 0) return;
    R a = std::abs(v);
    if (scale < a) {
      sum = 1 + sum * (scale / a) * (scale / a);
      scale = a;
    } else {
      sum += (a / scale) * (a / scale);
    }
  };
  for (int64_t i = 0; i < n; ++i) {
    add(RealPart(x[i * stride]));
    if constexpr (kIsComplex<T>) add(ImagPart(x[i * stride]));
  }
  return scale * std::sqrt(sum);
}

// sqrt(x^2 + y^2 + z^2) without needless overflow (xLAPY3).
template <typename R>
R Hypot3(R x, R y, R z) {
  R w = std::max({std::abs(x), std::abs(y), std::abs(z)});
  if (w == 0) return std::abs(x) + std::abs(y) + std::abs(z);
  return w *
         std::sqrt((x / w) * (x / w) + (y / w) * (y / w) + (z / w) * (z / w));
}

// Generates an elementary reflector H = I - tau v v^H with v(0) = 1 such
// that H^H [alpha; x] = [beta; 0] with beta real (xLARFG). On return
// `alpha` holds beta and x holds v(1:n). Returns tau; tau = 0 (H = I) when
// x is zero and alpha is real.
template <typename T>
T MakeReflector(int64_t n, T& alpha, T* x, int64_t stride) {
  using R = Real<T>;
  if (n <= 0) return T(0);
  R xnorm = Norm2(x, n - 1, stride);
  R alpha_re = RealPart(alpha), alpha_im = ImagPart(alpha);
  if (xnorm == 0 && alpha_im == 0) return T(0);
  R beta = -std::copysign(Hypot3(alpha_re, alpha_im, xnorm), alpha_re);
  // Tiny beta: scale up first so that 1 / (alpha - beta) stays finite.
  const R safmin = SafeMin<T>() / (Ulp<T>() / 2);
  int scalings = 0;
  if (std::abs(beta) < safmin) {
    const R rsafmn = 1 / safmin;
    do {
      ++scalings;
      for (int64_t i = 0; i < n - 1; ++i) x[i * stride] *= rsafmn;
      beta *= rsafmn;
      alpha *= rsafmn;
    } while (std::abs(beta) < safmin && scalings < 20);
    xnorm = Norm2(x, n - 1, stride);
    alpha_re = RealPart(alpha);
    alpha_im = ImagPart(alpha);
    beta = -std::copysign(Hypot3(alpha_re, alpha_im, xnorm), alpha_re);
  }
  T tau;
  if constexpr (kIsComplex<T>) {
    tau = T((beta - alpha_re) / beta, -alpha_im / beta);
  } else {
    tau = (beta - alpha) / beta;
  }
  T scale = T(1) / (alpha - T(beta));
  for (int64_t i = 0; i < n - 1; ++i) x[i * stride] *= scale;
  for (int i = 0; i < scalings; ++i) beta *= safmin;
  alpha = T(beta);
  return tau;
}

// sum over i of conj(v[i]) x[i], in eight interleaved partial sums: one
// running sum is a chain of dependent additions, four cycles each, that
// bounded the reflections (and so QR, SVD) by latency. The sum is as
// accurate, in another order.
template <typename T>
T DotConjugated(const T* v, const T* x, int64_t n) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return DotInterleaved(v, x, n);  // the same sums, multiversioned
  }
  T partial[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) partial[k] += Conj(v[i + k]) * x[i + k];
  }
  T sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
          ((partial[4] + partial[5]) + (partial[6] + partial[7]));
  for (; i < n; ++i) sum += Conj(v[i]) * x[i];
  return sum;
}

// Reflections over a block of at least this many elements split over the
// cores (each thread's part gives the bits it would alone).
inline constexpr int64_t kParallelReflectorElements = int64_t{1} << 15;

// C := H C with H = I - tau v v^H (v of c.rows elements, v(0) included)
// (xLARF, side 'L'). Pass conj(tau) to apply H^H.
template <typename T>
void ApplyReflectorLeft(const T* v, T tau, MatrixView<T> c) {
  if (tau == T(0)) return;
  // Columns are independent: large blocks split them over the cores.
  auto columns = [&](int64_t first, int64_t last) {
    for (int64_t j = first; j < last; ++j) {
      T* col = c.column(j);
      T w = DotConjugated(v, col, c.rows);
      w *= tau;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        SubtractScaled(col, v, w, c.rows);
      } else {
        for (int64_t i = 0; i < c.rows; ++i) col[i] -= v[i] * w;
      }
    }
  };
  if (c.rows * c.cols >= kParallelReflectorElements) {
    ParallelFor(c.cols,
                std::max<int64_t>(1, kParallelReflectorElements / 4 /
                                         std::max<int64_t>(1, c.rows)),
                columns);
  } else {
    columns(0, c.cols);
  }
}

// C := C H with H = I - tau v v^H (v of c.cols elements) (xLARF, side 'R').
template <typename T>
void ApplyReflectorRight(const T* v, T tau, MatrixView<T> c) {
  // Serial: split by rows, the threads' parts of each column shared cache
  // lines, and the SVD's bidiagonalization ran at half speed.
  if (tau == T(0)) return;
  std::vector<T> w(c.rows, T(0));
  constexpr bool kReal = std::is_same_v<T, float> || std::is_same_v<T, double>;
  for (int64_t j = 0; j < c.cols; ++j) {
    const T* col = c.column(j);
    if constexpr (kReal) {
      AddScaled(w.data(), col, v[j], c.rows);
    } else {
      for (int64_t i = 0; i < c.rows; ++i) w[i] += col[i] * v[j];
    }
  }
  for (int64_t j = 0; j < c.cols; ++j) {
    T* col = c.column(j);
    T f = tau * Conj(v[j]);
    if constexpr (kReal) {
      SubtractScaled(col, w.data(), f, c.rows);
    } else {
      for (int64_t i = 0; i < c.rows; ++i) col[i] -= w[i] * f;
    }
  }
}

// The reflector stored in column `j` of `a` from row `first` down (the
// element at `first` is the implicit 1), as a dense vector.
template <typename T>
std::vector<T> StoredReflector(MatrixView<T> a, int64_t first, int64_t j) {
  std::vector<T> v(a.rows - first);
  if (v.empty()) return v;
  v[0] = T(1);
  for (int64_t i = first + 1; i < a.rows; ++i) v[i - first] = a(i, j);
  return v;
}

// Householder QR of `a` (m x n) in place: R in the upper triangle, the
// reflectors' vectors below it, tau[0..min(m, n)) (xGEQR2).
template <typename T>
void HouseholderQr(MatrixView<T> a, T* tau) {
  int64_t k = std::min(a.rows, a.cols);
  for (int64_t i = 0; i < k; ++i) {
    tau[i] = MakeReflector(a.rows - i, a(i, i),
                           &a(std::min(i + 1, a.rows - 1), i), 1);
    if (i + 1 < a.cols) {
      std::vector<T> v = StoredReflector(a, i, i);
      ApplyReflectorLeft(v.data(), Conj(tau[i]),
                         a.Block(i, i + 1, a.rows - i, a.cols - i - 1));
    }
  }
}

// Overwrites `a` (m x n, m >= n >= k) holding k reflectors (as
// HouseholderQr leaves them) with the first n columns of
// Q = H(0) H(1) ... H(k-1) (xORG2R / xUNG2R).
template <typename T>
void FormQ(MatrixView<T> a, const T* tau, int64_t k) {
  int64_t m = a.rows, n = a.cols;
  for (int64_t j = k; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) a(i, j) = T(0);
    a(j, j) = T(1);
  }
  for (int64_t i = k - 1; i >= 0; --i) {
    if (i + 1 < n) {
      a(i, i) = T(1);
      std::vector<T> v = StoredReflector(a, i, i);
      ApplyReflectorLeft(v.data(), tau[i], a.Block(i, i + 1, m - i, n - i - 1));
    }
    for (int64_t r = i + 1; r < m; ++r) a(r, i) *= -tau[i];
    a(i, i) = T(1) - tau[i];
    for (int64_t r = 0; r < i; ++r) a(r, i) = T(0);
  }
}

// Reduces rows and columns [ilo, ihi] (0-based, inclusive) of the square
// `a` to upper Hessenberg form H = Q^H A Q in place (xGEHD2): H on and above
// the first subdiagonal, reflector i's vector below it in column i, tau of
// n - 1 elements (zero outside [ilo, ihi)).
template <typename T>
void HessenbergReduce(MatrixView<T> a, int64_t ilo, int64_t ihi, T* tau) {
  const int64_t n = a.rows;
  for (int64_t i = 0; i + 1 < n; ++i) tau[i] = T(0);
  for (int64_t i = ilo; i < ihi; ++i) {
    tau[i] =
        MakeReflector(ihi - i, a(i + 1, i), &a(std::min(i + 2, n - 1), i), 1);
    T beta = a(i + 1, i);
    a(i + 1, i) = T(1);
    std::vector<T> v(ihi - i);
    for (int64_t r = i + 1; r <= ihi; ++r) v[r - i - 1] = a(r, i);
    ApplyReflectorRight(v.data(), tau[i], a.Block(0, i + 1, ihi + 1, ihi - i));
    ApplyReflectorLeft(v.data(), Conj(tau[i]),
                       a.Block(i + 1, i + 1, ihi - i, n - i - 1));
    a(i + 1, i) = beta;
  }
}

// The n x n Q of HessenbergReduce over all of `a` (ilo = 0, ihi = n - 1)
// (xORGHR / xUNGHR).
template <typename T>
Matrix<T> HessenbergQ(MatrixView<T> a, const T* tau) {
  const int64_t n = a.rows;
  Matrix<T> q(n, n);
  q.SetIdentity();
  if (n < 2) return q;
  // Reflector i acts on rows i + 1.. : shifted up by one row and column,
  // they are the reflectors of an (n - 1) x (n - 1) QR.
  Matrix<T> shifted(n - 1, n - 1);
  for (int64_t c = 0; c < n - 1; ++c)
    for (int64_t r = c + 1; r < n - 1; ++r) shifted(r, c) = a(r + 1, c);
  FormQ(shifted.view(), tau, n - 1);
  for (int64_t c = 0; c < n - 1; ++c)
    for (int64_t r = 0; r < n - 1; ++r) q(r + 1, c + 1) = shifted(r, c);
  return q;
}

// A plane rotation [c s; -conj(s) c] (c real) taking (f, g) to (r, 0)
// (xLARTG; for real f and g, r has the sign of f).
template <typename T>
struct Rotation {
  Real<T> c = 1;
  T s = T(0);
};

template <typename T>
Rotation<T> MakeRotation(T f, T g, T* r) {
  using R = Real<T>;
  Rotation<T> rot;
  if (g == T(0)) {
    rot.c = 1;
    rot.s = T(0);
    *r = f;
    return rot;
  }
  if (f == T(0)) {
    rot.c = 0;
    if constexpr (kIsComplex<T>) {
      R ag = std::abs(g);
      rot.s = std::conj(g) / ag;
      *r = T(ag);
    } else {
      rot.s = std::copysign(R(1), g);
      *r = std::abs(g);
    }
    return rot;
  }
  if constexpr (kIsComplex<T>) {
    R af = std::abs(f), ag = std::abs(g);
    R norm = std::hypot(af, ag);
    T phase = f / af;
    rot.c = af / norm;
    rot.s = phase * std::conj(g) / norm;
    *r = phase * norm;
  } else {
    R norm = std::copysign(std::hypot(f, g), f);
    rot.c = f / norm;
    rot.s = g / norm;
    *r = norm;
  }
  return rot;
}

// [x; y] := [c s; -conj(s) c] [x; y] elementwise over n pairs.
template <typename T>
void ApplyRotation(const Rotation<T>& rot, T* x, int64_t x_stride, T* y,
                   int64_t y_stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T xi = x[i * x_stride], yi = y[i * y_stride];
    x[i * x_stride] = rot.c * xi + rot.s * yi;
    y[i * y_stride] = rot.c * yi - Conj(rot.s) * xi;
  }
}

// A kernel class template instantiated for `type` (f32, f64, c64, c128),
// or null for other types.
template <template <typename> class K, typename... Args>
std::unique_ptr<Kernel> MakeForType(ElementType type, const Args&... args) {
  switch (type) {
    case ElementType::kF32:
      return std::make_unique<K<float>>(args...);
    case ElementType::kF64:
      return std::make_unique<K<double>>(args...);
    case ElementType::kC64:
      return std::make_unique<K<c64>>(args...);
    case ElementType::kC128:
      return std::make_unique<K<c128>>(args...);
    default:
      return nullptr;
  }
}

}  // namespace kiln::exec::lapack

#endif  // KILN_EXEC_KERNELS_LAPACK_UTIL_H_
