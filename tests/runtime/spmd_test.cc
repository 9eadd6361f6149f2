// Partitioned programs through the runtime: each device gets its tile of a
// global value, the program runs as one launch, and each device's output
// tile is checked against the tile of the global result computed here with
// plain loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "compile/sharding.h"
#include "launch_test_support.h"
#include "support/test_support.h"

namespace kiln::runtime {
namespace {

using SpmdTest = LaunchTest;

// Row-major tile (r, c) of a rows x cols matrix cut into tr x tc tiles.
std::vector<float> Tile(const std::vector<float>& global, int rows, int cols,
                        int tr, int tc, int r, int c) {
  const int h = rows / tr, w = cols / tc;
  std::vector<float> tile;
  for (int i = 0; i < h; ++i) {
    for (int j = 0; j < w; ++j) {
      tile.push_back(global[(r * h + i) * cols + c * w + j]);
    }
  }
  return tile;
}

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST_F(SpmdTest, ElementwiseOnTilesOfOneAxis) {
  auto executable = Compile(R"(
module @dp attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %two = stablehlo.constant dense<2.0> : tensor<8xf32>
    %0 = stablehlo.multiply %a, %two : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  EXPECT_EQ((*executable)->parameters()[0].shape.dims(),
            (std::vector<int64_t>{2}));
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) arguments.push_back({{2.0f * d, 2.0f * d + 1}});
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(outputs[d][0], (std::vector<float>{4.0f * d, 4.0f * d + 2}));
  }
}

TEST_F(SpmdTest, CompositeDecompositionsSurviveThePartitioner) {
  // JAX writes erf and top_k as composites whose decomposition is a
  // private function nothing calls: the partitioner must keep it.
  auto executable = Compile(R"(
module @c attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = stablehlo.composite "test.twice" %a {decomposition = @twice.impl} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @twice.impl(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %x, %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})",
                            1, 2);
  ASSERT_OK(executable.status());
  std::vector<std::vector<std::vector<float>>> arguments = {{{1.0f, 2.0f}},
                                                            {{3.0f, 4.0f}}};
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  EXPECT_EQ(outputs[0][0], (std::vector<float>{2.0f, 4.0f}));
  EXPECT_EQ(outputs[1][0], (std::vector<float>{6.0f, 8.0f}));
}

TEST_F(SpmdTest, TransposeMovesTilesBetweenDevices) {
  // A 4x6 matrix cut [{"y"}, {"x"}] on x=2, y=2 (device = 2x + y), its
  // transpose returned cut [{"x"}, {"y"}].
  auto executable = Compile(R"(
module @t attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%a: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) -> (tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    return %0 : tensor<6x4xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::vector<float> global = Iota(24);
  std::vector<float> transposed(24);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 6; ++j) transposed[j * 4 + i] = global[i * 6 + j];
  }
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    const int x = d / 2, y = d % 2;
    arguments.push_back({Tile(global, 4, 6, 2, 2, y, x)});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    const int x = d / 2, y = d % 2;
    EXPECT_EQ(outputs[d][0], Tile(transposed, 6, 4, 2, 2, x, y)) << d;
  }
}

TEST_F(SpmdTest, ResultInAnotherCutMovesByAllToAll) {
  // A 4x8 matrix cut on its rows over x=4, returned cut on its columns:
  // each device sends a quarter of its tile to each other one, and nobody
  // assembles the whole matrix.
  auto executable = Compile(R"(
module @a2a attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
    %0 = stablehlo.negate %a : tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_NE(text.find("all_to_all"), std::string::npos) << text;
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  const std::vector<float> global = Iota(32);
  std::vector<float> negated = global;
  for (float& v : negated) v = -v;
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({Tile(global, 4, 8, 4, 1, d, 0)});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(outputs[d][0], Tile(negated, 4, 8, 1, 4, 0, d)) << d;
  }
}

TEST_F(SpmdTest, SwappedAxesMoveTilesByPermutation) {
  // A 4x6 matrix cut [{"x"}, {"y"}] on x=2, y=2 (device = 2x + y),
  // returned cut [{"y"}, {"x"}]: the same four tiles, each now wanted by
  // the device at the mirrored mesh position. One collective_permute;
  // devices (0,0) and (1,1) keep theirs.
  auto executable = Compile(R"(
module @swap attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%a: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) {
    %0 = stablehlo.negate %a : tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  EXPECT_NE(text.find("collective_permute"), std::string::npos) << text;
  const std::vector<float> global = Iota(24);
  std::vector<float> negated = global;
  for (float& v : negated) v = -v;
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({Tile(global, 4, 6, 2, 2, d / 2, d % 2)});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(outputs[d][0], Tile(negated, 4, 6, 2, 2, d % 2, d / 2)) << d;
  }
}

