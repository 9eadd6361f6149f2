#include "base/strings.h"

#include <gtest/gtest.h>

#include "base/fingerprint.h"
#include "base/thread_pool.h"

#include <atomic>

namespace kiln {
namespace {

TEST(StringsTest, StrCatFormatsMixedArguments) {
  EXPECT_EQ(StrCat("a", 1, '-', true, 2.5), "a1-true2.5");
  std::vector<int> dims = {2, 3, 4};
  EXPECT_EQ(StrJoin(dims, "x"), "2x3x4");
}

TEST(StringsTest, SplitKeepsEmptyPieces) {
  auto pieces = StrSplit("a,,b", ',');
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[1], "");
}

TEST(StringsTest, ParseInt64RejectsJunkAndOverflow) {
  EXPECT_EQ(ParseInt64("42"), 42);
  EXPECT_EQ(ParseInt64("-7"), -7);
  EXPECT_FALSE(ParseInt64("4x"));
  EXPECT_FALSE(ParseInt64(""));
  EXPECT_FALSE(ParseInt64("99999999999999999999"));
}

TEST(StringsTest, EscapeForMessageShowsBinaryBytes) {
  EXPECT_EQ(EscapeForMessage(std::string("a\x01\"", 3)), "a\\x01\\\"");
  EXPECT_EQ(EscapeForMessage("abcdef", 3), "abc...");
}

TEST(FingerprintTest, StableAndSensitive) {
  uint64_t a = Fingerprint64("module @a {}");
  EXPECT_EQ(a, Fingerprint64("module @a {}"));
  EXPECT_NE(a, Fingerprint64("module @b {}"));
  EXPECT_NE(Fingerprint64(""), Fingerprint64(std::string(1, '\0')));
  EXPECT_EQ(FingerprintToHex(0x1234).size(), 16u);
}

TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnce) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(1000);
  pool.ParallelFor(1000, 7, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
  });
  for (auto& hit : hits) EXPECT_EQ(hit.load(), 1);
}

TEST(ThreadPoolTest, NestedParallelForDoesNotDeadlock) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  pool.ParallelFor(8, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      pool.ParallelFor(100, 1, [&](int64_t b, int64_t e) { total += e - b; });
    }
  });
  EXPECT_EQ(total.load(), 800);
}

}  // namespace
}  // namespace kiln
