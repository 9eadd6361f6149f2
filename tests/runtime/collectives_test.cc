// Collectives across the devices of one launch, through the runtime: every
// collective on 1, 2, 4 and 8 devices against expectations computed here
// with plain loops, the process-group modes, loops, failures, timeouts and
// launches queued back to back.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "launch_test_support.h"
#include "runtime/client.h"
#include "runtime/device.h"
#include "runtime/executable.h"
#include "runtime/transfer.h"
#include "support/test_support.h"

namespace kiln::runtime {
namespace {

std::string Replace(std::string text, const std::string& from,
                    const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// "[[0, 1, 2, 3]]": one group of all `n` ids.
std::string AllIds(int n) {
  std::string text = "[[";
  for (int i = 0; i < n; ++i) text += (i ? ", " : "") + std::to_string(i);
  return text + "]]";
}

using CollectivesTest = LaunchTest;

constexpr char kAllReduceSum[] = R"(
func.func @main(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<GROUPS> : tensor<1xNxi64>} : (tensor<1000xf32>) -> tensor<1000xf32>
  return %r : tensor<1000xf32>
})";

TEST_F(CollectivesTest, AllReduceSumsOnOneToEightDevices) {
  for (int n : {1, 2, 4, 8}) {
    SCOPED_TRACE(n);
    std::string text = Replace(Replace(kAllReduceSum, "GROUPS", AllIds(n)),
                               "xNx", "x" + std::to_string(n) + "x");
    ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, n));
    EXPECT_EQ(executable->has_collectives(), n > 1);
    std::vector<std::vector<std::vector<float>>> inputs(n);
    std::vector<float> expected(1000, 0);
    for (int p = 0; p < n; ++p) {
      std::vector<float> x(1000);
      for (int i = 0; i < 1000; ++i) x[i] = static_cast<float>(p * 1000 + i);
      for (int i = 0; i < 1000; ++i) expected[i] += x[i];
      inputs[p] = {x};
    }
    ASSERT_OK_AND_ASSIGN(auto outputs, Launch(*executable, inputs));
    for (int p = 0; p < n; ++p) EXPECT_EQ(outputs[p][0], expected) << p;
  }
}

// A region the kernels do not know (two ops): called per element.
constexpr char kAllReduceGeneric[] = R"(
func.func @main(%x: tensor<37xi32>) -> tensor<37xi32> {
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %m = stablehlo.maximum %a, %b : tensor<i32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %s = stablehlo.multiply %m, %one : tensor<i32>
      stablehlo.return %s : tensor<i32>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<37xi32>) -> tensor<37xi32>
  return %r : tensor<37xi32>
})";

TEST_F(CollectivesTest, AllReduceRunsAnyReductionRegion) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(kAllReduceGeneric, 4));
  std::vector<std::vector<std::vector<int32_t>>> inputs(4);
  std::vector<int32_t> expected(37, INT32_MIN);
  for (int p = 0; p < 4; ++p) {
    std::vector<int32_t> x(37);
    for (int i = 0; i < 37; ++i) x[i] = (i * 7 + p * 13) % 29 - 10;
    for (int i = 0; i < 37; ++i) expected[i] = std::max(expected[i], x[i]);
    inputs[p] = {x};
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch(*executable, inputs));
  for (int p = 0; p < 4; ++p) EXPECT_EQ(outputs[p][0], expected) << p;
}

constexpr char kAllGather[] = R"(
func.func @main(%x: tensor<2x3xi32>) -> tensor<2xMxi32> {
  %r = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64,
      replica_groups = dense<GROUPS> : tensor<1xNxi64>} : (tensor<2x3xi32>) -> tensor<2xMxi32>
  return %r : tensor<2xMxi32>
})";

