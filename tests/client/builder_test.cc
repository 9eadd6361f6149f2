// ProgramBuilder: the StableHLO text of each op and the shape checks.
#include "kiln/builder.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace kiln::client {
namespace {

constexpr PJRT_Buffer_Type F32 = PJRT_Buffer_Type_F32;
constexpr PJRT_Buffer_Type S32 = PJRT_Buffer_Type_S32;

TEST(BuilderTest, WritesAnAffineProgramInStablehloPrettyForm) {
  ProgramBuilder b("affine");
  Value x = b.Parameter(Shape(F32, {4, 8}));
  Value w = b.Parameter(Shape(F32, {8, 2}));
  Value bias = b.Parameter(Shape(F32, {2}));
  // One op per statement: C++ leaves the order of evaluating arguments
  // open, and the text follows the order ops are added.
  Value product = b.Dot(x, w);
  Value broadcast = b.Broadcast(bias, {4, 2});
  Value y = product + broadcast;
  Value zero = b.ConstantSplat(Shape(F32, {4, 2}), 0);
  Value relu = b.Maximum(y, zero);
  Value total = b.ReduceSum(relu, {0, 1});
  Value outputs[] = {relu, total};
  ASSERT_OK_AND_ASSIGN(std::string text, b.Build(outputs));
  EXPECT_EQ(text,
            "module @affine {\n"
            "  func.func public @main(%arg0: tensor<4x8xf32>, "
            "%arg1: tensor<8x2xf32>, %arg2: tensor<2xf32>) -> "
            "(tensor<4x2xf32>, tensor<f32>) {\n"
            "    %0 = stablehlo.dot_general %arg0, %arg1, "
            "contracting_dims = [1] x [0] : (tensor<4x8xf32>, "
            "tensor<8x2xf32>) -> tensor<4x2xf32>\n"
            "    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : "
            "(tensor<2xf32>) -> tensor<4x2xf32>\n"
            "    %2 = stablehlo.add %0, %1 : tensor<4x2xf32>\n"
            "    %3 = stablehlo.constant dense<0.000000000e+00> : "
            "tensor<4x2xf32>\n"
            "    %4 = stablehlo.maximum %2, %3 : tensor<4x2xf32>\n"
            "    %5 = stablehlo.constant dense<0.000000000e+00> : tensor<f32>\n"
            "    %6 = stablehlo.reduce(%4 init: %5) applies stablehlo.add "
            "across dimensions = [0, 1] : (tensor<4x2xf32>, tensor<f32>) -> "
            "tensor<f32>\n"
            "    return %4, %6 : tensor<4x2xf32>, tensor<f32>\n"
            "  }\n"
            "}\n");
}

TEST(BuilderTest, WritesEveryOtherOpForm) {
  ProgramBuilder b;
  Value p = b.Parameter(Shape(F32, {2, 3}));
  Value i = b.Parameter(Shape(S32, {2}));
  Value c = b.Constant(Shape(S32, {2}), std::vector<double>{7, -1});
  Value negated = b.Negate(p);
  Value gt = b.Compare(p, negated, CompareDirection::kGt);
  Value exp = b.Exp(p);
  Value log = b.Log(p);
  Value selected = b.Select(gt, exp, log);
  Value t = b.Transpose(b.Tanh(selected), {1, 0});
  Value r = b.Reshape(t, {6});
  Value m = b.ReduceMax(b.Logistic(p), {1});
  Value converted = b.Convert(i * c, F32);
  Value iota = b.Iota(Shape(S32, {3}), 0);
  Value lhs = b.Reshape(p, {1, 2, 3});
  Value rhs = b.Reshape(p, {1, 2, 3});
  Value batched = b.DotGeneral(lhs, rhs, DotDimensions{{0}, {0}, {2}, {2}});
  Value outputs[] = {r, m, converted, iota, batched};
  ASSERT_OK_AND_ASSIGN(std::string text, b.Build(outputs));
  const char* expected_lines[] = {
      "module @main {",
      "%0 = stablehlo.constant dense<[7, -1]> : tensor<2xi32>",
      "%1 = stablehlo.negate %arg0 : tensor<2x3xf32>",
      "%2 = stablehlo.compare  GT, %arg0, %1,  FLOAT : (tensor<2x3xf32>, "
      "tensor<2x3xf32>) -> tensor<2x3xi1>",
      "%3 = stablehlo.exponential %arg0 : tensor<2x3xf32>",
      "%4 = stablehlo.log %arg0 : tensor<2x3xf32>",
      "%5 = stablehlo.select %2, %3, %4 : tensor<2x3xi1>, tensor<2x3xf32>",
      "%6 = stablehlo.tanh %5 : tensor<2x3xf32>",
      "%7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<2x3xf32>) -> "
      "tensor<3x2xf32>",
      "%8 = stablehlo.reshape %7 : (tensor<3x2xf32>) -> tensor<6xf32>",
      "%9 = stablehlo.logistic %arg0 : tensor<2x3xf32>",
      "%10 = stablehlo.constant dense<0xFF800000> : tensor<f32>",
      "%11 = stablehlo.reduce(%9 init: %10) applies stablehlo.maximum across "
      "dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>",
      "%12 = stablehlo.multiply %arg1, %0 : tensor<2xi32>",
      "%13 = stablehlo.convert %12 : (tensor<2xi32>) -> tensor<2xf32>",
      "%14 = stablehlo.iota dim = 0 : tensor<3xi32>",
      "%17 = stablehlo.dot_general %15, %16, batching_dims = [0] x [0], "
      "contracting_dims = [2] x [2] : (tensor<1x2x3xf32>, "
      "tensor<1x2x3xf32>) -> tensor<1x2x2xf32>",
      "return %8, %11, %13, %14, %17 : tensor<6xf32>, tensor<2xf32>, "
      "tensor<2xf32>, tensor<3xi32>, tensor<1x2x2xf32>",
  };
  for (const char* line : expected_lines) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST(BuilderTest, DonationBecomesAnAliasingAttribute) {
  ProgramBuilder b("step");
  Value w = b.Parameter(Shape(F32, {3}));
  Value g = b.Parameter(Shape(F32, {3}));
  Value updated = w - g;
  b.Donate(w, 0);
  EXPECT_EQ(b.donated_parameters(), std::vector<int>{0});
  Value outputs[] = {updated};
  ASSERT_OK_AND_ASSIGN(std::string text, b.Build(outputs));
  EXPECT_NE(text.find("@main(%arg0: tensor<3xf32> {tf.aliasing_output = 0 : "
                      "i32}, %arg1: tensor<3xf32>)"),
            std::string::npos)
      << text;
}

TEST(BuilderTest, KeepsTheFirstShapeErrorAndNamesTheShapes) {
  ProgramBuilder b;
  Value a = b.Parameter(Shape(F32, {4}));
  Value c = b.Parameter(Shape(F32, {5}));
  Value bad = a + c;
  EXPECT_FALSE(bad.valid());
  Value later = b.Dot(a, c);  // fails quietly after the first error
  EXPECT_FALSE(later.valid());
  Value outputs[] = {a};
  auto built = b.Build(outputs);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(built.status().message(),
            "stablehlo.add: operand shapes f32[4] and f32[5] differ");
}

TEST(BuilderTest, RejectsInvalidOperations) {
  auto error_of = [](auto build) {
    ProgramBuilder b;
    Value x = b.Parameter(Shape(F32, {2, 3}));
    build(b, x);
    return std::string(b.status().message());
  };
  EXPECT_NE(error_of([](ProgramBuilder& b, Value x) {
              b.Dot(x, x);
            }).find("contracting dimension 0 has size 3"),
            std::string::npos);
  EXPECT_NE(error_of([](ProgramBuilder& b, Value x) {
              b.Reshape(x, {5});
            }).find("has 6 elements"),
            std::string::npos);
  EXPECT_NE(error_of([](ProgramBuilder& b, Value x) {
              b.Transpose(x, {0, 0});
            }).find("repeats dimension 0"),
            std::string::npos);
  EXPECT_NE(error_of([](ProgramBuilder& b, Value x) {
              b.BroadcastInDim(x, {2, 4}, {0, 1});
            }).find("cannot broadcast"),
            std::string::npos);
  EXPECT_NE(error_of([](ProgramBuilder& b, Value x) {
              b.ReduceSum(x, {2});
            }).find("out of range for rank 2"),
            std::string::npos);
  EXPECT_NE(error_of([](ProgramBuilder& b, Value x) {
              b.Exp(b.Convert(x, S32));
            }).find("needs a floating-point operand"),
            std::string::npos);
  EXPECT_NE(error_of([](ProgramBuilder& b, Value x) {
              b.ConstantScalar(S32, 2.5);
            }).find("not an integer"),
            std::string::npos);
  EXPECT_NE(error_of([](ProgramBuilder& b, Value x) {
              b.ConstantScalar(PJRT_Buffer_Type_S8, 300);
            }).find("does not fit i8"),
            std::string::npos);
  EXPECT_NE(error_of([](ProgramBuilder& b, Value x) {
              b.Parameter(Shape(F32, {-3}));
            }).find("negative"),
            std::string::npos);
  EXPECT_NE(error_of([](ProgramBuilder& b, Value x) {
              ProgramBuilder other;
              Value y = other.Parameter(Shape(F32, {2, 3}));
              b.Add(x, y);
            }).find("another ProgramBuilder"),
            std::string::npos);
}

TEST(BuilderTest, DonationMustMatchTheOutputShape) {
  ProgramBuilder b;
  Value w = b.Parameter(Shape(F32, {3}));
  Value s = b.ReduceSum(w, {0});
  b.Donate(w, 0);
  Value outputs[] = {s};
  auto built = b.Build(outputs);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("of another shape"),
            std::string_view::npos);
  Value none[] = {w};
  ProgramBuilder c;
  c.Donate(c.Parameter(Shape(F32, {1})), 3);
  Value x = c.Parameter(Shape(F32, {1}));
  Value one[] = {x};
  EXPECT_FALSE(c.Build(one).ok());
  (void)none;
}

}  // namespace
}  // namespace kiln::client
