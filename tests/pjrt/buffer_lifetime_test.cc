// How long host memory is used (host-buffer semantics, zero-copy, views of
// external memory), deletion, external references and memory statistics.
#include <cstdlib>
#include <cstring>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

class BufferLifetimeTest : public PluginTest {
 protected:
  struct Uploaded {
    PJRT_Buffer* buffer = nullptr;
    PJRT_Event* done = nullptr;
  };
  Uploaded UploadKeepingDone(const void* data, PJRT_Buffer_Type type,
                             const std::vector<int64_t>& dims,
                             PJRT_HostBufferSemantics semantics) {
    auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = client_;
    args.data = data;
    args.type = type;
    args.dims = dims.data();
    args.num_dims = dims.size();
    args.host_buffer_semantics = semantics;
    args.device = Devices()[0];
    ErrorInfo info =
        TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
    return {args.buffer, args.done_with_host_buffer};
  }
  bool IsReady(PJRT_Event* event) {
    auto args = KILN_ARGS(PJRT_Event_IsReady_Args);
    args.event = event;
    EXPECT_EQ(TakeError(api_, api_->PJRT_Event_IsReady(&args)).code,
              PJRT_Error_Code_OK);
    return args.is_ready;
  }
  void* DataPointer(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args);
    args.buffer = buffer;
    EXPECT_EQ(
        TakeError(api_, api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&args))
            .code,
        PJRT_Error_Code_OK);
    return args.device_memory_ptr;
  }
  void Delete(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_Delete_Args);
    args.buffer = buffer;
    PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_Delete(&args));
  }
  PJRT_Device_MemoryStats_Args Stats(PJRT_Device* device) {
    auto args = KILN_ARGS(PJRT_Device_MemoryStats_Args);
    args.device = device;
    PJRT_EXPECT_OK(api_, api_->PJRT_Device_MemoryStats(&args));
    return args;
  }
};

TEST_F(BufferLifetimeTest, OnlyDuringCallCopiesBeforeReturning) {
  std::vector<float> host = {1, 2, 3};
  Uploaded up =
      UploadKeepingDone(host.data(), PJRT_Buffer_Type_F32, {3},
                        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
  EXPECT_TRUE(IsReady(up.done));
  host.assign({7, 7, 7});  // the caller may reuse its memory at once
  EXPECT_EQ(DownloadF32(up.buffer), (std::vector<float>{1, 2, 3}));
  DestroyEvent(up.done);
  DestroyBuffer(up.buffer);
}

TEST_F(BufferLifetimeTest, ZeroCopyAliasesAlignedHostMemoryUntilReleased) {
  alignas(64) float host[4] = {1, 2, 3, 4};
  Uploaded up = UploadKeepingDone(host, PJRT_Buffer_Type_F32, {4},
                                  PJRT_HostBufferSemantics_kImmutableZeroCopy);
  EXPECT_EQ(DataPointer(up.buffer), static_cast<void*>(host));
  // Kiln still uses the memory: the done event waits for the buffer.
  EXPECT_FALSE(IsReady(up.done));
  EXPECT_EQ(DownloadF32(up.buffer), (std::vector<float>{1, 2, 3, 4}));
  DestroyBuffer(up.buffer);
  EXPECT_TRUE(IsReady(up.done));
  EXPECT_EQ(AwaitAndDestroy(up.done).code, PJRT_Error_Code_OK);
}

TEST_F(BufferLifetimeTest, ZeroCopyOfUnalignedMemoryCopiesInstead) {
  alignas(64) float storage[5] = {0, 1, 2, 3, 4};
  float* unaligned = storage + 1;  // 4 bytes past a 64-byte boundary
  Uploaded up = UploadKeepingDone(unaligned, PJRT_Buffer_Type_F32, {4},
                                  PJRT_HostBufferSemantics_kImmutableZeroCopy);
  EXPECT_NE(DataPointer(up.buffer), static_cast<void*>(unaligned));
  EXPECT_EQ(AwaitAndDestroy(up.done).code, PJRT_Error_Code_OK);
  EXPECT_EQ(DownloadF32(up.buffer), (std::vector<float>{1, 2, 3, 4}));
  DestroyBuffer(up.buffer);
}

TEST_F(BufferLifetimeTest, ExternalReferencesKeepTheBytesAfterDelete) {
  PJRT_Buffer* buffer = UploadF32({5, 6, 7}, {3});
  auto increase = KILN_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args);
  increase.buffer = buffer;
  PJRT_ASSERT_OK(api_,
                 api_->PJRT_Buffer_IncreaseExternalReferenceCount(&increase));
  auto* bytes = static_cast<float*>(DataPointer(buffer));
  Delete(buffer);
  // Still readable: an external reference holds the memory (a sanitizer
  // build catches a use after free here).
  EXPECT_EQ(bytes[0] + bytes[1] + bytes[2], 18.0f);
  // A deleted buffer takes no new references.
  EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_IncreaseExternalReferenceCount(
                                &increase))
                .code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  auto decrease = KILN_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  decrease.buffer = buffer;
  PJRT_ASSERT_OK(api_,
                 api_->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease));
  DestroyBuffer(buffer);
}

