// Shapes and element type names.
#include "kiln/shape.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace kiln::client {
namespace {

TEST(ShapeTest, NamesAndSizes) {
  Shape shape(PJRT_Buffer_Type_F32, {4, 8});
  EXPECT_EQ(shape.ToString(), "f32[4,8]");
  EXPECT_EQ(shape.ToMlirType(), "tensor<4x8xf32>");
  EXPECT_EQ(shape.ElementCount(), 32);
  EXPECT_EQ(shape.ByteSize(), 128);
  Shape scalar(PJRT_Buffer_Type_BF16, {});
  EXPECT_EQ(scalar.ToMlirType(), "tensor<bf16>");
  EXPECT_EQ(scalar.ByteSize(), 2);
  EXPECT_EQ(Shape(PJRT_Buffer_Type_PRED, {3}).ByteSize(), 3);
  EXPECT_EQ(Shape(PJRT_Buffer_Type_C128, {2}).ByteSize(), 32);
  EXPECT_EQ(Shape(PJRT_Buffer_Type_S4, {5}).ByteSize(), 5);
}

TEST(ShapeTest, ParsesBothSpellings) {
  EXPECT_EQ(ParseElementType("f32"), PJRT_Buffer_Type_F32);
  EXPECT_EQ(ParseElementType("F32"), PJRT_Buffer_Type_F32);
  EXPECT_EQ(ParseElementType("i1"), PJRT_Buffer_Type_PRED);
  EXPECT_EQ(ParseElementType("ui8"), PJRT_Buffer_Type_U8);
  EXPECT_EQ(ParseElementType("complex<f64>"), PJRT_Buffer_Type_C128);
  EXPECT_FALSE(ParseElementType("f31").has_value());
  EXPECT_EQ(ElementTypeName(static_cast<PJRT_Buffer_Type>(99)), "invalid(99)");
}

TEST(ShapeTest, ValidateRejectsNegativeAndOverflowingShapes) {
  EXPECT_OK(ValidateShape(Shape(PJRT_Buffer_Type_F32, {0, 5})));
  EXPECT_FALSE(ValidateShape(Shape(PJRT_Buffer_Type_F32, {-1})).ok());
  EXPECT_FALSE(
      ValidateShape(Shape(PJRT_Buffer_Type_F64, {1 << 30, 1 << 30, 1 << 30}))
          .ok());
  EXPECT_FALSE(ValidateShape(Shape(PJRT_Buffer_Type_TOKEN, {})).ok());
  EXPECT_FALSE(ValidateShape(Shape(PJRT_Buffer_Type_INVALID, {2})).ok());
}

}  // namespace
}  // namespace kiln::client