TEST_F(CollectivesTest, AllGatherConcatenatesInGroupOrder) {
  for (int n : {1, 2, 4, 8}) {
    SCOPED_TRACE(n);
    std::string text = Replace(Replace(Replace(kAllGather, "GROUPS", AllIds(n)),
                                       "xNx", "x" + std::to_string(n) + "x"),
                               "xMx", "x" + std::to_string(3 * n) + "x");
    ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, n));
    std::vector<std::vector<std::vector<int32_t>>> inputs(n);
    for (int p = 0; p < n; ++p) {
      std::vector<int32_t> x(6);
      for (int i = 0; i < 6; ++i) x[i] = 100 * p + i;
      inputs[p] = {x};
    }
    std::vector<int32_t> expected;
    for (int row = 0; row < 2; ++row) {
      for (int p = 0; p < n; ++p) {
        for (int col = 0; col < 3; ++col) {
          expected.push_back(inputs[p][0][row * 3 + col]);
        }
      }
    }
    ASSERT_OK_AND_ASSIGN(auto outputs, Launch(*executable, inputs));
    for (int p = 0; p < n; ++p) EXPECT_EQ(outputs[p][0], expected) << p;
  }
}

constexpr char kReduceScatter[] = R"(
func.func @main(%x: tensor<Kx2xf32>) -> tensor<3x2xf32> {
  %r = "stablehlo.reduce_scatter"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 0 : i64,
      replica_groups = dense<GROUPS> : tensor<1xNxi64>} : (tensor<Kx2xf32>) -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
})";

TEST_F(CollectivesTest, ReduceScatterGivesEachMemberItsBlockOfTheSum) {
  for (int n : {1, 2, 4, 8}) {
    SCOPED_TRACE(n);
    std::string text =
        Replace(Replace(Replace(kReduceScatter, "GROUPS", AllIds(n)), "xNx",
                        "x" + std::to_string(n) + "x"),
                "<Kx", "<" + std::to_string(3 * n) + "x");
    ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, n));
    const int elements = 3 * n * 2;
    std::vector<std::vector<std::vector<float>>> inputs(n);
    std::vector<float> sum(elements, 0);
    for (int p = 0; p < n; ++p) {
      std::vector<float> x(elements);
      for (int i = 0; i < elements; ++i) x[i] = static_cast<float>(i + p * p);
      for (int i = 0; i < elements; ++i) sum[i] += x[i];
      inputs[p] = {x};
    }
    ASSERT_OK_AND_ASSIGN(auto outputs, Launch(*executable, inputs));
    for (int p = 0; p < n; ++p) {
      std::vector<float> expected(sum.begin() + p * 6, sum.begin() + p * 6 + 6);
      EXPECT_EQ(outputs[p][0], expected) << p;
    }
  }
}

// Variadic: two operands exchanged in one step.
constexpr char kAllToAll[] = R"(
func.func @main(%x: tensor<2xKxi32>, %y: tensor<1xKxi32>) -> (tensor<Mx2xi32>, tensor<Nx2xi32>) {
  %r:2 = "stablehlo.all_to_all"(%x, %y) {split_dimension = 1 : i64,
      concat_dimension = 0 : i64, split_count = N : i64,
      replica_groups = dense<GROUPS> : tensor<1xNxi64>}
      : (tensor<2xKxi32>, tensor<1xKxi32>) -> (tensor<Mx2xi32>, tensor<Nx2xi32>)
  return %r#0, %r#1 : tensor<Mx2xi32>, tensor<Nx2xi32>
})";

TEST_F(CollectivesTest, AllToAllExchangesBlocksOfEveryOperand) {
  for (int n : {1, 2, 4, 8}) {
    SCOPED_TRACE(n);
    std::string text = Replace(kAllToAll, "GROUPS", AllIds(n));
    text = Replace(text, "xNx", "x" + std::to_string(n) + "x");
    text = Replace(text, "= N :", "= " + std::to_string(n) + " :");
    text = Replace(text, "xKx", "x" + std::to_string(2 * n) + "x");
    text = Replace(text, "<Nx", "<" + std::to_string(n) + "x");
    text = Replace(text, "<Mx", "<" + std::to_string(2 * n) + "x");
    ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, n));
    const int k = 2 * n;
    std::vector<std::vector<std::vector<int32_t>>> inputs(n);
    for (int p = 0; p < n; ++p) {
      std::vector<int32_t> x(2 * k), y(k);
      for (int i = 0; i < 2 * k; ++i) x[i] = 1000 * p + i;
      for (int i = 0; i < k; ++i) y[i] = -1000 * p - i;
      inputs[p] = {x, y};
    }
    ASSERT_OK_AND_ASSIGN(auto outputs, Launch(*executable, inputs));
    for (int me = 0; me < n; ++me) {
      // x: block `me` of columns (2 wide) from each sender, stacked as rows.
      std::vector<int32_t> x, y;
      for (int sender = 0; sender < n; ++sender) {
        for (int row = 0; row < 2; ++row) {
          for (int col = 2 * me; col < 2 * me + 2; ++col) {
            x.push_back(inputs[sender][0][row * k + col]);
          }
        }
      }
      // y: one row; its block `me` from each sender, stacked.
      for (int sender = 0; sender < n; ++sender) {
        for (int i = 2 * me; i < 2 * me + 2; ++i) {
          y.push_back(inputs[sender][1][i]);
        }
      }
      EXPECT_EQ(outputs[me][0], x) << me;
      EXPECT_EQ(outputs[me][1], y) << me;
    }
  }
}

