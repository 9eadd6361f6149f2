// Devices, descriptions, memories and topologies as the C API shows them.
#include <cstring>
#include <set>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

class ClientTest : public PluginTest {
 protected:
  ClientTest() : PluginTest(4) {}

  PJRT_DeviceDescription* Description(PJRT_Device* device) {
    auto args = KILN_ARGS(PJRT_Device_GetDescription_Args);
    args.device = device;
    EXPECT_EQ(TakeError(api_, api_->PJRT_Device_GetDescription(&args)).code,
              PJRT_Error_Code_OK);
    return args.device_description;
  }
  std::string Kind(PJRT_DeviceDescription* description) {
    auto args = KILN_ARGS(PJRT_DeviceDescription_Kind_Args);
    args.device_description = description;
    EXPECT_EQ(TakeError(api_, api_->PJRT_DeviceDescription_Kind(&args)).code,
              PJRT_Error_Code_OK);
    return std::string(args.device_kind, args.device_kind_size);
  }
  int Id(PJRT_DeviceDescription* description) {
    auto args = KILN_ARGS(PJRT_DeviceDescription_Id_Args);
    args.device_description = description;
    EXPECT_EQ(TakeError(api_, api_->PJRT_DeviceDescription_Id(&args)).code,
              PJRT_Error_Code_OK);
    return args.id;
  }
  PJRT_TopologyDescription* ClientTopology() {
    auto args = KILN_ARGS(PJRT_Client_TopologyDescription_Args);
    args.client = client_;
    EXPECT_EQ(
        TakeError(api_, api_->PJRT_Client_TopologyDescription(&args)).code,
        PJRT_Error_Code_OK);
    return args.topology;
  }
  std::vector<PJRT_DeviceDescription*> TopologyDevices(
      PJRT_TopologyDescription* topology) {
    auto args = KILN_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args);
    args.topology = topology;
    EXPECT_EQ(
        TakeError(api_,
                  api_->PJRT_TopologyDescription_GetDeviceDescriptions(&args))
            .code,
        PJRT_Error_Code_OK);
    return std::vector<PJRT_DeviceDescription*>(
        args.descriptions, args.descriptions + args.num_descriptions);
  }
  std::string Serialize(PJRT_TopologyDescription* topology) {
    auto args = KILN_ARGS(PJRT_TopologyDescription_Serialize_Args);
    args.topology = topology;
    EXPECT_EQ(
        TakeError(api_, api_->PJRT_TopologyDescription_Serialize(&args)).code,
        PJRT_Error_Code_OK);
    std::string bytes(args.serialized_bytes, args.serialized_bytes_size);
    EXPECT_NE(args.serialized_topology_deleter, nullptr);
    args.serialized_topology_deleter(args.serialized_topology);
    return bytes;
  }
  uint64_t Fingerprint(PJRT_TopologyDescription* topology) {
    auto args = KILN_ARGS(PJRT_TopologyDescription_Fingerprint_Args);
    args.topology = topology;
    EXPECT_EQ(
        TakeError(api_, api_->PJRT_TopologyDescription_Fingerprint(&args)).code,
        PJRT_Error_Code_OK);
    return args.fingerprint;
  }
  void DestroyTopology(PJRT_TopologyDescription* topology) {
    auto args = KILN_ARGS(PJRT_TopologyDescription_Destroy_Args);
    args.topology = topology;
    PJRT_EXPECT_OK(api_, api_->PJRT_TopologyDescription_Destroy(&args));
  }
};

TEST_F(ClientTest, DevicesAreNumberedAndDescribed) {
  std::vector<PJRT_Device*> devices = Devices();
  ASSERT_EQ(devices.size(), 4u);
  std::set<std::string> debug_strings;
  for (size_t i = 0; i < devices.size(); ++i) {
    PJRT_DeviceDescription* description = Description(devices[i]);
    EXPECT_EQ(Id(description), static_cast<int>(i));
    EXPECT_EQ(Kind(description), "cpu");
    auto debug = KILN_ARGS(PJRT_DeviceDescription_DebugString_Args);
    debug.device_description = description;
    PJRT_ASSERT_OK(api_, api_->PJRT_DeviceDescription_DebugString(&debug));
    debug_strings.insert(
        std::string(debug.debug_string, debug.debug_string_size));
    auto text = KILN_ARGS(PJRT_DeviceDescription_ToString_Args);
    text.device_description = description;
    PJRT_ASSERT_OK(api_, api_->PJRT_DeviceDescription_ToString(&text));
    EXPECT_EQ(std::string(text.to_string, text.to_string_size),
              "KilnCpuDevice(id=" + std::to_string(i) + ")");
    // Lookup by id finds the same handle.
    auto lookup = KILN_ARGS(PJRT_Client_LookupDevice_Args);
    lookup.client = client_;
    lookup.id = static_cast<int>(i);
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_LookupDevice(&lookup));
    EXPECT_EQ(lookup.device, devices[i]);
  }
  EXPECT_EQ(debug_strings.size(), 4u);
}