TEST_F(SpmdTest, DroppedCutIsGatheredAmongItsOwnDevicesOnly) {
  // [{"x"}, {"y"}] to [{"y"}, {}]: the columns are gathered among the two
  // devices of each x (a 2x6 block, not the whole 4x6), then the row
  // blocks are permuted to the devices of each y.
  auto executable = Compile(R"(
module @drop attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%a: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
    %0 = stablehlo.negate %a : tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_NE(text.find("-> tensor<2x6xf32>"), std::string::npos) << text;
  EXPECT_EQ(text.find("tensor<4x6xf32>"), std::string::npos) << text;
  EXPECT_NE(text.find("collective_permute"), std::string::npos) << text;
  const std::vector<float> global = Iota(24);
  std::vector<float> negated = global;
  for (float& v : negated) v = -v;
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({Tile(global, 4, 6, 2, 2, d / 2, d % 2)});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(outputs[d][0], Tile(negated, 4, 6, 2, 1, d % 2, 0)) << d;
  }
}

TEST_F(SpmdTest, FinerCutIsASliceOfEachTile) {
  // Cut on rows over x, returned cut on rows over x and columns over y
  // (device = 2x + y): each device's new tile lies in its old one.
  auto executable = Compile(R"(
module @finer attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%a: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0 = stablehlo.negate %a : tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  EXPECT_EQ(text.find("all_to_all"), std::string::npos) << text;
  const std::vector<float> global = Iota(24);
  std::vector<float> negated = global;
  for (float& v : negated) v = -v;
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({Tile(global, 4, 6, 2, 1, d / 2, 0)});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(outputs[d][0], Tile(negated, 4, 6, 2, 2, d / 2, d % 2)) << d;
  }
}

TEST_F(SpmdTest, ManualComputationRunsItsCollectivesOnTiles) {
  // shard_map(psum over "x") of a 8x4 matrix cut [{"x"}, {"y"}] on x=4,
  // y=2; the result's sharding is the manual computation's (not written on
  // the result), and the executable reports it.
  auto executable = Compile(R"(
module @sm attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<2x4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<2x2xf32>) {
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
      sdy.return %1 : tensor<2x2xf32>
    } : (tensor<8x4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
})",
                            1, 8);
  ASSERT_OK(executable.status());
  const std::vector<float> global = Iota(32);
  // The sum of the four 2x4 row blocks.
  std::vector<float> sum(8, 0.0f);
  for (int block = 0; block < 4; ++block) {
    for (int k = 0; k < 8; ++k) sum[k] += global[block * 8 + k];
  }
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 8; ++d) {
    arguments.push_back({Tile(global, 8, 4, 4, 2, d / 2, d % 2)});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(outputs[d][0], Tile(sum, 2, 4, 1, 2, 0, d % 2)) << d;
  }
  // [{}, {"y"}]: tiles [1, 2], four copies (the x coordinate).
  compile::TileLayout layout;
  layout.tiles = {1, 2};
  for (int d = 0; d < 8; ++d) {
    layout.tile_of_device.push_back({0, d % 2});
    layout.copy_of_device.push_back(d / 2);
  }
  ASSERT_EQ((*executable)->output_shardings().size(), 1u);
  EXPECT_EQ((*executable)->output_shardings()[0],
            compile::SerializeOpSharding(layout));
}

TEST_F(SpmdTest, GspmdManualRegionWithShapeCalls) {
  // GSPMD's shard_map form: @Sharding, @SPMDFullToShardShape, a local op
  // (adding the partition id), @SPMDShardToFullShape.
  auto executable = Compile(R"(
module @g attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%a: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> (tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) {
    %s = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<4xf32>) -> tensor<4xf32>
    %l = stablehlo.custom_call @SPMDFullToShardShape(%s) {mhlo.sharding = "{manual}"} : (tensor<4xf32>) -> tensor<2xf32>
    %p = stablehlo.partition_id : tensor<ui32>
    %f = stablehlo.convert %p : (tensor<ui32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %r = stablehlo.add %l, %b : tensor<2xf32>
    %m = stablehlo.custom_call @Sharding(%r) {mhlo.sharding = "{manual}"} : (tensor<2xf32>) -> tensor<2xf32>
    %g = stablehlo.custom_call @SPMDShardToFullShape(%m) {mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<2xf32>) -> tensor<4xf32>
    return %g : tensor<4xf32>
  }
})",
                            1, 2);
  ASSERT_OK(executable.status());
  ASSERT_OK_AND_ASSIGN(auto outputs,
                       Launch<float>(**executable, {{{1, 2}}, {{3, 4}}}));
  EXPECT_EQ(outputs[0][0], (std::vector<float>{1, 2}));
  EXPECT_EQ(outputs[1][0], (std::vector<float>{4, 5}));
}

