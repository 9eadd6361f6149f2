// Every program the builder writes is valid StableHLO: Kiln's text parser
// reads it and the verifier accepts it. This includes the main job's
// training step.
#include <gtest/gtest.h>

#include <cmath>

#include "examples/mlp_model.h"
#include "ir/verifier.h"
#include "kiln/builder.h"
#include "parse/parse.h"
#include "sum_program.h"
#include "support/test_support.h"

namespace kiln::client {
namespace {

constexpr PJRT_Buffer_Type F32 = PJRT_Buffer_Type_F32;

void ExpectValidStablehlo(const std::string& text) {
  auto module = parse::ParseModule(text, "builder");
  ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  Status verified = ir::VerifyModule(**module);
  EXPECT_TRUE(verified.ok()) << verified.ToString() << "\n" << text;
}

TEST(BuilderParseTest, TrainingStepOfTheMainJobIsValid) {
  std::vector<int> donated;
  ASSERT_OK_AND_ASSIGN(std::string step,
                       examples::BuildTrainStep(0.1, &donated));
  EXPECT_EQ(donated, (std::vector<int>{0, 1, 2, 3}));
  ExpectValidStablehlo(step);
}

TEST(BuilderParseTest, SumProgramsAreValid) {
  ExpectValidStablehlo(testing::SumProgram({2, 3}, 2));
  ExpectValidStablehlo(testing::SumProgram({4}, 3, true));
  ExpectValidStablehlo(testing::SumProgram({1}, 1));
}

TEST(BuilderParseTest, EveryOpFormIsValid) {
  ProgramBuilder b("every_op");
  Value p = b.Parameter(Shape(F32, {2, 3}));
  Value i = b.Parameter(Shape(PJRT_Buffer_Type_S32, {2}));
  Value c =
      b.Constant(Shape(PJRT_Buffer_Type_S32, {2}), std::vector<double>{7, -1});
  Value negated = b.Negate(p);
  Value gt = b.Compare(p, negated, CompareDirection::kGt);
  Value exp = b.Exp(p);
  Value log = b.Log(p);
  Value selected = b.Select(gt, exp, log);
  Value scalar_pred = b.ConstantScalar(PJRT_Buffer_Type_PRED, 1);
  Value selected2 = b.Select(scalar_pred, selected, p);
  Value t = b.Transpose(b.Tanh(selected2), {1, 0});
  Value r = b.Reshape(t, {6});
  Value m = b.ReduceMax(b.Logistic(p), {1});
  Value converted = b.Convert(i * c, F32);
  Value iota = b.Iota(Shape(PJRT_Buffer_Type_S32, {3}), 0);
  Value lhs = b.Reshape(p, {1, 2, 3});
  Value rhs = b.Reshape(p, {1, 2, 3});
  Value batched = b.DotGeneral(lhs, rhs, DotDimensions{{0}, {0}, {2}, {2}});
  Value roots = b.Sqrt(b.Abs(p)) + b.Rsqrt(b.Abs(p));
  Value powered = b.Power(roots, b.Maximum(p, b.Minimum(p, p)));
  Value dense =
      b.Constant(Shape(F32, {2, 2}), std::vector<double>{1.5, -2, 1e-30, 3e30});
  Value infinity = b.ConstantScalar(F32, INFINITY);
  Value outputs[] = {r, m, converted, iota, batched, powered, dense, infinity};
  ASSERT_OK_AND_ASSIGN(std::string text, b.Build(outputs));
  ExpectValidStablehlo(text);
}

}  // namespace
}  // namespace kiln::client