TEST_F(ClientTest, AttributesComeWithADeleterThatIsAlwaysCallable) {
  PJRT_Device* device = Devices()[0];
  auto description = KILN_ARGS(PJRT_DeviceDescription_Attributes_Args);
  description.device_description = Description(device);
  PJRT_ASSERT_OK(api_, api_->PJRT_DeviceDescription_Attributes(&description));
  auto args = KILN_ARGS(PJRT_Device_GetAttributes_Args);
  args.device = device;
  PJRT_ASSERT_OK(api_, api_->PJRT_Device_GetAttributes(&args));
  EXPECT_EQ(args.num_attributes, description.num_attributes);
  ASSERT_NE(args.attributes_deleter, nullptr);
  ASSERT_NE(args.device_attributes, nullptr);
  args.attributes_deleter(args.device_attributes);
}

TEST_F(ClientTest, EveryDeviceHasThreeMemoriesOnlyItAddresses) {
  std::set<int> memory_ids;
  auto all = KILN_ARGS(PJRT_Client_AddressableMemories_Args);
  all.client = client_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_AddressableMemories(&all));
  EXPECT_EQ(all.num_addressable_memories, 12u);
  for (PJRT_Device* device : Devices()) {
    std::vector<PJRT_Memory*> memories = Memories(device);
    ASSERT_EQ(memories.size(), 3u);
    std::vector<std::string> kinds;
    for (PJRT_Memory* memory : memories) {
      kinds.push_back(MemoryKind(memory));
      auto id = KILN_ARGS(PJRT_Memory_Id_Args);
      id.memory = memory;
      PJRT_ASSERT_OK(api_, api_->PJRT_Memory_Id(&id));
      EXPECT_TRUE(memory_ids.insert(id.id).second) << "duplicate memory id";
      auto by = KILN_ARGS(PJRT_Memory_AddressableByDevices_Args);
      by.memory = memory;
      PJRT_ASSERT_OK(api_, api_->PJRT_Memory_AddressableByDevices(&by));
      ASSERT_EQ(by.num_devices, 1u);
      EXPECT_EQ(by.devices[0], device);
      auto text = KILN_ARGS(PJRT_Memory_ToString_Args);
      text.memory = memory;
      PJRT_ASSERT_OK(api_, api_->PJRT_Memory_ToString(&text));
      EXPECT_NE(
          std::string(text.to_string, text.to_string_size).find(kinds.back()),
          std::string::npos);
      auto debug = KILN_ARGS(PJRT_Memory_DebugString_Args);
      debug.memory = memory;
      PJRT_ASSERT_OK(api_, api_->PJRT_Memory_DebugString(&debug));
      EXPECT_GT(debug.debug_string_size, 0u);
    }
    EXPECT_EQ(kinds, (std::vector<std::string>{"device", "pinned_host",
                                               "unpinned_host"}));
  }
  EXPECT_EQ(memory_ids.size(), 12u);
}

TEST_F(ClientTest, MemoryUserDataSlotsKeepValuesAndRunTheirDestructors) {
  PJRT_Memory* memory = DefaultMemory(Devices()[0]);
  ASSERT_NE(memory->vtable, nullptr);
  ASSERT_NE(memory->vtable->set_user_data, nullptr);
  static int destroyed = 0;
  destroyed = 0;
  static const int key = 0;
  int first = 1, second = 2;
  memory->vtable->set_user_data(memory, &key, &first,
                                [](void*) { ++destroyed; });
  EXPECT_EQ(memory->vtable->get_user_data(memory, &key), &first);
  memory->vtable->set_user_data(memory, &key, &second, nullptr);
  EXPECT_EQ(destroyed, 1);  // the replaced value's destructor ran
  EXPECT_EQ(memory->vtable->get_user_data(memory, &key), &second);
  int other_key = 0;
  EXPECT_EQ(memory->vtable->get_user_data(memory, &other_key), nullptr);
  memory->vtable->set_user_data(memory, &key, nullptr, nullptr);
  EXPECT_EQ(memory->vtable->get_user_data(memory, &key), nullptr);
}

