#include "exec/kernels/library_blas.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <mutex>

#include "base/thread_pool.h"
#include "exec/executor.h"
#include "exec/parallel.h"

namespace kiln::exec {
namespace {

// y = A x for A rows x columns (row-major, `lda` apart), with A transposed
// when `transpose`, in the library's gemv for T.
template <typename T>
void Gemv(bool transpose, int64_t rows, int64_t columns, const T* a,
          int64_t lda, const T* x, T* y) {
  const CBLAS_TRANSPOSE op = transpose ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    scipy_cblas_sgemv(CblasRowMajor, op, rows, columns, 1.0f, a, lda, x, 1,
                      0.0f, y, 1);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_cblas_dgemv(CblasRowMajor, op, rows, columns, 1.0, a, lda, x, 1, 0.0,
                      y, 1);
  } else {
    const T one(1), zero(0);
    if constexpr (std::is_same_v<T, std::complex<float>>) {
      scipy_cblas_cgemv(CblasRowMajor, op, rows, columns, &one, a, lda, x, 1,
                        &zero, y, 1);
    } else {
      scipy_cblas_zgemv(CblasRowMajor, op, rows, columns, &one, a, lda, x, 1,
                        &zero, y, 1);
    }
  }
}

// C (rows x columns, row-major, `ldc` apart) = A (rows x k) x B (k x
// columns), each in the library's gemm for T; a matrix-vector product
// (one column or one row of C) in its gemv, which reads the matrix once
// where gemm would first copy it into its blocked layout (a 1000 x 1000
// f64 matrix times a vector: 3.2 ms in gemm).
template <typename T>
void Gemm(int64_t rows, int64_t columns, int64_t k, const T* a, int64_t lda,
          const T* b, int64_t ldb, T* c, int64_t ldc) {
  if (columns == 1) {  // c = A b: A's rows against the column b
    if (ldb == 1 && ldc == 1) {
      return Gemv<T>(/*transpose=*/false, rows, k, a, lda, b, c);
    }
  } else if (rows == 1) {  // c = a B: B's columns against the row a
    return Gemv<T>(/*transpose=*/true, k, columns, b, ldb, a, c);
  }
  if constexpr (std::is_same_v<T, float>) {
    scipy_cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, columns,
                      k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, columns,
                      k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
  } else {
    const T one(1), zero(0);
    if constexpr (std::is_same_v<T, std::complex<float>>) {
      scipy_cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows,
                        columns, k, &one, a, lda, b, ldb, &zero, c, ldc);
    } else {
      scipy_cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows,
                        columns, k, &one, a, lda, b, ldb, &zero, c, ldc);
    }
  }
}

