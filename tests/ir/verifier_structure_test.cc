// Structural rules of the verifier: functions against their bodies,
// returns, values defined before use, calls, and the op table's coverage.
#include <gtest/gtest.h>

#include "ir/verify_internal.h"
#include "support/test_support.h"
#include "verifier_test_builder.h"

namespace kiln::ir {
namespace {

using testing::ModuleBuilder;
using testing::Scalar;
using testing::T;

const Type kF32 = Scalar(ElementType::kF32);
const Type kI32 = Scalar(ElementType::kI32);

bool MessageHas(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string_view::npos;
}

TEST(VerifierStructureTest, AcceptsFunctionReturningItsArgument) {
  ModuleBuilder b({kF32}, {kF32});
  b.Return({b.arg(0)});
  EXPECT_OK(b.Verify());
}

TEST(VerifierStructureTest, RejectsReturnOfWrongType) {
  ModuleBuilder b({kI32}, {kF32});
  b.Return({b.arg(0)});
  Status status = b.Verify();
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(MessageHas(status, "test.mlir:2:3: 'func.return' op"))
      << status.message();
  EXPECT_TRUE(MessageHas(status, "tensor<i32>")) << status.message();
}

TEST(VerifierStructureTest, RejectsReturnOfWrongArity) {
  ModuleBuilder b({kF32}, {kF32});
  b.Return({b.arg(0), b.arg(0)});
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status, "has 2 operands, but enclosing function"))
      << status.message();
}

TEST(VerifierStructureTest, RejectsEntryBlockNotMatchingSignature) {
  ModuleBuilder b({kF32}, {});
  b.body().AddArgument(kF32);
  b.Return({});
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status, "entry block must have 1 arguments"))
      << status.message();
}

TEST(VerifierStructureTest, RejectsBodyWithoutReturn) {
  ModuleBuilder b({kF32}, {kF32});
  b.Add("stablehlo.abs", {b.arg(0)}, {kF32});
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status, "must end with 'func.return'"))
      << status.message();
}

TEST(VerifierStructureTest, RejectsUseBeforeDefinition) {
  ModuleBuilder b({kF32}, {kF32});
  Operation* first = b.Add("stablehlo.abs", {b.arg(0)}, {kF32});
  Operation* second = b.Add("stablehlo.abs", {b.arg(0)}, {kF32});
  first->SetOperand(0, second->result(0));  // uses a later value
  b.Return({second->result(0)});
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status,
                         "test.mlir:2:3: 'stablehlo.abs' op operand "
                         "#0 does not dominate this use"))
      << status.message();
}

TEST(VerifierStructureTest, RejectsValueOfAnotherFunction) {
  ModuleBuilder b({kF32}, {kF32});
  b.Return({b.arg(0)});
  ModuleBuilder other({kF32}, {kF32});
  other.Return({b.arg(0)});  // a value that does not belong to `other`
  EXPECT_FALSE(other.Verify().ok());
}

TEST(VerifierStructureTest, RejectsTerminatorBeforeTheEnd) {
  ModuleBuilder b({kF32}, {kF32});
  b.Return({b.arg(0)});
  b.Return({b.arg(0)});
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status, "must be the last operation"))
      << status.message();
}

TEST(VerifierStructureTest, ChecksCallsAgainstTheCallee) {
  auto build = [](std::string callee, Type result) {
    auto b = std::make_unique<ModuleBuilder>(std::vector<Type>{kF32},
                                             std::vector<Type>{kF32});
    b->Add("func.call", {b->arg(0)}, {result},
           {{"callee", Attribute::SymbolRef(callee)}});
    b->Return({b->arg(0)});
    return b;
  };
  EXPECT_OK(build("main", kF32)->Verify());

  Status status = build("nonexistent", kF32)->Verify();
  EXPECT_TRUE(MessageHas(status,
                         "'nonexistent' does not reference a valid "
                         "function"))
      << status.message();

  status = build("main", kI32)->Verify();
  EXPECT_TRUE(MessageHas(status, "result type mismatch at index 0"))
      << status.message();
}

