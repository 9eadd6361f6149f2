// The elementwise op table (ir/elementwise_traits.h) as the layers read it:
// every row lowers, its arity is the op's, and its cost class is what the
// executable's cost analysis counts.
#include <gtest/gtest.h>

#include "compile/lowering.h"
#include "ir/elementwise_traits.h"
#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::OpCode;

TEST(OpTableTest, EveryRowLowers) {
  int rows = 0;
  for (int i = 0; i < static_cast<int>(OpCode::kUnknown); ++i) {
    OpCode code = static_cast<OpCode>(i);
    const ir::ElementwiseTraits* traits = ir::FindElementwiseTraits(code);
    if (traits == nullptr) continue;
    ++rows;
    EXPECT_EQ(traits->code, code);
    EXPECT_TRUE(traits->arity == 1 || traits->arity == 2)
        << ir::OpCodeName(code);
    const compile::LowerFn* lower = compile::FindLowering(code);
    EXPECT_TRUE(lower != nullptr && *lower) << ir::OpCodeName(code);
    // The verifier's own rows are StableHLO's ops.
    if (traits->spec_row) {
      EXPECT_EQ(ir::OpCodeName(code).substr(0, 10), "stablehlo.")
          << ir::OpCodeName(code);
    }
  }
  EXPECT_GE(rows, 60);
  EXPECT_EQ(ir::FindElementwiseTraits(OpCode::kReshape), nullptr);
  EXPECT_EQ(ir::FindElementwiseTraits(OpCode::kUnknown), nullptr);
}

TEST(OpTableTest, ArityAndCostAreTheOps) {
  struct Case {
    OpCode code;
    int arity;
    ir::OpCost cost;
  };
  for (const Case& c : {
           Case{OpCode::kAdd, 2, ir::OpCost::kArithmetic},
           Case{OpCode::kNegate, 1, ir::OpCost::kArithmetic},
           Case{OpCode::kExponential, 1, ir::OpCost::kTranscendental},
           Case{OpCode::kAtan2, 2, ir::OpCost::kTranscendental},
           Case{OpCode::kChloErfInv, 1, ir::OpCost::kTranscendental},
           Case{OpCode::kChloNextAfter, 2, ir::OpCost::kArithmetic},
       }) {
    const ir::ElementwiseTraits* traits = ir::FindElementwiseTraits(c.code);
    ASSERT_NE(traits, nullptr) << ir::OpCodeName(c.code);
    EXPECT_EQ(traits->arity, c.arity) << ir::OpCodeName(c.code);
    EXPECT_EQ(traits->cost, c.cost) << ir::OpCodeName(c.code);
  }
}

}  // namespace
}  // namespace kiln::testing
