#include "runtime/client.h"

#include <gtest/gtest.h>

#include <set>

#include "support/test_support.h"

namespace kiln::runtime {
namespace {

TEST(ClientTest, DevicesAndMemorySpaces) {
  ASSERT_OK_AND_ASSIGN(auto client, Client::Create({3}));
  ASSERT_EQ(client->devices().size(), 3u);
  ASSERT_EQ(client->memory_spaces().size(), 9u);
  std::set<int> ids;
  for (size_t i = 0; i < client->memory_spaces().size(); ++i) {
    MemorySpace* memory = client->memory_spaces()[i];
    EXPECT_EQ(memory->id(), static_cast<int>(i));  // indexable by id
    ids.insert(memory->id());
  }
  EXPECT_EQ(ids.size(), 9u);
  Device* device = client->devices()[2];
  EXPECT_EQ(device->id(), 2);
  EXPECT_EQ(device->default_memory_space()->kind(), MemoryKind::kDevice);
  EXPECT_EQ(device->memory_space(MemoryKind::kPinnedHost)->kind_name(),
            "pinned_host");
  EXPECT_EQ(device->memory_space(MemoryKind::kUnpinnedHost)->device(), device);
  EXPECT_EQ(client->topology().devices().size(), 3u);
}

TEST(ClientTest, DeviceCountBounds) {
  EXPECT_EQ(Client::Create({0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Client::Create({kMaxDevices + 1}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ClientTest, LookupErrorsUseXlasText) {
  ASSERT_OK_AND_ASSIGN(auto client, Client::Create({2}));
  EXPECT_EQ(client->LookupDevice(2).status().message(),
            "No matching device found for device_id 2");
  EXPECT_EQ(client->LookupAddressableDevice(-1).status().message(),
            "No matching device found for local_hardware_id -1");
  ASSERT_OK_AND_ASSIGN(Device * device, client->LookupDevice(1));
  EXPECT_EQ(device, client->devices()[1]);
}

TEST(ClientTest, DefaultAssignmentPlacesReplicasOfAPartitionTogether) {
  ASSERT_OK_AND_ASSIGN(auto client, Client::Create({6}));
  ASSERT_OK_AND_ASSIGN(std::vector<int> assignment,
                       client->DefaultDeviceAssignment(2, 3));
  // Entry r * 3 + p is device p * 2 + r.
  EXPECT_EQ(assignment, (std::vector<int>{0, 2, 4, 1, 3, 5}));
  EXPECT_FALSE(client->DefaultDeviceAssignment(4, 2).ok());
  EXPECT_FALSE(client->DefaultDeviceAssignment(1, 0).ok());
}

TEST(TopologyTest, SerializedFormRoundTrips) {
  ASSERT_OK_AND_ASSIGN(Topology topology, Topology::ForCpu(5));
  std::string bytes = topology.Serialize();
  EXPECT_EQ(bytes, "kiln-topology v1; processes=1; cpu_devices=5");
  ASSERT_OK_AND_ASSIGN(Topology back, Topology::Deserialize(bytes));
  EXPECT_EQ(back.devices().size(), 5u);
  EXPECT_EQ(back.Fingerprint(), topology.Fingerprint());
  for (std::string_view bad :
       {"", "kiln-topology v1; processes=0; cpu_devices=5",
        "kiln-topology v1; processes=1; cpu_devices=0",
        "kiln-topology v1; processes=1; cpu_devices=x",
        "kiln-topology v2; processes=1; cpu_devices=1"}) {
    EXPECT_FALSE(Topology::Deserialize(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace kiln::runtime