// Plain loops: (m x k) @ (k x n).
std::vector<float> MatMul(const std::vector<float>& a,
                          const std::vector<float>& b, int m, int k, int n) {
  std::vector<float> c(m * n, 0.0f);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      for (int p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[p * n + j];
    }
  }
  return c;
}

TEST_F(SpmdTest, DataParallelDotComputesOnTilesWithoutGathering) {
  auto executable = Compile(R"(
module @dp attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %b: tensor<4x6xf32>) -> (tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %1 = stablehlo.tanh %0 : tensor<8x6xf32>
    return %1 : tensor<8x6xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  EXPECT_EQ(text.find("all_reduce"), std::string::npos) << text;
  const std::vector<float> a = Iota(32), b = Iota(24);
  std::vector<float> c = MatMul(a, b, 8, 4, 6);
  for (float& v : c) v = std::tanh(v * 1e-3f);
  std::vector<float> scaled_a = a;
  for (float& v : scaled_a) v *= 1e-3f;
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({Tile(scaled_a, 8, 4, 4, 1, d, 0), b});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    std::vector<float> expected = Tile(c, 8, 6, 4, 1, d, 0);
    ASSERT_EQ(outputs[d][0].size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(outputs[d][0][i], expected[i], 1e-5) << d << " " << i;
    }
  }
}

TEST_F(SpmdTest, BatchCutConvolutionRunsOnTiles) {
  // A 1x1 convolution of an NHWC batch cut over 4 devices: each device
  // convolves its 2 images (a per-pixel product with the 3x5 kernel), and
  // nothing gathers the batch.
  auto executable = Compile(R"(
module @conv attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%x: tensor<8x2x2x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}, {}]>}, %w: tensor<1x1x3x5xf32>) -> (tensor<8x2x2x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}, {}]>}) {
    %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x2x2x3xf32>, tensor<1x1x3x5xf32>) -> tensor<8x2x2x5xf32>
    return %0 : tensor<8x2x2x5xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  EXPECT_NE(text.find("tensor<2x2x2x3xf32>"), std::string::npos) << text;
  const std::vector<float> x = Iota(8 * 2 * 2 * 3), w = Iota(15);
  // Every pixel (32 of them, row-major NHW) times the kernel.
  const std::vector<float> y = MatMul(x, w, 32, 3, 5);
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({Tile(x, 32, 3, 4, 1, d, 0), w});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(outputs[d][0], Tile(y, 32, 5, 4, 1, d, 0)) << d;
  }
}

TEST_F(SpmdTest, ChannelCutConvolutionAddsPartialResults) {
  // The input channels and the kernel's input channels cut alike over 3
  // devices: each device convolves its channel and an all_reduce adds the
  // partial results, which every device returns whole.
  auto executable = Compile(R"(
module @conv attributes {mhlo.num_partitions = 3 : i32} {
  sdy.mesh @mesh = <["x"=3]>
  func.func @main(%x: tensor<4x2x2x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {"x"}]>}, %w: tensor<1x1x3x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"x"}, {}]>}) -> tensor<4x2x2x5xf32> {
    %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<4x2x2x3xf32>, tensor<1x1x3x5xf32>) -> tensor<4x2x2x5xf32>
    return %0 : tensor<4x2x2x5xf32>
  }
})",
                            1, 3);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  EXPECT_NE(text.find("all_reduce"), std::string::npos) << text;
  const std::vector<float> x = Iota(16 * 3), w = Iota(15);
  const std::vector<float> y = MatMul(x, w, 16, 3, 5);
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 3; ++d) {
    arguments.push_back(
        {Tile(x, 16, 3, 1, 3, 0, d), Tile(w, 3, 5, 3, 1, d, 0)});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 3; ++d) EXPECT_EQ(outputs[d][0], y) << d;
}

