// The strided copy behind the shape kernels, against index arithmetic done
// element by element.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "exec/kernels/shape.h"

namespace kiln::exec {
namespace {

TEST(StridedCopyTest, TransposeMatchesElementwiseIndexing) {
  // A [2, 3, 4] array transposed to [4, 2, 3] (permutation [2, 0, 1]).
  std::vector<int32_t> in(24);
  std::iota(in.begin(), in.end(), 0);
  StridedCopy copy;
  copy.dims = {4, 2, 3};
  copy.source_strides = {1, 12, 4};
  copy.target_strides = {6, 3, 1};
  copy.Simplify();
  std::vector<int32_t> out(24, -1);
  copy.Run(reinterpret_cast<const std::byte*>(in.data()),
           reinterpret_cast<std::byte*>(out.data()), 4);
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(out[(k * 2 + i) * 3 + j], in[(i * 3 + j) * 4 + k]);
      }
    }
  }
}

TEST(StridedCopyTest, NegativeAndZeroStridesReverseAndBroadcast) {
  std::vector<int16_t> in = {1, 2, 3};
  StridedCopy copy;
  copy.dims = {2, 3};
  copy.source_offset = 2;
  copy.source_strides = {0, -1};  // broadcast rows of the reversed vector
  copy.target_strides = {3, 1};
  copy.Simplify();
  std::vector<int16_t> out(6);
  copy.Run(reinterpret_cast<const std::byte*>(in.data()),
           reinterpret_cast<std::byte*>(out.data()), 2);
  EXPECT_EQ(out, (std::vector<int16_t>{3, 2, 1, 3, 2, 1}));
}

// Reversed rows (jnp.flip) of every element size, of lengths around the
// vector widths, each element landing where index arithmetic puts it.
TEST(StridedCopyTest, ReversedRowsOfEveryElementSize) {
  for (int64_t bytes : {1, 2, 4, 8, 16}) {
    for (int64_t length : {1, 7, 8, 31, 33, 1000}) {
      SCOPED_TRACE(std::to_string(bytes) + " bytes, " +
                   std::to_string(length));
      std::vector<std::byte> in(bytes * length), out(bytes * length);
      for (size_t i = 0; i < in.size(); ++i) {
        in[i] = static_cast<std::byte>((i * 37 + 11) & 0xff);
      }
      StridedCopy copy;
      copy.dims = {length};
      copy.source_offset = length - 1;
      copy.source_strides = {-1};
      copy.target_strides = {1};
      copy.Simplify();
      copy.Run(in.data(), out.data(), bytes);
      for (int64_t i = 0; i < length; ++i) {
        for (int64_t b = 0; b < bytes; ++b) {
          ASSERT_EQ(out[i * bytes + b], in[(length - 1 - i) * bytes + b])
              << i << " byte " << b;
        }
      }
    }
  }
}

TEST(StridedCopyTest, MergesContiguousDimensionsAndHandlesEmptyArrays) {
  StridedCopy copy;
  copy.dims = {2, 3, 4};
  copy.source_strides = {12, 4, 1};
  copy.target_strides = {12, 4, 1};
  copy.Simplify();
  EXPECT_EQ(copy.dims, (std::vector<int64_t>{24}));
  StridedCopy empty;
  empty.dims = {3, 0};
  empty.source_strides = {0, 1};
  empty.target_strides = {0, 1};
  empty.Simplify();
  EXPECT_EQ(empty.num_elements(), 0);
  empty.Run(nullptr, nullptr, 4);  // touches nothing
}

}  // namespace
}  // namespace kiln::exec
