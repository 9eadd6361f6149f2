#include "runtime/event.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "support/test_support.h"

namespace kiln::runtime {
namespace {

TEST(EventTest, SetMakesReadyAndWakesWaiters) {
  std::shared_ptr<Event> event = Event::Create();
  EXPECT_FALSE(event->IsReady());
  EXPECT_EQ(event->status().code(), StatusCode::kFailedPrecondition);
  std::thread waiter(
      [event] { EXPECT_EQ(event->Await().code(), StatusCode::kAborted); });
  ASSERT_OK(event->Set(AbortedError("stop")));
  waiter.join();
  EXPECT_TRUE(event->IsReady());
  EXPECT_EQ(event->status().message(), "stop");
}

TEST(EventTest, SecondSetFailsAndKeepsTheFirst) {
  std::shared_ptr<Event> event = Event::Create();
  ASSERT_OK(event->Set());
  Status second = event->Set(InternalError("late"));
  EXPECT_EQ(second.code(), StatusCode::kFailedPrecondition);
  EXPECT_OK(event->Await());
}

TEST(EventTest, OnReadyRunsAtOnceWhenReadyElseOnTheSettingThread) {
  std::shared_ptr<Event> ready = Event::CreateReady();
  std::thread::id ran_on;
  ready->OnReady([&](const Status& s) {
    EXPECT_TRUE(s.ok());
    ran_on = std::this_thread::get_id();
  });
  EXPECT_EQ(ran_on, std::this_thread::get_id());

  std::shared_ptr<Event> pending = Event::Create();
  std::atomic<int> calls{0};
  pending->OnReady([&](const Status&) {
    ran_on = std::this_thread::get_id();
    calls.fetch_add(1);
  });
  std::thread::id setter_id;
  std::thread setter([&] {
    setter_id = std::this_thread::get_id();
    ASSERT_OK(pending->Set());
  });
  setter.join();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(ran_on, setter_id);
}

TEST(EventTest, ACallbackMayDropTheLastReference) {
  auto holder = std::make_shared<std::shared_ptr<Event>>(Event::Create());
  std::weak_ptr<Event> weak = *holder;
  bool ran = false;
  (*holder)->OnReady([holder, &ran](const Status&) {
    holder->reset();  // the only outside reference goes
    ran = true;
  });
  std::shared_ptr<Event> setter = *holder;
  // Set through a reference that is itself released right after.
  ASSERT_OK(setter->Set());
  setter.reset();
  EXPECT_TRUE(ran);
  EXPECT_TRUE(weak.expired());
}

TEST(EventTest, AfterAllWaitsForEveryEventAndReportsTheFirstErrorInOrder) {
  std::vector<std::shared_ptr<Event>> events = {
      Event::Create(), Event::Create(), Event::Create()};
  std::shared_ptr<Event> all = Event::AfterAll(events);
  ASSERT_OK(events[2]->Set(InternalError("third")));
  ASSERT_OK(events[0]->Set());
  EXPECT_FALSE(all->IsReady());
  ASSERT_OK(events[1]->Set(DataLossError("second")));
  ASSERT_TRUE(all->IsReady());
  EXPECT_EQ(all->status().message(), "second");
  EXPECT_OK(Event::AfterAll({})->Await());
}

TEST(EventTest, AfterAllOfReadyEventsIsReadyAtOnceWithTheFirstErrorInOrder) {
  std::shared_ptr<Event> all = Event::AfterAll(
      {Event::CreateReady(), Event::CreateReady(DataLossError("second")),
       Event::CreateReady(InternalError("third"))});
  ASSERT_TRUE(all->IsReady());
  EXPECT_EQ(all->status().message(), "second");
  std::shared_ptr<Event> ok =
      Event::AfterAll({Event::CreateReady(), Event::CreateReady()});
  ASSERT_TRUE(ok->IsReady());
  EXPECT_OK(ok->status());
  // One still pending: the join waits for it, and an earlier error still
  // comes first.
  std::shared_ptr<Event> pending = Event::Create();
  std::shared_ptr<Event> mixed = Event::AfterAll(
      {Event::CreateReady(), Event::CreateReady(AbortedError("first")),
       pending});
  EXPECT_FALSE(mixed->IsReady());
  ASSERT_OK(pending->Set(InternalError("last")));
  ASSERT_TRUE(mixed->IsReady());
  EXPECT_EQ(mixed->status().message(), "first");
}

}  // namespace
}  // namespace kiln::runtime
