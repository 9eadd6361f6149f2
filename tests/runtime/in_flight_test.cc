// The bound on a device's executions in flight (runtime/in_flight.h): past
// the limit, the next acquire waits until a run ends.
#include "runtime/in_flight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace kiln::runtime {
namespace {

TEST(InFlightLimitTest, AnAcquirePastTheLimitWaitsForARunToEnd) {
  auto limit = std::make_shared<InFlightLimit>(3);
  std::vector<InFlightLimit::Token> held;
  for (int i = 0; i < 3; ++i) held.push_back(limit->Acquire());
  EXPECT_EQ(limit->in_flight(), 3);
  std::atomic<bool> acquired{false};
  std::thread waiter([&] {
    InFlightLimit::Token token = limit->Acquire();
    acquired = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(acquired.load());  // still waiting: three in flight
  held.back().Release();
  waiter.join();
  EXPECT_TRUE(acquired.load());
  // The waiter's token ended with its thread; two remain.
  EXPECT_EQ(limit->in_flight(), 2);
  held.clear();
  EXPECT_EQ(limit->in_flight(), 0);
}

TEST(InFlightLimitTest, ATokenReleasesOnceWhateverHappensToIt) {
  auto limit = std::make_shared<InFlightLimit>(2);
  InFlightLimit::Token a = limit->Acquire();
  InFlightLimit::Token b = std::move(a);  // moved: one place, not two
  EXPECT_FALSE(a.held());
  EXPECT_EQ(limit->in_flight(), 1);
  b.Release();
  b.Release();
  EXPECT_EQ(limit->in_flight(), 0);
  InFlightLimit::Token c = limit->Acquire();
  c = limit->Acquire();  // the old place is given back by the assignment
  EXPECT_EQ(limit->in_flight(), 1);
}

}  // namespace
}  // namespace kiln::runtime
