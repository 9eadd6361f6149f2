// Host layouts: strided uploads (BufferFromHostBuffer byte_strides) and
// laid-out downloads (ToHostBuffer host_layout, tiled or strided), checked
// against values computed here from element indices.
#include <cstring>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

class BufferLayoutTest : public PluginTest {
 protected:
  // ToHostBuffer with `layout` into `dst_size` bytes; returns the error of
  // the call, or of the event.
  ErrorInfo DownloadWithLayout(PJRT_Buffer* buffer,
                               PJRT_Buffer_MemoryLayout* layout, void* dst,
                               size_t dst_size) {
    auto args = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
    args.src = buffer;
    args.host_layout = layout;
    args.dst = dst;
    args.dst_size = dst_size;
    ErrorInfo call = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
    if (call.code != PJRT_Error_Code_OK) return call;
    return AwaitAndDestroy(args.event);
  }
  size_t QuerySize(PJRT_Buffer* buffer, PJRT_Buffer_MemoryLayout* layout) {
    auto args = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
    args.src = buffer;
    args.host_layout = layout;
    args.dst = nullptr;
    ErrorInfo call = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
    EXPECT_EQ(call.code, PJRT_Error_Code_OK) << Describe(call);
    EXPECT_EQ(args.event, nullptr);
    return args.dst_size;
  }
};

// Layouts as frameworks build them: struct_size left unset (XLA's helpers
// do not set it), so Kiln must not depend on it.
PJRT_Buffer_MemoryLayout TiledLayout(
    const std::vector<int64_t>& minor_to_major) {
  PJRT_Buffer_MemoryLayout layout;
  std::memset(&layout, 0xCD, sizeof(layout));  // garbage where unset
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = minor_to_major.size();
  layout.tiled.num_tiles = 0;
  return layout;
}

PJRT_Buffer_MemoryLayout StridedLayout(const std::vector<int64_t>& strides) {
  PJRT_Buffer_MemoryLayout layout;
  std::memset(&layout, 0xCD, sizeof(layout));
  layout.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  layout.strides.byte_strides = strides.data();
  layout.strides.num_byte_strides = strides.size();
  return layout;
}

// Element (i, j) of the 2x3 test matrix.
float Value(int i, int j) { return 10.0f * i + j; }

std::vector<float> RowMajor2x3() {
  std::vector<float> values;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) values.push_back(Value(i, j));
  return values;
}

TEST_F(BufferLayoutTest, ColumnMajorUploadIsStoredRowMajor) {
  std::vector<float> column_major(6);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) column_major[j * 2 + i] = Value(i, j);
  std::vector<int64_t> strides = {4, 8};  // i steps one float, j two
  PJRT_Buffer* buffer = Upload(
      column_major.data(), PJRT_Buffer_Type_F32, {2, 3}, Devices()[0], nullptr,
      PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, &strides);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(DownloadF32(buffer), RowMajor2x3());
  DestroyBuffer(buffer);
}

TEST_F(BufferLayoutTest, NegativeAndZeroStridesRead) {
  // Rows in reverse order (negative stride) and one value broadcast along
  // a dimension (zero stride).
  std::vector<float> rows = {Value(1, 0), Value(1, 1), Value(1, 2),
                             Value(0, 0), Value(0, 1), Value(0, 2)};
  std::vector<int64_t> reversed = {-12, 4};
  PJRT_Buffer* buffer = Upload(
      rows.data() + 3, PJRT_Buffer_Type_F32, {2, 3}, Devices()[0], nullptr,
      PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes, &reversed);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(DownloadF32(buffer), RowMajor2x3());
  DestroyBuffer(buffer);

  float scalar = 7.5f;
  std::vector<int64_t> broadcast = {0, 0};
  buffer = Upload(&scalar, PJRT_Buffer_Type_F32, {2, 3}, Devices()[0], nullptr,
                  PJRT_HostBufferSemantics_kImmutableZeroCopy, &broadcast);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(DownloadF32(buffer), std::vector<float>(6, 7.5f));
  DestroyBuffer(buffer);
}