TEST(VerifierStructureTest, AcceptsUnknownOpsButVerifiesTheirRegions) {
  ModuleBuilder b({kF32}, {kF32});
  Operation* unknown = b.Add("sdy.manual_computation", {b.arg(0)}, {kF32});
  Block& inner = unknown->AddRegion().AddBlock();
  Value* x = inner.AddArgument(kF32);
  // An invalid stablehlo op inside the unknown op's region.
  b.Add("stablehlo.abs", {x}, {Scalar(ElementType::kF64)}, {}, &inner);
  b.Return({unknown->result(0)});
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status, "'stablehlo.abs' op inferred type(s)"))
      << status.message();
}

TEST(VerifierStructureTest, RejectsDuplicateFunctionNames) {
  ModuleBuilder b({}, {});
  b.Return({});
  auto copy = std::make_unique<Operation>("func.func", std::vector<Type>{});
  copy->SetAttr("sym_name", Attribute::String("main"));
  copy->SetAttr("function_type", Attribute::TypeAttr(Type::Function({}, {})));
  copy->SetAttr("sym_visibility", Attribute::String("private"));
  b.module().body().Append(std::move(copy));
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status, "redefinition of symbol named 'main'"))
      << status.message();
}

TEST(VerifierStructureTest, RejectsPublicDeclaration) {
  ModuleBuilder b({}, {});
  b.Return({});
  auto decl = std::make_unique<Operation>("func.func", std::vector<Type>{});
  decl->SetAttr("sym_name", Attribute::String("external"));
  decl->SetAttr("function_type",
                Attribute::TypeAttr(Type::Function({}, {kF32})));
  Operation* added = b.module().body().Append(std::move(decl));
  EXPECT_TRUE(MessageHas(b.Verify(), "cannot have public visibility"));
  added->SetAttr("sym_visibility", Attribute::String("private"));
  EXPECT_OK(b.Verify());
}

TEST(VerifierStructureTest, VerifyOperationAcceptsValuesFromOutside) {
  ModuleBuilder b({kF32}, {kF32});
  Operation* abs = b.Add("stablehlo.abs", {b.arg(0)}, {kF32});
  b.Return({abs->result(0)});
  EXPECT_OK(VerifyOperation(*abs));
  abs->SetResultTypes({kI32});
  EXPECT_FALSE(VerifyOperation(*abs).ok());
}

TEST(VerifierStructureTest, QuantizedElementRulesHoldAnywhere) {
  // 1e6 is beyond f16's largest value (quantized type C6), whoever uses it.
  Type bad_scale = testing::QT(
      {2}, testing::PerTensor(ElementType::kI8, 1e6, 0, ElementType::kF16));
  ModuleBuilder b({bad_scale}, {});
  b.Add("sdy.anything", {b.arg(0)}, {bad_scale});
  b.Return({});
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status,
                         "scale 1.000000e+06 out of expressed type "
                         "range"))
      << status.message();
}

TEST(VerifierStructureTest, QuantizedValueRulesHoldForStableHloOperands) {
  // zero point 300 is outside the i8 storage range (quantized type C8):
  // StableHLO ops reject such values, other dialects' ops may carry them.
  Type bad = testing::QT({2}, testing::PerTensor(ElementType::kI8, 1.0, 300));
  ModuleBuilder other({bad}, {});
  other.Add("sdy.anything", {other.arg(0)}, {bad});
  other.Return({});
  EXPECT_OK(other.Verify());

  ModuleBuilder b({bad}, {});
  b.Add("stablehlo.add", {b.arg(0), b.arg(0)}, {bad});
  b.Return({});
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status,
                         "test.mlir:2:3: 'stablehlo.add' op operand "
                         "#0 must be ranked tensor of"))
      << status.message();
}

TEST(VerifierStructureTest, EveryKnownOpHasAVerifier) {
  for (size_t i = 0; i < verifier::kNumOpCodes; ++i) {
    OpCode code = static_cast<OpCode>(i);
    EXPECT_TRUE(verifier::HasVerifier(code)) << OpCodeName(code);
  }
}

}  // namespace
}  // namespace kiln::ir
