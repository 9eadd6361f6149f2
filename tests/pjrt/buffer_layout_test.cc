// Host layouts: strided uploads (BufferFromHostBuffer byte_strides) and
// laid-out downloads (ToHostBuffer host_layout, tiled or strided); device
// layouts (BufferFromHostBuffer device_layout) and the layouts executables
// take and give (the Layouts extension); all checked against values
// computed here from element indices.
#include <cstring>

#include "pjrt/extensions.h"
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

// The bytes of the 2x3 test matrix in column-major order, by hand.
std::vector<float> ColumnMajor2x3() {
  std::vector<float> values;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i) values.push_back(Value(i, j));
  return values;
}

class DeviceLayoutTest : public BufferLayoutTest {
 protected:
  // BufferFromHostBuffer of the row-major 2x3 matrix with `layout` as the
  // device layout; returns the error, or sets *buffer.
  ErrorInfo UploadWithDeviceLayout(PJRT_Buffer_MemoryLayout* layout,
                                   PJRT_Buffer** buffer) {
    static const std::vector<float> data = RowMajor2x3();
    static const std::vector<int64_t> dims = {2, 3};
    auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = client_;
    args.data = data.data();
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims.data();
    args.num_dims = 2;
    args.device = Devices()[0];
    // Copied during the call (zero-copy would hold the host memory until
    // the buffer goes, so its done event would not fire here).
    args.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    args.device_layout = layout;
    ErrorInfo call =
        TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    if (call.code != PJRT_Error_Code_OK) return call;
    EXPECT_EQ(AwaitAndDestroy(args.done_with_host_buffer).code,
              PJRT_Error_Code_OK);
    *buffer = args.buffer;
    return call;
  }
  std::vector<int64_t> ReportedOrder(PJRT_Buffer* buffer) {
    auto layout = KILN_ARGS(PJRT_Buffer_GetMemoryLayout_Args);
    layout.buffer = buffer;
    PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_GetMemoryLayout(&layout));
    EXPECT_EQ(layout.layout.type, PJRT_Buffer_MemoryLayout_Type_Tiled);
    EXPECT_EQ(layout.layout.tiled.num_tiles, 0u);
    return std::vector<int64_t>(
        layout.layout.tiled.minor_to_major,
        layout.layout.tiled.minor_to_major +
            layout.layout.tiled.minor_to_major_size);
  }
  std::vector<float> RawF32(PJRT_Buffer* buffer, size_t count) {
    std::vector<float> out(count, -1.0f);
    auto args = KILN_ARGS(PJRT_Buffer_CopyRawToHost_Args);
    args.buffer = buffer;
    args.dst = out.data();
    args.offset = 0;
    args.transfer_size = static_cast<int64_t>(count * sizeof(float));
    PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_CopyRawToHost(&args));
    EXPECT_EQ(AwaitAndDestroy(args.event).code, PJRT_Error_Code_OK);
    return out;
  }
};

TEST_F(DeviceLayoutTest, ColumnMajorDeviceLayoutIsKeptAndReported) {
  std::vector<int64_t> column_major_order = {0, 1};
  PJRT_Buffer_MemoryLayout column_major = TiledLayout(column_major_order);
  PJRT_Buffer* buffer = nullptr;
  ASSERT_EQ(UploadWithDeviceLayout(&column_major, &buffer).code,
            PJRT_Error_Code_OK);
  EXPECT_EQ(ReportedOrder(buffer), column_major_order);
  // Its bytes are column-major; reading it back gives the values in
  // row-major order, or in any host layout asked.
  EXPECT_EQ(RawF32(buffer, 6), ColumnMajor2x3());
  EXPECT_EQ(DownloadF32(buffer), RowMajor2x3());
  std::vector<float> out(6, -1.0f);
  PJRT_Buffer_MemoryLayout host = TiledLayout(column_major_order);
  ASSERT_EQ(DownloadWithLayout(buffer, &host, out.data(), 24).code,
            PJRT_Error_Code_OK);
  EXPECT_EQ(out, ColumnMajor2x3());
  // A copy to another device keeps the layout.
  auto copy = KILN_ARGS(PJRT_Buffer_CopyToDevice_Args);
  copy.buffer = buffer;
  copy.dst_device = Devices()[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_CopyToDevice(&copy));
  EXPECT_EQ(ReportedOrder(copy.dst_buffer), column_major_order);
  EXPECT_EQ(DownloadF32(copy.dst_buffer), RowMajor2x3());
  DestroyBuffer(copy.dst_buffer);
  DestroyBuffer(buffer);
}