// The 1-D convolution of one image of one channel, with plain loops: the
// input dilated by `base` and padded (lo, hi), windows of `w.size()` taps
// `dilation` apart, `stride` between outputs.
std::vector<float> Convolve1D(const std::vector<float>& x,
                              const std::vector<float>& w, int stride, int lo,
                              int hi, int base, int dilation) {
  std::vector<float> padded(lo, 0.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    if (i > 0) padded.insert(padded.end(), base - 1, 0.0f);
    padded.push_back(x[i]);
  }
  padded.insert(padded.end(), hi, 0.0f);
  const int window = (static_cast<int>(w.size()) - 1) * dilation + 1;
  std::vector<float> y;
  for (int start = 0; start + window <= static_cast<int>(padded.size());
       start += stride) {
    float sum = 0.0f;
    for (size_t k = 0; k < w.size(); ++k) {
      sum += padded[start + k * dilation] * w[k];
    }
    y.push_back(sum);
  }
  return y;
}

// A 1-D convolution (dims [b, 0, f]) of 16 values cut over 4 devices, with
// `window` written in the program's syntax.
std::string SpatialConvolution(const std::string& window, int kernel,
                               int outputs, bool kernel_cut) {
  const std::string k = std::to_string(kernel), o = std::to_string(outputs);
  const std::string kernel_sharding =
      kernel_cut ? R"( {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>})"
                 : "";
  const std::string result_sharding =
      kernel_cut ? ""
                 : R"( {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {}]>})";
  return R"(
module @halo attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%x: tensor<1x16x1xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {}]>}, %w: tensor<)" +
         k + R"(x1x1xf32>)" + kernel_sharding + R"() -> (tensor<1x)" + o +
         R"(x1xf32>)" + result_sharding + R"() {
    %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {)" +
         window +
         R"(} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x16x1xf32>, tensor<)" +
         k + R"(x1x1xf32>) -> tensor<1x)" + o + R"(x1xf32>
    return %0 : tensor<1x)" +
         o + R"(x1xf32>
  }
})";
}

struct HaloCase {
  std::string window;
  int kernel, stride, lo, hi, base, dilation;
  bool kernel_cut;
};

class SpatialCutTest : public LaunchTest,
                       public ::testing::WithParamInterface<HaloCase> {};

