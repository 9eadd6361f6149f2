// Elementwise and conversion ops: element types, shapes, inferred result
// types and the quantization rules of add.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "verifier_test_builder.h"

namespace kiln::ir {
namespace {

using testing::ModuleBuilder;
using testing::PerAxis;
using testing::PerTensor;
using testing::QT;
using testing::Scalar;
using testing::T;

bool MessageHas(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string_view::npos;
}

// Verifies `name(operands...) : results` with operands of `operand_types`.
Status VerifyOne(const std::string& name, std::vector<Type> operand_types,
                 std::vector<Type> result_types,
                 std::vector<NamedAttribute> attrs = {}) {
  ModuleBuilder b(operand_types, {});
  std::vector<Value*> operands;
  for (size_t i = 0; i < operand_types.size(); ++i) {
    operands.push_back(b.arg(i));
  }
  b.Add(name, operands, result_types, attrs);
  b.Return({});
  return b.Verify();
}

TEST(VerifierElementwiseTest, AcceptsBinaryOpsOnMatchingTypes) {
  Type t = T({2, 3}, ElementType::kF32);
  for (const char* name :
       {"stablehlo.add", "stablehlo.subtract", "stablehlo.multiply",
        "stablehlo.divide", "stablehlo.maximum", "stablehlo.power"}) {
    EXPECT_OK(VerifyOne(name, {t, t}, {t}));
  }
}

TEST(VerifierElementwiseTest, AcceptsDynamicDimensionsAgainstStaticOnes) {
  Type dynamic = T({kDynamic, 3}, ElementType::kF32);
  Type fixed = T({2, 3}, ElementType::kF32);
  EXPECT_OK(VerifyOne("stablehlo.add", {dynamic, fixed}, {dynamic}));
  EXPECT_OK(VerifyOne("stablehlo.add", {dynamic, dynamic}, {fixed}));
}

TEST(VerifierElementwiseTest, RejectsMismatchedShapes) {
  Status status = VerifyOne("stablehlo.add",
                            {T({1, kDynamic}, ElementType::kF32),
                             T({1, kDynamic}, ElementType::kF32)},
                            {T({2, 2}, ElementType::kF32)});
  EXPECT_TRUE(MessageHas(status,
                         "requires the same shape for all operands "
                         "and results"))
      << status.message();
}

TEST(VerifierElementwiseTest, RejectsMixedElementTypes) {
  Type f64 = T({kDynamic}, ElementType::kF64);
  Type f32 = T({kDynamic}, ElementType::kF32);
  Status status = VerifyOne("stablehlo.add", {f64, f32}, {f64});
  EXPECT_TRUE(MessageHas(status, "requires the same element type"))
      << status.message();
}

TEST(VerifierElementwiseTest, RejectsElementTypesTheOpDoesNotTake) {
  Type f32 = T({4}, ElementType::kF32);
  Type i32 = T({4}, ElementType::kI32);
  Status status = VerifyOne("stablehlo.or", {f32, f32}, {f32});
  EXPECT_TRUE(MessageHas(status,
                         "operand #0 must be ranked tensor of pred "
                         "or integer values, but got "
                         "'tensor<4xf32>'"))
      << status.message();
  EXPECT_FALSE(VerifyOne("stablehlo.floor", {i32}, {i32}).ok());
  EXPECT_FALSE(VerifyOne("stablehlo.popcnt", {f32}, {f32}).ok());
  EXPECT_OK(VerifyOne("stablehlo.popcnt", {i32}, {i32}));
}

TEST(VerifierElementwiseTest, RejectsStaticSizeAboveTheOperandsBound) {
  Type bounded = Type::Tensor({kDynamic}, Type::Element(ElementType::kF32),
                              Attribute::Bounds({4}));
  EXPECT_OK(VerifyOne("stablehlo.add", {bounded, bounded},
                      {T({3}, ElementType::kF32)}));
  Status status = VerifyOne("stablehlo.add", {bounded, bounded},
                            {T({5}, ElementType::kF32)});
  EXPECT_TRUE(MessageHas(status, "inferred type(s) 'tensor<?xf32, "))
      << status.message();
  EXPECT_TRUE(MessageHas(status,
                         "are incompatible with return type(s) of "
                         "operation 'tensor<5xf32>'"))
      << status.message();
}

TEST(VerifierElementwiseTest, AbsOfComplexIsReal) {
  Type c64 = T({2}, ElementType::kC64);
  EXPECT_OK(VerifyOne("stablehlo.abs", {c64}, {T({2}, ElementType::kF32)}));
  Status status =
      VerifyOne("stablehlo.abs", {c64}, {T({2}, ElementType::kF64)});
  EXPECT_TRUE(MessageHas(status, "inferred type(s) 'tensor<2xf32>'"))
      << status.message();
}

TEST(VerifierElementwiseTest, IsFiniteProducesPredicatesOfTheSameShape) {
  Type f32 = T({3}, ElementType::kF32);
  EXPECT_OK(
      VerifyOne("stablehlo.is_finite", {f32}, {T({3}, ElementType::kI1)}));
  EXPECT_FALSE(
      VerifyOne("stablehlo.is_finite", {f32}, {T({4}, ElementType::kI1)}).ok());
  EXPECT_FALSE(VerifyOne("stablehlo.is_finite", {T({3}, ElementType::kI32)},
                         {T({3}, ElementType::kI1)})
                   .ok());
}

TEST(VerifierElementwiseTest, ResultAccuracyToleranceOnlyInToleranceMode) {
  Type f32 = T({2}, ElementType::kF32);
  ResultAccuracy accuracy;
  accuracy.atol = 1.0;
  accuracy.mode = 2;  // TOLERANCE
  EXPECT_OK(VerifyOne(
      "stablehlo.exponential", {f32}, {f32},
      {{"result_accuracy", Attribute::ResultAccuracyAttr(accuracy)}}));
  accuracy.mode = 1;  // HIGHEST
  Status status =
      VerifyOne("stablehlo.exponential", {f32}, {f32},
                {{"result_accuracy", Attribute::ResultAccuracyAttr(accuracy)}});
  EXPECT_TRUE(MessageHas(status,
                         "Invalid tolerances for ResultAccuracyAttr "
                         "with mode HIGHEST, must be all zero."))
      << status.message();
}

TEST(VerifierElementwiseTest, AddQuantizationRules) {
  Type q17 = QT({1}, PerTensor(ElementType::kI8, 1.0, 17));
  Type q18 = QT({1}, PerTensor(ElementType::kI8, 2.0, 18));
  // Scales and zero points may differ between operands and result.
  EXPECT_OK(VerifyOne("stablehlo.add", {q17, q17}, {q18}));
  Status status =
      VerifyOne("stablehlo.add", {q17, q17}, {T({1}, ElementType::kF32)});
  EXPECT_TRUE(MessageHas(status, "either quantized or non-quantized"))
      << status.message();
  status = VerifyOne("stablehlo.add", {q17, q17},
                     {QT({1}, PerTensor(ElementType::kUI8, 1.0, 17))});
  EXPECT_TRUE(MessageHas(status, "quantization storage types"))
      << status.message();

  Type axis0 = QT({1, 2}, PerAxis(0, {1.0}, {17}));
  Type axis1 = QT({1, 2}, PerAxis(1, {1.0, 1.0}, {17, 17}));
  EXPECT_OK(VerifyOne("stablehlo.add", {axis0, axis0}, {axis0}));
  status = VerifyOne("stablehlo.add", {axis0, axis0}, {axis1});
  EXPECT_TRUE(MessageHas(status,
                         "quantization_dimension of lhs and result "
                         "are not same"))
      << status.message();
  // Other elementwise ops take per-tensor quantization only.
  EXPECT_FALSE(VerifyOne("stablehlo.multiply", {axis0, axis0}, {axis0}).ok());
}

TEST(VerifierElementwiseTest, CompareNeedsADirection) {
  Type f32 = T({3}, ElementType::kF32);
  Type pred = T({3}, ElementType::kI1);
  Attribute lt = Attribute::Enum(EnumKind::kComparisonDirection, kLT);
  EXPECT_OK(VerifyOne("stablehlo.compare", {f32, f32}, {pred},
                      {{"comparison_direction", lt}}));
  EXPECT_FALSE(VerifyOne("stablehlo.compare", {f32, f32}, {pred}).ok());
  EXPECT_FALSE(VerifyOne("stablehlo.compare", {f32, f32},
                         {T({4}, ElementType::kI1)},
                         {{"comparison_direction", lt}})
                   .ok());
}

TEST(VerifierElementwiseTest, SelectAndClampShapes) {
  Type pred = T({2, 3}, ElementType::kI1);
  Type f32 = T({2, 3}, ElementType::kF32);
  EXPECT_OK(VerifyOne("stablehlo.select", {pred, f32, f32}, {f32}));
  EXPECT_OK(VerifyOne("stablehlo.select", {Scalar(ElementType::kI1), f32, f32},
                      {f32}));
  Status status = VerifyOne("stablehlo.select",
                            {T({3}, ElementType::kI1), f32, f32}, {f32});
  EXPECT_TRUE(MessageHas(status, "requires the same shape for all operands"))
      << status.message();
  status = VerifyOne("stablehlo.select",
                     {pred, f32, T({2, 3}, ElementType::kI32)}, {f32});
  EXPECT_TRUE(MessageHas(status,
                         "requires compatible types for "
                         "non-predicate operands"))
      << status.message();

  Type one = T({1}, ElementType::kI32);
  Type two = T({2}, ElementType::kI32);
  status = VerifyOne("stablehlo.clamp", {two, one, one}, {one});
  EXPECT_TRUE(MessageHas(status,
                         "min shape [2] is not scalar and is not "
                         "compatible to operand shape [1]"))
      << status.message();
  EXPECT_OK(VerifyOne(
      "stablehlo.clamp",
      {Scalar(ElementType::kI32), one, Scalar(ElementType::kI32)}, {one}));
}

TEST(VerifierElementwiseTest, BitcastConvertWidths) {
  Type f64 = T({2}, ElementType::kF64);
  EXPECT_OK(VerifyOne("stablehlo.bitcast_convert", {f64},
                      {T({2, 2}, ElementType::kF32)}));
  Status status = VerifyOne("stablehlo.bitcast_convert", {f64},
                            {T({2, 4}, ElementType::kF32)});
  EXPECT_TRUE(MessageHas(status, "requires compatible bit widths"))
      << status.message();
  status = VerifyOne("stablehlo.bitcast_convert", {Scalar(ElementType::kF64)},
                     {Scalar(ElementType::kF32)});
  EXPECT_TRUE(MessageHas(status,
                         "rank of smaller element type (0) should be "
                         "1 more than rank of larger element type (0)"))
      << status.message();
  status =
      VerifyOne("stablehlo.bitcast_convert", {T({2, 4}, ElementType::kC64)},
                {T({2, 2}, ElementType::kF64)});
  EXPECT_TRUE(MessageHas(status, "cannot convert between real and complex"))
      << status.message();
  // Equal widths with different ranks (found by mutating corpus programs;
  // it used to read past the smaller shape).
  status = VerifyOne("stablehlo.bitcast_convert", {T({2}, ElementType::kI32)},
                     {Scalar(ElementType::kF32)});
  EXPECT_TRUE(MessageHas(status, "operand and result shapes must match"))
      << status.message();
}

TEST(VerifierElementwiseTest, ConstantTypeMustMatchItsValue) {
  auto constant = [](Attribute value, Type result) {
    ModuleBuilder b({}, {});
    b.Add("stablehlo.constant", {}, {result}, {{"value", value}});
    b.Return({});
    return b.Verify();
  };
  Attribute splat = testing::DenseI64({3}, {7, 7, 7});
  EXPECT_OK(constant(splat, T({3}, ElementType::kI64)));
  Status status = constant(splat, T({4}, ElementType::kI64));
  EXPECT_TRUE(MessageHas(status,
                         "'tensor<3xi64>' are incompatible with "
                         "return type(s) of operation "
                         "'tensor<4xi64>'"))
      << status.message();
  status = constant(splat, T({kDynamic}, ElementType::kI64));
  EXPECT_TRUE(MessageHas(status, "statically shaped")) << status.message();
}

TEST(VerifierElementwiseTest, IotaDimensionInRange) {
  auto iota = [](int64_t dim, Type result) {
    ModuleBuilder b({}, {});
    b.Add("stablehlo.iota", {}, {result},
          {{"iota_dimension", testing::I64(dim)}});
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(iota(0, T({4}, ElementType::kI32)));
  EXPECT_TRUE(MessageHas(iota(1, T({4}, ElementType::kI32)),
                         "iota dimension cannot go beyond the output rank"));
  EXPECT_TRUE(MessageHas(iota(0, Scalar(ElementType::kI32)),
                         "does not support scalars"));
  EXPECT_TRUE(MessageHas(iota(-1, T({4}, ElementType::kI32)),
                         "whose value is non-negative"));
}

TEST(VerifierElementwiseTest, UniformQuantizeKeepsTheExpressedType) {
  Type f32 = T({2}, ElementType::kF32);
  EXPECT_OK(VerifyOne("stablehlo.uniform_quantize", {f32},
                      {QT({2}, PerTensor(ElementType::kI8, 0.1, 0))}));
  Status status = VerifyOne(
      "stablehlo.uniform_quantize", {f32},
      {QT({2}, PerTensor(ElementType::kI8, 0.1, 0, ElementType::kF64))});
  EXPECT_TRUE(MessageHas(status,
                         "Expressed type of result expected to be "
                         "'f32', but got 'f64'"))
      << status.message();
}

}  // namespace
}  // namespace kiln::ir