TEST_F(CollectivesTest, CollectivePermuteShiftsAndZerosReceiversWithoutSource) {
  for (int n : {1, 2, 4, 8}) {
    SCOPED_TRACE(n);
    // i -> i + 1 for all but the last: participant 0 receives nothing.
    std::string pairs;
    for (int i = 0; i + 1 < n; ++i) {
      pairs += (i ? ", " : "") +
               ("[" + std::to_string(i) + ", " + std::to_string(i + 1) + "]");
    }
    std::string type =
        "tensor<" + std::to_string(std::max(n - 1, 0)) + "x2xi64>";
    std::string text = R"(
func.func @main(%x: tensor<3xi64>) -> tensor<3xi64> {
  %r = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<)" +
                       (n == 1 ? std::string("[]") : "[" + pairs + "]") +
                       "> : " + (n == 1 ? "tensor<0x2xi64>" : type) + R"(}
      : (tensor<3xi64>) -> tensor<3xi64>
  return %r : tensor<3xi64>
})";
    ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, n));
    std::vector<std::vector<std::vector<int64_t>>> inputs(n);
    for (int p = 0; p < n; ++p) inputs[p] = {{p * 10, p * 10 + 1, p * 10 + 2}};
    ASSERT_OK_AND_ASSIGN(auto outputs, Launch(*executable, inputs));
    for (int p = 0; p < n; ++p) {
      std::vector<int64_t> expected =
          p == 0 ? std::vector<int64_t>{0, 0, 0} : inputs[p - 1][0];
      EXPECT_EQ(outputs[p][0], expected) << p;
    }
  }
}

TEST_F(CollectivesTest, CollectiveBroadcastSendsTheFirstMembersValue) {
  for (int n : {2, 4, 8}) {
    SCOPED_TRACE(n);
    // Group [n-1, 1] (or [1, 0]): the first member broadcasts to the other;
    // everyone else is in no group and gets zeros.
    const int root = n - 1, other = n > 2 ? 1 : 0;
    std::string text = R"(
func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {
  %r = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[)" +
                       std::to_string(root) + ", " + std::to_string(other) +
                       R"(]]> : tensor<1x2xi64>}
      : (tensor<2xf64>) -> tensor<2xf64>
  return %r : tensor<2xf64>
})";
    ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, n));
    std::vector<std::vector<std::vector<double>>> inputs(n);
    for (int p = 0; p < n; ++p) inputs[p] = {{p + 0.5, -p - 0.25}};
    ASSERT_OK_AND_ASSIGN(auto outputs, Launch(*executable, inputs));
    for (int p = 0; p < n; ++p) {
      std::vector<double> expected = (p == root || p == other)
                                         ? inputs[root][0]
                                         : std::vector<double>{0, 0};
      EXPECT_EQ(outputs[p][0], expected) << p;
    }
  }
}

// all_reduce over 2 replicas x 2 partitions in each process-group mode.
// Participant (r, p) is flattened id 2r + p and holds 10^(2r + p).
constexpr char kGroupMode[] = R"(
func.func @main(%x: tensor<i64>) -> tensor<i64> {
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %s = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {ATTRS} : (tensor<i64>) -> tensor<i64>
  return %r : tensor<i64>
})";

