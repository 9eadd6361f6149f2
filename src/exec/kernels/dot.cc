#include "exec/kernels/dot.h"

#include <algorithm>
#include <cstring>
#include <vector>

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

template <typename T>
class RaggedMatmulKernel : public Kernel {
 public:
  RaggedMatmulKernel(int64_t batch, int64_t m, int64_t k, int64_t n,
                     int64_t groups, int64_t ragged_size, int64_t ragged_inner,
                     ElementType sizes_type)
      : batch_(batch),
        m_(m),
        k_(k),
        n_(n),
        groups_(groups),
        ragged_size_(ragged_size),
        ragged_inner_(ragged_inner),
        sizes_type_(sizes_type) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* lhs = ctx.In<T>(step, 0);
    const T* rhs = ctx.In<T>(step, 1);
    const std::byte* sizes = ctx.slot(step.inputs[2]);
    T* out = ctx.Out<T>(step, 0);
    // The group of each ragged coordinate (-1 past the last group).
    std::vector<int64_t> group_of(ragged_size_, -1);
    int64_t start = 0;
    for (int64_t g = 0; g < groups_; ++g) {
      int64_t size = std::max<int64_t>(0, LoadInt(sizes_type_, sizes, g));
      for (int64_t r = start; r < std::min(ragged_size_, start + size); ++r)
        group_of[r] = g;
      start += size;
    }
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t i = 0; i < m_; ++i) {
        T* row = out + (b * m_ + i) * n_;
        for (int64_t j = 0; j < n_; ++j) row[j] = T{};
        int64_t g = group_of[(i / ragged_inner_) % ragged_size_];
        if (g < 0) continue;
        const T* a = lhs + (b * m_ + i) * k_;
        const T* x = rhs + ((g * batch_ + b) * k_) * n_;
        for (int64_t p = 0; p < k_; ++p) {
          T scale = a[p];
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
    }
    return OkStatus();
  }

 private:
  int64_t batch_, m_, k_, n_, groups_, ragged_size_, ragged_inner_;
  ElementType sizes_type_;
};

}  // namespace

std::unique_ptr<Kernel> MakeRaggedMatmulKernel(ElementType type, int64_t batch,
                                               int64_t m, int64_t k, int64_t n,
                                               int64_t groups,
                                               int64_t ragged_size,
                                               int64_t ragged_inner,
                                               ElementType sizes_type) {
  std::unique_ptr<Kernel> kernel;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    kernel = std::make_unique<RaggedMatmulKernel<T>>(
        batch, m, k, n, groups, ragged_size, ragged_inner, sizes_type);
  });
  return kernel;
}

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
