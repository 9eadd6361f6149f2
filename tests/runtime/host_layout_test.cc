#include "runtime/host_layout.h"

#include <gtest/gtest.h>

#include <cstring>

#include "support/test_support.h"

namespace kiln::runtime {
namespace {

using V = std::vector<int64_t>;

Shape MakeShape(DType dtype, std::vector<int64_t> dims) {
  auto shape = Shape::Make(dtype, dims);
  EXPECT_TRUE(shape.ok()) << shape.status().ToString();
  return *shape;
}

TEST(ShapeTest, ChecksDimensions) {
  EXPECT_EQ(MakeShape(DType::kF32, {2, 3}).byte_size(), 24);
  EXPECT_EQ(MakeShape(DType::kF32, {2, 3}).ToString(), "f32[2,3]");
  EXPECT_EQ(MakeShape(DType::kS4, {5}).byte_size(), 5);
  EXPECT_EQ(MakeShape(DType::kF32, {0, INT64_MAX}).element_count(), 0);
  EXPECT_EQ(Shape::Make(DType::kF32, std::vector<int64_t>{-1}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Shape::Make(DType::kF32, std::vector<int64_t>{INT64_MAX, 2})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Shape::Make(DType::kC128, std::vector<int64_t>{INT64_MAX / 8})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Shape::Make(DType::kToken, std::vector<int64_t>{1}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      Shape::Make(DType::kU8, std::vector<int64_t>(65, 1)).status().code(),
      StatusCode::kInvalidArgument);
}

// The byte offset of element `index` (row-major order) under `strides`,
// computed directly.
int64_t OffsetOf(const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& strides, int64_t index) {
  int64_t offset = 0;
  for (size_t d = dims.size(); d-- > 0;) {
    offset += (index % dims[d]) * strides[d];
    index /= dims[d];
  }
  return offset;
}

TEST(HostLayoutTest, GatherAndScatterFollowTheStrides) {
  const std::vector<int64_t> dims = {3, 2, 4};
  Shape shape = MakeShape(DType::kS16, dims);
  const std::vector<std::vector<int64_t>> layouts = {
      DenseByteStrides(shape),                          // row-major
      *ByteStridesFromMinorToMajor(shape, V{0, 1, 2}),  // column-major
      *ByteStridesFromMinorToMajor(shape, V{1, 2, 0}), V{40, 12, 2},  // padded
  };
  for (const auto& strides : layouts) {
    SCOPED_TRACE(StrJoin(strides, ","));
    int64_t span = *CheckDestinationStrides(shape, strides, 1 << 20);
    std::vector<int16_t> dense(24);
    for (int i = 0; i < 24; ++i) dense[i] = static_cast<int16_t>(100 + i);
    std::vector<uint8_t> host(span + 8, 0xEE);
    ScatterFromDense(shape, dense.data(), host.data(), strides);
    for (int i = 0; i < 24; ++i) {
      int16_t value;
      std::memcpy(&value, host.data() + OffsetOf(dims, strides, i), 2);
      EXPECT_EQ(value, 100 + i);
    }
    std::vector<int16_t> back(24, 0);
    GatherToDense(shape, host.data(), strides, back.data());
    EXPECT_EQ(back, dense);
  }
}

TEST(HostLayoutTest, DenseStridesAreRecognized) {
  Shape shape = MakeShape(DType::kF32, {2, 1, 3});
  EXPECT_TRUE(IsDenseRowMajor(shape, V{12, 12, 4}));
  EXPECT_TRUE(IsDenseRowMajor(shape, V{12, 999, 4}));  // size-1 dim: any stride
  EXPECT_FALSE(IsDenseRowMajor(shape, V{4, 12, 8}));
  EXPECT_FALSE(IsDenseRowMajor(shape, V{12, 4}));
}

TEST(HostLayoutTest, DestinationChecks) {
  Shape shape = MakeShape(DType::kF32, {2, 3});
  EXPECT_EQ(*CheckDestinationStrides(shape, V{12, 4}, 24), 24);
  EXPECT_EQ(*CheckDestinationStrides(shape, V{4, 8}, 24), 24);
  EXPECT_FALSE(CheckDestinationStrides(shape, V{12, 4}, 23).ok());
  EXPECT_FALSE(CheckDestinationStrides(shape, V{8, 4}, 100).ok());  // overlap
  EXPECT_FALSE(CheckDestinationStrides(shape, V{-12, 4}, 100).ok());
  EXPECT_FALSE(CheckDestinationStrides(shape, V{12}, 100).ok());
  EXPECT_FALSE(ByteStridesFromMinorToMajor(shape, V{1, 1}).ok());
  int x = 0;
  EXPECT_OK(CheckHostSpan(&x, shape, std::vector<int64_t>{12, 4}));
  EXPECT_FALSE(
      CheckHostSpan(&x, shape, std::vector<int64_t>{INT64_MAX / 4, 4}).ok());
  EXPECT_FALSE(
      CheckHostSpan(&x, shape, std::vector<int64_t>{-INT64_MAX / 4, 4}).ok());
}

}  // namespace
}  // namespace kiln::runtime
