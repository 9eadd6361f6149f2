// Copies between devices and memory spaces, raw copies, and buffers that
// carry errors instead of bytes.
#include <cstring>
#include <thread>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

class BufferCopyTest : public PluginTest {
 protected:
  BufferCopyTest() : PluginTest(4) {}

  PJRT_Buffer* CopyToDevice(PJRT_Buffer* buffer, PJRT_Device* device) {
    auto args = KILN_ARGS(PJRT_Buffer_CopyToDevice_Args);
    args.buffer = buffer;
    args.dst_device = device;
    ErrorInfo info = TakeError(api_, api_->PJRT_Buffer_CopyToDevice(&args));
    EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
    return args.dst_buffer;
  }
  PJRT_Buffer* CopyToMemory(PJRT_Buffer* buffer, PJRT_Memory* memory) {
    auto args = KILN_ARGS(PJRT_Buffer_CopyToMemory_Args);
    args.buffer = buffer;
    args.dst_memory = memory;
    ErrorInfo info = TakeError(api_, api_->PJRT_Buffer_CopyToMemory(&args));
    EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
    return args.dst_buffer;
  }
  PJRT_Device* DeviceOf(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_Device_Args);
    args.buffer = buffer;
    EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_Device(&args)).code,
              PJRT_Error_Code_OK);
    return args.device;
  }
  PJRT_Memory* MemoryOf(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_Memory_Args);
    args.buffer = buffer;
    EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_Memory(&args)).code,
              PJRT_Error_Code_OK);
    return args.memory;
  }
  PJRT_Buffer* ErrorBuffer(PJRT_Error_Code code, const std::string& message) {
    return ErrorBufferF32(code, message, {3});
  }
};

TEST_F(BufferCopyTest, CopyToEveryDevice) {
  std::vector<PJRT_Device*> devices = Devices();
  ASSERT_EQ(devices.size(), 4u);
  PJRT_Buffer* source = UploadF32({1.5f, -2.5f, 3.25f}, {3}, devices[0]);
  for (PJRT_Device* device : devices) {
    PJRT_Buffer* copy = CopyToDevice(source, device);
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(DeviceOf(copy), device);
    EXPECT_EQ(MemoryOf(copy), DefaultMemory(device));
    EXPECT_EQ(DownloadF32(copy), (std::vector<float>{1.5f, -2.5f, 3.25f}));
    DestroyBuffer(copy);
  }
  DestroyBuffer(source);
}

TEST_F(BufferCopyTest, CopyToEveryMemorySpaceAndBack) {
  PJRT_Device* device = Devices()[2];
  PJRT_Buffer* source = UploadF32({4, 5, 6, 7}, {2, 2}, device);
  for (PJRT_Memory* memory : Memories(device)) {
    SCOPED_TRACE(MemoryKind(memory));
    PJRT_Buffer* copy = CopyToMemory(source, memory);
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(MemoryOf(copy), memory);
    EXPECT_EQ(DeviceOf(copy), device);
    PJRT_Buffer* back = CopyToMemory(copy, DefaultMemory(Devices()[3]));
    EXPECT_EQ(DownloadF32(back), (std::vector<float>{4, 5, 6, 7}));
    DestroyBuffer(back);
    DestroyBuffer(copy);
  }
  DestroyBuffer(source);
}

TEST_F(BufferCopyTest, UploadIntoAHostMemorySpace) {
  PJRT_Device* device = Devices()[1];
  PJRT_Memory* pinned = nullptr;
  for (PJRT_Memory* memory : Memories(device)) {
    if (MemoryKind(memory) == "pinned_host") pinned = memory;
  }
  ASSERT_NE(pinned, nullptr);
  // jaxlib passes only the memory; the device follows from it.
  float data[2] = {8, 9};
  PJRT_Buffer* buffer =
      Upload(data, PJRT_Buffer_Type_F32, {2}, nullptr, pinned);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(MemoryOf(buffer), pinned);
  EXPECT_EQ(DeviceOf(buffer), device);
  EXPECT_EQ(DownloadF32(buffer), (std::vector<float>{8, 9}));
  DestroyBuffer(buffer);
}

