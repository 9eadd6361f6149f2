// Shardy and GSPMD shardings read into tile layouts, and their OpSharding
// protos. Expected layouts are worked out by hand from the mesh order
// (row-major over the axes, device id = position unless device_ids says
// otherwise).
#include "compile/sharding.h"

#include <gtest/gtest.h>

namespace kiln::compile {
namespace {

std::map<std::string, Mesh> Meshes(std::string_view text) {
  StatusOr<Mesh> mesh = ParseMesh(text);
  EXPECT_TRUE(mesh.ok()) << mesh.status().ToString();
  return {{"mesh", mesh.ok() ? *mesh : Mesh{}}};
}

TileLayout Layout(std::string_view mesh, std::string_view sharding,
                  int64_t rank, int devices,
                  const std::vector<std::string>* only = nullptr) {
  StatusOr<TensorSharding> parsed = ParseTensorSharding(sharding);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  StatusOr<TileLayout> layout =
      LayoutOfShardy(*parsed, Meshes(mesh), rank, devices, only);
  EXPECT_TRUE(layout.ok()) << layout.status().ToString();
  return layout.ok() ? *layout : TileLayout{};
}

TEST(ShardingTest, ParsesMeshWithDeviceIds) {
  StatusOr<Mesh> mesh =
      ParseMesh("#sdy.mesh<[\"a\"=2, \"b\"=3], device_ids=[5,4,3,2,1,0]>");
  ASSERT_TRUE(mesh.ok()) << mesh.status().ToString();
  EXPECT_EQ(mesh->axis_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(mesh->axis_sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(mesh->Devices(), (std::vector<int64_t>{5, 4, 3, 2, 1, 0}));
}

TEST(ShardingTest, TwoAxesCutTwoDimensions) {
  TileLayout layout = Layout("<[\"x\"=4, \"y\"=2]>",
                             "#sdy.sharding<@mesh, [{\"x\"}, {\"y\"}]>", 2, 8);
  EXPECT_EQ(layout.tiles, (std::vector<int64_t>{4, 2}));
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(layout.tile_of_device[d], (std::vector<int64_t>{d / 2, d % 2}));
    EXPECT_EQ(layout.copy_of_device[d], 0);
  }
}

TEST(ShardingTest, UnnamedAxisMakesCopies) {
  TileLayout layout =
      Layout("<[\"x\"=4, \"y\"=2]>", "<@mesh, [{}, {\"y\"}]>", 2, 8);
  EXPECT_EQ(layout.tiles, (std::vector<int64_t>{1, 2}));
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(layout.tile_of_device[d], (std::vector<int64_t>{0, d % 2}));
    EXPECT_EQ(layout.copy_of_device[d], d / 2);  // the x coordinate
  }
}

TEST(ShardingTest, AxesOfOneDimensionAreMajorToMinor) {
  TileLayout layout =
      Layout("<[\"x\"=4, \"y\"=2]>", "<@mesh, [{\"y\", \"x\"}]>", 1, 8);
  EXPECT_EQ(layout.tiles, (std::vector<int64_t>{8}));
  for (int d = 0; d < 8; ++d) {
    int x = d / 2, y = d % 2;
    EXPECT_EQ(layout.tile_of_device[d], (std::vector<int64_t>{y * 4 + x}));
  }
}

TEST(ShardingTest, SubAxisTakesItsDigit) {
  // "x":(2)2 of an axis of 4: the coordinate's high bit.
  TileLayout layout =
      Layout("<[\"x\"=4]>", "<@mesh, [{\"x\":(2)2}, {?}]>", 2, 4);
  EXPECT_EQ(layout.tiles, (std::vector<int64_t>{2, 1}));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(layout.tile_of_device[d][0], d / 2);
    EXPECT_EQ(layout.copy_of_device[d], d % 2);
  }
}

TEST(ShardingTest, DeviceIdsReorderTheMesh) {
  TileLayout layout =
      Layout("<[\"x\"=4], device_ids=[3,2,1,0]>", "<@mesh, [{\"x\"}]>", 1, 4);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(layout.tile_of_device[d][0], 3 - d);
  }
}

TEST(ShardingTest, OnlyManualAxesCut) {
  std::vector<std::string> manual = {"x"};
  TileLayout layout = Layout("<[\"x\"=2, \"y\"=2]>",
                             "<@mesh, [{\"x\"}, {\"y\"}]>", 2, 4, &manual);
  EXPECT_EQ(layout.tiles, (std::vector<int64_t>{2, 1}));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(layout.tile_of_device[d], (std::vector<int64_t>{d / 2, 0}));
    EXPECT_EQ(layout.copy_of_device[d], d % 2);
  }
}

TEST(ShardingTest, RefusesUnknownAxesAndReadsUnreducedOnes) {
  auto meshes = Meshes("<[\"x\"=2]>");
  StatusOr<TensorSharding> unknown = ParseTensorSharding("<@mesh, [{\"z\"}]>");
  ASSERT_TRUE(unknown.ok());
  StatusOr<TileLayout> layout = LayoutOfShardy(*unknown, meshes, 1, 2);
  EXPECT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find("\"z\""), std::string::npos);
  StatusOr<TensorSharding> unreduced =
      ParseTensorSharding("<@mesh, [{}], unreduced={\"x\"}>");
  ASSERT_TRUE(unreduced.ok()) << unreduced.status().ToString();
  StatusOr<TileLayout> partial = LayoutOfShardy(*unreduced, meshes, 1, 2);
  ASSERT_TRUE(partial.ok()) << partial.status().ToString();
  // Both devices hold partial sums of the one tile, in one group.
  EXPECT_FALSE(partial->IsReplicated());
  EXPECT_EQ(partial->unreduced_index, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(partial->unreduced_group, (std::vector<int64_t>{0, 0}));
  // As JAX reads it: OpSharding type UNREDUCED.
  EXPECT_EQ(SerializeOpSharding(*partial), std::string("\x08\x06", 2));
  EXPECT_FALSE(ParseTensorSharding("<@mesh, [{\"x\"}").ok());
}

