#include "exec/collectives.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "support/test_support.h"

namespace kiln::exec {
namespace {

using std::chrono::milliseconds;

// A contribution carrying one input address (the participant's value).
Contribution Offer(const int* value) {
  Contribution c;
  c.inputs.push_back(reinterpret_cast<const std::byte*>(value));
  return c;
}

int ValueOf(const Meeting& meeting, int rank) {
  return *reinterpret_cast<const int*>(meeting.member(rank).inputs[0]);
}

TEST(CollectiveGroupsTest, IndexesParticipantsByGroupAndRank) {
  CollectiveGroups groups = CollectiveGroups::Make({{3, 1}, {0, 2}}, 4);
  EXPECT_EQ(groups.group_of, (std::vector<int>{1, 0, 1, 0}));
  EXPECT_EQ(groups.rank_of, (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(groups.GroupOf(1), (std::vector<int>{3, 1}));
  EXPECT_EQ(groups.LargestGroup(), 2);
  CollectiveGroups partial = CollectiveGroups::Make({{0}}, 2);
  EXPECT_TRUE(partial.GroupOf(1).empty());
}

TEST(CommunicatorTest, MembersSeeEachOthersContributions) {
  constexpr int kCount = 4;
  Communicator communicator(kCount, milliseconds(5000));
  std::vector<int> values = {10, 11, 12, 13};
  std::vector<int> sums(kCount, 0);
  std::vector<std::thread> threads;
  const std::vector<int> group = {0, 1, 2, 3};
  for (int p = 0; p < kCount; ++p) {
    threads.emplace_back([&, p] {
      auto meeting =
          communicator.Join(/*step_id=*/7, /*group_index=*/0, group, p,
                            /*rank=*/p, Offer(&values[p]));
      ASSERT_OK(meeting.status());
      for (int r = 0; r < meeting->size(); ++r) sums[p] += ValueOf(*meeting, r);
      meeting->Leave();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(sums, std::vector<int>(kCount, 46));
}

TEST(CommunicatorTest, RepeatedStepsAndDisjointGroupsDoNotMix) {
  // Two groups of two meet at the same step, five times in a row (a loop);
  // each meeting sees only its own group's values of that iteration.
  Communicator communicator(4, milliseconds(5000));
  std::vector<std::vector<int>> groups = {{0, 2}, {1, 3}};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < 4; ++p) {
    threads.emplace_back([&, p] {
      const int g = p % 2, rank = p / 2;
      for (int iteration = 0; iteration < 5; ++iteration) {
        int value = 100 * iteration + p;
        auto meeting =
            communicator.Join(1, g, groups[g], p, rank, Offer(&value));
        ASSERT_OK(meeting.status());
        for (int r = 0; r < 2; ++r) {
          if (ValueOf(*meeting, r) != 100 * iteration + groups[g][r]) ++wrong;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CommunicatorTest, AFailedParticipantFailsItsWaitingPeers) {
  Communicator communicator(2, milliseconds(60000));
  int value = 1;
  std::thread failing([&] {
    std::this_thread::sleep_for(milliseconds(20));
    communicator.Abort(1, InvalidArgumentError("bad input"));
  });
  auto start = std::chrono::steady_clock::now();
  auto meeting = communicator.Join(0, 0, {0, 1}, 0, 0, Offer(&value));
  failing.join();
  ASSERT_FALSE(meeting.ok());
  EXPECT_EQ(meeting.status().code(), StatusCode::kAborted);
  EXPECT_NE(meeting.status().message().find("participant 1 failed"),
            std::string::npos)
      << meeting.status().ToString();
  EXPECT_NE(meeting.status().message().find("bad input"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
  // Later meetings fail at once too.
  EXPECT_EQ(
      communicator.Join(1, 0, {0, 1}, 0, 0, Offer(&value)).status().code(),
      StatusCode::kAborted);
}

TEST(CommunicatorTest, TimeoutNamesTheParticipantsThatNeverArrived) {
  Communicator communicator(3, milliseconds(30));
  int value = 1;
  auto meeting = communicator.Join(0, 0, {0, 1, 2}, 0, 0, Offer(&value));
  ASSERT_FALSE(meeting.ok());
  EXPECT_EQ(meeting.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(meeting.status().message().find("participants 1, 2 of group "
                                            "[0, 1, 2] did not arrive"),
            std::string::npos)
      << meeting.status().ToString();
  // The participant that timed out failed the whole launch.
  EXPECT_TRUE(communicator.failure().has_value());
}

TEST(CommunicatorTest, APeerThatFinishedWithoutArrivingFailsTheMeeting) {
  Communicator communicator(2, milliseconds(60000));
  communicator.Finish(1);
  int value = 1;
  auto meeting = communicator.Join(0, 0, {0, 1}, 0, 0, Offer(&value));
  EXPECT_EQ(meeting.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(meeting.status().message().find("participant 1 finished"),
            std::string::npos);
}

TEST(CommunicatorTest, CancellingAWaitEndsIt) {
  Communicator communicator(2, milliseconds(60000));
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(20));
    cancel = true;
  });
  int value = 1;
  auto meeting = communicator.Join(0, 0, {0, 1}, 0, 0, Offer(&value), &cancel);
  canceller.join();
  EXPECT_EQ(meeting.status().code(), StatusCode::kCancelled);
}

TEST(CommunicatorTest, TimeoutComesFromTheEnvironment) {
  setenv("KILN_COLLECTIVE_TIMEOUT_S", "2.5", 1);
  EXPECT_EQ(Communicator::DefaultTimeout(), milliseconds(2500));
  setenv("KILN_COLLECTIVE_TIMEOUT_S", "nonsense", 1);
  EXPECT_EQ(Communicator::DefaultTimeout(), milliseconds(300000));
  unsetenv("KILN_COLLECTIVE_TIMEOUT_S");
  EXPECT_EQ(Communicator::DefaultTimeout(), milliseconds(300000));
}

}  // namespace
}  // namespace kiln::exec
