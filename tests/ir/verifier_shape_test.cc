// Data-movement ops: broadcasts, reshapes, transpose, concatenate, pad,
// slices and their inferred result types.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "verifier_test_builder.h"

namespace kiln::ir {
namespace {

using testing::I64;
using testing::I64s;
using testing::ModuleBuilder;
using testing::PerAxis;
using testing::QT;
using testing::Scalar;
using testing::T;

constexpr ElementType kF32 = ElementType::kF32;
constexpr ElementType kI32 = ElementType::kI32;

bool MessageHas(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string_view::npos;
}

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

TEST(VerifierShapeTest, BroadcastInDimDimensions) {
  Type in = T({1, 2}, kI32);
  Type out = T({1, 2, 2}, kI32);
  EXPECT_OK(VerifyOne("stablehlo.broadcast_in_dim", {in}, {out},
                      {{"broadcast_dimensions", I64s({1, 2})}}));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.broadcast_in_dim", {in}, {out},
                {{"broadcast_dimensions", I64s({1})}}),
      "broadcast_dimensions size (1) does not match operand rank (2)"));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.broadcast_in_dim", {in}, {out},
                {{"broadcast_dimensions", I64s({1, 3})}}),
      "broadcast_dimensions contains invalid value 3 for result with rank 3"));
  EXPECT_TRUE(MessageHas(VerifyOne("stablehlo.broadcast_in_dim", {in}, {out},
                                   {{"broadcast_dimensions", I64s({1, 1})}}),
                         "broadcast_dimensions should not have duplicates"));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.broadcast_in_dim", {T({3}, kI32)}, {out},
                {{"broadcast_dimensions", I64s({1})}}),
      "size of operand dimension 0 (3) is not equal to 1 or size of result "
      "dimension 1 (2)"));
  EXPECT_TRUE(MessageHas(VerifyOne("stablehlo.broadcast_in_dim", {in}, {out}),
                         "requires attribute 'broadcast_dimensions'"));
}

TEST(VerifierShapeTest, BroadcastInDimResultMustBeStaticOrSingleBounded) {
  Type bounded2 = Type::Tensor({2, kDynamic, kDynamic}, Type::Element(kF32),
                               Attribute::Bounds({kDynamic, 5, 5}));
  Type bounded1 = Type::Tensor({2, 1, kDynamic}, Type::Element(kF32),
                               Attribute::Bounds({kDynamic, kDynamic, 5}));
  Type in = Type::Tensor({1, kDynamic}, Type::Element(kF32),
                         Attribute::Bounds({kDynamic, 5}));
  EXPECT_OK(VerifyOne("stablehlo.broadcast_in_dim", {in}, {bounded1},
                      {{"broadcast_dimensions", I64s({1, 2})}}));
  EXPECT_TRUE(
      MessageHas(VerifyOne("stablehlo.broadcast_in_dim", {in}, {bounded2},
                           {{"broadcast_dimensions", I64s({1, 2})}}),
                 "statically shaped or single bounded dimension"));
}

TEST(VerifierShapeTest, BroadcastInDimPerAxisQuantizationFollowsTheData) {
  Type in = QT({1, 2, 2}, PerAxis(2, {0.1, 0.5}, {-30, -20}));
  Type good = QT({1, 2, 3, 2}, PerAxis(3, {0.1, 0.5}, {-30, -20}));
  Type wrong_axis = QT({1, 2, 3, 2}, PerAxis(2, {0.1, 0.5, 0.1}, {0, 0, 0}));
  EXPECT_OK(VerifyOne("stablehlo.broadcast_in_dim", {in}, {good},
                      {{"broadcast_dimensions", I64s({0, 1, 3})}}));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.broadcast_in_dim", {in}, {wrong_axis},
                {{"broadcast_dimensions", I64s({0, 1, 3})}}),
      "result quantization_dimension 2 not same as broadcast_dimensions[2] = "
      "3"));
}

TEST(VerifierShapeTest, ReshapeKeepsTheElementCount) {
  EXPECT_OK(VerifyOne("stablehlo.reshape", {T({2, 4}, kF32)}, {T({8}, kF32)}));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.reshape", {T({2, 4}, kF32)}, {T({9}, kF32)}),
      "number of output elements (9) doesn't match "
      "expected number of elements (8)"));
}

TEST(VerifierShapeTest, TransposeInfersItsShape) {
  Type in = T({1, 2, 3, 4}, kI32);
  Attribute permutation = I64s({1, 0, 3, 2});
  EXPECT_OK(VerifyOne("stablehlo.transpose", {in}, {T({2, 1, 4, 3}, kI32)},
                      {{"permutation", permutation}}));
  EXPECT_TRUE(
      MessageHas(VerifyOne("stablehlo.transpose", {in}, {T({2, 1, 3, 4}, kI32)},
                           {{"permutation", permutation}}),
                 "inferred type(s) 'tensor<2x1x4x3xi32>' are incompatible"));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.transpose", {in}, {T({2, 1, 4, 3}, kI32)},
                {{"permutation", I64s({1, 0, 3, 9})}}),
      "attribute permutation must be a permutation of [0, 1, 2, 3] but got "
      "1, 0, 3, 9"));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.transpose", {in}, {in},
                {{"permutation", I64s({0})}}),
      "TransposeOp operand rank 4 does not match permutation size 1"));
}