TEST_F(BufferLayoutTest, PaddedRowsUpload) {
  // Rows of 3 values padded to 5.
  std::vector<float> padded(10, -1.0f);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) padded[i * 5 + j] = Value(i, j);
  std::vector<int64_t> strides = {20, 4};
  PJRT_Buffer* buffer =
      Upload(padded.data(), PJRT_Buffer_Type_F32, {2, 3}, Devices()[0], nullptr,
             PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, &strides);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(DownloadF32(buffer), RowMajor2x3());
  DestroyBuffer(buffer);
}

TEST_F(BufferLayoutTest, TiledHostLayoutsOrderTheDimensions) {
  PJRT_Buffer* buffer = UploadF32(RowMajor2x3(), {2, 3});
  // Major-to-minor (what jax passes): the same bytes as no layout.
  std::vector<int64_t> row_major_order = {1, 0};
  PJRT_Buffer_MemoryLayout row_major = TiledLayout(row_major_order);
  EXPECT_EQ(QuerySize(buffer, &row_major), 24u);
  std::vector<float> out(6, 0.0f);
  ErrorInfo done = DownloadWithLayout(buffer, &row_major, out.data(), 24);
  EXPECT_EQ(done.code, PJRT_Error_Code_OK) << Describe(done);
  EXPECT_EQ(out, RowMajor2x3());
  // Column-major.
  std::vector<int64_t> column_major_order = {0, 1};
  PJRT_Buffer_MemoryLayout column_major = TiledLayout(column_major_order);
  done = DownloadWithLayout(buffer, &column_major, out.data(), 24);
  EXPECT_EQ(done.code, PJRT_Error_Code_OK) << Describe(done);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(out[j * 2 + i], Value(i, j));
  DestroyBuffer(buffer);
}

TEST_F(BufferLayoutTest, StridedHostLayoutWithPadding) {
  PJRT_Buffer* buffer = UploadF32(RowMajor2x3(), {2, 3});
  std::vector<int64_t> strides = {16, 4};  // rows padded to 4 floats
  PJRT_Buffer_MemoryLayout layout = StridedLayout(strides);
  // The layout spans one row stride plus a row: 16 + 12 bytes.
  EXPECT_EQ(QuerySize(buffer, &layout), 28u);
  std::vector<float> out(7, -1.0f);
  ErrorInfo done = DownloadWithLayout(buffer, &layout, out.data(), 28);
  EXPECT_EQ(done.code, PJRT_Error_Code_OK) << Describe(done);
  EXPECT_EQ(out,
            (std::vector<float>{Value(0, 0), Value(0, 1), Value(0, 2), -1.0f,
                                Value(1, 0), Value(1, 1), Value(1, 2)}));
  DestroyBuffer(buffer);
}

TEST_F(BufferLayoutTest, DestinationLayoutsThatDoNotFitAreRejected) {
  PJRT_Buffer* buffer = UploadF32(RowMajor2x3(), {2, 3});
  std::vector<float> out(16);
  struct Case {
    std::vector<int64_t> strides;
    size_t dst_size;
    const char* why;
  };
  const Case cases[] = {
      {{12, 4}, 20, "spans 24 bytes"}, {{4, 4}, 64, "overlap"},
      {{0, 4}, 64, "overlap"},         {{-12, 4}, 64, "negative"},
      {{12}, 64, "1 byte strides"},    {{INT64_MAX, 4}, 64, "int64"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    PJRT_Buffer_MemoryLayout layout = StridedLayout(c.strides);
    ErrorInfo error =
        DownloadWithLayout(buffer, &layout, out.data(), c.dst_size);
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  }
  // Too small for the dense layout, with no layout given.
  ErrorInfo error = DownloadWithLayout(buffer, nullptr, out.data(), 23);
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("23"), std::string::npos) << error.message;
  DestroyBuffer(buffer);
}

