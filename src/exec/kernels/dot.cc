#include "exec/kernels/dot.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/thread_pool.h"
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

// C[b] = A[b] x B[b] for float and double, the kernel real models spend
// their time in. Each element still sums its products in k order, exactly
// as the plain loop does (so results are bitwise the same); what changes is
// the order of the work around it:
//  - four rows of A at once, so each loaded piece of a row of B serves four
//    output rows (a quarter of the memory traffic over B);
//  - columns in blocks that keep four output row pieces in L1;
//  - rows of all batches split over the machine's cores when the product
//    is large enough to pay for the hand-off.
template <typename T>
class FloatMatmulKernel : public Kernel {
 public:
  FloatMatmulKernel(int64_t batch, int64_t m, int64_t k, int64_t n)
      : batch_(batch), m_(m), k_(k), n_(n) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* lhs = ctx.In<T>(step, 0);
    const T* rhs = ctx.In<T>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    const int64_t rows = batch_ * m_;
    auto body = [&](int64_t begin, int64_t end) {
      while (begin < end) {
        int64_t b = begin / m_, i = begin % m_;
        int64_t stop = std::min(m_, i + (end - begin));
        Rows(lhs + b * m_ * k_, rhs + b * k_ * n_, out + b * m_ * n_, i, stop);
        begin += stop - i;
      }
    };
    // About a million multiply-adds is where splitting starts to win over
    // the cost of waking the pool's threads (tens of microseconds).
    const double work = static_cast<double>(rows) * k_ * n_;
    if (work >= (1 << 20) && rows >= 8) {
      ThreadPool::Default().ParallelFor(rows, 4, body);
    } else {
      body(0, rows);
    }
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  static constexpr int64_t kColumnBlock = 256;

  // Output rows [begin, end) of one batch.
  void Rows(const T* a, const T* x, T* c, int64_t begin, int64_t end) const {
    const int64_t k = k_, n = n_;
    int64_t i = begin;
    for (; i + 4 <= end; i += 4) {
      const T* a0 = a + i * k;
      const T* a1 = a0 + k;
      const T* a2 = a1 + k;
      const T* a3 = a2 + k;
      for (int64_t j0 = 0; j0 < n; j0 += kColumnBlock) {
        const int64_t width = std::min(kColumnBlock, n - j0);
        T* __restrict r0 = c + i * n + j0;
        T* __restrict r1 = r0 + n;
        T* __restrict r2 = r1 + n;
        T* __restrict r3 = r2 + n;
        for (int64_t j = 0; j < width; ++j) r0[j] = r1[j] = r2[j] = r3[j] = T{};
        for (int64_t p = 0; p < k; ++p) {
          const T s0 = a0[p], s1 = a1[p], s2 = a2[p], s3 = a3[p];
          const T* __restrict xr = x + p * n + j0;
          for (int64_t j = 0; j < width; ++j) {
            const T v = xr[j];
            r0[j] += s0 * v;
            r1[j] += s1 * v;
            r2[j] += s2 * v;
            r3[j] += s3 * v;
          }
        }
      }
    }
    for (; i < end; ++i) {
      const T* ai = a + i * k;
      T* __restrict row = c + i * n;
      for (int64_t j = 0; j < n; ++j) row[j] = T{};
      for (int64_t p = 0; p < k; ++p) {
        const T s = ai[p];
        const T* __restrict xr = x + p * n;
        for (int64_t j = 0; j < n; ++j) row[j] += s * xr[j];
      }
    }
  }

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
  if (type == ElementType::kF32) {
    return std::make_unique<FloatMatmulKernel<float>>(batch, m, k, n);
  }
  if (type == ElementType::kF64) {
    return std::make_unique<FloatMatmulKernel<double>>(batch, m, k, n);
  }
  std::unique_ptr<Kernel> kernel;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    kernel = std::make_unique<MatmulKernel<T>>(batch, m, k, n);
  });
  return kernel;
}

}  // namespace kiln::exec
