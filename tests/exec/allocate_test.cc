// Buffer allocation: aligned, never null, and a size no machine can hold is
// a ResourceExhausted error before the allocator is asked (ASan's allocator
// aborts on such sizes instead of throwing bad_alloc).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "exec/plan.h"

namespace kiln::exec {
namespace {

TEST(AllocateAlignedTest, EmptyAndSmallBuffersAreAlignedAndNonNull) {
  for (int64_t bytes : {0, 1, 100, 4096}) {
    StatusOr<AlignedBuffer> buffer = AllocateAligned(bytes);
    ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
    ASSERT_NE(buffer->data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % kBufferAlignment,
              0u);
    EXPECT_EQ(buffer->size(), static_cast<size_t>(bytes));
  }
}

TEST(AllocateAlignedTest, MoreThanTheMachineHoldsIsResourceExhausted) {
  // 16 TB (a tensor<4000000000000xf32>), and the largest size there is.
  for (int64_t bytes :
       {int64_t{16'000'000'000'000}, std::numeric_limits<int64_t>::max()}) {
    StatusOr<AlignedBuffer> buffer = AllocateAligned(bytes);
    ASSERT_FALSE(buffer.ok());
    EXPECT_EQ(buffer.status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(buffer.status().message().find("more than this machine's memory"),
              std::string_view::npos)
        << buffer.status().ToString();
  }
}

TEST(AllocateAlignedTest, NegativeSizeIsAnError) {
  StatusOr<AlignedBuffer> buffer = AllocateAligned(-1);
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace kiln::exec
