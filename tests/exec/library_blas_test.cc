// The products Kiln hands to its BLAS library (exec/kernels/library_blas.h):
// f64 and complex dot_generals, matrix-vector products through gemv, and
// the bits promise (docs/exec.md, "Bits"): a product split into tiles over
// the cores gives the bits it gives on one thread.
#include "exec/kernels/library_blas.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/dot.h"
#include "exec/parallel.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;

template <typename T>
struct Traits;
template <>
struct Traits<double> {
  static constexpr ElementType kType = ElementType::kF64;
  static constexpr double kEpsilon = 0x1p-52;
};
template <>
struct Traits<std::complex<float>> {
  static constexpr ElementType kType = ElementType::kC64;
  static constexpr double kEpsilon = 0x1p-23;
};
template <>
struct Traits<std::complex<double>> {
  static constexpr ElementType kType = ElementType::kC128;
  static constexpr double kEpsilon = 0x1p-52;
};

template <typename T>
std::vector<T> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<T> values(n);
  for (T& v : values) {
    if constexpr (std::is_same_v<T, double>) {
      v = normal(rng);
    } else {
      using R = typename T::value_type;
      v = T(static_cast<R>(normal(rng)), static_cast<R>(normal(rng)));
    }
  }
  return values;
}

// Runs `kernel` over [batch, m, k] x [batch, k, n] and returns the result.
template <typename T>
std::vector<T> RunProduct(const exec::Kernel& kernel, std::vector<T>& lhs,
                          std::vector<T>& rhs, int64_t batch, int64_t m,
                          int64_t k, int64_t n) {
  const ElementType type = Traits<T>::kType;
  std::vector<T> out(batch * m * n, T(-7));  // every element must be written
  std::vector<exec::Slot> slots(3);
  slots[0].shape = {type, {batch, m, k}};
  slots[1].shape = {type, {batch, k, n}};
  slots[2].shape = {type, {batch, m, n}};
  exec::RunContext ctx(slots, exec::RunOptions{});
  ctx.set_slot(0, reinterpret_cast<std::byte*>(lhs.data()));
  ctx.set_slot(1, reinterpret_cast<std::byte*>(rhs.data()));
  ctx.set_slot(2, reinterpret_cast<std::byte*>(out.data()));
  exec::Step step;
  step.inputs = {0, 1};
  step.outputs = {2};
  EXPECT_OK(kernel.Run(ctx, step));
  return out;
}

// The product through the library against a sum in long double: each
// element within k * eps * sum |a||b| (the classical bound of a dot
// product in any order, with or without fused multiply-adds).
template <typename T>
void ExpectProductWithinTheDotBound(int64_t batch, int64_t m, int64_t k,
                                    int64_t n) {
  SCOPED_TRACE(::testing::Message() << batch << "x" << m << "x" << k << "x"
                                    << n);
  std::vector<T> lhs = Random<T>(batch * m * k, 1);
  std::vector<T> rhs = Random<T>(batch * k * n, 2);
  auto kernel =
      exec::MakeLibraryMatmulKernel(Traits<T>::kType, batch, m, k, n);
  ASSERT_NE(kernel, nullptr);
  std::vector<T> got = RunProduct(*kernel, lhs, rhs, batch, m, k, n);
  using Wide = std::complex<long double>;
  int64_t outside = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Wide sum = 0;
        long double magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          Wide a(lhs[(b * m + i) * k + p]), x(rhs[(b * k + p) * n + j]);
          sum += a * x;
          magnitude += std::abs(a) * std::abs(x);
        }
        const long double error =
            std::abs(Wide(got[(b * m + i) * n + j]) - sum);
        const long double bound =
            2 * (k + 1) * Traits<T>::kEpsilon * magnitude;
        outside += !(error <= bound);
      }
    }
  }
  EXPECT_EQ(outside, 0);
}

TEST(LibraryBlasTest, ProductsAreWithinTheDotProductBound) {
  // Blocks, leftovers, a matrix times a vector (gemv) from either side,
  // batches, and one large enough to be split into tiles.
  for (auto [batch, m, k, n] :
       std::vector<std::array<int64_t, 4>>{{1, 17, 33, 9},
                                           {3, 40, 20, 70},
                                           {1, 300, 200, 1},
                                           {2, 1, 150, 77},
                                           {1, 1, 64, 1},
                                           {1, 200, 160, 300}}) {
    ExpectProductWithinTheDotBound<double>(batch, m, k, n);
    ExpectProductWithinTheDotBound<std::complex<float>>(batch, m, k, n);
    ExpectProductWithinTheDotBound<std::complex<double>>(batch, m, k, n);
  }
}

TEST(LibraryBlasTest, AnEmptySumIsZeroAndEmptyResultsAreFine) {
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{
           {5, 0, 7}, {0, 4, 3}, {3, 4, 0}}) {
    std::vector<double> lhs(m * k, 1.5), rhs(k * n, 2.5);
    auto kernel = exec::MakeLibraryMatmulKernel(ElementType::kF64, 1, m, k, n);
    ASSERT_NE(kernel, nullptr);
    std::vector<double> got = RunProduct(*kernel, lhs, rhs, 1, m, k, n);
    EXPECT_EQ(got, std::vector<double>(m * n, 0.0));
  }
}

