#include "exec/kernels/dot.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/thread_pool.h"
#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/elementwise_ops.h"
#include "exec/kernels/library_blas.h"
#include "exec/parallel.h"

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

// Columns [j, n) of one row of C = A x B, fewer than kLanes: over k
// outside, one sum per column inside, so that the sums (each still in k
// order from zero) do not wait on one another's additions. A narrow
// result (a classifier's 10 logits) spent its whole time here one
// dependent addition at a time.
template <typename T, int64_t kLanes>
__attribute__((always_inline)) inline void MatmulLastColumns(
    const T* a, const T* x, T* c, int64_t k, int64_t n, int64_t j) {
  const int64_t rest = n - j;
  T sums[kLanes] = {};
  const T* xp = x + j;
  for (int64_t p = 0; p < k; ++p, xp += n) {
    const T ap = a[p];
    for (int64_t jj = 0; jj < rest; ++jj) sums[jj] += ap * xp[jj];
  }
  for (int64_t jj = 0; jj < rest; ++jj) c[j + jj] = sums[jj];
}

// One row of C = A x B (`a` its row of A, `c` its row of C) with
// kBytes-wide vectors, eight vectors of columns at a time: eight
// independent sums, where the 4-row blocks below would keep only two for a
// lone row and wait on their additions (a scan's vector-matrix product
// spent most of its time so). Each element sums in k order from zero.
template <typename T, int kBytes>
__attribute__((always_inline)) inline void MatmulOneRow(const T* a, const T* x,
                                                        T* c, int64_t k,
                                                        int64_t n) {
  typedef T Vec __attribute__((vector_size(kBytes)));
  constexpr int64_t kLanes = kBytes / sizeof(T);
  constexpr int64_t kWide = 8 * kLanes;
  int64_t j = 0;
  for (; j + kWide <= n; j += kWide) {
    Vec sums[8] = {};
    const T* xp = x + j;
    for (int64_t p = 0; p < k; ++p, xp += n) {
      const Vec s = Vec{} + a[p];
      for (int q = 0; q < 8; ++q) {
        Vec xq;
        std::memcpy(&xq, xp + q * kLanes, sizeof(Vec));
        sums[q] += s * xq;
      }
    }
    std::memcpy(c + j, sums, sizeof(sums));
  }
  for (; j + kLanes <= n; j += kLanes) {
    Vec sum{};
    const T* xp = x + j;
    for (int64_t p = 0; p < k; ++p, xp += n) {
      Vec x0;
      std::memcpy(&x0, xp, sizeof(Vec));
      sum += (Vec{} + a[p]) * x0;
    }
    std::memcpy(c + j, &sum, sizeof(Vec));
  }
  if (j < n) MatmulLastColumns<T, kLanes>(a, x, c, k, n, j);
}

