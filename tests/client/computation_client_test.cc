// PjrtComputationClient over the test plugin: device names, transfers and
// their metrics, and the errors a caller can cause. (The execute path is
// tested against Kiln's plugin in kiln_plugin_test.cc.)
#include "kiln/pjrt_computation_client.h"

#include <gtest/gtest.h>

#include <cstring>

#include "client/computation_record.h"
#include "client_test_util.h"

namespace kiln::client {
namespace {

namespace names = metric_names;
using testing::TestPluginPath;

class ComputationClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PjrtComputationClientOptions options;
    options.plugin_path = TestPluginPath("kiln_test_plugin_v0_40");
    auto client = PjrtComputationClient::Create(options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);
  }
  std::unique_ptr<PjrtComputationClient> client_;
};

TEST_F(ComputationClientTest, NamesDevicesAfterThePlatform) {
  EXPECT_EQ(client_->GetPlatformName(), "kiln_test");
  EXPECT_EQ(client_->GetDefaultDevice(), "KILN_TEST:0");
  EXPECT_EQ(client_->GetLocalDevices(),
            (std::vector<std::string>{"KILN_TEST:0", "KILN_TEST:1"}));
  EXPECT_EQ(client_->GetAllDevices(), client_->GetLocalDevices());
  ASSERT_OK_AND_ASSIGN(Device * device, client_->LookupDevice("kiln_test:1"));
  EXPECT_EQ(device->id(), 1);
  for (const char* bad : {"CUDA:0", "KILN_TEST:2", "KILN_TEST", ":1",
                          "KILN_TEST:-1", "KILN_TEST:x"}) {
    auto lookup = client_->LookupDevice(bad);
    ASSERT_FALSE(lookup.ok()) << bad;
    EXPECT_EQ(lookup.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(lookup.status().message().find(bad), std::string_view::npos)
        << lookup.status().ToString();
  }
}

TEST_F(ComputationClientTest, TransfersRoundTripWithOneSamplePerCall) {
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const int32_t b[2] = {-7, 9};
  TensorSource sources[] = {
      {Shape(PJRT_Buffer_Type_F32, {2, 3}), a, "KILN_TEST:0"},
      {Shape(PJRT_Buffer_Type_S32, {2}), b, "KILN_TEST:1"}};
  ASSERT_OK_AND_ASSIGN(std::vector<DataPtr> data,
                       client_->TransferToDevice(sources));
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[0]->device(), "KILN_TEST:0");
  EXPECT_EQ(data[1]->device(), "KILN_TEST:1");
  EXPECT_EQ(data[0]->shape(), sources[0].shape);
  EXPECT_TRUE(data[0]->HasValue());

  ASSERT_OK_AND_ASSIGN(std::vector<Literal> back,
                       client_->TransferFromDevice(data));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].shape, sources[0].shape);
  EXPECT_EQ(back[0].ToVector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(back[1].ToVector<int32_t>(), (std::vector<int32_t>{-7, 9}));

  const Metrics& metrics = client_->metrics();
  EXPECT_EQ(metrics.MetricTotalSamples(names::kTransferToDeviceTime), 1);
  EXPECT_EQ(metrics.MetricTotalSamples(names::kTransferFromDeviceTime), 1);
  ASSERT_NE(metrics.FindMetric(names::kInboundData), nullptr);
  EXPECT_EQ(metrics.FindMetric(names::kInboundData)->snapshot().accumulator,
            24 + 8);
  EXPECT_EQ(metrics.FindMetric(names::kOutboundData)->snapshot().accumulator,
            24 + 8);
  EXPECT_EQ(metrics.MetricTotalSamples(names::kCompileTime), 0);
  std::string report = client_->metrics().Report();
  EXPECT_NE(report.find("Metric: TransferToDeviceTime\n  TotalSamples: 1\n"),
            std::string::npos)
      << report;
}