TEST(VerifierShapeTest, ConcatenateAddsTheConcatDimension) {
  Type a = T({1, 3}, kI32);
  Type b = T({2, 3}, kI32);
  EXPECT_OK(VerifyOne("stablehlo.concatenate", {a, b}, {T({3, 3}, kI32)},
                      {{"dimension", I64(0)}}));
  EXPECT_OK(VerifyOne("stablehlo.concatenate", {a, T({kDynamic, 3}, kI32)},
                      {T({kDynamic, 3}, kI32)}, {{"dimension", I64(0)}}));
  EXPECT_TRUE(MessageHas(VerifyOne("stablehlo.concatenate", {a, b},
                                   {T({4, 3}, kI32)}, {{"dimension", I64(0)}}),
                         "inferred type(s) 'tensor<3x3xi32>'"));
  EXPECT_TRUE(MessageHas(VerifyOne("stablehlo.concatenate", {a, b},
                                   {T({3, 3}, kI32)}, {{"dimension", I64(1)}}),
                         "are not compatible at non-concat index 0"));
  EXPECT_TRUE(MessageHas(VerifyOne("stablehlo.concatenate", {a, b},
                                   {T({3, 3}, kI32)}, {{"dimension", I64(10)}}),
                         "dimension 10 is out-of-bounds for input rank 2"));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.concatenate", {}, {a}, {{"dimension", I64(0)}}),
      "expected 1 or more operands, but found 0"));
}

TEST(VerifierShapeTest, PadComputesTheResultShape) {
  Type in = T({1, 2, 3}, ElementType::kF16);
  Type pad_value = Scalar(ElementType::kF16);
  auto pad = [&](std::vector<int64_t> low, std::vector<int64_t> high,
                 std::vector<int64_t> interior, Type result) {
    return VerifyOne("stablehlo.pad", {in, pad_value}, {result},
                     {{"edge_padding_low", I64s(low)},
                      {"edge_padding_high", I64s(high)},
                      {"interior_padding", I64s(interior)}});
  };
  // dim 2: 0 + 3 + 2*1 + 2 = 7
  EXPECT_OK(
      pad({0, 1, 0}, {1, 1, 2}, {0, 0, 1}, T({2, 4, 7}, ElementType::kF16)));
  EXPECT_TRUE(MessageHas(
      pad({0, 1, 0}, {1, 1, 2}, {0, 0, 1}, T({8, 8, 8}, ElementType::kF16)),
      "inferred type(s) 'tensor<2x4x7xf16>'"));
  EXPECT_TRUE(MessageHas(
      pad({0, 0, -4}, {0, 0, 0}, {0, 0, 0}, T({1, 2, 3}, ElementType::kF16)),
      "Padding result in negative size for dimension 2"));
  EXPECT_TRUE(MessageHas(
      pad({0, 0, 0}, {0, 0, 0}, {0, 0, -1}, T({1, 2, 3}, ElementType::kF16)),
      "Interior padding cannot be negative: -1"));
  EXPECT_TRUE(MessageHas(
      pad({0, 0}, {0, 0, 0}, {0, 0, 0}, T({1, 2, 3}, ElementType::kF16)),
      "edge_padding_low length (2) must match operand rank "
      "(3)"));
  // Absurd paddings are reported, not overflowed.
  EXPECT_FALSE(pad({INT64_MAX, 0, 0}, {INT64_MAX, 0, 0}, {0, 0, 0},
                   T({1, 2, 3}, ElementType::kF16))
                   .ok());
}