TEST_P(SpatialCutTest, ConvolutionExchangesHalosInsteadOfGathering) {
  // Each device holds 4 of the 16 values. With the kernel whole, each
  // computes its own quarter of the output from its values and the ones
  // its neighbours send (collective_permutes); with the kernel cut alike
  // (a weight gradient), each adds its part of every output (all_reduce).
  // Nobody assembles the whole input.
  const HaloCase& c = GetParam();
  const std::vector<float> x = Iota(16);
  std::vector<float> w(c.kernel);
  for (int k = 0; k < c.kernel; ++k) w[k] = 1.0f + 0.5f * k;
  const std::vector<float> y =
      Convolve1D(x, w, c.stride, c.lo, c.hi, c.base, c.dilation);
  auto executable =
      Compile(SpatialConvolution(c.window, c.kernel, static_cast<int>(y.size()),
                                 c.kernel_cut),
              1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  EXPECT_NE(text.find("collective_permute"), std::string::npos) << text;
  EXPECT_EQ(text.find("all_reduce") != std::string::npos, c.kernel_cut) << text;
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({Tile(x, 1, 16, 1, 4, 0, d),
                         c.kernel_cut ? Tile(w, 1, c.kernel, 1, 4, 0, d) : w});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  const int size = static_cast<int>(y.size());
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(outputs[d][0], c.kernel_cut ? y : Tile(y, 1, size, 1, 4, 0, d))
        << d;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Windows, SpatialCutTest,
    ::testing::Values(
        // 3 taps, "same" padding: one value from each neighbour.
        HaloCase{"pad = [[1, 1]]", 3, 1, 1, 1, 1, 1, false},
        // 5 taps 2 apart: a whole tile from each neighbour.
        HaloCase{"pad = [[4, 4]], rhs_dilate = [2]", 5, 1, 4, 4, 1, 2, false},
        // Stride 2: two values from the right neighbour only.
        HaloCase{"stride = [2], pad = [[0, 1]]", 3, 2, 0, 1, 1, 1, false},
        // The input dilated by 2 (a strided convolution's input gradient).
        HaloCase{"pad = [[1, 2]], lhs_dilate = [2]", 3, 1, 1, 2, 2, 1, false},
        // The window cut alike: 16 taps, 4 on each device, 3 outputs.
        HaloCase{"pad = [[1, 1]]", 16, 1, 1, 1, 1, 1, true}));

// The ids of the gather and scatter tests, as floats (the programs convert
// them, which keeps their cut, so that every argument is f32).
const std::vector<float> kIds = {4, 0, 3, 3, 1, 2, 0, 4};

TEST_F(SpmdTest, GatherAtCutIndicesRunsOnTiles) {
  // An embedding lookup: a whole 5x2 table, 8 ids cut over 4 devices. Each
  // device gathers the rows of its 2 ids; nobody gathers the ids.
  auto executable = Compile(R"(
module @emb attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%table: tensor<5x2xf32>, %idsf: tensor<8x1xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %ids = stablehlo.convert %idsf : (tensor<8x1xf32>) -> tensor<8x1xi32>
    %0 = "stablehlo.gather"(%table, %ids) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>}> : (tensor<5x2xf32>, tensor<8x1xi32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  const std::vector<float> table = Iota(10);
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({table, {kIds[2 * d], kIds[2 * d + 1]}});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    std::vector<float> expected;
    for (int k = 0; k < 2; ++k) {
      const int row = static_cast<int>(kIds[2 * d + k]);
      expected.push_back(table[2 * row]);
      expected.push_back(table[2 * row + 1]);
    }
    EXPECT_EQ(outputs[d][0], expected) << d;
  }
}

TEST_F(SpmdTest, ScatterAtCutIndicesCombinesEachDevicesPart) {
  // 8 updates at 8 ids, both cut over 4 devices, into a whole operand of 5
  // values: each device scatters its 2 updates and an all_reduce combines
  // the devices' results. The sum counts the operand once; the maximum
  // takes it on every device.
  auto executable = Compile(R"(
module @scatter attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%base: tensor<5xf32>, %idsf: tensor<8x1xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %updates: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<5xf32>, tensor<5xf32>) {
    %ids = stablehlo.convert %idsf : (tensor<8x1xf32>) -> tensor<8x1xi32>
    %sum = "stablehlo.scatter"(%base, %ids, %updates) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<5xf32>, tensor<8x1xi32>, tensor<8xf32>) -> tensor<5xf32>
    %max = "stablehlo.scatter"(%base, %ids, %updates) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) : (tensor<5xf32>, tensor<8x1xi32>, tensor<8xf32>) -> tensor<5xf32>
    return %sum, %max : tensor<5xf32>, tensor<5xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  EXPECT_NE(text.find("all_reduce"), std::string::npos) << text;
  const std::vector<float> base = {10, 20, 30, 40, 50};
  const std::vector<float> updates = {1, 2, 4, 8, 16, 32, 64, 128};
  std::vector<float> sum = base, max = base;
  for (size_t i = 0; i < kIds.size(); ++i) {
    const int at = static_cast<int>(kIds[i]);
    sum[at] += updates[i];
    max[at] = std::max(max[at], updates[i]);
  }
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({base,
                         {kIds[2 * d], kIds[2 * d + 1]},
                         {updates[2 * d], updates[2 * d + 1]}});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(outputs[d][0], sum) << d;
    EXPECT_EQ(outputs[d][1], max) << d;
  }
}

TEST_F(SpmdTest, GatherFromRowsCutOverDevicesAddsMaskedRows) {
  // A vocabulary-parallel lookup: the 8x2 table's rows cut over 4 devices,
  // the 8 ids whole. Each device gathers the rows it holds (zeros for the
  // others) and an all_reduce adds them; nobody gathers the table.
  auto executable = Compile(R"(
module @vocab attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%table: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %idsf: tensor<8x1xf32>) -> tensor<8x2xf32> {
    %ids = stablehlo.convert %idsf : (tensor<8x1xf32>) -> tensor<8x1xi32>
    %0 = "stablehlo.gather"(%table, %ids) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>}> : (tensor<8x2xf32>, tensor<8x1xi32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  EXPECT_NE(text.find("all_reduce"), std::string::npos) << text;
  const std::vector<float> table = Iota(16);
  const std::vector<float> ids = {7, 0, 3, 3, 1, 6, 0, 4};
  std::vector<float> expected;
  for (float id : ids) {
    expected.push_back(table[2 * static_cast<int>(id)]);
    expected.push_back(table[2 * static_cast<int>(id) + 1]);
  }
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({Tile(table, 8, 2, 4, 1, d, 0), ids});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) EXPECT_EQ(outputs[d][0], expected) << d;
}