// Rows [begin, end) of C = A x B (A: rows x k, B: k x n, row-major) for
// float and double, with kBytes-wide vectors. Each element sums its
// products in k order from zero, exactly as a plain loop does, so results
// are bitwise the same for every vector width. A 4-row x 2-vector block of
// C stays in registers for the whole sum: each step over k loads two
// vectors of a row of B and four values of A for 8 * kBytes / sizeof(T)
// multiply-adds, instead of reloading and storing C every time. Vectors
// never cross a call (always inlined), so the AVX2 instance below does not
// depend on the caller's ABI.
template <typename T, int kBytes>
__attribute__((always_inline)) inline void MatmulRows(const T* a, const T* x,
                                                      T* c, int64_t begin,
                                                      int64_t end, int64_t k,
                                                      int64_t n) {
  typedef T Vec __attribute__((vector_size(kBytes)));
  constexpr int64_t kLanes = kBytes / sizeof(T);
  constexpr int64_t kBlockColumns = 2 * kLanes;
  // Rows in blocks of four; the one to three left run one at a time.
  const int64_t blocked_end = begin + (end - begin) / 4 * 4;
  for (int64_t i = blocked_end; i < end; ++i) {
    MatmulOneRow<T, kBytes>(a + i * k, x, c + i * n, k, n);
  }
  end = blocked_end;
  int64_t j = 0;
  for (; j + kBlockColumns <= n; j += kBlockColumns) {
    for (int64_t i = begin; i < end; i += 4) {
      const T* a0 = a + i * k;
      const T* a1 = a0 + k;
      const T* a2 = a1 + k;
      const T* a3 = a2 + k;
      Vec c00{}, c01{}, c10{}, c11{}, c20{}, c21{}, c30{}, c31{};
      const T* xp = x + j;
      for (int64_t p = 0; p < k; ++p, xp += n) {
        Vec x0, x1;
        std::memcpy(&x0, xp, sizeof(Vec));
        std::memcpy(&x1, xp + kLanes, sizeof(Vec));
        const Vec s0 = Vec{} + a0[p], s1 = Vec{} + a1[p];
        const Vec s2 = Vec{} + a2[p], s3 = Vec{} + a3[p];
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
      std::memcpy(out, &c00, sizeof(Vec));
      std::memcpy(out + kLanes, &c01, sizeof(Vec));
      std::memcpy(out + n, &c10, sizeof(Vec));
      std::memcpy(out + n + kLanes, &c11, sizeof(Vec));
      std::memcpy(out + 2 * n, &c20, sizeof(Vec));
      std::memcpy(out + 2 * n + kLanes, &c21, sizeof(Vec));
      std::memcpy(out + 3 * n, &c30, sizeof(Vec));
      std::memcpy(out + 3 * n + kLanes, &c31, sizeof(Vec));
    }
  }
  // One vector of columns more, where a whole block does not fit.
  if (j + kLanes <= n) {
    for (int64_t i = begin; i < end; i += 4) {
      const T* a0 = a + i * k;
      const T* a1 = a0 + k;
      const T* a2 = a1 + k;
      const T* a3 = a2 + k;
      Vec c0{}, c1{}, c2{}, c3{};
      const T* xp = x + j;
      for (int64_t p = 0; p < k; ++p, xp += n) {
        Vec x0;
        std::memcpy(&x0, xp, sizeof(Vec));
        c0 += (Vec{} + a0[p]) * x0;
        c1 += (Vec{} + a1[p]) * x0;
        c2 += (Vec{} + a2[p]) * x0;
        c3 += (Vec{} + a3[p]) * x0;
      }
      T* out = c + i * n + j;
      std::memcpy(out, &c0, sizeof(Vec));
      std::memcpy(out + n, &c1, sizeof(Vec));
      std::memcpy(out + 2 * n, &c2, sizeof(Vec));
      std::memcpy(out + 3 * n, &c3, sizeof(Vec));
    }
    j += kLanes;
  }
  // The last columns, fewer than a vector.
  if (j < n) {
    for (int64_t i = begin; i < end; ++i) {
      MatmulLastColumns<T, kLanes>(a + i * k, x, c + i * n, k, n, j);
    }
  }
}

// 16-byte vectors: SSE2 on any x86-64 (GCC's generic vectors elsewhere).
template <typename T>
void MatmulRowsBaseline(const T* a, const T* x, T* c, int64_t begin,
                        int64_t end, int64_t k, int64_t n) {
  MatmulRows<T, 16>(a, x, c, begin, end, k, n);
}

#if defined(__x86_64__)
// 32-byte vectors where the CPU has AVX2 (multiply and add stay separate
// instructions: no FMA, so results match the baseline bit for bit).
template <typename T>
__attribute__((target("avx2"))) void MatmulRowsAvx2(const T* a, const T* x,
                                                    T* c, int64_t begin,
                                                    int64_t end, int64_t k,
                                                    int64_t n) {
  MatmulRows<T, 32>(a, x, c, begin, end, k, n);
}

// 64-byte vectors where the CPU has AVX-512 (again no FMA).
template <typename T>
__attribute__((target("avx512f"))) void MatmulRowsAvx512(const T* a, const T* x,
                                                         T* c, int64_t begin,
                                                         int64_t end, int64_t k,
                                                         int64_t n) {
  MatmulRows<T, 64>(a, x, c, begin, end, k, n);
}

#endif

// C[b] = A[b] x B[b] for float and double, the kernel real models spend
// their time in: MatmulRows at the widest vectors the CPU has, with the
// rows of all batches split over the machine's cores when the product is
// large enough to pay for the hand-off.
template <typename T>
class FloatMatmulKernel : public Kernel {
 public:
  FloatMatmulKernel(int64_t batch, int64_t m, int64_t k, int64_t n)
      : batch_(batch), m_(m), k_(k), n_(n) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) {
      rows_ = &MatmulRowsAvx512<T>;
    } else if (__builtin_cpu_supports("avx2")) {
      rows_ = &MatmulRowsAvx2<T>;
    }
#endif
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* lhs = ctx.In<T>(step, 0);
    const T* rhs = ctx.In<T>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    const int64_t rows = batch_ * m_;
    auto body = [&](int64_t begin, int64_t end) {
      while (begin < end) {
        int64_t b = begin / m_, i = begin % m_;
        int64_t stop = std::min(m_, i + (end - begin));
        rows_(lhs + b * m_ * k_, rhs + b * k_ * n_, out + b * m_ * n_, i, stop,
              k_, n_);
        begin += stop - i;
      }
    };
    // About a million multiply-adds is where splitting starts to win over
    // the cost of waking the pool's threads (tens of microseconds).
    const double work = static_cast<double>(rows) * k_ * n_;
    if (work >= (1 << 20) && rows >= 8) {
      std::lock_guard<std::mutex> all_cores(AllCoresMutex());
      ParallelFor(rows, 4, body);
    } else {
      body(0, rows);
    }
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  using RowsFn = void (*)(const T*, const T*, T*, int64_t, int64_t, int64_t,
                          int64_t);
  int64_t batch_, m_, k_, n_;
  RowsFn rows_ = &MatmulRowsBaseline<T>;
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
  // f64 and complex products go to the BLAS library (oneDNN has no path for
  // them; the library's kernels use fused multiply-adds and cache
  // blocking: f64 512x1024 by 1024x1024 took 3.8x XLA:CPU's time in the
  // loops below, 1.1x through the library, on 2 cores),
  // except the smallest, where a call into the library costs more than the
  // product (f32 products reach oneDNN through the lowering instead).
  constexpr double kLibraryMinMultiplyAdds = 1 << 12;
  if (type != ElementType::kF32 && LibraryHasGemm(type) &&
      static_cast<double>(batch) * m * k * n >= kLibraryMinMultiplyAdds) {
    if (auto kernel = MakeLibraryMatmulKernel(type, batch, m, k, n)) {
      return kernel;
    }
  }
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