TEST_F(CollectivesTest, ProcessGroupModesFollowTheSpec) {
  struct Case {
    std::string attrs;
    std::vector<int64_t> expected;  // by flattened id
  };
  const std::vector<Case> cases = {
      // cross_replica: replicas {0, 1} within each partition.
      {"replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>",
       {101, 1010, 101, 1010}},
      // cross_replica_and_partition: replica group {0, 1} spans every
      // partition: one group of all four.
      {"replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = "
       "#stablehlo.channel_handle<handle = 1, type = 1>",
       {1111, 1111, 1111, 1111}},
      // cross_replica_and_partition with one replica per group: the
      // partitions of each replica.
      {"replica_groups = dense<[[0], [1]]> : tensor<2x1xi64>, channel_handle "
       "= #stablehlo.channel_handle<handle = 1, type = 1>",
       {11, 11, 1100, 1100}},
      // flattened_ids.
      {"replica_groups = dense<[[0, 3], [1, 2]]> : tensor<2x2xi64>, "
       "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, "
       "use_global_device_ids",
       {1001, 110, 110, 1001}},
      // Empty groups: every replica, within each partition.
      {"replica_groups = dense<> : tensor<0x0xi64>", {101, 1010, 101, 1010}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.attrs);
    ASSERT_OK_AND_ASSIGN(auto executable,
                         Compile(Replace(kGroupMode, "ATTRS", c.attrs), 2, 2));
    std::vector<std::vector<std::vector<int64_t>>> inputs = {
        {{1}}, {{10}}, {{100}}, {{1000}}};
    ASSERT_OK_AND_ASSIGN(auto outputs, Launch(*executable, inputs));
    for (int p = 0; p < 4; ++p) {
      EXPECT_EQ(outputs[p][0], std::vector<int64_t>{c.expected[p]}) << p;
    }
  }
}

TEST_F(CollectivesTest, CrossPartitionAllGatherAsTheSpmdPartitionerEmitsIt) {
  // num_replicas = 1, num_partitions = 4, groups over partition ids, a
  // channel and use_global_device_ids, and partition_id in the program.
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(R"(
func.func @main(%x: tensor<2xui32>) -> tensor<8xui32> {
  %id = stablehlo.partition_id : tensor<ui32>
  %b = stablehlo.broadcast_in_dim %id, dims = [] : (tensor<ui32>) -> tensor<2xui32>
  %y = stablehlo.add %x, %b : tensor<2xui32>
  %r = "stablehlo.all_gather"(%y) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      use_global_device_ids} : (tensor<2xui32>) -> tensor<8xui32>
  return %r : tensor<8xui32>
})",
                                                1, 4));
  std::vector<std::vector<std::vector<uint32_t>>> inputs(4, {{10, 20}});
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch(*executable, inputs));
  std::vector<uint32_t> expected = {10, 20, 11, 21, 12, 22, 13, 23};
  for (int p = 0; p < 4; ++p) EXPECT_EQ(outputs[p][0], expected) << p;
}

TEST_F(CollectivesTest, CollectivesInAWhileLoopMeetOncePerIteration) {
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(R"(
func.func @main(%x: tensor<4xi64>) -> tensor<4xi64> {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i64>, tensor<4xi64>
    cond {
      %five = stablehlo.constant dense<5> : tensor<i64>
      %c = stablehlo.compare LT, %i, %five : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %n = stablehlo.add %i, %one : tensor<i64>
      %s = "stablehlo.all_reduce"(%v) ({
        ^bb0(%a: tensor<i64>, %b: tensor<i64>):
          %t = stablehlo.add %a, %b : tensor<i64>
          stablehlo.return %t : tensor<i64>
      }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<4xi64>) -> tensor<4xi64>
      stablehlo.return %n, %s : tensor<i64>, tensor<4xi64>
    }
  return %r#1 : tensor<4xi64>
})",
                                                3));
  std::vector<std::vector<std::vector<int64_t>>> inputs(3);
  std::vector<int64_t> expected(4, 0);
  for (int p = 0; p < 3; ++p) {
    inputs[p] = {{p, p + 1, 2 * p, -p}};
    for (int i = 0; i < 4; ++i) expected[i] += inputs[p][0][i];
  }
  // After the first sum, each iteration multiplies by the group size.
  for (int iteration = 1; iteration < 5; ++iteration) {
    for (int64_t& value : expected) value *= 3;
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch(*executable, inputs));
  for (int p = 0; p < 3; ++p) EXPECT_EQ(outputs[p][0], expected) << p;
}