TEST(VerifierShapeTest, SliceBoundsAndStrides) {
  Type in = T({3, 4}, kI32);
  auto slice = [&](std::vector<int64_t> start, std::vector<int64_t> limit,
                   std::vector<int64_t> strides, Type result) {
    return VerifyOne("stablehlo.slice", {in}, {result},
                     {{"start_indices", I64s(start)},
                      {"limit_indices", I64s(limit)},
                      {"strides", I64s(strides)}});
  };
  // ceil((3-1)/2) = 1, ceil((4-0)/3) = 2
  EXPECT_OK(slice({1, 0}, {3, 4}, {2, 3}, T({1, 2}, kI32)));
  EXPECT_TRUE(MessageHas(slice({1, 0}, {3, 4}, {2, 3}, T({2, 2}, kI32)),
                         "inferred type(s) 'tensor<1x2xi32>'"));
  EXPECT_TRUE(MessageHas(slice({-1, 0}, {3, 4}, {1, 1}, T({4, 4}, kI32)),
                         "negative start index -1 in dimension 0"));
  EXPECT_TRUE(MessageHas(slice({0, 0}, {3, 5}, {1, 1}, T({3, 5}, kI32)),
                         "limit index 5 is larger than dimension size 4 in "
                         "dimension 1"));
  EXPECT_TRUE(MessageHas(slice({0, 3}, {3, 2}, {1, 1}, T({3, 0}, kI32)),
                         "start index 3 is larger than limit index 2"));
  EXPECT_TRUE(MessageHas(slice({0, 0}, {3, 4}, {0, 1}, T({3, 4}, kI32)),
                         "stride must be positive but got 0 in dimension 0"));
}

TEST(VerifierShapeTest, DynamicSliceAndUpdate) {
  Type operand = T({3, 4}, kI32);
  Type index = Scalar(kI32);
  EXPECT_OK(VerifyOne("stablehlo.dynamic_slice", {operand, index, index},
                      {T({1, 4}, kI32)}, {{"slice_sizes", I64s({1, 4})}}));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.dynamic_slice", {operand, index, index},
                {T({1, 10}, kI32)}, {{"slice_sizes", I64s({1, 10})}}),
      "has slice size 10 greater than dimension size 4 in dimension 1"));
  EXPECT_TRUE(
      MessageHas(VerifyOne("stablehlo.dynamic_slice",
                           {operand, index, Scalar(ElementType::kI64)},
                           {T({1, 4}, kI32)}, {{"slice_sizes", I64s({1, 4})}}),
                 "start indices must have same element type"));
  EXPECT_OK(VerifyOne("stablehlo.dynamic_update_slice",
                      {operand, T({1, 4}, kI32), index, index}, {operand}));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.dynamic_update_slice",
                {operand, T({1, 5}, kI32), index, index}, {operand}),
      "expects size at dimension 1 of update to be in range [0, 4]. Got: 5."));
}

TEST(VerifierShapeTest, DimensionSizeOps) {
  Type operand = T({2, 3, 4}, kF32);
  EXPECT_OK(VerifyOne("stablehlo.get_dimension_size", {operand}, {Scalar(kI32)},
                      {{"dimension", I64(2)}}));
  EXPECT_TRUE(
      MessageHas(VerifyOne("stablehlo.get_dimension_size", {operand},
                           {Scalar(kI32)}, {{"dimension", I64(3)}}),
                 "requires dimension attribute in range [0, 3); found (3)"));
  EXPECT_TRUE(MessageHas(VerifyOne("stablehlo.get_dimension_size", {operand},
                                   {Scalar(kI32)}, {{"dimension", I64(-1)}}),
                         "whose value is non-negative"));
  // A non-constant size makes the dimension dynamic, bounded by the old one.
  Type bounded = Type::Tensor({2, 3, kDynamic}, Type::Element(kF32),
                              Attribute::Bounds({kDynamic, kDynamic, 4}));
  EXPECT_OK(VerifyOne("stablehlo.set_dimension_size", {operand, Scalar(kI32)},
                      {bounded}, {{"dimension", I64(2)}}));
  EXPECT_TRUE(MessageHas(
      VerifyOne("stablehlo.set_dimension_size", {operand, T({1}, kI32)},
                {bounded}, {{"dimension", I64(2)}}),
      "size operand should be of rank-0"));
}

TEST(VerifierShapeTest, WrongAttributeKindsAreErrorsNotCrashes) {
  Type in = T({1, 2}, kI32);
  Type out = T({1, 2}, kI32);
  for (Attribute bad :
       {Attribute::String("0, 1"), Attribute::Bool(true), I64(3),
        Attribute::DenseFloatArray(ElementType::kF32, {0, 1})}) {
    EXPECT_FALSE(
        VerifyOne("stablehlo.transpose", {in}, {out}, {{"permutation", bad}})
            .ok());
    EXPECT_FALSE(VerifyOne("stablehlo.broadcast_in_dim", {in}, {out},
                           {{"broadcast_dimensions", bad}})
                     .ok());
  }
  EXPECT_FALSE(VerifyOne("stablehlo.concatenate", {in, in}, {T({2, 2}, kI32)},
                         {{"dimension", Attribute::String("0")}})
                   .ok());
  // Operands that are not tensors are reported, whatever the op reads.
  EXPECT_FALSE(VerifyOne("stablehlo.transpose", {Type::Token()}, {out},
                         {{"permutation", I64s({1, 0})}})
                   .ok());
  EXPECT_FALSE(VerifyOne("stablehlo.reshape", {in}, {Type::Token()}).ok());
}

}  // namespace
}  // namespace kiln::ir