TEST_F(BufferCopyTest, MemoryOfAnotherDeviceIsRejectedForADevice) {
  float data[2] = {8, 9};
  std::vector<int64_t> dims = {2};
  auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client_;
  args.data = data;
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = 1;
  args.device = Devices()[0];
  args.memory = DefaultMemory(Devices()[1]);
  ErrorInfo error =
      TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("not addressable"), std::string::npos)
      << error.message;
}

TEST_F(BufferCopyTest, CopyOfACopyInFlightSeesTheFinalBytes) {
  // A chain of asynchronous copies across devices: each waits for the one
  // before it.
  std::vector<float> values(4096);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * i;
  std::vector<PJRT_Device*> devices = Devices();
  std::vector<int64_t> dims = {static_cast<int64_t>(values.size())};
  auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  upload.client = client_;
  upload.data = values.data();
  upload.type = PJRT_Buffer_Type_F32;
  upload.dims = dims.data();
  upload.num_dims = 1;
  upload.host_buffer_semantics =
      PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  upload.device = devices[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload));
  std::vector<PJRT_Buffer*> chain = {upload.buffer};
  for (int hop = 1; hop <= 8; ++hop) {
    chain.push_back(CopyToDevice(chain.back(), devices[hop % 4]));
  }
  EXPECT_EQ(DownloadF32(chain.back()), values);
  EXPECT_EQ(AwaitAndDestroy(upload.done_with_host_buffer).code,
            PJRT_Error_Code_OK);
  for (PJRT_Buffer* buffer : chain) DestroyBuffer(buffer);
}

TEST_F(BufferCopyTest, RawCopiesOfAnyRangeInsideTheBuffer) {
  std::vector<uint8_t> bytes(64);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 3);
  PJRT_Buffer* buffer =
      Upload(bytes.data(), PJRT_Buffer_Type_U8, {8, 8}, Devices()[0]);
  struct Range {
    int64_t offset, size;
    PJRT_Error_Code expected;
  };
  for (const Range& range :
       {Range{0, 64, PJRT_Error_Code_OK}, Range{10, 20, PJRT_Error_Code_OK},
        Range{64, 0, PJRT_Error_Code_OK},
        Range{60, 8, PJRT_Error_Code_INVALID_ARGUMENT},
        Range{-1, 4, PJRT_Error_Code_INVALID_ARGUMENT},
        Range{0, -4, PJRT_Error_Code_INVALID_ARGUMENT},
        Range{INT64_MAX, INT64_MAX, PJRT_Error_Code_INVALID_ARGUMENT}}) {
    SCOPED_TRACE(::testing::Message() << range.offset << "+" << range.size);
    std::vector<uint8_t> out(64, 0xEE);
    auto args = KILN_ARGS(PJRT_Buffer_CopyRawToHost_Args);
    args.buffer = buffer;
    args.dst = out.data();
    args.offset = range.offset;
    args.transfer_size = range.size;
    ErrorInfo call = TakeError(api_, api_->PJRT_Buffer_CopyRawToHost(&args));
    EXPECT_EQ(call.code, range.expected) << Describe(call);
    if (call.code != PJRT_Error_Code_OK) continue;
    EXPECT_EQ(AwaitAndDestroy(args.event).code, PJRT_Error_Code_OK);
    for (int64_t i = 0; i < range.size; ++i) {
      EXPECT_EQ(out[i], bytes[range.offset + i]);
    }
    // Nothing past the range is written.
    if (range.size < 64) EXPECT_EQ(out[range.size], 0xEE);
  }
  DestroyBuffer(buffer);
}

