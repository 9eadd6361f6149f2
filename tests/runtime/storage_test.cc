// Host storage (runtime/storage.h): freed blocks are kept for the next
// allocation of their size, zero-filled again when asked, never counted as
// in use, and bounded in number and bytes.
#include "runtime/storage.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "support/test_support.h"

namespace kiln::runtime {
namespace {

constexpr size_t kLarge = (size_t{3} << 20) + 4096;

TEST(StorageTest, AFreedLargeBlockServesTheNextAllocationOfItsSize) {
  auto counters = std::make_shared<MemoryCounters>();
  void* first = nullptr;
  {
    ASSERT_OK_AND_ASSIGN(auto storage, Storage::Allocate(kLarge, counters));
    first = storage->data();
    std::memset(first, 0xAB, kLarge);
    EXPECT_EQ(counters->bytes_in_use.load(), static_cast<int64_t>(kLarge));
  }
  // Kept, but not in use.
  EXPECT_EQ(counters->bytes_in_use.load(), 0);
  ASSERT_OK_AND_ASSIGN(auto again, Storage::Allocate(kLarge, counters));
  EXPECT_EQ(again->data(), first);
  // Zero-filled again, as every Storage::Allocate without kUninitialized.
  const auto* bytes = static_cast<const unsigned char*>(again->data());
  for (size_t i = 0; i < kLarge; i += 4093) EXPECT_EQ(bytes[i], 0) << i;
  EXPECT_EQ(bytes[kLarge - 1], 0);
  // A different size does not take it.
  ASSERT_OK_AND_ASSIGN(auto other,
                       Storage::Allocate(kLarge + 4096, counters));
  EXPECT_NE(other->data(), first);
}

TEST(StorageTest, SmallBlocksAreKeptAndTakenNewestFirst) {
  // A training step's outputs are small: they are kept too, and of two of
  // one size the newer (likelier in cache) is taken first.
  BlockCache cache;
  void* older = std::aligned_alloc(kStorageAlignment, 4096);
  void* newer = std::aligned_alloc(kStorageAlignment, 4096);
  cache.Give(older, 4096);
  cache.Give(newer, 4096);
  EXPECT_EQ(cache.Take(4096), newer);
  EXPECT_EQ(cache.Take(4096), older);
  EXPECT_EQ(cache.Take(4096), nullptr);
  std::free(older);
  std::free(newer);
}

TEST(StorageTest, TheCacheKeepsAtMostItsBytes) {
  BlockCache cache;
  const size_t half = BlockCache::kMaxBytes / 2 + kStorageAlignment;
  void* first = std::aligned_alloc(kStorageAlignment, half);
  void* second = std::aligned_alloc(kStorageAlignment, half);
  cache.Give(first, half);
  cache.Give(second, half);  // over the bytes: the oldest, `first`, goes
  void* kept = cache.Take(half);
  EXPECT_EQ(kept, second);
  EXPECT_EQ(cache.Take(half), nullptr);
  std::free(kept);
}

TEST(StorageTest, TheCacheKeepsTheNewestBlocksUpToItsCount) {
  BlockCache cache;
  std::vector<size_t> sizes;
  for (size_t i = 0; i <= BlockCache::kMaxBlocks; ++i) {
    size_t bytes = 4096 + i * kStorageAlignment;
    sizes.push_back(bytes);
    cache.Give(std::aligned_alloc(kStorageAlignment, bytes), bytes);
  }
  // One block too many: the oldest went.
  EXPECT_EQ(cache.Take(sizes.front()), nullptr);
  for (size_t i = 1; i < sizes.size(); ++i) {
    void* block = cache.Take(sizes[i]);
    EXPECT_NE(block, nullptr) << i;
    std::free(block);
  }
  EXPECT_EQ(cache.Take(sizes.back()), nullptr);
}

}  // namespace
}  // namespace kiln::runtime
