#include "ir/float_bits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kiln::ir {
namespace {

// Expected bit patterns below follow from each format's definition
// (sign | exponent field | mantissa field), worked out by hand.
TEST(FloatBitsTest, EncodesOneInEveryFormat) {
  EXPECT_EQ(EncodeFloat(ElementType::kBF16, 1.0), 0x3F80u);
  EXPECT_EQ(EncodeFloat(ElementType::kF16, 1.0), 0x3C00u);
  EXPECT_EQ(EncodeFloat(ElementType::kF32, 1.0), 0x3F800000u);
  EXPECT_EQ(EncodeFloat(ElementType::kF8E4M3FN, 1.0), 0x38u);       // bias 7
  EXPECT_EQ(EncodeFloat(ElementType::kF8E4M3FNUZ, 1.0), 0x40u);     // bias 8
  EXPECT_EQ(EncodeFloat(ElementType::kF8E4M3B11FNUZ, 1.0), 0x58u);  // bias 11
  EXPECT_EQ(EncodeFloat(ElementType::kF8E5M2, 1.0), 0x3Cu);         // bias 15
  EXPECT_EQ(EncodeFloat(ElementType::kF8E5M2FNUZ, 1.0), 0x40u);     // bias 16
  EXPECT_EQ(EncodeFloat(ElementType::kF8E3M4, 1.0), 0x30u);         // bias 3
  EXPECT_EQ(EncodeFloat(ElementType::kF4E2M1FN, 1.0), 0x2u);        // bias 1
  EXPECT_EQ(EncodeFloat(ElementType::kF6E2M3FN, 1.0), 0x08u);
  EXPECT_EQ(EncodeFloat(ElementType::kF6E3M2FN, 1.0), 0x0Cu);
  EXPECT_EQ(EncodeFloat(ElementType::kF8E8M0FNU, 1.0), 127u);
}

// The values ml_dtypes and XLA give where the formats have no room: E8M0's
// ties and zero, the sign of f8E4M3FN's NaN, and NaN in a format without one.
TEST(FloatBitsTest, EdgesAsMlDtypesEncodesThem) {
  EXPECT_EQ(EncodeFloat(ElementType::kF8E8M0FNU, 0.75), 127u);  // tie: up to 1
  EXPECT_EQ(EncodeFloat(ElementType::kF8E8M0FNU, 3.0), 129u);   // tie: up to 4
  EXPECT_EQ(EncodeFloat(ElementType::kF8E8M0FNU, 2.9), 128u);
  EXPECT_EQ(EncodeFloat(ElementType::kF8E8M0FNU, 0.0), 0xFFu);  // no zero: NaN
  EXPECT_EQ(EncodeFloat(ElementType::kF8E4M3FN, -1e4), 0xFFu);
  EXPECT_EQ(EncodeFloat(ElementType::kF8E4M3FN,
                        -std::numeric_limits<double>::infinity()),
            0xFFu);
  EXPECT_EQ(EncodeFloat(ElementType::kF8E4M3FN, 1e4), 0x7Fu);
  EXPECT_EQ(EncodeFloat(ElementType::kF4E2M1FN, std::nan("")), 0x8u);  // -0
}

TEST(FloatBitsTest, LargestFiniteValues) {
  EXPECT_EQ(DecodeFloat(ElementType::kF8E4M3FN, 0x7E), 448.0);
  EXPECT_EQ(DecodeFloat(ElementType::kF8E5M2, 0x7B), 57344.0);
  EXPECT_EQ(DecodeFloat(ElementType::kF4E2M1FN, 0x7), 6.0);
  EXPECT_EQ(DecodeFloat(ElementType::kF6E2M3FN, 0x1F), 7.5);
  EXPECT_EQ(DecodeFloat(ElementType::kF6E3M2FN, 0x1F), 28.0);
  EXPECT_EQ(DecodeFloat(ElementType::kF16, 0x7BFF), 65504.0);
}

TEST(FloatBitsTest, RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between bf16 1.0 and 1.0078125: ties to even (1.0).
  EXPECT_EQ(EncodeFloat(ElementType::kBF16, 1.0 + std::ldexp(1.0, -8)),
            0x3F80u);
  // 1 + 3*2^-8 is halfway between 1.0078125 (odd) and 1.015625 (even).
  EXPECT_EQ(EncodeFloat(ElementType::kBF16, 1.0 + 3 * std::ldexp(1.0, -8)),
            0x3F82u);
}

TEST(FloatBitsTest, OverflowFollowsEachFormatsNonFiniteRules) {
  EXPECT_EQ(EncodeFloat(ElementType::kF16, 1e6), 0x7C00u);        // inf
  EXPECT_EQ(EncodeFloat(ElementType::kF8E4M3FN, 1e6), 0x7Fu);     // NaN
  EXPECT_EQ(EncodeFloat(ElementType::kF8E4M3FNUZ, -1e6), 0x80u);  // NaN
  EXPECT_EQ(EncodeFloat(ElementType::kF4E2M1FN, 100.0), 0x7u);    // saturate
  EXPECT_EQ(EncodeFloat(ElementType::kF4E2M1FN, -100.0), 0xFu);
  EXPECT_TRUE(std::isnan(DecodeFloat(ElementType::kF8E5M2FNUZ, 0x80)));
  EXPECT_EQ(EncodeFloat(ElementType::kF8E5M2FNUZ, -0.0), 0x00u);  // no -0
}

TEST(FloatBitsTest, SubnormalsRoundTrip) {
  // Smallest f16 subnormal is 2^-24.
  EXPECT_EQ(EncodeFloat(ElementType::kF16, std::ldexp(1.0, -24)), 0x0001u);
  EXPECT_EQ(DecodeFloat(ElementType::kF16, 0x0001), std::ldexp(1.0, -24));
  // Half of it rounds to zero (tie to even), a bit more rounds up.
  EXPECT_EQ(EncodeFloat(ElementType::kF16, std::ldexp(1.0, -25)), 0x0000u);
  EXPECT_EQ(EncodeFloat(ElementType::kF16, std::ldexp(1.5, -25)), 0x0001u);
}

TEST(FloatBitsTest, EveryNarrowPatternRoundTrips) {
  for (ElementType type :
       {ElementType::kF4E2M1FN, ElementType::kF6E2M3FN, ElementType::kF6E3M2FN,
        ElementType::kF8E3M4, ElementType::kF8E4M3, ElementType::kF8E4M3FN,
        ElementType::kF8E4M3FNUZ, ElementType::kF8E4M3B11FNUZ,
        ElementType::kF8E5M2, ElementType::kF8E5M2FNUZ,
        ElementType::kF8E8M0FNU}) {
    int width = BitWidth(type);
    for (uint64_t bits = 0; bits < (1u << width); ++bits) {
      double value = DecodeFloat(type, bits);
      if (std::isnan(value)) continue;
      EXPECT_EQ(EncodeFloat(type, value), bits)
          << ElementTypeName(type) << " bits " << bits << " value " << value;
    }
  }
}

}  // namespace
}  // namespace kiln::ir
