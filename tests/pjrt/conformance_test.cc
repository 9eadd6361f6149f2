// Kiln's own versions of the tests in XLA's pjrt_c_api_test.cc that cover
// the half of the C API without a compiler (see shared/reference/
// pjrt-c-api-notes.md, section 7), run against the loaded plugin.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

class ConformanceTest : public PluginTest {};

// A fixture whose client has two devices, for assignments over several.
class TwoDeviceConformanceTest : public PluginTest {
 protected:
  TwoDeviceConformanceTest() : PluginTest(2) {}
};

TEST_F(ConformanceTest, ApiVersionIsExactlyTheHeaders) {
  EXPECT_EQ(api_->pjrt_api_version.major_version, PJRT_API_MAJOR);
  EXPECT_EQ(api_->pjrt_api_version.minor_version, PJRT_API_MINOR);
  EXPECT_EQ(api_->pjrt_api_version.minor_version, 112);
  EXPECT_EQ(api_->struct_size, sizeof(PJRT_Api));
  EXPECT_EQ(api_->struct_size, 1144u);
  EXPECT_EQ(api_->pjrt_api_version.struct_size, PJRT_Api_Version_STRUCT_SIZE);
}

TEST_F(ConformanceTest, EverySlotIsFilled) {
  int filled = 0;
#define KILN_PJRT_SLOT(name, minor, state)                                \
  EXPECT_NE(reinterpret_cast<const void*>(api_->name), nullptr) << #name; \
  filled += api_->name != nullptr;
#include "pjrt_c_api_slots.def"
  EXPECT_EQ(filled, 138);
}

TEST_F(ConformanceTest, PlatformNameIsKiln) {
  auto args = KILN_ARGS(PJRT_Client_PlatformName_Args);
  args.client = client_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_PlatformName(&args));
  EXPECT_EQ(std::string(args.platform_name, args.platform_name_size), "kiln");
}

TEST_F(ConformanceTest, PlatformVersionNamesKilnAndPjrt) {
  auto args = KILN_ARGS(PJRT_Client_PlatformVersion_Args);
  args.client = client_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_PlatformVersion(&args));
  std::string version(args.platform_version, args.platform_version_size);
  EXPECT_EQ(version.rfind("kiln ", 0), 0u) << version;
  EXPECT_NE(version.find("(PJRT 0.112)"), std::string::npos) << version;
}

TEST_F(ConformanceTest, ClientProcessIndexIsZero) {
  auto args = KILN_ARGS(PJRT_Client_ProcessIndex_Args);
  args.client = client_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_ProcessIndex(&args));
  EXPECT_EQ(args.process_index, 0);
}

int DeviceId(const PJRT_Api* api, PJRT_Device* device) {
  auto description = KILN_ARGS(PJRT_Device_GetDescription_Args);
  description.device = device;
  EXPECT_EQ(api->PJRT_Device_GetDescription(&description), nullptr);
  auto id = KILN_ARGS(PJRT_DeviceDescription_Id_Args);
  id.device_description = description.device_description;
  EXPECT_EQ(api->PJRT_DeviceDescription_Id(&id), nullptr);
  return id.id;
}

TEST_F(ConformanceTest, ClientDevicesHaveNonNegativeIds) {
  std::vector<PJRT_Device*> devices = Devices();
  ASSERT_FALSE(devices.empty());
  for (PJRT_Device* device : devices) EXPECT_GE(DeviceId(api_, device), 0);
}

TEST_F(ConformanceTest, AddressableDevicesAreAmongTheDevices) {
  auto args = KILN_ARGS(PJRT_Client_AddressableDevices_Args);
  args.client = client_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_AddressableDevices(&args));
  ASSERT_GT(args.num_addressable_devices, 0u);
  std::vector<PJRT_Device*> devices = Devices();
  for (size_t i = 0; i < args.num_addressable_devices; ++i) {
    PJRT_Device* device = args.addressable_devices[i];
    EXPECT_GE(DeviceId(api_, device), 0);
    EXPECT_NE(std::find(devices.begin(), devices.end(), device), devices.end());
  }
}

TEST_F(ConformanceTest, LookupDeviceFindsDeviceZero) {
  auto args = KILN_ARGS(PJRT_Client_LookupDevice_Args);
  args.client = client_;
  args.id = 0;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_LookupDevice(&args));
  ASSERT_NE(args.device, nullptr);
  EXPECT_EQ(DeviceId(api_, args.device), 0);
}