TEST_F(CollectivesTest, CompileRefusesBadGroupsNamingTheOp) {
  // The verifier refuses what it can see in the op alone (duplicates,
  // ragged groups where sizes must match); the lowering what needs the
  // replica count. Either way the message names the op.
  struct Case {
    std::string groups;
    int replicas;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"dense<[[0, 0]]> : tensor<1x2xi64>", 2, "more than once"},
      {"dense<[[0, 1], [2, -1]]> : tensor<2x2xi64>", 3, "-1"},
      {"dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>", 2, "out of range"},
      {"dense<[[0, 1]]> : tensor<1x2xi64>", 3, "replica id 2 is in no group"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.groups);
    std::string text = R"(
func.func @main(%x: tensor<2xi32>) -> tensor<4xi32> {
  %r = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64,
      replica_groups = )" +
                       c.groups +
                       R"(} : (tensor<2xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
})";
    auto executable = Compile(text, c.replicas);
    ASSERT_FALSE(executable.ok());
    EXPECT_NE(executable.status().message().find("stablehlo.all_gather"),
              std::string::npos)
        << executable.status().ToString();
    EXPECT_NE(executable.status().message().find(c.message), std::string::npos)
        << executable.status().ToString();
  }
}

TEST_F(CollectivesTest, AParticipantWhoseInputFailedFailsTheLaunch) {
  std::string text =
      Replace(Replace(kAllReduceSum, "GROUPS", AllIds(2)), "xNx", "x2x");
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, 2));
  std::vector<ExecuteRequest> requests(2);
  auto shape = Shape::Make(DType::kF32, std::vector<int64_t>{1000});
  ASSERT_TRUE(shape.ok());
  requests[0].position = 0;
  requests[0].arguments = {Upload(std::vector<float>(1000, 1), DType::kF32,
                                  {1000},
                                  executable->addressable_devices()[0])};
  requests[1].position = 1;
  requests[1].arguments = {Buffer::CreateError(
      *shape, executable->addressable_devices()[1]->default_memory_space(),
      InternalError("the producer failed"))};
  ASSERT_OK_AND_ASSIGN(auto results,
                       executable->ExecuteLaunch(std::move(requests)));
  Status first = results[0].done->Await();
  EXPECT_EQ(first.code(), StatusCode::kAborted);
  EXPECT_NE(first.message().find("participant 1"), std::string::npos)
      << first.ToString();
  EXPECT_EQ(results[1].done->Await().code(), StatusCode::kInternal);
}

// Replica 0 waits at one all_reduce, replica 1 at another: neither meeting
// completes, and the timeout turns the hang into an error.
constexpr char kMismatched[] = R"(
func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %id = stablehlo.replica_id : tensor<ui32>
  %zero = stablehlo.constant dense<0> : tensor<ui32>
  %first = stablehlo.compare EQ, %id, %zero : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  %r = "stablehlo.if"(%first) ({
    %a = "stablehlo.all_reduce"(%x) ({
      ^bb0(%p: tensor<i32>, %q: tensor<i32>):
        %s = stablehlo.add %p, %q : tensor<i32>
        stablehlo.return %s : tensor<i32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<i32>) -> tensor<i32>
    stablehlo.return %a : tensor<i32>
  }, {
    %b = "stablehlo.all_reduce"(%x) ({
      ^bb0(%p: tensor<i32>, %q: tensor<i32>):
        %s = stablehlo.maximum %p, %q : tensor<i32>
        stablehlo.return %s : tensor<i32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<i32>) -> tensor<i32>
    stablehlo.return %b : tensor<i32>
  }) : (tensor<i1>) -> tensor<i32>
  return %r : tensor<i32>
})";

TEST_F(CollectivesTest, TheTimeoutTurnsAHangIntoDeadlineExceeded) {
  MakeClient(0.2);
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(kMismatched, 2));
  auto start = std::chrono::steady_clock::now();
  auto outputs = Launch<int32_t>(*executable, {{{1}}, {{2}}});
  ASSERT_FALSE(outputs.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  // Whoever gives up first names the participant it waited for; its peer
  // then fails naming it.
  const Status& status = outputs.status();
  EXPECT_TRUE(status.code() == StatusCode::kDeadlineExceeded ||
              status.code() == StatusCode::kAborted)
      << status.ToString();
  EXPECT_NE(status.message().find("stablehlo.all_reduce"), std::string::npos)
      << status.ToString();
  EXPECT_NE(status.message().find("did not arrive within 0.2 s"),
            std::string::npos)
      << status.ToString();
}

