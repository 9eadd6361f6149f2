#include "tools/check/check_targets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "support/test_support.h"

namespace kiln::check {
namespace {

Status CompareF64(double actual, double expected, uint64_t max_ulps) {
  exec::ArrayShape shape{ir::ElementType::kF64, {1}};
  Comparison c;
  c.mode = Comparison::Mode::kUlps;
  c.max_ulps = max_ulps;
  return Compare(shape, reinterpret_cast<const std::byte*>(&actual),
                 reinterpret_cast<const std::byte*>(&expected), c);
}

TEST(CheckTargetsTest, UlpDistanceCountsRepresentableValues) {
  double one = 1.0;
  double next = std::nextafter(one, 2.0);
  double third = std::nextafter(std::nextafter(next, 2.0), 2.0);
  EXPECT_OK(CompareF64(next, one, 1));
  EXPECT_FALSE(CompareF64(third, one, 2).ok());  // three steps apart
  EXPECT_OK(CompareF64(third, one, 3));
  // Across zero: the smallest subnormals of both signs are two steps apart.
  double tiny = std::nextafter(0.0, 1.0);
  EXPECT_OK(CompareF64(tiny, -tiny, 2));
  EXPECT_FALSE(CompareF64(tiny, -tiny, 1).ok());
}

TEST(CheckTargetsTest, UlpDistanceOfFarApartValuesDoesNotOverflow) {
  // Huge values of opposite signs are more than 2^63 ULP keys apart (a
  // fuzz find: the signed difference overflowed).
  Status far = CompareF64(-1e300, 1e300, 3);
  EXPECT_FALSE(far.ok());
  EXPECT_NE(far.message().find("differ"), std::string::npos) << far.ToString();
}

}  // namespace
}  // namespace kiln::check
