// The kernels' fast float conversions against the IR's exact, format-driven
// encoder (an independent implementation).
#include "exec/kernels/element.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "exec/kernels/convert.h"
#include "ir/float_bits.h"

namespace kiln::exec {
namespace {

TEST(ElementTest, HalfConversionsAgreeWithTheIrEncoderForEveryHalf) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = HalfToFloat(static_cast<uint16_t>(bits));
    double exact = ir::DecodeFloat(ElementType::kF16, bits);
    if (std::isnan(exact)) {
      EXPECT_TRUE(std::isnan(value)) << bits;
      continue;
    }
    EXPECT_EQ(value, exact) << bits;
    EXPECT_EQ(FloatToHalf(value), bits) << bits;
  }
}

TEST(ElementTest, FloatToHalfAndBf16RoundLikeTheIrEncoder) {
  std::mt19937 engine(42);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = any(engine);
    float value;
    std::memcpy(&value, &bits, 4);
    if (std::isnan(value)) continue;
    EXPECT_EQ(FloatToHalf(value), ir::EncodeFloat(ElementType::kF16, value))
        << bits;
    EXPECT_EQ(FloatToBF16(value), ir::EncodeFloat(ElementType::kBF16, value))
        << bits;
  }
}

TEST(ElementTest, ConvertHandlesSubByteIntegersByTheirLogicalWidth) {
  // i4 is stored sign-extended in a byte: 7 + 1 wraps to -8 in i4.
  std::vector<int32_t> in = {7, 8, -9, 15};
  std::vector<int8_t> out(4);
  ConvertElements(
      ElementType::kI32, reinterpret_cast<const std::byte*>(in.data()),
      ElementType::kI4, reinterpret_cast<std::byte*>(out.data()), 4);
  EXPECT_EQ(out, (std::vector<int8_t>{7, -8, 7, -1}));
  std::vector<uint8_t> unsigned_out(4);
  ConvertElements(
      ElementType::kI32, reinterpret_cast<const std::byte*>(in.data()),
      ElementType::kUI2, reinterpret_cast<std::byte*>(unsigned_out.data()), 4);
  EXPECT_EQ(unsigned_out, (std::vector<uint8_t>{3, 0, 3, 3}));
}

TEST(ElementTest, ConvertToF8SaturatesToNaNWhereTheFormatHasNoInfinity) {
  // f8E4M3FN has no infinity: values past its range become NaN (0x7F).
  std::vector<float> in = {1000.0f, -1000.0f, 448.0f, 0.0f};
  std::vector<uint8_t> out(4);
  ConvertElements(
      ElementType::kF32, reinterpret_cast<const std::byte*>(in.data()),
      ElementType::kF8E4M3FN, reinterpret_cast<std::byte*>(out.data()), 4);
  EXPECT_EQ(out[0] & 0x7F, 0x7F);
  EXPECT_EQ(out[1] & 0x7F, 0x7F);
  EXPECT_EQ(out[2], 0x7E);  // 448 is the largest finite value
  EXPECT_EQ(out[3], 0x00);
}

}  // namespace
}  // namespace kiln::exec