// Multiply-adds per tile: enough that the library's packing of the tile's
// operands (each call packs its rows of A and columns of B again) is a
// small part of its work and a hand-off to another thread (tens of
// microseconds) is paid for; and the most tiles a product is cut into (one
// per core on 16 cores). f64 512x1024 by 1024x1024 on 2 cores: 256 tiles
// of 32 x 64 took 14.6 ms, 16 of 64 x 512 12.2-12.5, 16 of 128 x 256 11.2,
// 2 tiles 10.3 (XLA:CPU 10.4); the tiles come from the shape alone (the
// bits promise), so they cannot be one per thread, and tiles of at least
// 128 x 256 left an MLP's 128 x 784 by 784 x 256 on one thread. A matrix times
// a vector reads each element of the matrix once, at memory speed, packs
// nothing, and pays for a hand-off sooner.
constexpr double kTileWork = 1 << 22;
constexpr double kVectorTileWork = 1 << 18;
constexpr int64_t kMaxTiles = 16;
// Tiles keep at least this many rows and columns where the product has
// them: thinner ones would spend their time packing.
constexpr int64_t kMinTileRows = 64;
constexpr int64_t kMinTileColumns = 128;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Multiply-adds that pay for handing tasks to other threads (a wake-up is
// tens of microseconds; 2^20 multiply-adds of f64 take about as long on
// two cores), and the same for products of a matrix and a vector.
constexpr double kHandOffWork = 1 << 20;
constexpr double kVectorHandOffWork = 1 << 18;

// Runs `run(first, last)` over tasks [0, count): over the cores, holding
// AllCoresMutex() as every kernel that takes them all does, when there are
// several and their `work` (multiply-adds) is at least `hand_off_work`;
// else on this thread.
template <typename Run>
void RunTasks(int64_t count, double work, double hand_off_work,
              const Run& run) {
  if (count > 1 && work >= hand_off_work) {
    std::lock_guard<std::mutex> all_cores(AllCoresMutex());
    ParallelFor(count, 1, run);
  } else {
    run(0, count);
  }
}

template <typename T>
class LibraryMatmulKernel : public Kernel {
 public:
  LibraryMatmulKernel(int64_t batch, int64_t m, int64_t k, int64_t n)
      : batch_(batch), m_(m), k_(k), n_(n), tiles_(ChooseGemmTiles(m, k, n)) {
    row_tiles_ = CeilDiv(m_, tiles_.rows);
    column_tiles_ = CeilDiv(n_, tiles_.columns);
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    UseOneLibraryThreadPerCall();
    const T* lhs = ctx.In<T>(step, 0);
    const T* rhs = ctx.In<T>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    if (k_ == 0) {  // the library leaves C alone for k = 0 only when beta = 1
      std::fill(out, out + batch_ * m_ * n_, T{});
      return OkStatus();
    }
    const int64_t per_batch = row_tiles_ * column_tiles_;
    auto run_tiles = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / per_batch;
        const int64_t row = (t % per_batch) / column_tiles_ * tiles_.rows;
        const int64_t column = t % column_tiles_ * tiles_.columns;
        const int64_t rows = std::min(tiles_.rows, m_ - row);
        const int64_t columns = std::min(tiles_.columns, n_ - column);
        Gemm<T>(rows, columns, k_, lhs + (b * m_ + row) * k_, k_,
                rhs + b * k_ * n_ + column, n_,
                out + (b * m_ + row) * n_ + column, n_);
      }
    };
    const bool vector = m_ == 1 || n_ == 1;
    RunTasks(batch_ * per_batch, static_cast<double>(batch_) * m_ * k_ * n_,
             vector ? kVectorHandOffWork : kHandOffWork, run_tiles);
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, m_, k_, n_;
  GemmTiles tiles_;
  int64_t row_tiles_ = 1, column_tiles_ = 1;
};

template <typename T>
void Trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE op, CBLAS_DIAG diag,
          int64_t rows, int64_t cols, const T* a, int64_t lda, T* b,
          int64_t ldb) {
  if constexpr (std::is_same_v<T, float>) {
    scipy_cblas_strsm(CblasRowMajor, side, uplo, op, diag, rows, cols, 1.0f, a,
                      lda, b, ldb);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_cblas_dtrsm(CblasRowMajor, side, uplo, op, diag, rows, cols, 1.0, a,
                      lda, b, ldb);
  } else {
    const T one(1);
    if constexpr (std::is_same_v<T, std::complex<float>>) {
      scipy_cblas_ctrsm(CblasRowMajor, side, uplo, op, diag, rows, cols, &one,
                        a, lda, b, ldb);
    } else {
      scipy_cblas_ztrsm(CblasRowMajor, side, uplo, op, diag, rows, cols, &one,
                        a, lda, b, ldb);
    }
  }
}

// The most columns (left side) or rows (right side) of the result one
// trsm call solves, so that a wide right-hand side (an inverse's identity)
// spreads over the cores: a block of 64 and up per call.
constexpr int64_t kTrsmBlock = 128;

template <typename T>
class LibraryTriangularSolveKernel : public Kernel {
 public:
  LibraryTriangularSolveKernel(int64_t batch, int64_t m, int64_t rows,
                               int64_t cols, bool left_side, bool lower,
                               bool unit_diagonal, int transpose)
      : batch_(batch),
        m_(m),
        rows_(rows),
        cols_(cols),
        side_(left_side ? CblasLeft : CblasRight),
        uplo_(lower ? CblasLower : CblasUpper),
        op_(transpose == 1   ? CblasNoTrans
            : transpose == 2 ? CblasTrans
                             : CblasConjTrans),
        diag_(unit_diagonal ? CblasUnit : CblasNonUnit) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    UseOneLibraryThreadPerCall();
    const T* a_all = ctx.In<T>(step, 0);
    const T* b_all = ctx.In<T>(step, 1);
    T* x_all = ctx.Out<T>(step, 0);
    const int64_t size = rows_ * cols_;
    if (x_all != b_all) std::copy(b_all, b_all + batch_ * size, x_all);
    if (size == 0 || m_ == 0) return OkStatus();
    // Left side: columns of x are independent; right side: rows.
    const bool left = side_ == CblasLeft;
    const int64_t independent = left ? cols_ : rows_;
    const int64_t blocks = (independent + kTrsmBlock - 1) / kTrsmBlock;
    auto solve = [&](int64_t first, int64_t last) {
      for (int64_t t = first; t < last; ++t) {
        const int64_t b = t / blocks;
        const int64_t begin = t % blocks * kTrsmBlock;
        const int64_t count = std::min(kTrsmBlock, independent - begin);
        T* x = x_all + b * size + (left ? begin : begin * cols_);
        Trsm<T>(side_, uplo_, op_, diag_, left ? rows_ : count,
                left ? count : cols_, a_all + b * m_ * m_, m_, x, cols_);
      }
    };
    RunTasks(batch_ * blocks,
             static_cast<double>(batch_) * m_ * m_ * independent, kHandOffWork,
             solve);
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t batch_, m_, rows_, cols_;
  CBLAS_SIDE side_;
  CBLAS_UPLO uplo_;
  CBLAS_TRANSPOSE op_;
  CBLAS_DIAG diag_;
};

}  // namespace