TEST_F(DeviceLayoutTest, DenseStridesNameAnOrder) {
  // Strides of the column-major layout: element (i, j) at 4i + 8j.
  std::vector<int64_t> strides = {4, 8};
  PJRT_Buffer_MemoryLayout layout = StridedLayout(strides);
  PJRT_Buffer* buffer = nullptr;
  ASSERT_EQ(UploadWithDeviceLayout(&layout, &buffer).code, PJRT_Error_Code_OK);
  EXPECT_EQ(ReportedOrder(buffer), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(RawF32(buffer, 6), ColumnMajor2x3());
  DestroyBuffer(buffer);
}

TEST_F(DeviceLayoutTest, RowMajorIsTheDefault) {
  std::vector<int64_t> row_major_order = {1, 0};
  PJRT_Buffer_MemoryLayout row_major = TiledLayout(row_major_order);
  for (PJRT_Buffer_MemoryLayout* layout :
       {static_cast<PJRT_Buffer_MemoryLayout*>(nullptr), &row_major}) {
    PJRT_Buffer* buffer = nullptr;
    ASSERT_EQ(UploadWithDeviceLayout(layout, &buffer).code,
              PJRT_Error_Code_OK);
    EXPECT_EQ(ReportedOrder(buffer), row_major_order);
    EXPECT_EQ(RawF32(buffer, 6), RowMajor2x3());
    DestroyBuffer(buffer);
  }
}

TEST_F(DeviceLayoutTest, TilesGapsAndBadOrdersAreRefused) {
  std::vector<int64_t> order = {1, 0};
  std::vector<int64_t> tile_dims = {8, 128};
  std::vector<size_t> tile_sizes = {2};
  PJRT_Buffer_MemoryLayout tiled = TiledLayout(order);
  tiled.tiled.tile_dims = tile_dims.data();
  tiled.tiled.tile_dim_sizes = tile_sizes.data();
  tiled.tiled.num_tiles = 1;
  PJRT_Buffer* buffer = nullptr;
  EXPECT_EQ(UploadWithDeviceLayout(&tiled, &buffer).code,
            PJRT_Error_Code_UNIMPLEMENTED);
  std::vector<int64_t> padded = {20, 4};  // rows padded to 5 elements
  PJRT_Buffer_MemoryLayout gaps = StridedLayout(padded);
  EXPECT_EQ(UploadWithDeviceLayout(&gaps, &buffer).code,
            PJRT_Error_Code_UNIMPLEMENTED);
  for (std::vector<int64_t> bad :
       {std::vector<int64_t>{0, 0}, std::vector<int64_t>{2, 0},
        std::vector<int64_t>{0}}) {
    PJRT_Buffer_MemoryLayout layout = TiledLayout(bad);
    EXPECT_EQ(UploadWithDeviceLayout(&layout, &buffer).code,
              PJRT_Error_Code_INVALID_ARGUMENT);
  }
}

// A program that takes its argument and gives its result in layouts that
// JAX's `mhlo.layout_mode` names: the executable reports them through the
// Layouts extension, writes its output in its layout, and lays out anew an
// argument that arrives in another.
constexpr std::string_view kLayoutProgram = R"mlir(
func.func @main(%x: tensor<2x3xf32> {mhlo.layout_mode = "{0,1}"})
    -> (tensor<3x2xf32> {mhlo.layout_mode = "{0,1}"},
        tensor<2x3xf32> {mhlo.layout_mode = "default"}) {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %two = stablehlo.constant dense<2.0> : tensor<2x3xf32>
  %y = stablehlo.multiply %x, %two : tensor<2x3xf32>
  return %t, %y : tensor<3x2xf32>, tensor<2x3xf32>
}
)mlir";