TEST(ShardingTest, ParsesShardingListsAndManualAxes) {
  StatusOr<std::vector<TensorSharding>> list = ParseShardingPerValue(
      "#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>, <@mesh, []>]>");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].dims.size(), 2u);
  EXPECT_EQ((*list)[1].dims.size(), 0u);
  StatusOr<std::vector<std::string>> axes =
      ParseManualAxes("#sdy<manual_axes{\"x\", \"y\"}>");
  ASSERT_TRUE(axes.ok()) << axes.status().ToString();
  EXPECT_EQ(*axes, (std::vector<std::string>{"x", "y"}));
}

TEST(ShardingTest, GspmdIotaWithReplicatedLastDimension) {
  StatusOr<TileLayout> layout =
      LayoutOfGspmd("{devices=[4,1,2]<=[8] last_tile_dim_replicate}", 2, 8);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->tiles, (std::vector<int64_t>{4, 1}));
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(layout->tile_of_device[d], (std::vector<int64_t>{d / 2, 0}));
    EXPECT_EQ(layout->copy_of_device[d], d % 2);
  }
}

TEST(ShardingTest, GspmdTransposedIotaAndExplicitDevices) {
  // <=[2,2]T(1,0) is the array [[0,2],[1,3]].
  StatusOr<TileLayout> iota =
      LayoutOfGspmd("{devices=[2,2]<=[2,2]T(1,0)}", 2, 4);
  ASSERT_TRUE(iota.ok()) << iota.status().ToString();
  EXPECT_EQ(iota->tile_of_device[0], (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(iota->tile_of_device[2], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(iota->tile_of_device[1], (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(iota->tile_of_device[3], (std::vector<int64_t>{1, 1}));
  StatusOr<TileLayout> listed = LayoutOfGspmd("{devices=[2,2]0,2,1,3}", 2, 4);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->tile_of_device, iota->tile_of_device);
  StatusOr<TileLayout> replicated = LayoutOfGspmd("{replicated}", 3, 4);
  ASSERT_TRUE(replicated.ok());
  EXPECT_TRUE(replicated->IsReplicated());
  EXPECT_FALSE(LayoutOfGspmd("{devices=[2,2]0,1,2}", 2, 4).ok());
  EXPECT_FALSE(LayoutOfGspmd("{manual}", 2, 4).ok());
}

TEST(ShardingTest, SerializesOpSharding) {
  TileLayout replicated;
  EXPECT_EQ(SerializeOpSharding(replicated), std::string("\x08\x00", 2));
  // [{}, {"y"}] on x=2, y=2: tiles [1, 2] with 2 copies; devices in order
  // of (tile, copy): tile 0 on devices 0 (x=0) and 2 (x=1), tile 1 on 1, 3.
  TileLayout layout =
      Layout("<[\"x\"=2, \"y\"=2]>", "<@mesh, [{}, {\"y\"}]>", 2, 4);
  const std::string expected(
      "\x08\x03"                  // type: OTHER
      "\x1a\x03\x01\x02\x02"      // tile_assignment_dimensions [1, 2, 2]
      "\x22\x04\x00\x02\x01\x03"  // tile_assignment_devices [0, 2, 1, 3]
      "\x30\x01",                 // replicate_on_last_tile_dim
      15);
  EXPECT_EQ(SerializeOpSharding(layout), expected);
}

TEST(ShardingTest, SerializesUnreducedBesideReplicatedCopies) {
  // [{"x"}, {}] unreduced={"y"} on x=2, y=2, z=2 (device x*4 + y*2 + z):
  // JAX's NamedSharding writes tiles [2, 1], then z's 2 replicated copies,
  // then y's 2 partials (subgroup types REPLICATED, UNREDUCED), devices in
  // the order of (x, z, y).
  TileLayout layout = Layout("<[\"x\"=2, \"y\"=2, \"z\"=2]>",
                             "<@mesh, [{\"x\"}, {}], unreduced={\"y\"}>", 2, 8);
  const std::string expected(
      "\x08\x03"                                  // type: OTHER
      "\x1a\x04\x02\x01\x02\x02"                  // dimensions [2, 1, 2, 2]
      "\x22\x08\x00\x02\x01\x03\x04\x06\x05\x07"  // devices
      "\x42\x02\x00\x06",                         // [REPLICATED, UNREDUCED]
      22);
  EXPECT_EQ(SerializeOpSharding(layout), expected);
  // Replicated along x, unreduced along y (x=2, y=2: device x*2 + y).
  TileLayout whole = Layout("<[\"x\"=2, \"y\"=2]>",
                            "<@mesh, [{}, {}], unreduced={\"y\"}>", 2, 4);
  const std::string expected_whole(
      "\x08\x03"
      "\x1a\x04\x01\x01\x02\x02"
      "\x22\x04\x00\x01\x02\x03"
      "\x42\x02\x00\x06",
      18);
  EXPECT_EQ(SerializeOpSharding(whole), expected_whole);
}

}  // namespace
}  // namespace kiln::compile