std::unique_ptr<Kernel> MakeLibraryTriangularSolveKernel(
    ElementType type, int64_t batch, int64_t m, int64_t rows, int64_t cols,
    bool left_side, bool lower, bool unit_diagonal, int transpose) {
  if (!FitsBlasInt(m) || !FitsBlasInt(rows) || !FitsBlasInt(cols) ||
      batch < 0 || transpose < 1 || transpose > 3) {
    return nullptr;
  }
  auto make = [&](auto tag) -> std::unique_ptr<Kernel> {
    using T = decltype(tag);
    return std::make_unique<LibraryTriangularSolveKernel<T>>(
        batch, m, rows, cols, left_side, lower, unit_diagonal, transpose);
  };
  switch (type) {
    case ElementType::kF32:
      return make(float{});
    case ElementType::kF64:
      return make(double{});
    case ElementType::kC64:
      return make(std::complex<float>{});
    case ElementType::kC128:
      return make(std::complex<double>{});
    default:
      return nullptr;
  }
}

bool FitsBlasInt(int64_t value) {
  return value >= 0 && value <= std::numeric_limits<blasint>::max();
}

void UseOneLibraryThreadPerCall() {
  // Kiln is the only user of its copy of the library (the wheel bundles it
  // under its own name), so the setting changes nothing for anyone else.
  static std::once_flag once;
  std::call_once(once, [] { scipy_openblas_set_num_threads(1); });
}

GemmTiles ChooseGemmTiles(int64_t m, int64_t k, int64_t n) {
  const bool vector = m == 1 || n == 1;
  const double work = static_cast<double>(m) * k * n;
  const double wanted =
      std::clamp<double>(work / (vector ? kVectorTileWork : kTileWork), 1.0,
                         static_cast<double>(kMaxTiles));
  // Rows first: a tile of whole rows of C reads its rows of A once, and
  // the library packs A for it once (measured faster than square tiles).
  const int64_t row_tiles = std::clamp<int64_t>(
      static_cast<int64_t>(wanted), 1, std::max<int64_t>(1, m / kMinTileRows));
  const int64_t column_tiles =
      std::clamp<int64_t>(static_cast<int64_t>(std::ceil(wanted / row_tiles)),
                          1, std::max<int64_t>(1, n / kMinTileColumns));
  return GemmTiles{std::max<int64_t>(1, CeilDiv(m, row_tiles)),
                   std::max<int64_t>(1, CeilDiv(n, column_tiles))};
}

bool LibraryHasGemm(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kF64 ||
         type == ElementType::kC64 || type == ElementType::kC128;
}

std::unique_ptr<Kernel> MakeLibraryMatmulKernel(ElementType type,
                                                int64_t batch, int64_t m,
                                                int64_t k, int64_t n) {
  if (!FitsBlasInt(m) || !FitsBlasInt(k) || !FitsBlasInt(n) || batch < 0) {
    return nullptr;
  }
  switch (type) {
    case ElementType::kF32:
      return std::make_unique<LibraryMatmulKernel<float>>(batch, m, k, n);
    case ElementType::kF64:
      return std::make_unique<LibraryMatmulKernel<double>>(batch, m, k, n);
    case ElementType::kC64:
      return std::make_unique<LibraryMatmulKernel<std::complex<float>>>(
          batch, m, k, n);
    case ElementType::kC128:
      return std::make_unique<LibraryMatmulKernel<std::complex<double>>>(
          batch, m, k, n);
    default:
      return nullptr;
  }
}

}  // namespace kiln::exec