TEST_F(ComputationClientTest, TransferErrorsNameTheTensor) {
  const float a[2] = {1, 2};
  TensorSource to_nowhere[] = {{Shape(PJRT_Buffer_Type_F32, {2}), a, "TPU:0"}};
  auto nowhere = client_->TransferToDevice(to_nowhere);
  ASSERT_FALSE(nowhere.ok());
  EXPECT_EQ(nowhere.status().code(), StatusCode::kInvalidArgument);

  TensorSource null_data[] = {
      {Shape(PJRT_Buffer_Type_F32, {2}), nullptr, "KILN_TEST:0"}};
  auto null_result = client_->TransferToDevice(null_data);
  ASSERT_FALSE(null_result.ok());
  EXPECT_NE(null_result.status().message().find("tensor 0 (f32[2])"),
            std::string_view::npos)
      << null_result.status().ToString();

  TensorSource negative[] = {
      {Shape(PJRT_Buffer_Type_F32, {-2}), a, "KILN_TEST:0"}};
  EXPECT_FALSE(client_->TransferToDevice(negative).ok());

  // The plugin's own error keeps its code (it holds only f32 and s32).
  const double d[1] = {1};
  TensorSource unsupported[] = {
      {Shape(PJRT_Buffer_Type_F64, {1}), d, "KILN_TEST:0"}};
  auto refused = client_->TransferToDevice(unsupported);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);

  std::vector<DataPtr> null_handle = {nullptr};
  EXPECT_FALSE(client_->TransferFromDevice(null_handle).ok());
}

TEST_F(ComputationClientTest, DataOfAnotherClientIsRejected) {
  PjrtComputationClientOptions options;
  options.plugin_path = TestPluginPath("kiln_test_plugin_v0_40");
  ASSERT_OK_AND_ASSIGN(auto other, PjrtComputationClient::Create(options));
  const float a[1] = {3};
  TensorSource sources[] = {
      {Shape(PJRT_Buffer_Type_F32, {1}), a, "KILN_TEST:0"}};
  ASSERT_OK_AND_ASSIGN(auto data, other->TransferToDevice(sources));
  auto read = client_->TransferFromDevice(data);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("another client"),
            std::string_view::npos)
      << read.status().ToString();
}

TEST_F(ComputationClientTest, PluginCompileErrorReachesTheCaller) {
  CompileInstance instance;
  instance.program = "module {}";
  instance.name = "empty";
  std::vector<CompileInstance> instances;
  instances.push_back(instance);
  auto compiled = client_->Compile(std::move(instances));
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(compiled.status().message().find("Compile of empty"),
            std::string_view::npos);
  EXPECT_EQ(client_->metrics().CounterValue(names::kUncachedCompile), 0);

  CompileInstance elsewhere;
  elsewhere.program = "module {}";
  elsewhere.compilation_device = "KILN_TEST:7";
  std::vector<CompileInstance> bad_device;
  bad_device.push_back(elsewhere);
  auto refused = client_->Compile(std::move(bad_device));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ComputationClientTest, DeserializeRejectsDamagedAndForeignRecords) {
  auto garbage = client_->DeserializeComputation("not a record");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kDataLoss);

  internal::ComputationRecord record;
  record.platform_name = "cuda";
  record.name = "step";
  record.devices = {"CUDA:0"};
  auto foreign = client_->DeserializeComputation(
      internal::EncodeComputationRecord(record));
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(foreign.status().message().find("'cuda'"), std::string_view::npos);
}

TEST_F(ComputationClientTest, WaitAndMemoryQueries) {
  EXPECT_OK(client_->WaitDeviceOps({}));
  std::string devices[] = {"KILN_TEST:1"};
  EXPECT_OK(client_->WaitDeviceOps(devices));
  std::string unknown[] = {"KILN_TEST:9"};
  EXPECT_FALSE(client_->WaitDeviceOps(unknown).ok());
  // The test plugin has no PJRT_Device_MemoryStats.
  auto info = client_->GetMemoryInfo("KILN_TEST:0");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace kiln::client
