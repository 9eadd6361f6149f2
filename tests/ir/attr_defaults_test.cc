// Default values of inherent attributes (ir/attr_defaults.h).

#include "ir/attr_defaults.h"

#include <gtest/gtest.h>

namespace kiln::ir {
namespace {

Type I32() { return Type::Element(ElementType::kI32); }
Type I64() { return Type::Element(ElementType::kI64); }

TEST(AttrDefaultsTest, RecognizesDefaultsOfEachKind) {
  OpCode custom_call = LookupOpCode("stablehlo.custom_call");
  EXPECT_TRUE(IsDefaultAttribute(custom_call, "api_version",
                                 Attribute::Integer(1, I32())));
  EXPECT_FALSE(IsDefaultAttribute(custom_call, "api_version",
                                  Attribute::Integer(2, I32())));
  EXPECT_TRUE(
      IsDefaultAttribute(custom_call, "backend_config", Attribute::String("")));
  EXPECT_TRUE(IsDefaultAttribute(custom_call, "backend_config",
                                 Attribute::Dictionary({})));
  EXPECT_FALSE(IsDefaultAttribute(custom_call, "backend_config",
                                  Attribute::String("x")));
  EXPECT_TRUE(
      IsDefaultAttribute(custom_call, "result_layouts", Attribute::Array({})));
  EXPECT_TRUE(IsDefaultAttribute(custom_call, "has_side_effect",
                                 Attribute::Bool(false)));
  EXPECT_FALSE(IsDefaultAttribute(custom_call, "has_side_effect",
                                  Attribute::Bool(true)));

  OpCode sort = LookupOpCode("stablehlo.sort");
  EXPECT_TRUE(
      IsDefaultAttribute(sort, "dimension", Attribute::Integer(-1, I64())));
  EXPECT_FALSE(
      IsDefaultAttribute(sort, "dimension", Attribute::Integer(0, I64())));

  OpCode conv = LookupOpCode("stablehlo.convolution");
  EXPECT_TRUE(IsDefaultAttribute(conv, "window_strides",
                                 Attribute::DenseI64Array({1, 1})));
  EXPECT_FALSE(IsDefaultAttribute(conv, "window_strides",
                                  Attribute::DenseI64Array({1, 2})));
  EXPECT_TRUE(IsDefaultAttribute(conv, "window_reversal",
                                 Attribute::DenseBoolArray({false, false})));
  // padding is a dense tensor: a splat of zeros is the default.
  Attribute zeros =
      Attribute::DenseElements(TensorOf({2, 2}, ElementType::kI64),
                               std::string(8, '\0'), /*splat=*/true);
  EXPECT_TRUE(IsDefaultAttribute(conv, "padding", zeros));
  Attribute precision = Attribute::Enum(EnumKind::kPrecision, 0);
  EXPECT_TRUE(IsDefaultAttribute(conv, "precision_config",
                                 Attribute::Array({precision, precision})));
  EXPECT_FALSE(IsDefaultAttribute(
      conv, "precision_config",
      Attribute::Array({precision, Attribute::Enum(EnumKind::kPrecision, 2)})));

  OpCode all_reduce = LookupOpCode("stablehlo.all_reduce");
  EXPECT_TRUE(IsDefaultAttribute(all_reduce, "channel_handle",
                                 Attribute::Channel(ChannelHandle{0, 1})));
  EXPECT_FALSE(IsDefaultAttribute(all_reduce, "channel_handle",
                                  Attribute::Channel(ChannelHandle{3, 1})));

  OpCode exponential = LookupOpCode("stablehlo.exponential");
  EXPECT_TRUE(
      IsDefaultAttribute(exponential, "result_accuracy",
                         Attribute::ResultAccuracyAttr(ResultAccuracy{})));
  ResultAccuracy tolerance;
  tolerance.atol = 1e-5;
  tolerance.mode = 2;
  EXPECT_FALSE(IsDefaultAttribute(exponential, "result_accuracy",
                                  Attribute::ResultAccuracyAttr(tolerance)));
}

TEST(AttrDefaultsTest, OnlyInherentAttributesOfKnownOpsHaveDefaults) {
  // Send and recv keep their channel handle even with handle 0.
  EXPECT_FALSE(IsDefaultAttribute(LookupOpCode("stablehlo.send"),
                                  "channel_handle",
                                  Attribute::Channel(ChannelHandle{0, 1})));
  EXPECT_FALSE(IsDefaultAttribute(OpCode::kUnknown, "api_version",
                                  Attribute::Integer(1, I32())));
  EXPECT_FALSE(IsDefaultAttribute(LookupOpCode("stablehlo.add"), "dimension",
                                  Attribute::Integer(-1, I64())));
}

TEST(AttrDefaultsTest, ErasesDefaultsAndKeepsTheRest) {
  Operation op("stablehlo.custom_call", {});
  op.SetAttr("call_target_name", Attribute::String("foo"));
  op.SetAttr("api_version", Attribute::Integer(1, I32()));
  op.SetAttr("result_layouts", Attribute::Array({}));
  op.SetAttr("has_side_effect", Attribute::Bool(true));
  op.SetAttr("some.discardable", Attribute::String(""));
  EraseDefaultAttributes(op);
  EXPECT_FALSE(op.HasAttr("api_version"));
  EXPECT_FALSE(op.HasAttr("result_layouts"));
  EXPECT_TRUE(op.HasAttr("has_side_effect"));
  EXPECT_TRUE(op.HasAttr("call_target_name"));
  EXPECT_TRUE(op.HasAttr("some.discardable"));
}

}  // namespace
}  // namespace kiln::ir
