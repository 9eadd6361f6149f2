// Collective plans run through exec::Execute with a shared communicator,
// one thread per participant: what a participant's failure does to its
// peers.
#include <gtest/gtest.h>

#include <thread>

#include "compile/program_runner.h"
#include "exec/collectives.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

constexpr char kAllReduce[] = R"(
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
})";

TEST(CollectivePlansTest, AFailingParticipantMakesItsPeersFailNotHang) {
  compile::CompileOptions options;
  options.position.num_replicas = 3;
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(kAllReduce, options));
  EXPECT_EQ(plan->num_collectives(), 1);
  // Participant 2 fails before its collective (a null argument); 0 and 1
  // wait for it and must fail at once, naming it, well before the timeout.
  exec::Communicator communicator(3, std::chrono::seconds(60));
  std::vector<float> values(8, 1.0f);
  std::vector<Status> statuses(3);
  std::vector<std::thread> threads;
  auto start = std::chrono::steady_clock::now();
  for (int p = 0; p < 3; ++p) {
    threads.emplace_back([&, p] {
      std::vector<const void*> arguments = {p == 2 ? nullptr : values.data()};
      exec::OwningOutputAllocator allocator;
      exec::RunOptions run;
      run.communicator = &communicator;
      run.participant = p;
      statuses[p] = exec::Execute(*plan, arguments, allocator, run).status();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(statuses[2].code(), StatusCode::kInvalidArgument);
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(statuses[p].code(), StatusCode::kAborted) << p;
    EXPECT_NE(statuses[p].message().find("stablehlo.all_reduce"),
              std::string::npos)
        << statuses[p].ToString();
    EXPECT_NE(statuses[p].message().find("participant 2 failed"),
              std::string::npos)
        << statuses[p].ToString();
    EXPECT_NE(statuses[p].message().find("is null"), std::string::npos)
        << statuses[p].ToString();
  }
}

TEST(CollectivePlansTest, ARunWithoutPeersRefusesAMultiParticipantGroup) {
  compile::CompileOptions options;
  options.position.num_replicas = 3;
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(kAllReduce, options));
  auto result = RunPlan(*plan, {HostArray::Of<float>(ir::ElementType::kF32, {8},
                                                     std::vector<float>(8))});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(result.status().message().find("no peers"), std::string::npos)
      << result.status().ToString();
}

TEST(CollectivePlansTest, OneParticipantCollectivesAreCopies) {
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %r = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xi32>) -> tensor<2xi32>
  return %r : tensor<2xi32>
})"));
  EXPECT_EQ(plan->num_collectives(), 0);
  ASSERT_OK_AND_ASSIGN(
      auto outputs, RunPlan(*plan, {HostArray::Of<int32_t>(
                                       ir::ElementType::kI32, {2}, {4, 5})}));
  EXPECT_EQ(outputs[0].As<int32_t>(), (std::vector<int32_t>{4, 5}));
}

}  // namespace
}  // namespace kiln::testing
