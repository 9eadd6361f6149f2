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

// Runs `plan` once per participant, each on its own thread with a shared
// communicator; participant p's argument is `arguments[p]`.
struct LaunchResult {
  std::vector<Status> statuses;
  std::vector<std::vector<HostArray>> outputs;
};
LaunchResult Launch(
    const exec::Plan& plan,
    const std::vector<std::vector<HostArray>>& arguments,
    std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const int count = static_cast<int>(arguments.size());
  exec::Communicator communicator(count, timeout);
  LaunchResult result;
  result.statuses.resize(count);
  result.outputs.resize(count);
  std::vector<std::thread> threads;
  for (int p = 0; p < count; ++p) {
    threads.emplace_back([&, p] {
      exec::RunOptions run;
      run.communicator = &communicator;
      run.participant = p;
      auto outputs = RunPlan(plan, arguments[p], run);
      if (outputs.ok()) {
        result.outputs[p] = std::move(outputs).value();
      } else {
        result.statuses[p] = outputs.status();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return result;
}

// A ring over 4 partitions: each sends its two values to the next and
// receives the previous one's, twice on one channel (the second message is
// the first doubled), so the order of a channel's messages shows too.
constexpr char kSendRecvRing[] = R"(
func.func @main(%x: tensor<2xi32>, %y: tensor<f32>) -> (tensor<2xi32>, tensor<f32>, tensor<2xi32>) {
  %t0 = stablehlo.after_all : !stablehlo.token
  %t1 = "stablehlo.send"(%x, %y, %t0) {
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>,
      is_host_transfer = false,
      mhlo.frontend_attributes = {_xla_send_recv_source_target_pairs = "{{0,1},{1,2},{2,3},{3,0}}"}
    } : (tensor<2xi32>, tensor<f32>, !stablehlo.token) -> !stablehlo.token
  %x2 = stablehlo.add %x, %x : tensor<2xi32>
  %t2 = "stablehlo.send"(%x2, %y, %t1) {
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>,
      is_host_transfer = false,
      mhlo.frontend_attributes = {_xla_send_recv_source_target_pairs = "{{0,1},{1,2},{2,3},{3,0}}"}
    } : (tensor<2xi32>, tensor<f32>, !stablehlo.token) -> !stablehlo.token
  %a, %b, %t3 = "stablehlo.recv"(%t2) {
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>,
      is_host_transfer = false,
      mhlo.frontend_attributes = {_xla_send_recv_source_target_pairs = "{{0,1},{1,2},{2,3},{3,0}}"}
    } : (!stablehlo.token) -> (tensor<2xi32>, tensor<f32>, !stablehlo.token)
  %c, %d, %t4 = "stablehlo.recv"(%t3) {
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>,
      is_host_transfer = false,
      mhlo.frontend_attributes = {_xla_send_recv_source_target_pairs = "{{0,1},{1,2},{2,3},{3,0}}"}
    } : (!stablehlo.token) -> (tensor<2xi32>, tensor<f32>, !stablehlo.token)
  return %a, %b, %c : tensor<2xi32>, tensor<f32>, tensor<2xi32>
})";

std::vector<std::vector<HostArray>> RingArguments(int count) {
  std::vector<std::vector<HostArray>> arguments;
  for (int p = 0; p < count; ++p) {
    arguments.push_back(
        {HostArray::Of<int32_t>(ir::ElementType::kI32, {2},
                                {10 * p, 10 * p + 1}),
         HostArray::Of<float>(ir::ElementType::kF32, {}, {0.5f + p})});
  }
  return arguments;
}

TEST(ChannelPlansTest, SendAndRecvPassValuesAlongTheirPairsInOrder) {
  compile::CompileOptions options;
  options.position.num_partitions = 4;
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(kSendRecvRing, options));
  LaunchResult result = Launch(*plan, RingArguments(4));
  for (int p = 0; p < 4; ++p) {
    ASSERT_OK(result.statuses[p]);
    const int from = (p + 3) % 4;
    EXPECT_EQ(result.outputs[p][0].As<int32_t>(),
              (std::vector<int32_t>{10 * from, 10 * from + 1}))
        << p;
    EXPECT_EQ(result.outputs[p][1].As<float>(),
              (std::vector<float>{0.5f + from}))
        << p;
    EXPECT_EQ(result.outputs[p][2].As<int32_t>(),
              (std::vector<int32_t>{20 * from, 20 * from + 2}))
        << p;
  }
}

TEST(ChannelPlansTest, AParticipantWithoutASourceReceivesZeros) {
  std::string text = kSendRecvRing;
  const std::string ring = "{{0,1},{1,2},{2,3},{3,0}}";
  for (size_t at; (at = text.find(ring)) != std::string::npos;) {
    text.replace(at, ring.size(), "{{0,1},{1,2}}");
  }
  compile::CompileOptions options;
  options.position.num_partitions = 4;
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(text, options));
  LaunchResult result = Launch(*plan, RingArguments(4));
  for (int p = 0; p < 4; ++p) ASSERT_OK(result.statuses[p]);
  EXPECT_EQ(result.outputs[2][0].As<int32_t>(), (std::vector<int32_t>{10, 11}));
  EXPECT_EQ(result.outputs[0][0].As<int32_t>(), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(result.outputs[3][1].As<float>(), (std::vector<float>{0.0f}));
}

TEST(ChannelPlansTest, ARecvNobodySendsToFailsWhenThePeersFinish) {
  // Participant 1 receives from 0, which sends nothing and finishes (it has
  // no source, so it receives zeros): 1 fails at once instead of waiting
  // for the timeout.
  compile::CompileOptions options;
  options.position.num_partitions = 2;
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %t0 = stablehlo.after_all : !stablehlo.token
  %a, %t1 = "stablehlo.recv"(%t0) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      is_host_transfer = false,
      mhlo.frontend_attributes = {_xla_send_recv_source_target_pairs = "{{0,1}}"}
    } : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  return %a : tensor<2xi32>
})",
                                              options));
  auto start = std::chrono::steady_clock::now();
  LaunchResult result = Launch(
      *plan, {{HostArray::Of<int32_t>(ir::ElementType::kI32, {2}, {1, 2})},
              {HostArray::Of<int32_t>(ir::ElementType::kI32, {2}, {3, 4})}});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_OK(result.statuses[0]);
  EXPECT_EQ(result.outputs[0][0].As<int32_t>(), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(result.statuses[1].code(), StatusCode::kFailedPrecondition)
      << result.statuses[1].ToString();
  EXPECT_NE(result.statuses[1].message().find("channel 1: participant 1"),
            std::string::npos)
      << result.statuses[1].ToString();
}

