#include "exec/kernels/dot.h"

#include <cstring>

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/elementwise_ops.h"

namespace kiln::exec {
namespace {

template <typename T>
class MatmulKernel : public Kernel {
 public:
  MatmulKernel(int64_t batch, int64_t m, int64_t k, int64_t n)
      : batch_(batch), m_(m), k_(k), n_(n) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* lhs = ctx.In<T>(step, 0);
    const T* rhs = ctx.In<T>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    for (int64_t b = 0; b < batch_; ++b) {
      const T* a = lhs + b * m_ * k_;
      const T* x = rhs + b * k_ * n_;
      T* c = out + b * m_ * n_;
      for (int64_t i = 0; i < m_; ++i) {
        T* row = c + i * n_;
        for (int64_t j = 0; j < n_; ++j) row[j] = T{};
        for (int64_t p = 0; p < k_; ++p) {
          T scale = a[i * k_ + p];
          const T* x_row = x + p * n_;
          if constexpr (kIsInt<T>) {
            for (int64_t j = 0; j < n_; ++j) {
              row[j] = ops::WrapAdd(row[j], ops::WrapMul(scale, x_row[j]));
            }
          } else if constexpr (std::is_same_v<T, bool>) {
            for (int64_t j = 0; j < n_; ++j)
              row[j] = row[j] || (scale && x_row[j]);
          } else {
            for (int64_t j = 0; j < n_; ++j) row[j] += scale * x_row[j];
          }
        }
      }
      if (ctx.cancelled()) return ctx.CancelledStatus();
    }
    return OkStatus();
  }

 private:
  int64_t batch_, m_, k_, n_;
};

}  // namespace

std::unique_ptr<Kernel> MakeMatmulKernel(ElementType type, int64_t batch,
                                         int64_t m, int64_t k, int64_t n) {
  std::unique_ptr<Kernel> kernel;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    kernel = std::make_unique<MatmulKernel<T>>(batch, m, k, n);
  });
  return kernel;
}

}  // namespace kiln::exec