TEST_F(BufferCopyTest, RawCopyToAFutureDestination) {
  PJRT_Buffer* buffer = UploadF32({1, 2, 3, 4}, {4});
  auto args = KILN_ARGS(PJRT_Buffer_CopyRawToHostFuture_Args);
  args.buffer = buffer;
  args.offset = 4;
  args.transfer_size = 8;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  ASSERT_NE(args.event, nullptr);
  ASSERT_NE(args.future_ready_callback, nullptr);
  // The copy waits for its destination.
  auto is_ready = KILN_ARGS(PJRT_Event_IsReady_Args);
  is_ready.event = args.event;
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_IsReady(&is_ready));
  EXPECT_FALSE(is_ready.is_ready);
  float out[2] = {0, 0};
  std::thread provider([&] {
    PJRT_Buffer_CopyRawToHostFuture_Callback_Args ready{};
    ready.struct_size =
        PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE;
    ready.callback_data = args.callback_data;
    ready.error_code = PJRT_Error_Code_OK;
    ready.dst = out;
    args.future_ready_callback(&ready);
  });
  provider.join();
  EXPECT_EQ(AwaitAndDestroy(args.event).code, PJRT_Error_Code_OK);
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[1], 3.0f);
  DestroyBuffer(buffer);
}

TEST_F(BufferCopyTest, RawCopyToAFutureThatFails) {
  PJRT_Buffer* buffer = UploadF32({1, 2, 3, 4}, {4});
  auto args = KILN_ARGS(PJRT_Buffer_CopyRawToHostFuture_Args);
  args.buffer = buffer;
  args.offset = 0;
  args.transfer_size = 16;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_CopyRawToHostFuture(&args));
  PJRT_Buffer_CopyRawToHostFuture_Callback_Args ready{};
  ready.struct_size = PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE;
  ready.callback_data = args.callback_data;
  ready.error_code = PJRT_Error_Code_CANCELLED;
  ready.error_message = "caller gave up";
  ready.error_message_size = 14;
  args.future_ready_callback(&ready);
  ErrorInfo done = AwaitAndDestroy(args.event);
  EXPECT_EQ(done.code, PJRT_Error_Code_CANCELLED);
  EXPECT_EQ(done.message, "caller gave up");
  DestroyBuffer(buffer);
}

TEST_F(BufferCopyTest, ErrorBuffersPassTheirErrorToReadersAndCopies) {
  PJRT_Buffer* failed =
      ErrorBuffer(PJRT_Error_Code_INTERNAL, "device fell over");
  ASSERT_NE(failed, nullptr);
  // A download reports the error through its event.
  std::vector<float> out(3);
  auto to_host = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  to_host.src = failed;
  to_host.dst = out.data();
  to_host.dst_size = 12;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_ToHostBuffer(&to_host));
  ErrorInfo done = AwaitAndDestroy(to_host.event);
  EXPECT_EQ(done.code, PJRT_Error_Code_INTERNAL);
  EXPECT_EQ(done.message, "device fell over");
  // So does a copy, through the new buffer's ready event.
  PJRT_Buffer* copy = CopyToDevice(failed, Devices()[1]);
  auto ready = KILN_ARGS(PJRT_Buffer_ReadyEvent_Args);
  ready.buffer = copy;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_ReadyEvent(&ready));
  EXPECT_EQ(AwaitAndDestroy(ready.event).code, PJRT_Error_Code_INTERNAL);
  // Its address cannot be taken: it has no bytes.
  auto pointer = KILN_ARGS(PJRT_Buffer_UnsafePointer_Args);
  pointer.buffer = failed;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_UnsafePointer(&pointer)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  DestroyBuffer(copy);
  DestroyBuffer(failed);
}

TEST_F(BufferCopyTest, ErrorBuffersNeedAnError) {
  std::vector<int64_t> dims = {3};
  auto args = KILN_ARGS(PJRT_Client_CreateErrorBuffer_Args);
  args.client = client_;
  args.error_code = PJRT_Error_Code_OK;
  args.shape_dims = dims.data();
  args.shape_num_dims = 1;
  args.shape_element_type = PJRT_Buffer_Type_F32;
  args.memory = DefaultMemory(Devices()[0]);
  EXPECT_EQ(TakeError(api_, api_->PJRT_Client_CreateErrorBuffer(&args)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  SetRawEnum(args.error_code, 17);
  EXPECT_EQ(TakeError(api_, api_->PJRT_Client_CreateErrorBuffer(&args)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace kiln::testing