TEST_F(ClientTest, TheClientsTopologyDescribesItsDevices) {
  PJRT_TopologyDescription* topology = ClientTopology();
  ASSERT_NE(topology, nullptr);
  std::vector<PJRT_DeviceDescription*> descriptions = TopologyDevices(topology);
  ASSERT_EQ(descriptions.size(), 4u);
  for (size_t i = 0; i < descriptions.size(); ++i) {
    EXPECT_EQ(descriptions[i], Description(Devices()[i]));
  }
  auto name = KILN_ARGS(PJRT_TopologyDescription_PlatformName_Args);
  name.topology = topology;
  PJRT_ASSERT_OK(api_, api_->PJRT_TopologyDescription_PlatformName(&name));
  EXPECT_EQ(std::string(name.platform_name, name.platform_name_size), "kiln");
  auto version = KILN_ARGS(PJRT_TopologyDescription_PlatformVersion_Args);
  version.topology = topology;
  PJRT_ASSERT_OK(api_,
                 api_->PJRT_TopologyDescription_PlatformVersion(&version));
  EXPECT_GT(version.platform_version_size, 0u);
  auto attributes = KILN_ARGS(PJRT_TopologyDescription_Attributes_Args);
  attributes.topology = topology;
  PJRT_ASSERT_OK(api_, api_->PJRT_TopologyDescription_Attributes(&attributes));
  ASSERT_EQ(attributes.num_attributes, 1u);
  EXPECT_EQ(std::string(attributes.attributes[0].name,
                        attributes.attributes[0].name_size),
            "cpu_device_count");
  EXPECT_EQ(attributes.attributes[0].int64_value, 4);
  auto kinds = KILN_ARGS(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args);
  kinds.topology = topology;
  PJRT_ASSERT_OK(api_,
                 api_->PJRT_TopologyDescription_GetMemorySpaceKindIds(&kinds));
  EXPECT_EQ(std::vector<int>(
                kinds.memory_space_kind_ids,
                kinds.memory_space_kind_ids + kinds.num_memory_space_kind_ids),
            (std::vector<int>{1, 2, 3}));
  // Owned by the client: destroying it is a no-op, it stays usable.
  DestroyTopology(topology);
  EXPECT_EQ(TopologyDevices(topology).size(), 4u);
}

TEST_F(ClientTest, TopologiesRoundTripThroughTheirSerializedForm) {
  PJRT_TopologyDescription* own = ClientTopology();
  std::string bytes = Serialize(own);
  EXPECT_FALSE(bytes.empty());
  auto args = KILN_ARGS(PJRT_TopologyDescription_Deserialize_Args);
  args.serialized_topology = bytes.data();
  args.serialized_topology_size = bytes.size();
  PJRT_ASSERT_OK(api_, api_->PJRT_TopologyDescription_Deserialize(&args));
  EXPECT_EQ(TopologyDevices(args.topology).size(), 4u);
  EXPECT_EQ(Fingerprint(args.topology), Fingerprint(own));
  EXPECT_EQ(Serialize(args.topology), bytes);
  DestroyTopology(args.topology);
  std::string garbage = "not a topology \xff\x01";
  args.serialized_topology = garbage.data();
  args.serialized_topology_size = garbage.size();
  EXPECT_EQ(
      TakeError(api_, api_->PJRT_TopologyDescription_Deserialize(&args)).code,
      PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST_F(ClientTest, StandaloneTopologiesFromOptions) {
  PJRT_NamedValue option = KILN_ARGS(PJRT_NamedValue);
  option.name = "cpu_device_count";
  option.name_size = 16;
  option.type = PJRT_NamedValue_kInt64;
  option.int64_value = 2;
  option.value_size = 1;
  auto args = KILN_ARGS(PJRT_TopologyDescription_Create_Args);
  args.topology_name = "kiln";
  args.topology_name_size = 4;
  args.create_options = &option;
  args.num_options = 1;
  PJRT_ASSERT_OK(api_, api_->PJRT_TopologyDescription_Create(&args));
  std::vector<PJRT_DeviceDescription*> devices = TopologyDevices(args.topology);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(Id(devices[1]), 1);
  EXPECT_EQ(Kind(devices[1]), "cpu");
  // Different device counts, different fingerprints.
  EXPECT_NE(Fingerprint(args.topology), Fingerprint(ClientTopology()));
  DestroyTopology(args.topology);
  option.int64_value = 0;
  EXPECT_EQ(TakeError(api_, api_->PJRT_TopologyDescription_Create(&args)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace kiln::testing