TEST(LibraryBlasTest, DotGeneralSendsF64AndComplexProductsToTheLibrary) {
  // The same kernel MakeMatmulKernel picks, bit for bit: the f64 product
  // of 64x64x64 is the library's (Kiln's own loops sum without fused
  // multiply-adds, in another order).
  std::vector<double> lhs = Random<double>(64 * 64, 3);
  std::vector<double> rhs = Random<double>(64 * 64, 4);
  auto picked = exec::MakeMatmulKernel(ElementType::kF64, 1, 64, 64, 64);
  auto library = exec::MakeLibraryMatmulKernel(ElementType::kF64, 1, 64, 64, 64);
  std::vector<double> a = RunProduct(*picked, lhs, rhs, 1, 64, 64, 64);
  std::vector<double> b = RunProduct(*library, lhs, rhs, 1, 64, 64, 64);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0);
}

TEST(LibraryBlasTest, TilesComeFromTheShapeAlone) {
  // Large products are cut into several tiles of whole blocks of rows and
  // columns; small ones are one tile.
  exec::GemmTiles big = exec::ChooseGemmTiles(512, 1024, 1024);
  EXPECT_LT(big.rows, 512);
  EXPECT_GE(big.rows, 32);
  EXPECT_GE(big.columns, 64);
  exec::GemmTiles small = exec::ChooseGemmTiles(16, 16, 16);
  EXPECT_EQ(small.rows, 16);
  EXPECT_EQ(small.columns, 16);
  exec::GemmTiles vector = exec::ChooseGemmTiles(4000, 1000, 1);
  EXPECT_EQ(vector.columns, 1);
}

// The bits promise: one thread, two and four threads give the same bits
// for a product cut into many tiles.
template <typename T>
void ExpectSameBitsAtAnyThreadCount(int64_t m, int64_t k, int64_t n) {
  std::vector<T> lhs = Random<T>(m * k, 5), rhs = Random<T>(k * n, 6);
  auto kernel = exec::MakeLibraryMatmulKernel(Traits<T>::kType, 1, m, k, n);
  ASSERT_NE(kernel, nullptr);
  std::vector<T> one;
  {
    exec::SerialScope serial;
    one = RunProduct(*kernel, lhs, rhs, 1, m, k, n);
  }
  const int before = omp_get_max_threads();
  for (int threads : {2, 4}) {
    omp_set_num_threads(threads);
    std::vector<T> many = RunProduct(*kernel, lhs, rhs, 1, m, k, n);
    EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(T)), 0)
        << threads << " threads";
  }
  omp_set_num_threads(before);
}

TEST(LibraryBlasTest, BitsAreTheSameAtOneTwoAndFourThreads) {
  exec::GemmTiles tiles = exec::ChooseGemmTiles(384, 512, 320);
  ASSERT_TRUE(tiles.rows < 384 || tiles.columns < 320);  // several tiles
  ExpectSameBitsAtAnyThreadCount<double>(384, 512, 320);
  ExpectSameBitsAtAnyThreadCount<std::complex<double>>(384, 512, 320);
  ExpectSameBitsAtAnyThreadCount<double>(4000, 1000, 1);  // gemv
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

// triangular_solve through the library: a lower, non-unit, left-side solve
// of a wide right-hand side (cut into blocks of columns over the cores)
// against forward substitution in long double, and the same bits at one,
// two and four threads.
TEST(LibraryBlasTest, TriangularSolvesMatchSubstitutionAtAnyThreadCount) {
  using ir::ElementType;
  const int64_t m = 96, cols = 300;
  std::vector<double> a = Random<double>(m * m, 11);
  for (int64_t i = 0; i < m; ++i) a[i * m + i] = 4 + std::abs(a[i * m + i]);
  std::vector<double> b = Random<double>(m * cols, 12);
  auto kernel = exec::MakeLibraryTriangularSolveKernel(
      ElementType::kF64, 1, m, m, cols, /*left_side=*/true, /*lower=*/true,
      /*unit_diagonal=*/false, /*transpose=*/1);
  ASSERT_NE(kernel, nullptr);
  auto run = [&] {
    std::vector<double> x(m * cols);
    std::vector<exec::Slot> slots(3);
    slots[0].shape = {ElementType::kF64, {1, m, m}};
    slots[1].shape = {ElementType::kF64, {1, m, cols}};
    slots[2].shape = {ElementType::kF64, {1, m, cols}};
    exec::RunContext ctx(slots, exec::RunOptions{});
    ctx.set_slot(0, reinterpret_cast<std::byte*>(a.data()));
    ctx.set_slot(1, reinterpret_cast<std::byte*>(b.data()));
    ctx.set_slot(2, reinterpret_cast<std::byte*>(x.data()));
    exec::Step step;
    step.inputs = {0, 1};
    step.outputs = {2};
    EXPECT_OK(kernel->Run(ctx, step));
    return x;
  };
  std::vector<double> one;
  {
    exec::SerialScope serial;
    one = run();
  }
  int64_t outside = 0;
  for (int64_t j = 0; j < cols; ++j) {
    std::vector<long double> x(m);
    for (int64_t i = 0; i < m; ++i) {
      long double sum = b[i * cols + j];
      for (int64_t p = 0; p < i; ++p) sum -= a[i * m + p] * x[p];
      x[i] = sum / a[i * m + i];
      const long double error = std::abs(one[i * cols + j] - x[i]);
      outside += !(error <= 1e-12L * (1 + std::abs(x[i])));
    }
  }
  EXPECT_EQ(outside, 0);
  const int before = omp_get_max_threads();
  for (int threads : {2, 4}) {
    omp_set_num_threads(threads);
    std::vector<double> many = run();
    EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(double)),
              0)
        << threads << " threads";
  }
  omp_set_num_threads(before);
}

}  // namespace
}  // namespace kiln::testing
