// The client against Kiln's own plugin: devices, memories, transfers of
// every kind and memory statistics. The execute path runs against Kiln's
// plugin in execute_test.cc.
#include <gtest/gtest.h>

#include "client_test_util.h"
#include "kiln/pjrt_computation_client.h"

namespace kiln::client {
namespace {

namespace names = metric_names;
constexpr PJRT_Buffer_Type F32 = PJRT_Buffer_Type_F32;

class KilnPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KILN_REQUIRE_KILN_PLUGIN(path);
    PjrtComputationClientOptions options;
    options.plugin_path = path;
    options.create_options.push_back(
        {"cpu_device_count", NamedValue::Value(int64_t{2})});
    auto client = PjrtComputationClient::Create(options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);
  }

  StatusOr<DataPtr> Put(const std::vector<float>& values,
                        std::vector<int64_t> dims,
                        const std::string& device = "KILN:0") {
    TensorSource source{Shape(F32, std::move(dims)), values.data(), device};
    ASSIGN_OR_RETURN(std::vector<DataPtr> data,
                     client_->TransferToDevice({&source, 1}));
    return data[0];
  }

  std::unique_ptr<PjrtComputationClient> client_;
};

TEST_F(KilnPluginTest, DevicesAndMemoriesOfTheCpuPlugin) {
  EXPECT_EQ(client_->GetPlatformName(), "kiln");
  EXPECT_EQ(client_->GetLocalDevices(),
            (std::vector<std::string>{"KILN:0", "KILN:1"}));
  const Client& pjrt = client_->pjrt_client();
  EXPECT_EQ(pjrt.plugin().minor_version(), PJRT_API_MINOR);
  EXPECT_TRUE(pjrt.plugin().AbsentSlots().empty());
  for (const Device* device : pjrt.devices()) {
    ASSERT_NE(device->default_memory(), nullptr);
    EXPECT_EQ(device->memories().size(), 3u);
    for (const Memory* memory : device->memories()) {
      EXPECT_TRUE(memory->kind_id().has_value());
    }
  }
}

TEST_F(KilnPluginTest, TransfersRoundTripOnEachDevice) {
  std::vector<float> values = {1.5f, -2, 3, 0.25f, 5, -6};
  for (const std::string& device : client_->GetLocalDevices()) {
    ASSERT_OK_AND_ASSIGN(DataPtr data, Put(values, {2, 3}, device));
    EXPECT_EQ(data->device(), device);
    std::vector<DataPtr> handles = {data};
    ASSERT_OK_AND_ASSIGN(auto back, client_->TransferFromDevice(handles));
    EXPECT_EQ(back[0].ToVector<float>(), values);
  }
  // Zero elements and other element types.
  ASSERT_OK_AND_ASSIGN(DataPtr empty, Put({}, {0, 3}));
  const int64_t longs[3] = {-1, 1LL << 40, 7};
  const bool flags[2] = {true, false};
  TensorSource sources[] = {
      {Shape(PJRT_Buffer_Type_S64, {3}), longs, "KILN:1"},
      {Shape(PJRT_Buffer_Type_PRED, {2}), flags, "KILN:0"}};
  ASSERT_OK_AND_ASSIGN(auto more, client_->TransferToDevice(sources));
  std::vector<DataPtr> all = {empty, more[0], more[1]};
  ASSERT_OK_AND_ASSIGN(auto back, client_->TransferFromDevice(all));
  EXPECT_TRUE(back[0].bytes.empty());
  EXPECT_EQ(back[1].ToVector<int64_t>(),
            (std::vector<int64_t>{-1, 1LL << 40, 7}));
  EXPECT_EQ(back[2].bytes, (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(client_->metrics().MetricTotalSamples(names::kTransferToDeviceTime),
            4);
  EXPECT_EQ(
      client_->metrics().MetricTotalSamples(names::kTransferFromDeviceTime), 3);
}

TEST_F(KilnPluginTest, MemoryInfoCountsBuffers) {
  ASSERT_OK_AND_ASSIGN(MemoryInfo before, client_->GetMemoryInfo("KILN:1"));
  ASSERT_OK_AND_ASSIGN(DataPtr data,
                       Put(std::vector<float>(1024, 1.0f), {1024}, "KILN:1"));
  std::vector<DataPtr> handles = {data};
  ASSERT_OK(client_->TransferFromDevice(handles).status());
  ASSERT_OK_AND_ASSIGN(MemoryInfo after, client_->GetMemoryInfo("KILN:1"));
  EXPECT_GE(after.bytes_used - before.bytes_used, 4096);
  EXPECT_GE(after.peak_bytes_used, after.bytes_used);
}

}  // namespace
}  // namespace kiln::client
