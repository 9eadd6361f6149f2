// The kernels' fast float conversions against the IR's exact, format-driven
// encoder (an independent implementation).
#include "exec/kernels/element.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <random>

#include "exec/float_mode.h"
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

// The array conversions run vectorized loops (with tails): each element
// must be what the element conversion and the IR encoder give, NaNs made
// quiet with their sign and upper payload, and predicates read as 0 or 1.
TEST(ElementTest, ArrayConversionsOfBf16AndPredicatesMatchElementByElement) {
  std::mt19937 engine(7);
  std::uniform_int_distribution<uint32_t> any;
  const int64_t count = 1003;
  std::vector<float> floats(count);
  for (float& value : floats) {
    uint32_t bits = any(engine);
    std::memcpy(&value, &bits, 4);
  }
  floats[5] = std::numeric_limits<float>::quiet_NaN();
  uint32_t signaling = 0xff800001u;  // -sNaN with a low payload bit
  std::memcpy(&floats[6], &signaling, 4);
  std::vector<uint16_t> narrow(count);
  ConvertElements(
      ElementType::kF32, reinterpret_cast<const std::byte*>(floats.data()),
      ElementType::kBF16, reinterpret_cast<std::byte*>(narrow.data()), count);
  std::vector<float> wide(count);
  ConvertElements(
      ElementType::kBF16, reinterpret_cast<const std::byte*>(narrow.data()),
      ElementType::kF32, reinterpret_cast<std::byte*>(wide.data()), count);
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &floats[i], 4);
    if (std::isnan(floats[i])) {
      EXPECT_EQ(narrow[i], (bits >> 16) | 0x40) << i;
      EXPECT_TRUE(std::isnan(wide[i])) << i;
    } else {
      EXPECT_EQ(narrow[i], ir::EncodeFloat(ElementType::kBF16, floats[i])) << i;
      EXPECT_EQ(wide[i], ir::DecodeFloat(ElementType::kBF16, narrow[i])) << i;
    }
  }
  std::vector<uint8_t> predicates(count);
  for (uint8_t& p : predicates) p = any(engine) & 1;
  std::vector<float> as_float(count);
  std::vector<int32_t> as_int(count);
  ConvertElements(
      ElementType::kI1, reinterpret_cast<const std::byte*>(predicates.data()),
      ElementType::kF32, reinterpret_cast<std::byte*>(as_float.data()), count);
  ConvertElements(
      ElementType::kI1, reinterpret_cast<const std::byte*>(predicates.data()),
      ElementType::kI32, reinterpret_cast<std::byte*>(as_int.data()), count);
  for (int64_t i = 0; i < count; ++i) {
    EXPECT_EQ(as_float[i], predicates[i] ? 1.0f : 0.0f) << i;
    EXPECT_EQ(as_int[i], predicates[i]) << i;
  }
}

// The f16 array conversions (F16C's where the CPU has it) give what the
// element conversions give for every half, and for floats across the
// range, subnormal halves, ties and NaNs, also in the mode plans run in
// (flush-to-zero, denormals-are-zero). The one difference allowed: a
// signaling NaN half may come back quiet.
TEST(ElementTest, HalfArrayConversionsMatchElementByElement) {
  for (bool flushed : {false, true}) {
    SCOPED_TRACE(flushed ? "flush-to-zero" : "default mode");
    std::optional<ScopedFlushDenormals> mode;
    if (flushed) mode.emplace();
    std::vector<uint16_t> halves(1 << 16);
    for (int64_t i = 0; i < (1 << 16); ++i) {
      halves[i] = static_cast<uint16_t>(i);
    }
    std::vector<float> wide(halves.size());
    ConvertElements(ElementType::kF16,
                    reinterpret_cast<const std::byte*>(halves.data()),
                    ElementType::kF32, reinterpret_cast<std::byte*>(wide.data()),
                    static_cast<int64_t>(halves.size()));
    for (int64_t i = 0; i < (1 << 16); ++i) {
      const float want = HalfToFloat(halves[i]);
      uint32_t got_bits, want_bits;
      std::memcpy(&got_bits, &wide[i], 4);
      std::memcpy(&want_bits, &want, 4);
      const bool signaling = (i & 0x7c00) == 0x7c00 && (i & 0x3ff) != 0 &&
                             (i & 0x200) == 0;
      if (signaling) {
        EXPECT_EQ(got_bits | 0x400000u, want_bits | 0x400000u) << i;
      } else {
        EXPECT_EQ(got_bits, want_bits) << i;
      }
    }
    std::mt19937 engine(11);
    std::uniform_int_distribution<uint32_t> any;
    std::vector<float> floats(4099);
    for (float& value : floats) {
      // Half the values near half's range, half anywhere.
      uint32_t bits = any(engine);
      if (bits & 1) bits = (bits & 0x83ffffffu) | 0x30000000u;
      std::memcpy(&value, &bits, 4);
    }
    const float edges[] = {0.0f, -0.0f, 65504.0f, 65520.0f, 65519.996f,
                           6.1035156e-05f, 5.9604645e-08f, 2.9802322e-08f,
                           2.9802326e-08f, 1.0009766f, 1.0004883f,
                           std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::denorm_min()};
    std::copy(std::begin(edges), std::end(edges), floats.begin());
    std::vector<uint16_t> narrow(floats.size());
    ConvertElements(ElementType::kF32,
                    reinterpret_cast<const std::byte*>(floats.data()),
                    ElementType::kF16, reinterpret_cast<std::byte*>(narrow.data()),
                    static_cast<int64_t>(floats.size()));
    for (size_t i = 0; i < floats.size(); ++i) {
      EXPECT_EQ(narrow[i], FloatToHalf(floats[i])) << i << ": " << floats[i];
    }
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
