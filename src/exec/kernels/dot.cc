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
// their time in. Each element still sums its products in k order from zero,
// exactly as the plain loop does (so results are bitwise the same); what
// changes is the order of the work around it:
//  - a 4-row x 2-vector block of C stays in registers for the whole sum,
//    so each step over k loads two vectors of a row of B and four values
//    of A for sixteen (f64: eight) multiply-adds, instead of reloading and
//    storing C every time;
//  - rows of all batches are split over the machine's cores when the
//    product is large enough to pay for the hand-off.
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
  // A 16-byte vector of T (SSE2 on any x86-64; GCC's generic vectors
  // elsewhere).
  typedef T Vec __attribute__((vector_size(16)));
  static constexpr int64_t kLanes = 16 / sizeof(T);
  static constexpr int64_t kBlockColumns = 2 * kLanes;

  static Vec Load(const T* p) {
    Vec v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
  static void Store(T* p, Vec v) { std::memcpy(p, &v, sizeof(v)); }
  static Vec Splat(T value) { return Vec{} + value; }

  // Output rows [begin, end) of one batch.
  void Rows(const T* a, const T* x, T* c, int64_t begin, int64_t end) const {
    const int64_t k = k_, n = n_;
    int64_t j = 0;
    for (; j + kBlockColumns <= n; j += kBlockColumns) {
      int64_t i = begin;
      for (; i + 4 <= end; i += 4) {
        const T* a0 = a + i * k;
        const T* a1 = a0 + k;
        const T* a2 = a1 + k;
        const T* a3 = a2 + k;
        Vec c00{}, c01{}, c10{}, c11{}, c20{}, c21{}, c30{}, c31{};
        const T* xp = x + j;
        for (int64_t p = 0; p < k; ++p, xp += n) {
          const Vec x0 = Load(xp), x1 = Load(xp + kLanes);
          const Vec s0 = Splat(a0[p]), s1 = Splat(a1[p]);
          const Vec s2 = Splat(a2[p]), s3 = Splat(a3[p]);
          c00 += s0 * x0;
          c01 += s0 * x1;
          c10 += s1 * x0;
          c11 += s1 * x1;
          c20 += s2 * x0;
          c21 += s2 * x1;
          c30 += s3 * x0;
          c31 += s3 * x1;
        }
        T* out = c + i * n + j;
        Store(out, c00);
        Store(out + kLanes, c01);
        Store(out + n, c10);
        Store(out + n + kLanes, c11);
        Store(out + 2 * n, c20);
        Store(out + 2 * n + kLanes, c21);
        Store(out + 3 * n, c30);
        Store(out + 3 * n + kLanes, c31);
      }
      for (; i < end; ++i) {
        const T* ai = a + i * k;
        Vec c0{}, c1{};
        const T* xp = x + j;
        for (int64_t p = 0; p < k; ++p, xp += n) {
          const Vec s = Splat(ai[p]);
          c0 += s * Load(xp);
          c1 += s * Load(xp + kLanes);
        }
        Store(c + i * n + j, c0);
        Store(c + i * n + j + kLanes, c1);
      }
    }
    // The last columns, fewer than a block.
    for (int64_t i = begin; i < end && j < n; ++i) {
      const T* ai = a + i * k;
      for (int64_t jj = j; jj < n; ++jj) {
        T sum{};
        for (int64_t p = 0; p < k; ++p) sum += ai[p] * x[p * n + jj];
        c[i * n + jj] = sum;
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