class ExecutableLayoutTest : public DeviceLayoutTest {
 protected:
  const PJRT_Layouts_Extension* Layouts() {
    for (const PJRT_Extension_Base* e = api_->extension_start; e != nullptr;
         e = e->next) {
      if (e->type == PJRT_Extension_Type_Layouts) {
        return reinterpret_cast<const PJRT_Layouts_Extension*>(e);
      }
    }
    return nullptr;
  }
  std::string Serialized(const PJRT_Layouts_Extension* ext,
                         PJRT_Layouts_MemoryLayout* layout) {
    auto args = KILN_ARGS(PJRT_Layouts_MemoryLayout_Serialize_Args);
    args.layout = layout;
    PJRT_EXPECT_OK(api_, ext->PJRT_Layouts_MemoryLayout_Serialize(&args));
    std::string text(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_layout_deleter(args.serialized_layout);
    return text;
  }
};

TEST_F(ExecutableLayoutTest, ReportsTheLayoutsItTakesAndGives) {
  const PJRT_Layouts_Extension* ext = Layouts();
  ASSERT_NE(ext, nullptr);
  PJRT_LoadedExecutable* loaded = Compile(kLayoutProgram);
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  auto parameters =
      KILN_ARGS(PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args);
  parameters.executable = executable;
  PJRT_ASSERT_OK(api_,
                 ext->PJRT_Layouts_PJRT_Executable_GetParameterLayouts(
                     &parameters));
  ASSERT_EQ(parameters.num_parameters, 1u);
  EXPECT_EQ(Serialized(ext, parameters.layouts[0]), "{0,1}");
  auto outputs = KILN_ARGS(PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args);
  outputs.executable = executable;
  PJRT_ASSERT_OK(api_,
                 ext->PJRT_Layouts_PJRT_Executable_GetOutputLayouts(&outputs));
  ASSERT_EQ(outputs.num_outputs, 2u);
  EXPECT_EQ(Serialized(ext, outputs.layouts[0]), "{0,1}");
  EXPECT_EQ(Serialized(ext, outputs.layouts[1]), "{1,0}");
  // Dimensions stay the logical ones.
  auto dims = KILN_ARGS(PJRT_Executable_OutputDimensions_Args);
  dims.executable = executable;
  PJRT_ASSERT_OK(api_, api_->PJRT_Executable_OutputDimensions(&dims));
  ASSERT_EQ(dims.num_outputs, 2u);
  EXPECT_EQ(std::vector<int64_t>(dims.dims, dims.dims + 4),
            (std::vector<int64_t>{3, 2, 2, 3}));
  // Default layouts are row-major, and belong to the caller.
  std::vector<int64_t> shape = {4, 5, 6};
  auto client_default =
      KILN_ARGS(PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args);
  client_default.client = client_;
  client_default.type = PJRT_Buffer_Type_F32;
  client_default.dims = shape.data();
  client_default.num_dims = shape.size();
  PJRT_ASSERT_OK(api_, ext->PJRT_Layouts_PJRT_Client_GetDefaultLayout(
                           &client_default));
  EXPECT_EQ(Serialized(ext, client_default.layout), "{2,1,0}");
  auto destroy = KILN_ARGS(PJRT_Layouts_MemoryLayout_Destroy_Args);
  destroy.layout = client_default.layout;
  PJRT_EXPECT_OK(api_, ext->PJRT_Layouts_MemoryLayout_Destroy(&destroy));
  DestroyExecutable(executable);
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecutableLayoutTest, RunsOnArgumentsOfEitherLayout) {
  const PJRT_Layouts_Extension* ext = Layouts();
  ASSERT_NE(ext, nullptr);
  PJRT_LoadedExecutable* loaded = Compile(kLayoutProgram);
  ASSERT_NE(loaded, nullptr);
  std::vector<int64_t> column_major_order = {0, 1};
  PJRT_Buffer_MemoryLayout column_major = TiledLayout(column_major_order);
  PJRT_Buffer* in_layout = nullptr;
  ASSERT_EQ(UploadWithDeviceLayout(&column_major, &in_layout).code,
            PJRT_Error_Code_OK);
  PJRT_Buffer* row_major = nullptr;
  ASSERT_EQ(UploadWithDeviceLayout(nullptr, &row_major).code,
            PJRT_Error_Code_OK);
  // Expected values, by hand: the transpose (3x2, element (j, i) is
  // Value(i, j)) and the doubled matrix.
  std::vector<float> transposed;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i) transposed.push_back(Value(i, j));
  std::vector<float> doubled = RowMajor2x3();
  for (float& v : doubled) v *= 2;
  for (PJRT_Buffer* argument : {in_layout, row_major}) {
    std::vector<PJRT_Buffer*> outputs = ExecuteAndAwait(loaded, {argument});
    ASSERT_EQ(outputs.size(), 2u);
    EXPECT_EQ(DownloadF32(outputs[0]), transposed);
    EXPECT_EQ(DownloadF32(outputs[1]), doubled);
    EXPECT_EQ(ReportedOrder(outputs[0]), column_major_order);
    EXPECT_EQ(ReportedOrder(outputs[1]), (std::vector<int64_t>{1, 0}));
    // {0,1} bytes of the 3x2 transpose: its columns, i.e. the 2x3 matrix
    // row by row.
    EXPECT_EQ(RawF32(outputs[0], 6), RowMajor2x3());
    DestroyBuffers(outputs);
    // The argument was laid out anew for the run, not consumed.
    EXPECT_FALSE(IsDeleted(argument));
  }
  DestroyBuffer(in_layout);
  DestroyBuffer(row_major);
  DestroyLoadedExecutable(loaded);
}

TEST_F(ExecutableLayoutTest, BadLayoutModesAreCompileErrors) {
  for (auto [mode, code] : std::vector<std::pair<std::string, PJRT_Error_Code>>{
           {"{0,0}", PJRT_Error_Code_INVALID_ARGUMENT},
           {"{0}", PJRT_Error_Code_INVALID_ARGUMENT},
           {"{1,x}", PJRT_Error_Code_INVALID_ARGUMENT},
           {"sideways", PJRT_Error_Code_INVALID_ARGUMENT},
           {"{1,0:T(8,128)}", PJRT_Error_Code_UNIMPLEMENTED}}) {
    SCOPED_TRACE(mode);
    std::string program =
        "func.func @main(%x: tensor<2x3xf32> {mhlo.layout_mode = \"" + mode +
        "\"}) -> tensor<2x3xf32> {\n  return %x : tensor<2x3xf32>\n}\n";
    PJRT_LoadedExecutable* loaded = nullptr;
    ErrorInfo error = TryCompile(program, JaxCompileOptions(), &loaded);
    EXPECT_EQ(error.code, code) << Describe(error);
    EXPECT_NE(error.message.find("argument 0"), std::string::npos)
        << error.message;
    if (loaded != nullptr) DestroyLoadedExecutable(loaded);
  }
}

}  // namespace
}  // namespace kiln::testing