TEST_F(SpmdTest, ScatterIntoRowsCutOverDevicesStaysOnEachDevice) {
  // The same table, updated at whole ids: each device applies the updates
  // of its own rows (the others fall outside its tile and are skipped),
  // with no collective at all; the result keeps the cut.
  auto executable = Compile(R"(
module @vocab attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%table: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %idsf: tensor<8x1xf32>, %updates: tensor<8x2xf32>) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %ids = stablehlo.convert %idsf : (tensor<8x1xf32>) -> tensor<8x1xi32>
    %0 = "stablehlo.scatter"(%table, %ids, %updates) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x2xf32>, tensor<8x1xi32>, tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
})",
                            1, 4);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  for (const char* collective :
       {"all_gather", "all_reduce", "collective_permute", "all_to_all"}) {
    EXPECT_EQ(text.find(collective), std::string::npos) << text;
  }
  const std::vector<float> table = Iota(16);
  const std::vector<float> ids = {7, 0, 3, 3, 1, 6, 0, 4};
  std::vector<float> updates(16);
  for (int i = 0; i < 16; ++i) updates[i] = 100.0f * (i + 1);
  std::vector<float> expected = table;
  for (int i = 0; i < 8; ++i) {
    const int row = static_cast<int>(ids[i]);
    expected[2 * row] += updates[2 * i];
    expected[2 * row + 1] += updates[2 * i + 1];
  }
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 4; ++d) {
    arguments.push_back({Tile(table, 8, 2, 4, 1, d, 0), ids, updates});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(outputs[d][0], Tile(expected, 8, 2, 4, 1, d, 0)) << d;
  }
}

TEST_F(SpmdTest, SplitContractionAndReductionAddPartialResults) {
  // (4x8 cut on its columns) @ (8x3 cut on its rows): each device has a
  // partial product; the row sums of a cut dimension likewise.
  auto executable = Compile(R"(
module @tp attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %b: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x3xf32>, tensor<4xf32>) {
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %1 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    return %0, %1 : tensor<4x3xf32>, tensor<4xf32>
  }
})",
                            1, 2);
  ASSERT_OK(executable.status());
  const std::string& text = (*executable)->optimized_text();
  EXPECT_EQ(text.find("all_gather"), std::string::npos) << text;
  EXPECT_NE(text.find("all_reduce"), std::string::npos) << text;
  const std::vector<float> a = Iota(32), b = Iota(24);
  const std::vector<float> c = MatMul(a, b, 4, 8, 3);
  std::vector<float> row_sums(4, 0.0f);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 8; ++j) row_sums[i] += a[i * 8 + j];
  }
  std::vector<std::vector<std::vector<float>>> arguments;
  for (int d = 0; d < 2; ++d) {
    arguments.push_back({Tile(a, 4, 8, 1, 2, 0, d), Tile(b, 8, 3, 2, 1, d, 0)});
  }
  ASSERT_OK_AND_ASSIGN(auto outputs, Launch<float>(**executable, arguments));
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(outputs[d][0], c) << d;
    EXPECT_EQ(outputs[d][1], row_sums) << d;
  }
}

TEST_F(SpmdTest, UnreducedValuesArePartialSums) {
  // An argument held as partial sums over "x" is their sum; a result left
  // unreduced goes out as the value on the first device of each group and
  // zeros on the others.
  auto executable = Compile(R"(
module @u attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"x"}>}) -> (tensor<4xf32>, tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"x"}>}) {
    %0 = stablehlo.multiply %a, %a : tensor<4xf32>
    return %a, %0 : tensor<4xf32>, tensor<4xf32>
  }
})",
                            1, 2);
  ASSERT_OK(executable.status());
  ASSERT_OK_AND_ASSIGN(
      auto outputs,
      Launch<float>(**executable, {{{1, 2, 3, 4}}, {{10, 20, 30, 40}}}));
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(outputs[d][0], (std::vector<float>{11, 22, 33, 44})) << d;
  }
  EXPECT_EQ(outputs[0][1], (std::vector<float>{121, 484, 1089, 1936}));
  EXPECT_EQ(outputs[1][1], (std::vector<float>{0, 0, 0, 0}));
}

TEST_F(SpmdTest, UnknownMeshesAreRefusedWithTheirName) {
  auto unknown_mesh = Compile(R"(
module @m attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@nowhere, [{"x"}]>}) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
})",
                              1, 2);
  ASSERT_FALSE(unknown_mesh.ok());
  EXPECT_NE(unknown_mesh.status().message().find("@nowhere"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::runtime
