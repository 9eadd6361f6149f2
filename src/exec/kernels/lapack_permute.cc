// The reshuffles the GPU solver targets need around the LAPACK kernels:
// pivots to permutations and the conjugate transpose.
#include <complex>
#include <utility>

#include "exec/executor.h"
#include "exec/kernels/lapack.h"

namespace kiln::exec {
namespace {

class LuPivotsToPermutationKernel : public Kernel {
 public:
  LuPivotsToPermutationKernel(int64_t batch, int64_t pivots,
                              int64_t permutation_size)
      : batch_(batch), pivots_(pivots), size_(permutation_size) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const int32_t* pivots = ctx.In<int32_t>(step, 0);
    int32_t* out = ctx.Out<int32_t>(step, 0);
    for (int64_t b = 0; b < batch_; ++b) {
      int32_t* permutation = out + b * size_;
      for (int64_t i = 0; i < size_; ++i) {
        permutation[i] = static_cast<int32_t>(i);
      }
      const int32_t* swaps = pivots + b * pivots_;
      for (int64_t i = 0; i < pivots_ && i < size_; ++i) {
        int64_t j = swaps[i];
        if (j < 0 || j >= size_) continue;
        std::swap(permutation[i], permutation[j]);
      }
    }
    return OkStatus();
  }

 private:
  int64_t batch_, pivots_, size_;
};

template <typename T>
T Conjugate(T value) {
  return value;
}
template <typename R>
std::complex<R> Conjugate(std::complex<R> value) {
  return std::conj(value);
}

template <typename T>
class AdjointKernel : public Kernel {
 public:
  AdjointKernel(int64_t batch, int64_t rows, int64_t cols)
      : batch_(batch), rows_(rows), cols_(cols) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    const int64_t size = rows_ * cols_;
    for (int64_t b = 0; b < batch_; ++b) {
      const T* a = in + b * size;
      T* t = out + b * size;
      for (int64_t i = 0; i < rows_; ++i) {
        for (int64_t j = 0; j < cols_; ++j) {
          t[j * rows_ + i] = Conjugate(a[i * cols_ + j]);
        }
      }
    }
    return OkStatus();
  }

 private:
  int64_t batch_, rows_, cols_;
};

}  // namespace

std::unique_ptr<Kernel> MakeLuPivotsToPermutationKernel(
    int64_t batch, int64_t pivots, int64_t permutation_size) {
  return std::make_unique<LuPivotsToPermutationKernel>(batch, pivots,
                                                       permutation_size);
}

std::unique_ptr<Kernel> MakeAdjointKernel(ElementType type, int64_t batch,
                                          int64_t rows, int64_t cols) {
  switch (type) {
    case ElementType::kF32:
      return std::make_unique<AdjointKernel<float>>(batch, rows, cols);
    case ElementType::kF64:
      return std::make_unique<AdjointKernel<double>>(batch, rows, cols);
    case ElementType::kC64:
      return std::make_unique<AdjointKernel<std::complex<float>>>(batch, rows,
                                                                  cols);
    case ElementType::kC128:
      return std::make_unique<AdjointKernel<std::complex<double>>>(batch, rows,
                                                                   cols);
    default:
      return nullptr;
  }
}

}  // namespace kiln::exec