TEST_F(BufferLifetimeTest, DeletedBuffersRefuseToBeReadOrCopied) {
  PJRT_Buffer* buffer = UploadF32({1, 2}, {2});
  Delete(buffer);
  Delete(buffer);  // idempotent
  std::vector<float> out(2);
  auto to_host = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  to_host.src = buffer;
  to_host.dst = out.data();
  to_host.dst_size = 8;
  ErrorInfo error = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&to_host));
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_NE(error.message.find("deleted"), std::string::npos) << error.message;
  auto copy = KILN_ARGS(PJRT_Buffer_CopyToDevice_Args);
  copy.buffer = buffer;
  copy.dst_device = Devices()[0];
  EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_CopyToDevice(&copy)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  auto raw = KILN_ARGS(PJRT_Buffer_CopyRawToHost_Args);
  raw.buffer = buffer;
  raw.dst = out.data();
  raw.transfer_size = 8;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_CopyRawToHost(&raw)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  auto pointer = KILN_ARGS(PJRT_Buffer_UnsafePointer_Args);
  pointer.buffer = buffer;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_UnsafePointer(&pointer)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  // The ready event reports the deletion; the metadata stays readable.
  auto ready = KILN_ARGS(PJRT_Buffer_ReadyEvent_Args);
  ready.buffer = buffer;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_ReadyEvent(&ready));
  EXPECT_EQ(AwaitAndDestroy(ready.event).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  auto dims = KILN_ARGS(PJRT_Buffer_Dimensions_Args);
  dims.buffer = buffer;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_Dimensions(&dims));
  ASSERT_EQ(dims.num_dims, 1u);
  EXPECT_EQ(dims.dims[0], 2);
  DestroyBuffer(buffer);
}

TEST_F(BufferLifetimeTest, ViewsOfExternalMemoryAliasItAndReportRelease) {
  void* memory = std::aligned_alloc(64, 64);
  std::memset(memory, 0, 64);
  static_cast<int32_t*>(memory)[3] = 12345;
  struct Release {
    int calls = 0;
    void* pointer = nullptr;
  } release;
  std::vector<int64_t> dims = {4, 4};
  auto args = KILN_ARGS(PJRT_Client_CreateViewOfDeviceBuffer_Args);
  args.client = client_;
  args.device_buffer_ptr = memory;
  args.dims = dims.data();
  args.num_dims = 2;
  args.element_type = PJRT_Buffer_Type_S32;
  args.device = Devices()[0];
  args.on_delete_callback = [](void* pointer, void* arg) {
    auto* r = static_cast<Release*>(arg);
    ++r->calls;
    r->pointer = pointer;
  };
  args.on_delete_callback_arg = &release;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  EXPECT_EQ(DataPointer(args.buffer), memory);
  std::vector<uint8_t> bytes = Download(args.buffer);
  ASSERT_EQ(bytes.size(), 64u);
  int32_t value;
  std::memcpy(&value, bytes.data() + 12, 4);
  EXPECT_EQ(value, 12345);
  EXPECT_EQ(release.calls, 0);
  DestroyBuffer(args.buffer);
  EXPECT_EQ(release.calls, 1);
  EXPECT_EQ(release.pointer, memory);
  std::free(memory);
}

