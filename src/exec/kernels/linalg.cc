#include "exec/kernels/linalg.h"

#include <cmath>
#include <limits>

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/lapack_util.h"
#include "exec/parallel.h"

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
      // E = op(a) restricted to the chosen triangle of a, row-major (the
      // substitutions read it only inside its triangle).
      bool e_lower =
          (p_.lower && p_.transpose == 1) || (!p_.lower && p_.transpose != 1);
      std::vector<T> em(m * m);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < m; ++j) {
          if (e_lower ? j > i : j < i) continue;
          T v = p_.transpose == 1 ? a[i * m + j] : a[j * m + i];
          if (p_.transpose == 3) v = Conj(v);
          em[i * m + j] = i == j && p_.unit_diagonal ? T(1) : v;
        }
      }
      for (int64_t i = 0; i < p_.rows * p_.cols; ++i) x[i] = b[i];
      const int64_t cols = p_.cols;
      if (p_.left_side) {
        // E x = b, x is [m, cols]: substitution over rows of x, each row
        // updated by whole earlier rows (contiguous), the columns split
        // over the cores. Per element the terms and their order are those
        // of the dot product x[i, c] - sum_j E(i, j) x[j, c].
        ParallelFor(cols, 64, [&](int64_t c0, int64_t c1) {
          for (int64_t step_i = 0; step_i < m; ++step_i) {
            int64_t i = e_lower ? step_i : m - 1 - step_i;
            T* xi = x + i * cols;
            int64_t j_begin = e_lower ? 0 : i + 1;
            int64_t j_end = e_lower ? i : m;
            for (int64_t j = j_begin; j < j_end; ++j) {
              const T f = em[i * m + j];
              const T* xj = x + j * cols;
              for (int64_t c = c0; c < c1; ++c) xi[c] -= f * xj[c];
            }
            const T d = em[i * m + i];
            for (int64_t c = c0; c < c1; ++c) xi[c] = xi[c] / d;
          }
        });
      } else {
        // x E = b, x is [rows, m]: x[r, j] from columns of E (read from its
        // transpose, contiguous), rows split over the cores.
        std::vector<T> et(m * m);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < m; ++j) et[j * m + i] = em[i * m + j];
        }
        ParallelFor(p_.rows, 4, [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            T* xr = x + r * m;
            for (int64_t step_j = 0; step_j < m; ++step_j) {
              int64_t j = e_lower ? m - 1 - step_j : step_j;
              const T* column = et.data() + j * m;  // E(k, j) over k
              T sum = xr[j];
              if (e_lower) {
                for (int64_t k = j + 1; k < m; ++k) sum -= xr[k] * column[k];
              } else {
                for (int64_t k = 0; k < j; ++k) sum -= xr[k] * column[k];
              }
              xr[j] = sum / column[j];
            }
          }
        });
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
