// The compile pipeline (compile/pipeline.h): its steps in order, what each
// leaves behind (read through stop_after, as `kiln print --stop-after`
// does), how many plans a program compiles to, and that Compile is the
// same steps over one program.
#include "compile/pipeline.h"

#include <gtest/gtest.h>

#include "parse/parse.h"
#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using compile::CompiledProgram;
using compile::PipelineOptions;
using compile::RunPipeline;

std::unique_ptr<ir::Module> Parse(std::string_view text) {
  auto module = parse::ParseModule(text, "pipeline.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(*module) : nullptr;
}

// Two arguments split in halves along their rows over two partitions.
constexpr char kSharded[] = R"(
func.func @main(%a: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]0,1}"},
                %b: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]0,1}"})
    -> (tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]0,1}"}) {
  %0 = stablehlo.add %a, %b : tensor<8x4xf32>
  %1 = stablehlo.exponential %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
})";

PipelineOptions TwoPartitions(std::string stop_after = "") {
  PipelineOptions options;
  options.num_partitions = 2;
  options.num_devices = 2;
  options.stop_after = std::move(stop_after);
  options.print_options.locations = false;
  return options;
}

TEST(PipelineTest, StepsAreInOrder) {
  std::vector<std::string_view> steps(std::begin(compile::kPipelineSteps),
                                      std::end(compile::kPipelineSteps));
  EXPECT_EQ(steps,
            (std::vector<std::string_view>{"verify", "partition", "layouts",
                                           "recover-erfc", "lower", "plan"}));
}

TEST(PipelineTest, UnknownStepIsRefused) {
  auto module = Parse(kSharded);
  ASSERT_NE(module, nullptr);
  auto compiled = RunPipeline(*module, TwoPartitions("fuse"));
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(compiled.status().message().find("no compile step named 'fuse'"),
            std::string_view::npos);
}

TEST(PipelineTest, VerifyStopsAnInvalidProgram) {
  // Parses (the generic form takes any types), but an add of f32 and i32
  // breaks StableHLO's rules.
  auto module = Parse(R"(
func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})");
  ASSERT_NE(module, nullptr);
  for (const char* stop : {"verify", "plan"}) {
    PipelineOptions options;
    options.stop_after = stop;
    auto compiled = RunPipeline(*module, options);
    ASSERT_FALSE(compiled.ok()) << stop;
    EXPECT_NE(compiled.status().message().find("stablehlo.add"),
              std::string_view::npos)
        << compiled.status().ToString();
  }
}

TEST(PipelineTest, PartitionLeavesEachPartitionItsTiles) {
  auto module = Parse(kSharded);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(CompiledProgram verified,
                       RunPipeline(*module, TwoPartitions("verify")));
  EXPECT_NE(verified.stopped_at.find("%arg0: tensor<8x4xf32>"),
            std::string::npos)
      << verified.stopped_at;
  ASSERT_OK_AND_ASSIGN(CompiledProgram partitioned,
                       RunPipeline(*module, TwoPartitions("partition")));
  EXPECT_TRUE(partitioned.partitioned);
  EXPECT_TRUE(partitioned.plans.empty());
  EXPECT_NE(partitioned.stopped_at.find("%arg0: tensor<4x4xf32>"),
            std::string::npos)
      << partitioned.stopped_at;
  EXPECT_EQ(partitioned.stopped_at.find("tensor<8x4xf32>"), std::string::npos)
      << partitioned.stopped_at;
  EXPECT_EQ(partitioned.parameter_shardings.size(), 2u);
  EXPECT_EQ(partitioned.output_shardings.size(), 1u);
}

TEST(PipelineTest, LayoutsRewriteTheEntryToPhysicalArrays) {
  // The argument arrives column-major: the program takes the row-major
  // array of its bytes (3x2) and transposes it to the 2x3 value it reads.
  auto module = Parse(R"(
func.func @main(%x: tensor<2x3xf32> {mhlo.layout_mode = "{0,1}"})
    -> tensor<2x3xf32> {
  %0 = stablehlo.negate %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
})");
  ASSERT_NE(module, nullptr);
  PipelineOptions options;
  options.stop_after = "partition";
  ASSERT_OK_AND_ASSIGN(CompiledProgram before, RunPipeline(*module, options));
  EXPECT_EQ(before.stopped_at.find("stablehlo.transpose"), std::string::npos)
      << before.stopped_at;
  options.stop_after = "layouts";
  ASSERT_OK_AND_ASSIGN(CompiledProgram after, RunPipeline(*module, options));
  EXPECT_NE(after.stopped_at.find("tensor<3x2xf32>"), std::string::npos)
      << after.stopped_at;
  EXPECT_NE(after.stopped_at.find("stablehlo.transpose"), std::string::npos)
      << after.stopped_at;
  ASSERT_EQ(after.memory_layouts.arguments.size(), 1u);
  EXPECT_EQ(after.memory_layouts.arguments[0], (std::vector<int64_t>{0, 1}));
}