TEST_F(ConformanceTest, LookupAddressableDeviceFindsLocalHardwareIdZero) {
  auto args = KILN_ARGS(PJRT_Client_LookupAddressableDevice_Args);
  args.client = client_;
  args.local_hardware_id = 0;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_LookupAddressableDevice(&args));
  ASSERT_NE(args.addressable_device, nullptr);
  auto id = KILN_ARGS(PJRT_Device_LocalHardwareId_Args);
  id.device = args.addressable_device;
  PJRT_ASSERT_OK(api_, api_->PJRT_Device_LocalHardwareId(&id));
  EXPECT_EQ(id.local_hardware_id, 0);
}

TEST_F(TwoDeviceConformanceTest, DefaultDeviceAssignmentForTwoReplicas) {
  int assignment[2] = {-1, -1};
  auto args = KILN_ARGS(PJRT_Client_DefaultDeviceAssignment_Args);
  args.client = client_;
  args.num_replicas = 2;
  args.num_partitions = 1;
  args.default_assignment_size = 2;
  args.default_assignment = assignment;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(assignment[0], 0);
  EXPECT_EQ(assignment[1], 1);
}

TEST_F(ConformanceTest, DefaultDeviceAssignmentBufferTooSmall) {
  int assignment[7] = {};
  auto args = KILN_ARGS(PJRT_Client_DefaultDeviceAssignment_Args);
  args.client = client_;
  args.num_replicas = 4;
  args.num_partitions = 2;
  args.default_assignment_size = 7;
  args.default_assignment = assignment;
  ErrorInfo error =
      TakeError(api_, api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(error.message,
            "PJRT_Client_DefaultDeviceAssignment: `default_assignment_size` 7 "
            "< `num_replicas * num_partitions`, 4 * 2 = 8");
}

TEST_F(ConformanceTest, LookupDeviceNegativeId) {
  auto args = KILN_ARGS(PJRT_Client_LookupDevice_Args);
  args.client = client_;
  args.id = -1;
  ErrorInfo error = TakeError(api_, api_->PJRT_Client_LookupDevice(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message, "No matching device found for device_id -1");
}

TEST_F(ConformanceTest, LookupDeviceOutOfRangeId) {
  const int out_of_range = static_cast<int>(Devices().size());
  auto args = KILN_ARGS(PJRT_Client_LookupDevice_Args);
  args.client = client_;
  args.id = out_of_range;
  ErrorInfo error = TakeError(api_, api_->PJRT_Client_LookupDevice(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message, "No matching device found for device_id " +
                               std::to_string(out_of_range));
}

TEST_F(ConformanceTest, BufferTransferImmutableUntilTransferCompletes) {
  std::vector<float> data = {41, 42, 43, 44};
  std::vector<int64_t> dims = {4};
  auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client_;
  args.data = data.data();
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.host_buffer_semantics =
      PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  args.device = Devices()[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
  ASSERT_NE(args.done_with_host_buffer, nullptr);
  auto await = KILN_ARGS(PJRT_Event_Await_Args);
  await.event = args.done_with_host_buffer;
  EXPECT_EQ(api_->PJRT_Event_Await(&await), nullptr);
  DestroyEvent(args.done_with_host_buffer);
  EXPECT_EQ(DownloadF32(args.buffer), data);
  DestroyBuffer(args.buffer);
}

TEST_F(ConformanceTest, PluginAttributesAreUniqueAndIncludeTheVersions) {
  auto args = KILN_ARGS(PJRT_Plugin_Attributes_Args);
  PJRT_ASSERT_OK(api_, api_->PJRT_Plugin_Attributes(&args));
  std::set<std::string> names;
  std::map<std::string, const PJRT_NamedValue*> by_name;
  for (size_t i = 0; i < args.num_attributes; ++i) {
    const PJRT_NamedValue& value = args.attributes[i];
    EXPECT_EQ(value.struct_size, PJRT_NamedValue_STRUCT_SIZE);
    std::string name(value.name, value.name_size);
    EXPECT_TRUE(names.insert(name).second) << "duplicate attribute " << name;
    by_name[name] = &value;
  }
  ASSERT_TRUE(by_name.count("xla_version"));
  EXPECT_EQ(by_name["xla_version"]->type, PJRT_NamedValue_kInt64);
  EXPECT_EQ(by_name["xla_version"]->int64_value, 2);
  for (const auto& [name, expected] :
       std::map<std::string, std::vector<int64_t>>{
           {"stablehlo_current_version", {1, 20, 0}},
           {"stablehlo_minimum_version", {0, 9, 0}}}) {
    ASSERT_TRUE(by_name.count(name)) << name;
    const PJRT_NamedValue* value = by_name[name];
    ASSERT_EQ(value->type, PJRT_NamedValue_kInt64List) << name;
    std::vector<int64_t> actual(value->int64_array_value,
                                value->int64_array_value + value->value_size);
    EXPECT_EQ(actual, expected) << name;
  }
}

TEST_F(ConformanceTest, DeviceZeroHasIdZero) {
  EXPECT_EQ(DeviceId(api_, Devices()[0]), 0);
}

TEST_F(ConformanceTest, DeviceProcessIndexIsZero) {
  auto description = KILN_ARGS(PJRT_Device_GetDescription_Args);
  description.device = Devices()[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Device_GetDescription(&description));
  auto args = KILN_ARGS(PJRT_DeviceDescription_ProcessIndex_Args);
  args.device_description = description.device_description;
  PJRT_ASSERT_OK(api_, api_->PJRT_DeviceDescription_ProcessIndex(&args));
  EXPECT_EQ(args.process_index, 0);
}

TEST_F(ConformanceTest, DeviceIsAddressable) {
  auto args = KILN_ARGS(PJRT_Device_IsAddressable_Args);
  args.device = Devices()[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Device_IsAddressable(&args));
  EXPECT_TRUE(args.is_addressable);
}

TEST_F(ConformanceTest, DeviceLocalHardwareIdIsZero) {
  auto args = KILN_ARGS(PJRT_Device_LocalHardwareId_Args);
  args.device = Devices()[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Device_LocalHardwareId(&args));
  EXPECT_EQ(args.local_hardware_id, 0);
}

// XLA's test reads memory descriptions through the MemoryDescriptions
// extension, which Kiln does not have; the same facts come from the
// device's memories: a default among them, every kind named with a
// nonzero kind id.
TEST_F(ConformanceTest, DeviceMemoriesHaveKindsAndNonZeroKindIds) {
  PJRT_Device* device = Devices()[0];
  std::vector<PJRT_Memory*> memories = Memories(device);
  ASSERT_EQ(memories.size(), 3u);
  PJRT_Memory* default_memory = DefaultMemory(device);
  EXPECT_NE(std::find(memories.begin(), memories.end(), default_memory),
            memories.end());
  std::set<std::string> kinds;
  for (PJRT_Memory* memory : memories) {
    std::string kind = MemoryKind(memory);
    EXPECT_FALSE(kind.empty());
    kinds.insert(kind);
    auto kind_id = KILN_ARGS(PJRT_Memory_Kind_Id_Args);
    kind_id.memory = memory;
    PJRT_ASSERT_OK(api_, api_->PJRT_Memory_Kind_Id(&kind_id));
    EXPECT_NE(kind_id.kind_id, 0) << kind;
  }
  EXPECT_EQ(kinds,
            (std::set<std::string>{"device", "pinned_host", "unpinned_host"}));
  EXPECT_EQ(MemoryKind(default_memory), "device");
}

class ConformanceBufferTest : public PluginTest {
 protected:
  void SetUp() override {
    PluginTest::SetUp();
    buffer_ = UploadF32({41, 42, 43, 44}, {4});
    ASSERT_NE(buffer_, nullptr);
  }
  void TearDown() override {
    if (buffer_ != nullptr) DestroyBuffer(buffer_);
    PluginTest::TearDown();
  }
  PJRT_Buffer* buffer_ = nullptr;
};

TEST_F(ConformanceBufferTest, IsDeletedAfterDelete) {
  auto is_deleted = KILN_ARGS(PJRT_Buffer_IsDeleted_Args);
  is_deleted.buffer = buffer_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_IsDeleted(&is_deleted));
  EXPECT_FALSE(is_deleted.is_deleted);
  auto remove = KILN_ARGS(PJRT_Buffer_Delete_Args);
  remove.buffer = buffer_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_Delete(&remove));
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_IsDeleted(&is_deleted));
  EXPECT_TRUE(is_deleted.is_deleted);
}

TEST_F(ConformanceBufferTest, OnDeviceSizeInBytesIsTheDenseSize) {
  auto args = KILN_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
  args.buffer = buffer_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_OnDeviceSizeInBytes(&args));
  EXPECT_EQ(args.on_device_size_in_bytes, 4 * sizeof(float));
}