TEST_F(CollectivesTest, LaunchesBackToBackOnTheSameDevicesComplete) {
  std::string text =
      Replace(Replace(kAllReduceSum, "GROUPS", AllIds(4)), "xNx", "x4x");
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, 4));
  // Two threads each queue 20 launches without waiting in between: every
  // queue must see the launches in one order, or two of them deadlock.
  auto launch_many = [&](float base, std::vector<ExecuteResult>* last) {
    for (int k = 0; k < 20; ++k) {
      std::vector<ExecuteRequest> requests(4);
      for (int p = 0; p < 4; ++p) {
        requests[p].position = p;
        requests[p].arguments = {Upload(std::vector<float>(1000, base + p),
                                        DType::kF32, {1000},
                                        executable->addressable_devices()[p])};
      }
      auto results = executable->ExecuteLaunch(std::move(requests));
      ASSERT_TRUE(results.ok()) << results.status().ToString();
      *last = std::move(*results);
    }
  };
  std::vector<ExecuteResult> last_a, last_b;
  std::thread a(launch_many, 1.0f, &last_a);
  std::thread b(launch_many, 100.0f, &last_b);
  a.join();
  b.join();
  ASSERT_EQ(last_a.size(), 4u);
  ASSERT_EQ(last_b.size(), 4u);
  for (int p = 0; p < 4; ++p) {
    ASSERT_OK_AND_ASSIGN(auto sum_a, Read<float>(last_a[p].outputs[0]));
    ASSERT_OK_AND_ASSIGN(auto sum_b, Read<float>(last_b[p].outputs[0]));
    EXPECT_EQ(sum_a, std::vector<float>(1000, 4 + 6));
    EXPECT_EQ(sum_b, std::vector<float>(1000, 400 + 6));
  }
}

TEST_F(CollectivesTest, ChainedLaunchesWaitForTheirInputs) {
  std::string text =
      Replace(Replace(kAllReduceSum, "GROUPS", AllIds(2)), "xNx", "x2x");
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, 2));
  std::vector<std::shared_ptr<Buffer>> values;
  for (int p = 0; p < 2; ++p) {
    values.push_back(Upload(std::vector<float>(1000, 1.0f), DType::kF32, {1000},
                            executable->addressable_devices()[p]));
  }
  for (int k = 0; k < 5; ++k) {
    std::vector<ExecuteRequest> requests(2);
    for (int p = 0; p < 2; ++p) {
      requests[p].position = p;
      requests[p].arguments = {values[p]};
    }
    ASSERT_OK_AND_ASSIGN(auto results,
                         executable->ExecuteLaunch(std::move(requests)));
    for (int p = 0; p < 2; ++p) values[p] = results[p].outputs[0];
  }
  for (int p = 0; p < 2; ++p) {
    ASSERT_OK_AND_ASSIGN(auto sum, Read<float>(values[p]));
    EXPECT_EQ(sum, std::vector<float>(1000, 32.0f));
  }
}

TEST_F(CollectivesTest, ExecutionsWithOneLaunchIdJoinOneLaunch) {
  // PyTorch/XLA's way: one Execute per device, with execute_device set and
  // the same launch id; the launch starts when the last one joins.
  std::string text =
      Replace(Replace(kAllReduceSum, "GROUPS", AllIds(4)), "xNx", "x4x");
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, 4));
  for (int64_t launch_id : {7, 8}) {
    std::vector<ExecuteResult> results;
    for (int p = 3; p >= 0; --p) {
      ExecuteRequest request;
      request.device = executable->addressable_devices()[p];
      request.launch_id = launch_id;
      request.arguments = {Upload(std::vector<float>(1000, float(p)),
                                  DType::kF32, {1000}, request.device)};
      ASSERT_OK_AND_ASSIGN(ExecuteResult result, executable->Execute(request));
      results.push_back(std::move(result));
    }
    for (const ExecuteResult& result : results) {
      ASSERT_OK_AND_ASSIGN(auto sum, Read<float>(result.outputs[0]));
      EXPECT_EQ(sum, std::vector<float>(1000, 6.0f));
    }
  }
}