TEST(PipelineTest, PlanPlacesWhatLowerLeft) {
  auto module = Parse(R"(
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = "stablehlo.sort"(%x) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %c = stablehlo.compare LT, %p, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<64xf32>) -> tensor<64xf32>
  %1 = stablehlo.sine %0 : tensor<64xf32>
  return %1 : tensor<64xf32>
})");
  ASSERT_NE(module, nullptr);
  PipelineOptions options;
  options.stop_after = "lower";
  ASSERT_OK_AND_ASSIGN(CompiledProgram lowered, RunPipeline(*module, options));
  EXPECT_NE(lowered.stopped_at.find("arena 0 bytes"), std::string::npos)
      << lowered.stopped_at;
  EXPECT_NE(lowered.stopped_at.find("stablehlo.sort"), std::string::npos);
  options.stop_after = "plan";
  ASSERT_OK_AND_ASSIGN(CompiledProgram planned, RunPipeline(*module, options));
  // The sorted values live in the arena between the two steps.
  EXPECT_NE(planned.stopped_at.find("arena 256 bytes"), std::string::npos)
      << planned.stopped_at;
  ASSERT_EQ(planned.plans.size(), 1u);
  EXPECT_EQ(planned.plans[0]->arena_bytes(), 256);
}

TEST(PipelineTest, OnePlanPerPositionOnlyWhereNeeded) {
  auto whole = Parse(R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %x : tensor<4xf32>
  return %0 : tensor<4xf32>
})");
  auto asks = Parse(R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %id = stablehlo.replica_id : tensor<ui32>
  %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %0 = stablehlo.add %x, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
})");
  auto sharded = Parse(kSharded);
  ASSERT_TRUE(whole && asks && sharded);
  PipelineOptions replicas;
  replicas.num_replicas = 4;
  replicas.num_devices = 4;
  ASSERT_OK_AND_ASSIGN(CompiledProgram one, RunPipeline(*whole, replicas));
  EXPECT_EQ(one.plans.size(), 1u);
  EXPECT_FALSE(one.partitioned);
  EXPECT_TRUE(one.partitioned_text.empty());
  ASSERT_OK_AND_ASSIGN(CompiledProgram each, RunPipeline(*asks, replicas));
  EXPECT_EQ(each.plans.size(), 4u);
  ASSERT_OK_AND_ASSIGN(CompiledProgram parts,
                       RunPipeline(*sharded, TwoPartitions()));
  EXPECT_EQ(parts.plans.size(), 2u);
  EXPECT_TRUE(parts.partitioned);
  EXPECT_NE(parts.partitioned_text.find("tensor<4x4xf32>"), std::string::npos);
  EXPECT_EQ(parts.partitioned_text.find("sdy."), std::string::npos);
  EXPECT_EQ(parts.partitioned_text.find("loc("), std::string::npos);
}

TEST(PipelineTest, CompileIsThePipelineOverOneProgram) {
  auto module = Parse(R"(
func.func @main(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %0 = stablehlo.multiply %x, %y : tensor<16xf32>
  %1 = stablehlo.reverse %0, dims = [0] : tensor<16xf32>
  %2 = stablehlo.tanh %1 : tensor<16xf32>
  return %2 : tensor<16xf32>
})");
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto alone, compile::Compile(*module));
  ASSERT_OK_AND_ASSIGN(CompiledProgram piped,
                       RunPipeline(*module, PipelineOptions{}));
  ASSERT_EQ(piped.plans.size(), 1u);
  EXPECT_EQ(exec::DescribePlan(*alone), exec::DescribePlan(*piped.plans[0]));
}

}  // namespace
}  // namespace kiln::testing