TEST(ChannelPlansTest, ReceivesThatWaitForEachOtherEndAtTheTimeout) {
  // Each participant receives from the other before sending: a deadlock,
  // which ends at the communicator's timeout with DEADLINE_EXCEEDED.
  compile::CompileOptions options;
  options.position.num_partitions = 2;
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %t0 = stablehlo.after_all : !stablehlo.token
  %a, %t1 = "stablehlo.recv"(%t0) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      is_host_transfer = false,
      mhlo.frontend_attributes = {_xla_send_recv_source_target_pairs = "{{0,1},{1,0}}"}
    } : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  %t2 = "stablehlo.send"(%x, %t1) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      is_host_transfer = false,
      mhlo.frontend_attributes = {_xla_send_recv_source_target_pairs = "{{0,1},{1,0}}"}
    } : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
  return %a : tensor<2xi32>
})",
                                              options));
  LaunchResult result =
      Launch(*plan,
             {{HostArray::Of<int32_t>(ir::ElementType::kI32, {2}, {1, 2})},
              {HostArray::Of<int32_t>(ir::ElementType::kI32, {2}, {3, 4})}},
             std::chrono::milliseconds(300));
  int deadline = 0;
  for (const Status& status : result.statuses) {
    ASSERT_FALSE(status.ok());
    if (status.code() == StatusCode::kDeadlineExceeded) {
      ++deadline;
      EXPECT_NE(status.message().find("channel 1"), std::string::npos)
          << status.ToString();
    } else {
      EXPECT_EQ(status.code(), StatusCode::kAborted) << status.ToString();
    }
  }
  EXPECT_GE(deadline, 1);
}

TEST(ChannelPlansTest, MessagesOfAnotherSizeAreAnError) {
  compile::CompileOptions options;
  options.position.num_partitions = 2;
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(R"(
func.func @main(%x: tensor<2xi32>) -> tensor<3xi32> {
  %t0 = stablehlo.after_all : !stablehlo.token
  %t1 = "stablehlo.send"(%x, %t0) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      is_host_transfer = false} : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
  %a, %t2 = "stablehlo.recv"(%t1) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      is_host_transfer = false} : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
  return %a : tensor<3xi32>
})",
                                              options));
  LaunchResult result = Launch(
      *plan, {{HostArray::Of<int32_t>(ir::ElementType::kI32, {2}, {1, 2})},
              {HostArray::Of<int32_t>(ir::ElementType::kI32, {2}, {3, 4})}});
  int invalid = 0;
  for (const Status& status : result.statuses) {
    ASSERT_FALSE(status.ok());
    invalid += status.code() == StatusCode::kInvalidArgument;
  }
  EXPECT_GE(invalid, 1);
}

TEST(ChannelPlansTest, HostTransfersNeedTheOptionThatPairsThem) {
  constexpr char kHostSend[] = R"(
func.func @main(%x: tensor<2xi32>) -> !stablehlo.token {
  %t0 = stablehlo.after_all : !stablehlo.token
  %t1 = "stablehlo.send"(%x, %t0) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>,
      is_host_transfer = true} : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
  return %t1 : !stablehlo.token
})";
  auto refused = CompileText(kHostSend);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(refused.status().message().find("callbacks"), std::string::npos)
      << refused.status().ToString();
  compile::CompileOptions options;
  options.host_transfers_between_participants = true;
  EXPECT_OK(CompileText(kHostSend, options).status());
}

}  // namespace
}  // namespace kiln::testing