TEST_F(CollectivesTest, ADeviceThatCannotJoinFailsTheLaunchIdsOthers) {
  std::string text =
      Replace(Replace(kAllReduceSum, "GROUPS", AllIds(2)), "xNx", "x2x");
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(text, 2));
  ExecuteRequest first;
  first.device = executable->addressable_devices()[0];
  first.launch_id = 3;
  first.arguments = {Upload(std::vector<float>(1000, 1.0f), DType::kF32, {1000},
                            first.device)};
  ASSERT_OK_AND_ASSIGN(ExecuteResult joined, executable->Execute(first));
  // The second device's request is wrong (its argument is on device 0).
  ExecuteRequest second = first;
  second.device = executable->addressable_devices()[1];
  Status refused = executable->Execute(second).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << refused.ToString();
  Status status = joined.done->Await();
  EXPECT_EQ(status.code(), StatusCode::kAborted);
  EXPECT_NE(status.message().find("could not join"), std::string::npos)
      << status.ToString();
}

TEST_F(CollectivesTest, NarrowAndByteTypesMoveAsStored) {
  // bf16 all_reduce goes through the region (computed in f32, rounded per
  // step); f8 all_to_all and i1 all_gather move bytes.
  ASSERT_OK_AND_ASSIGN(auto executable, Compile(R"(
func.func @main(%x: tensor<4xbf16>, %y: tensor<2xf8E4M3FN>, %z: tensor<2xi1>)
    -> (tensor<4xbf16>, tensor<2xf8E4M3FN>, tensor<4xi1>) {
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
      %s = stablehlo.add %a, %b : tensor<bf16>
      stablehlo.return %s : tensor<bf16>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xbf16>) -> tensor<4xbf16>
  %t = "stablehlo.all_to_all"(%y) {split_dimension = 0 : i64,
      concat_dimension = 0 : i64, split_count = 2 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf8E4M3FN>) -> tensor<2xf8E4M3FN>
  %g = "stablehlo.all_gather"(%z) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi1>) -> tensor<4xi1>
  return %r, %t, %g : tensor<4xbf16>, tensor<2xf8E4M3FN>, tensor<4xi1>
})",
                                                2));
  // bf16 1.0 = 0x3F80, 2.0 = 0x4000, 3.0 = 0x4040; f8e4m3fn bytes are
  // moved as they are.
  std::vector<ExecuteRequest> requests(2);
  const std::vector<std::vector<uint16_t>> bf16 = {
      {0x3F80, 0x4000, 0x3F80, 0x0000}, {0x4000, 0x3F80, 0x0000, 0x3F80}};
  const std::vector<std::vector<uint8_t>> f8 = {{0x11, 0x22}, {0x33, 0x44}};
  const std::vector<std::vector<uint8_t>> pred = {{1, 0}, {0, 1}};
  for (int p = 0; p < 2; ++p) {
    Device* device = executable->addressable_devices()[p];
    requests[p].position = p;
    requests[p].arguments = {Upload(bf16[p], DType::kBF16, {4}, device),
                             Upload(f8[p], DType::kF8E4M3FN, {2}, device),
                             Upload(pred[p], DType::kPred, {2}, device)};
  }
  ASSERT_OK_AND_ASSIGN(auto results,
                       executable->ExecuteLaunch(std::move(requests)));
  for (int p = 0; p < 2; ++p) {
    ASSERT_OK_AND_ASSIGN(auto sum, Read<uint16_t>(results[p].outputs[0]));
    EXPECT_EQ(sum, (std::vector<uint16_t>{0x4040, 0x4040, 0x3F80, 0x3F80}));
    ASSERT_OK_AND_ASSIGN(auto moved, Read<uint8_t>(results[p].outputs[1]));
    EXPECT_EQ(moved, p == 0 ? (std::vector<uint8_t>{0x11, 0x33})
                            : (std::vector<uint8_t>{0x22, 0x44}));
    ASSERT_OK_AND_ASSIGN(auto gathered, Read<uint8_t>(results[p].outputs[2]));
    EXPECT_EQ(gathered, (std::vector<uint8_t>{1, 0, 0, 1}));
  }
}

}  // namespace
}  // namespace kiln::runtime
