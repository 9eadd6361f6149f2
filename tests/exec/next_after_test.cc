// ops::NextAfter's f32 and f64 forms (on the bits, so that they vectorize)
// against the C library's nextafter, bit for bit: random bit patterns of
// both operands (every exponent, both signs, subnormals, infinities and
// NaNs among them), each value toward itself and its negation, and every
// pair of the edge values.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "exec/kernels/elementwise_ops.h"

namespace kiln::exec {
namespace {

template <typename F, typename U>
void ExpectTheLibrarysBits() {
  using Limits = std::numeric_limits<F>;
  std::vector<F> edges = {F(0),
                          -F(0),
                          F(1),
                          F(-1),
                          Limits::infinity(),
                          -Limits::infinity(),
                          Limits::quiet_NaN(),
                          Limits::denorm_min(),
                          -Limits::denorm_min(),
                          Limits::max(),
                          -Limits::max(),
                          Limits::min()};
  int64_t mismatches = 0;
  auto check = [&](F a, F b) {
    F got = ops::NextAfter::Apply(a, b, 0);
    F want = std::nextafter(a, b);
    bool same = std::bit_cast<U>(got) == std::bit_cast<U>(want) ||
                (std::isnan(got) && std::isnan(want));
    if (!same && mismatches++ < 5) {
      ADD_FAILURE() << "nextafter(" << a << ", " << b << "): got " << got
                    << ", the library gives " << want;
    }
  };
  for (F a : edges) {
    for (F b : edges) check(a, b);
  }
  std::mt19937_64 random(7);
  for (int i = 0; i < 1000000; ++i) {
    F a = std::bit_cast<F>(static_cast<U>(random()));
    F b = std::bit_cast<F>(static_cast<U>(random()));
    check(a, b);
    check(a, a);
    check(a, -a);
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(NextAfterTest, F32IsTheLibrarysBitForBit) {
  ExpectTheLibrarysBits<float, uint32_t>();
}

TEST(NextAfterTest, F64IsTheLibrarysBitForBit) {
  ExpectTheLibrarysBits<double, uint64_t>();
}

}  // namespace
}  // namespace kiln::exec
