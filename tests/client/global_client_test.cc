// The process-wide ComputationClient: $PJRT_DEVICE, the plugin it names,
// and the one-client-per-process rule. All steps in one test, in order,
// because the client they create lives until the process exits.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "client_test_util.h"
#include "kiln/computation_client.h"

namespace kiln::client {
namespace {

TEST(GlobalClientTest, PjrtDeviceChoosesThePluginAndOnlyOneClientIsMade) {
  unsetenv("PJRT_DEVICE");
  unsetenv("PJRT_LIBRARY_PATH");
  unsetenv("KILN_TEST_LIBRARY_PATH");
  EXPECT_EQ(ComputationClient::Get(), nullptr);

  auto unset = ComputationClient::Create();
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(unset.status().message(), "$PJRT_DEVICE is not set.");

  setenv("PJRT_DEVICE", "kiln_test", 1);
  auto no_path = ComputationClient::Create();
  ASSERT_FALSE(no_path.ok());
  EXPECT_NE(no_path.status().message().find("$KILN_TEST_LIBRARY_PATH"),
            std::string_view::npos)
      << no_path.status().ToString();
  EXPECT_EQ(ComputationClient::Get(), nullptr);

  setenv("KILN_TEST_LIBRARY_PATH", "/nonexistent/plugin.so", 1);
  auto bad_path = ComputationClient::Create();
  ASSERT_FALSE(bad_path.ok());
  EXPECT_EQ(bad_path.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ComputationClient::Get(), nullptr);

  // <NAME>_LIBRARY_PATH wins over PJRT_LIBRARY_PATH.
  setenv("KILN_TEST_LIBRARY_PATH",
         testing::TestPluginPath("kiln_test_plugin_v0_40").c_str(), 1);
  setenv("PJRT_LIBRARY_PATH", "/nonexistent/other.so", 1);
  ASSERT_OK_AND_ASSIGN(ComputationClient * client, ComputationClient::Create());
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(ComputationClient::Get(), client);
  EXPECT_EQ(client->GetPlatformName(), "kiln_test");
  EXPECT_EQ(client->GetDefaultDevice(), "KILN_TEST:0");

  auto second = ComputationClient::Create();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            "ComputationClient can only be initialized once.");
  EXPECT_EQ(ComputationClient::Get(), client);
  unsetenv("PJRT_DEVICE");
  unsetenv("PJRT_LIBRARY_PATH");
  unsetenv("KILN_TEST_LIBRARY_PATH");
}

TEST(GlobalClientTest, FindsKilnsPluginThroughItsVariable) {
  setenv("KILN_LIBRARY_PATH", "/nonexistent/libpjrt_kiln.so", 1);
  auto missing = FindKilnPlugin();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/libpjrt_kiln.so"),
            std::string_view::npos);
  std::string test_plugin = testing::TestPluginPath("kiln_test_plugin_v0_40");
  setenv("KILN_LIBRARY_PATH", test_plugin.c_str(), 1);
  ASSERT_OK_AND_ASSIGN(std::string found, FindKilnPlugin());
  EXPECT_EQ(found, test_plugin);
  unsetenv("KILN_LIBRARY_PATH");
}

TEST(GlobalClientTest, ParsesDeviceNames) {
  ASSERT_OK_AND_ASSIGN(auto parsed, ParseDeviceName("KILN:12"));
  EXPECT_EQ(parsed.first, "KILN");
  EXPECT_EQ(parsed.second, 12);
  EXPECT_FALSE(ParseDeviceName("KILN").ok());
  EXPECT_FALSE(ParseDeviceName("KILN:").ok());
  EXPECT_FALSE(ParseDeviceName(":3").ok());
  EXPECT_FALSE(ParseDeviceName("KILN:99999999999").ok());
}

}  // namespace
}  // namespace kiln::client