TEST_F(BufferLifetimeTest, ViewsNeedAlignedMemoryAndNoStream) {
  alignas(64) uint8_t memory[80] = {};
  std::vector<int64_t> dims = {4};
  auto args = KILN_ARGS(PJRT_Client_CreateViewOfDeviceBuffer_Args);
  args.client = client_;
  args.device_buffer_ptr = memory + 4;
  args.dims = dims.data();
  args.num_dims = 1;
  args.element_type = PJRT_Buffer_Type_F32;
  args.device = Devices()[0];
  ErrorInfo error =
      TakeError(api_, api_->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("aligned"), std::string::npos) << error.message;
  args.device_buffer_ptr = memory;
  args.stream = 42;
  EXPECT_EQ(
      TakeError(api_, api_->PJRT_Client_CreateViewOfDeviceBuffer(&args)).code,
      PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST_F(BufferLifetimeTest, UninitializedBuffersAreZeroedAndReady) {
  for (PJRT_Memory* memory : Memories(Devices()[0])) {
    std::vector<int64_t> dims = {3, 5};
    auto args = KILN_ARGS(PJRT_Client_CreateUninitializedBuffer_Args);
    args.client = client_;
    args.shape_dims = dims.data();
    args.shape_num_dims = 2;
    args.shape_element_type = PJRT_Buffer_Type_S16;
    args.memory = memory;
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_CreateUninitializedBuffer(&args));
    EXPECT_EQ(Download(args.buffer), std::vector<uint8_t>(30, 0));
    auto memory_of = KILN_ARGS(PJRT_Buffer_Memory_Args);
    memory_of.buffer = args.buffer;
    PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_Memory(&memory_of));
    EXPECT_EQ(memory_of.memory, memory);
    DestroyBuffer(args.buffer);
  }
}

TEST_F(BufferLifetimeTest, MemoryStatsCountBuffers) {
  PJRT_Device* device = Devices()[0];
  PJRT_Device_MemoryStats_Args before = Stats(device);
  std::vector<float> values(1000, 1.0f);
  PJRT_Buffer* buffer = UploadF32(values, {1000}, device);
  PJRT_Device_MemoryStats_Args during = Stats(device);
  EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 4000);
  EXPECT_TRUE(during.peak_bytes_in_use_is_set);
  EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  EXPECT_TRUE(during.num_allocs_is_set);
  EXPECT_EQ(during.num_allocs - before.num_allocs, 1);
  EXPECT_TRUE(during.largest_alloc_size_is_set);
  EXPECT_GE(during.largest_alloc_size, 4000);
  EXPECT_TRUE(during.bytes_limit_is_set);
  EXPECT_GT(during.bytes_limit, 0);
  EXPECT_FALSE(during.bytes_reserved_is_set);
  EXPECT_FALSE(during.pool_bytes_is_set);
  DestroyBuffer(buffer);
  EXPECT_EQ(Stats(device).bytes_in_use, before.bytes_in_use);
  // Clearing restarts the peak at what is in use now.
  auto clear = KILN_ARGS(PJRT_Device_ClearMemoryStats_Args);
  clear.device = device;
  PJRT_ASSERT_OK(api_, api_->PJRT_Device_ClearMemoryStats(&clear));
  EXPECT_EQ(Stats(device).peak_bytes_in_use, before.bytes_in_use);
}

TEST_F(BufferLifetimeTest, MemoryStatsWritesEveryFlagInsideTheStructOnly) {
  // Fill with a pattern that is neither true nor false, so unwritten flags
  // show up.
  PJRT_Device_MemoryStats_Args full;
  std::memset(&full, 0xAB, sizeof(full));
  full.struct_size = PJRT_Device_MemoryStats_Args_STRUCT_SIZE;
  full.extension_start = nullptr;
  full.device = Devices()[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Device_MemoryStats(&full));
  for (bool* flag :
       {&full.peak_bytes_in_use_is_set, &full.num_allocs_is_set,
        &full.largest_alloc_size_is_set, &full.bytes_limit_is_set,
        &full.bytes_reserved_is_set, &full.peak_bytes_reserved_is_set,
        &full.bytes_reservable_limit_is_set,
        &full.largest_free_block_bytes_is_set, &full.pool_bytes_is_set,
        &full.peak_pool_bytes_is_set}) {
    uint8_t raw;
    std::memcpy(&raw, flag, 1);
    EXPECT_TRUE(raw == 0 || raw == 1) << "a flag was left unwritten";
  }
  // An older caller's struct ends after bytes_in_use: nothing past it is
  // touched.
  PJRT_Device_MemoryStats_Args old;
  std::memset(&old, 0xAB, sizeof(old));
  old.struct_size =
      PJRT_STRUCT_SIZE(PJRT_Device_MemoryStats_Args, bytes_in_use);
  old.extension_start = nullptr;
  old.device = Devices()[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Device_MemoryStats(&old));
  const auto* bytes = reinterpret_cast<const uint8_t*>(&old);
  for (size_t i = old.struct_size; i < sizeof(old); ++i) {
    EXPECT_EQ(bytes[i], 0xAB) << "byte " << i << " past struct_size written";
  }
}

}  // namespace
}  // namespace kiln::testing
