// The multiversioned vector loops of exec/kernels/blas.h against plain
// loops written here: each must give the plain loop's bits, at every
// length (empty, shorter than a vector, not a multiple of one) and in
// float and double. The test runs the widest version this CPU has.
#include "exec/kernels/blas.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace kiln::testing {
namespace {

constexpr int64_t kLengths[] = {0, 1, 7, 8, 9, 16, 31, 100, 1027};

template <typename T>
std::vector<T> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<T> normal(0, 3);
  std::vector<T> values(n);
  for (T& v : values) v = normal(rng);
  return values;
}

template <typename T>
bool SameBits(const std::vector<T>& a, const std::vector<T>& b) {
  // memcmp is not to be passed the null data of empty vectors.
  return a.size() == b.size() &&
         (a.empty() ||
          std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <typename T>
void CheckEveryLoop() {
  for (int64_t n : kLengths) {
    SCOPED_TRACE(n);
    const std::vector<T> x = Random<T>(n, 1), y0 = Random<T>(n, 2),
                         a0 = Random<T>(n, 3);
    const T f = T(0.37), g = T(-1.9);

    // Eight partial sums, element i into sum i mod 8, then pairwise.
    T partial[8] = {};
    int64_t whole = n / 8 * 8;
    for (int64_t i = 0; i < whole; ++i) partial[i % 8] += x[i] * y0[i];
    T want = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
             ((partial[4] + partial[5]) + (partial[6] + partial[7]));
    for (int64_t i = whole; i < n; ++i) want += x[i] * y0[i];
    T got = exec::DotInterleaved(x.data(), y0.data(), n);
    EXPECT_EQ(std::memcmp(&got, &want, sizeof(T)), 0) << got << " " << want;

    std::vector<T> y = y0, want_y = y0;
    exec::SubtractScaled(y.data(), x.data(), f, n);
    for (int64_t i = 0; i < n; ++i) want_y[i] = want_y[i] - f * x[i];
    EXPECT_TRUE(SameBits(y, want_y)) << "SubtractScaled";

    y = y0, want_y = y0;
    exec::AddScaled(y.data(), x.data(), f, n);
    for (int64_t i = 0; i < n; ++i) want_y[i] = want_y[i] + f * x[i];
    EXPECT_TRUE(SameBits(y, want_y)) << "AddScaled";

    std::vector<T> a = a0, want_a = a0;
    exec::SubtractRank2(a.data(), x.data(), f, y0.data(), g, n);
    for (int64_t i = 0; i < n; ++i) want_a[i] -= x[i] * f + y0[i] * g;
    EXPECT_TRUE(SameBits(a, want_a)) << "SubtractRank2";

    std::vector<T> rx = x, ry = y0, want_x = x, want_ry = y0;
    exec::RotatePair(rx.data(), ry.data(), f, g, n);
    for (int64_t i = 0; i < n; ++i) {
      want_x[i] = f * x[i] + g * y0[i];
      want_ry[i] = f * y0[i] - g * x[i];
    }
    EXPECT_TRUE(SameBits(rx, want_x)) << "RotatePair x";
    EXPECT_TRUE(SameBits(ry, want_ry)) << "RotatePair y";
  }
}

TEST(BlasTest, FloatLoopsGiveThePlainLoopsBits) { CheckEveryLoop<float>(); }

TEST(BlasTest, DoubleLoopsGiveThePlainLoopsBits) { CheckEveryLoop<double>(); }

}  // namespace
}  // namespace kiln::testing
