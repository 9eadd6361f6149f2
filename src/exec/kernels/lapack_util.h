// Building blocks of the LAPACK kernels (lapack_*.cc), internal to exec/:
// real and complex element helpers, column-major matrices and the tiled
// copies between them and Kiln's row-major arrays, and the factory that
// instantiates a kernel for f32, f64, c64 or c128.
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

#include "exec/kernels/element.h"
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

template <typename T>
bool IsFinite(T x) {
  return std::isfinite(RealPart(x)) && std::isfinite(ImagPart(x));
}

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