TEST_F(BufferLayoutTest, TiledLayoutsMustBePermutationsWithoutTiles) {
  PJRT_Buffer* buffer = UploadF32(RowMajor2x3(), {2, 3});
  std::vector<float> out(6);
  for (const std::vector<int64_t>& order :
       std::vector<std::vector<int64_t>>{{0, 0}, {0}, {2, 0}, {-1, 1}}) {
    PJRT_Buffer_MemoryLayout layout = TiledLayout(order);
    EXPECT_EQ(DownloadWithLayout(buffer, &layout, out.data(), 24).code,
              PJRT_Error_Code_INVALID_ARGUMENT);
  }
  std::vector<int64_t> order = {1, 0};
  std::vector<int64_t> tile = {8, 128};
  std::vector<size_t> tile_sizes = {2};
  PJRT_Buffer_MemoryLayout tiled = TiledLayout(order);
  tiled.tiled.tile_dims = tile.data();
  tiled.tiled.tile_dim_sizes = tile_sizes.data();
  tiled.tiled.num_tiles = 1;
  EXPECT_EQ(DownloadWithLayout(buffer, &tiled, out.data(), 24).code,
            PJRT_Error_Code_UNIMPLEMENTED);
  PJRT_Buffer_MemoryLayout unknown = TiledLayout(order);
  SetRawEnum(unknown.type, 7);
  EXPECT_EQ(DownloadWithLayout(buffer, &unknown, out.data(), 24).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  DestroyBuffer(buffer);
}

TEST_F(BufferLayoutTest, UploadStridesMustMatchTheRank) {
  std::vector<float> data(6);
  std::vector<int64_t> dims = {2, 3};
  std::vector<int64_t> strides = {4};
  auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client_;
  args.data = data.data();
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = 2;
  args.byte_strides = strides.data();
  args.num_byte_strides = 1;
  args.device = Devices()[0];
  EXPECT_EQ(TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  std::vector<int64_t> overflowing = {INT64_MAX, 4};
  args.byte_strides = overflowing.data();
  args.num_byte_strides = 2;
  ErrorInfo error =
      TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("int64"), std::string::npos) << error.message;
  for (int64_t stride : {INT64_MAX / 2, -INT64_MAX / 2}) {
    std::vector<int64_t> huge = {stride, 4};
    args.byte_strides = huge.data();
    error = TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
    EXPECT_NE(error.message.find("address space"), std::string::npos)
        << error.message;
  }
  args.byte_strides = nullptr;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST_F(BufferLayoutTest, DeviceLayoutsOtherThanRowMajorAreUnimplemented) {
  std::vector<float> data = RowMajor2x3();
  std::vector<int64_t> dims = {2, 3};
  std::vector<int64_t> row_major_order = {1, 0};
  std::vector<int64_t> column_major_order = {0, 1};
  PJRT_Buffer_MemoryLayout row_major = TiledLayout(row_major_order);
  PJRT_Buffer_MemoryLayout column_major = TiledLayout(column_major_order);
  auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client_;
  args.data = data.data();
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = 2;
  args.device = Devices()[0];
  args.device_layout = &column_major;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args)).code,
            PJRT_Error_Code_UNIMPLEMENTED);
  args.device_layout = &row_major;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
  EXPECT_EQ(AwaitAndDestroy(args.done_with_host_buffer).code,
            PJRT_Error_Code_OK);
  // The buffer reports its layout: dense, the last dimension most minor.
  auto layout = KILN_ARGS(PJRT_Buffer_GetMemoryLayout_Args);
  layout.buffer = args.buffer;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_GetMemoryLayout(&layout));
  EXPECT_EQ(layout.layout.type, PJRT_Buffer_MemoryLayout_Type_Tiled);
  EXPECT_EQ(layout.layout.tiled.num_tiles, 0u);
  ASSERT_EQ(layout.layout.tiled.minor_to_major_size, 2u);
  EXPECT_EQ(layout.layout.tiled.minor_to_major[0], 1);
  EXPECT_EQ(layout.layout.tiled.minor_to_major[1], 0);
  DestroyBuffer(args.buffer);
}

}  // namespace
}  // namespace kiln::testing