TEST_F(ConformanceBufferTest, ReadyEventBecomesReady) {
  auto args = KILN_ARGS(PJRT_Buffer_ReadyEvent_Args);
  args.buffer = buffer_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_ReadyEvent(&args));
  ASSERT_NE(args.event, nullptr);
  auto await = KILN_ARGS(PJRT_Event_Await_Args);
  await.event = args.event;
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_Await(&await));
  auto is_ready = KILN_ARGS(PJRT_Event_IsReady_Args);
  is_ready.event = args.event;
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_IsReady(&is_ready));
  EXPECT_TRUE(is_ready.is_ready);
  DestroyEvent(args.event);
}

TEST_F(ConformanceBufferTest, ToHostBufferWithoutHostLayout) {
  std::vector<float> values(4, 0.0f);
  auto args = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = buffer_;
  args.host_layout = nullptr;
  args.dst = values.data();
  args.dst_size = values.size() * sizeof(float);
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
  ASSERT_NE(args.event, nullptr);
  ErrorInfo done = AwaitAndDestroy(args.event);
  EXPECT_EQ(done.code, PJRT_Error_Code_OK) << Describe(done);
  std::vector<float> expected(4);
  std::iota(expected.begin(), expected.end(), 41.0f);
  EXPECT_EQ(values, expected);
}

