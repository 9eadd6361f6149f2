#include "exec/kernels/linalg.h"

#include <cmath>
#include <limits>

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/lapack_util.h"

namespace kiln::exec {
namespace {

using lapack::Conj;
using lapack::RealPart;

template <typename T>
class CholeskyKernel : public Kernel {
 public:
  CholeskyKernel(int64_t batch, int64_t n, bool lower)
      : batch_(batch), n_(n), lower_(lower) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* a = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    using R = decltype(RealPart(T{}));
    for (int64_t b = 0; b < batch_; ++b) {
      const T* in = a + b * n_ * n_;
      T* l = out + b * n_ * n_;
      // Reads the lower triangle (or the upper one, conjugated) as the
      // lower triangle of a Hermitian matrix; computes L with A = L L^H.
      auto at = [&](int64_t i, int64_t j) {  // i >= j
        return lower_ ? in[i * n_ + j] : Conj(in[j * n_ + i]);
      };
      std::vector<T> factor(n_ * n_, T{});
      for (int64_t j = 0; j < n_; ++j) {
        R diagonal = RealPart(at(j, j));
        for (int64_t k = 0; k < j; ++k) {
          T v = factor[j * n_ + k];
          diagonal -= RealPart(v * Conj(v));
        }
        R root = diagonal > 0 ? std::sqrt(diagonal)
                              : std::numeric_limits<R>::quiet_NaN();
        factor[j * n_ + j] = T(root);
        for (int64_t i = j + 1; i < n_; ++i) {
          T sum = at(i, j);
          for (int64_t k = 0; k < j; ++k)
            sum -= factor[i * n_ + k] * Conj(factor[j * n_ + k]);
          factor[i * n_ + j] = sum / T(root);
        }
      }
      for (int64_t i = 0; i < n_; ++i) {
        for (int64_t j = 0; j < n_; ++j) {
          l[i * n_ + j] =
              lower_ ? factor[i * n_ + j] : Conj(factor[j * n_ + i]);
        }
      }
    }
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool lower_;
};

template <typename T>
class TriangularSolveKernel : public Kernel {
 public:
  explicit TriangularSolveKernel(TriangularSolveParams p) : p_(p) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* a_all = ctx.In<T>(step, 0);
    const T* b_all = ctx.In<T>(step, 1);
    T* x_all = ctx.Out<T>(step, 0);
    int64_t m = p_.m;
    for (int64_t batch = 0; batch < p_.batch; ++batch) {
      const T* a = a_all + batch * m * m;
      const T* b = b_all + batch * p_.rows * p_.cols;
      T* x = x_all + batch * p_.rows * p_.cols;
      // E = op(a) restricted to the chosen triangle of a. The
      // substitutions below read E only inside its triangle, so `e` reads
      // op(a) without testing for it.
      auto e = [&](int64_t i, int64_t j) -> T {
        if (i == j && p_.unit_diagonal) return T(1);
        if (p_.transpose == 1) return a[i * m + j];
        T v = a[j * m + i];
        return p_.transpose == 3 ? Conj(v) : v;
      };
      bool e_lower =
          (p_.lower && p_.transpose == 1) || (!p_.lower && p_.transpose != 1);
      for (int64_t i = 0; i < p_.rows * p_.cols; ++i) x[i] = b[i];
      if (p_.left_side) {
        // E x = b, x is [m, cols]: substitution over rows of x.
        for (int64_t step_i = 0; step_i < m; ++step_i) {
          int64_t i = e_lower ? step_i : m - 1 - step_i;
          for (int64_t c = 0; c < p_.cols; ++c) {
            T sum = x[i * p_.cols + c];
            if (e_lower) {
              for (int64_t j = 0; j < i; ++j)
                sum -= e(i, j) * x[j * p_.cols + c];
            } else {
              for (int64_t j = i + 1; j < m; ++j)
                sum -= e(i, j) * x[j * p_.cols + c];
            }
            x[i * p_.cols + c] = sum / e(i, i);
          }
        }
      } else {
        // x E = b, x is [rows, m]: x[r, j] from columns, E^T is triangular
        // the other way.
        for (int64_t r = 0; r < p_.rows; ++r) {
          for (int64_t step_j = 0; step_j < m; ++step_j) {
            int64_t j = e_lower ? m - 1 - step_j : step_j;
            T sum = x[r * m + j];
            if (e_lower) {
              for (int64_t k = j + 1; k < m; ++k) sum -= x[r * m + k] * e(k, j);
            } else {
              for (int64_t k = 0; k < j; ++k) sum -= x[r * m + k] * e(k, j);
            }
            x[r * m + j] = sum / e(j, j);
          }
        }
      }
    }
    return OkStatus();
  }

 private:
  TriangularSolveParams p_;
};

}  // namespace

std::unique_ptr<Kernel> MakeCholeskyKernel(ElementType type, int64_t batch,
                                           int64_t n, bool lower) {
  switch (type) {
    case ElementType::kF32:
      return std::make_unique<CholeskyKernel<float>>(batch, n, lower);
    case ElementType::kF64:
      return std::make_unique<CholeskyKernel<double>>(batch, n, lower);
    case ElementType::kC64:
      return std::make_unique<CholeskyKernel<c64>>(batch, n, lower);
    case ElementType::kC128:
      return std::make_unique<CholeskyKernel<c128>>(batch, n, lower);
    default:
      return nullptr;
  }
}

std::unique_ptr<Kernel> MakeTriangularSolveKernel(TriangularSolveParams p) {
  switch (p.type) {
    case ElementType::kF32:
      return std::make_unique<TriangularSolveKernel<float>>(p);
    case ElementType::kF64:
      return std::make_unique<TriangularSolveKernel<double>>(p);
    case ElementType::kC64:
      return std::make_unique<TriangularSolveKernel<c64>>(p);
    case ElementType::kC128:
      return std::make_unique<TriangularSolveKernel<c128>>(p);
    default:
      return nullptr;
  }
}

}  // namespace kiln::exec