TEST_F(ConformanceBufferTest, IncreaseAndDecreaseReferenceCount) {
  auto increase = KILN_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args);
  increase.buffer = buffer_;
  PJRT_EXPECT_OK(api_,
                 api_->PJRT_Buffer_IncreaseExternalReferenceCount(&increase));
  auto decrease = KILN_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  decrease.buffer = buffer_;
  PJRT_EXPECT_OK(api_,
                 api_->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease));
}

TEST_F(ConformanceBufferTest, DecreaseReferenceCountWithoutReferencesFails) {
  auto decrease = KILN_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  decrease.buffer = buffer_;
  ErrorInfo error = TakeError(
      api_, api_->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message,
            "Attempting to decrease reference on a buffer with zero reference "
            "count.");
}

TEST_F(ConformanceBufferTest, OpaqueDeviceMemoryDataPointerHoldsTheBytes) {
  auto args = KILN_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args);
  args.buffer = buffer_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&args));
  ASSERT_NE(args.device_memory_ptr, nullptr);
  // On a CPU the pointer is the buffer's host memory.
  float values[4];
  std::memcpy(values, args.device_memory_ptr, sizeof(values));
  EXPECT_EQ(std::vector<float>(values, values + 4),
            (std::vector<float>{41, 42, 43, 44}));
}

// PJRT_Buffer_CopyRawFromHost, which XLA's CopyRawRoundTrip used, is not in
// 0.112; the round trip here is host -> buffer -> raw copy -> host.
TEST_F(ConformanceBufferTest, CopyRawToHostRoundTrip) {
  std::vector<float> values(4, 0.0f);
  auto args = KILN_ARGS(PJRT_Buffer_CopyRawToHost_Args);
  args.buffer = buffer_;
  args.dst = values.data();
  args.offset = 0;
  args.transfer_size = sizeof(float) * 4;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_CopyRawToHost(&args));
  ASSERT_NE(args.event, nullptr);
  EXPECT_EQ(AwaitAndDestroy(args.event).code, PJRT_Error_Code_OK);
  EXPECT_EQ(values, (std::vector<float>{41, 42, 43, 44}));
}

TEST_F(ConformanceTest, NullErrorMeansOk) {
  // A framework converts a null error to OK without calling anything; the
  // error entry points accept null too.
  auto destroy = KILN_ARGS(PJRT_Error_Destroy_Args);
  destroy.error = nullptr;
  api_->PJRT_Error_Destroy(&destroy);
  auto payloads = KILN_ARGS(PJRT_Error_ForEachPayload_Args);
  payloads.error = nullptr;
  EXPECT_EQ(api_->PJRT_Error_ForEachPayload(&payloads), nullptr);
}

}  // namespace
}  // namespace kiln::testing
