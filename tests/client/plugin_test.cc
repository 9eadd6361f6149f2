// Plugin loading: the version check, the table boundary of an older plugin,
// Plugin_Initialize once, attributes, and the load errors.
#include "kiln/plugin.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "client_test_util.h"
#include "kiln/pjrt.h"

namespace kiln::client {
namespace {

using testing::TestPluginPath;

bool Contains(const std::vector<std::string_view>& names,
              std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(PluginTest, LoadsOlderPluginAndGatesSlotsOnItsVersionAndTable) {
  ASSERT_OK_AND_ASSIGN(auto plugin,
                       Plugin::Load(TestPluginPath("kiln_test_plugin_v0_40")));
  EXPECT_EQ(plugin->major_version(), 0);
  EXPECT_EQ(plugin->minor_version(), 40);
  EXPECT_EQ(plugin->version_string(), "0.40");
  // The test plugin's table ends with PJRT_Buffer_CopyRawToHost.
  EXPECT_EQ(plugin->api_struct_size(),
            offsetof(PJRT_Api, PJRT_Buffer_CopyRawToHost) + sizeof(void*));

  // Inside its table but newer than 0.40: traps in the plugin, absent here.
  std::vector<std::string_view> absent = plugin->AbsentSlots();
  EXPECT_TRUE(Contains(absent, "PJRT_Memory_Kind_Id"));         // 0.48
  EXPECT_TRUE(Contains(absent, "PJRT_ExecuteContext_Create"));  // 0.52
  EXPECT_TRUE(Contains(absent, "PJRT_Buffer_CopyRawToHost"));   // 0.56
  EXPECT_EQ(plugin->api().PJRT_Memory_Kind_Id, nullptr);
  // Past its table: absent.
  EXPECT_TRUE(Contains(absent, "PJRT_Error_ForEachPayload"));
  EXPECT_TRUE(Contains(absent, "PJRT_Client_Load"));
  EXPECT_EQ(plugin->api().PJRT_Error_ForEachPayload, nullptr);
  // Provided and old enough: present.
  std::vector<std::string_view> available = plugin->AvailableSlots();
  EXPECT_TRUE(Contains(available, "PJRT_Client_Create"));
  EXPECT_TRUE(Contains(available, "PJRT_Buffer_ToHostBuffer"));
  EXPECT_FALSE(Contains(available, "PJRT_Executable_GetCostAnalysis"));  // null
  EXPECT_EQ(available.size() + absent.size(), 138u);
}

// The two tripwires the next test relies on are real: reading one byte past
// the test plugin's table faults, and calling a slot newer than its version
// aborts naming the slot.
TEST(PluginTest, TestPluginTripwiresFire) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ASSERT_OK_AND_ASSIGN(auto plugin,
                       Plugin::Load(TestPluginPath("kiln_test_plugin_v0_40")));
  const char* table = reinterpret_cast<const char*>(plugin->raw_api());
  size_t size = plugin->api_struct_size();
  EXPECT_DEATH(
      {
        volatile char past = table[size];
        (void)past;
      },
      "");
  PJRT_Memory_Kind_Id* trap = plugin->raw_api()->PJRT_Memory_Kind_Id;
  ASSERT_NE(trap, nullptr);
  EXPECT_DEATH(trap(nullptr), "PJRT_Memory_Kind_Id, newer than 0.40");
}

TEST(PluginTest, DrivesOlderPluginWithoutCallingPastItsVersion) {
  // Any call of a slot newer than 0.40 aborts inside the test plugin, and
  // any read past its table faults on the guard page: this test passing
  // means the client did neither while creating a client, enumerating
  // devices and memories, moving a buffer and handling errors.
  ASSERT_OK_AND_ASSIGN(auto plugin,
                       Plugin::Load(TestPluginPath("kiln_test_plugin_v0_40")));
  ASSERT_OK_AND_ASSIGN(auto client, Client::Create(plugin));
  EXPECT_EQ(client->platform_name(), "kiln_test");
  EXPECT_EQ(client->platform_version(), "test 0.40");
  ASSERT_EQ(client->devices().size(), 2u);
  ASSERT_EQ(client->addressable_devices().size(), 2u);
  ASSERT_EQ(client->memories().size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const Device& device = *client->devices()[i];
    EXPECT_EQ(device.id(), i);
    EXPECT_EQ(device.kind(), "test device");
    EXPECT_TRUE(device.addressable());
    ASSERT_EQ(device.memories().size(), 1u);
    EXPECT_EQ(device.default_memory(), device.memories()[0]);
    EXPECT_EQ(device.memories()[0]->kind(), "device");
    // PJRT_Memory_Kind_Id is 0.48: never asked of a 0.40 plugin.
    EXPECT_FALSE(device.memories()[0]->kind_id().has_value());
    ASSERT_EQ(device.memories()[0]->devices().size(), 1u);
    EXPECT_EQ(device.memories()[0]->devices()[0], &device);
  }

  const float values[4] = {1.5f, -2.0f, 3.25f, 0.0f};
  Shape shape(PJRT_Buffer_Type_F32, {2, 2});
  ASSERT_OK_AND_ASSIGN(
      auto buffer, client->BufferFromHost(values, shape, client->devices()[1]));
  EXPECT_EQ(buffer->shape(), shape);
  EXPECT_EQ(buffer->device(), client->devices()[1]);
  EXPECT_OK(buffer->AwaitReady());
  float back[4] = {};
  ASSERT_OK(buffer->ToHost(back, sizeof(back)));
  EXPECT_EQ(0, std::memcmp(values, back, sizeof(back)));

  // A plugin error keeps its code and message (no ForEachPayload at 0.40).
  auto missing = client->LookupDevice(7);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.status().message(),
            "No matching device found for device_id 7");
  // A slot the plugin's version has but leaves null is UNIMPLEMENTED.
  auto size = buffer->OnDeviceSizeInBytes();
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(size.status().message().find("PJRT_Buffer_OnDeviceSizeInBytes"),
            std::string_view::npos);
  // Newer than its version: UNIMPLEMENTED, and the trap is not reached.
  auto compiled = client->Compile("module {}", "mlir", "");
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnimplemented);
}

TEST(PluginTest, InitializesEachPluginOnceAndReturnsTheSameObject) {
  std::string path = TestPluginPath("kiln_test_plugin_v0_40");
  ASSERT_OK_AND_ASSIGN(auto first, Plugin::Load(path));
  ASSERT_OK_AND_ASSIGN(auto second, Plugin::Load(path));
  EXPECT_EQ(first.get(), second.get());
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr);
  auto count = reinterpret_cast<int (*)()>(
      dlsym(library, "KilnTestPluginInitializeCount"));
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count(), 1);
  dlclose(library);
}

TEST(PluginTest, ReadsPluginAttributes) {
  ASSERT_OK_AND_ASSIGN(auto plugin,
                       Plugin::Load(TestPluginPath("kiln_test_plugin_v0_40")));
  ASSERT_EQ(plugin->attributes().size(), 2u);
  const NamedValue* version =
      plugin->FindAttribute("stablehlo_current_version");
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(std::get<std::vector<int64_t>>(version->value),
            (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(version->ValueToString(), "[1, 0, 0]");
  const NamedValue* flag = plugin->FindAttribute("test_plugin");
  ASSERT_NE(flag, nullptr);
  EXPECT_EQ(flag->ValueToString(), "true");
  EXPECT_EQ(plugin->FindAttribute("absent"), nullptr);
  EXPECT_TRUE(plugin->extension_types().empty());
  EXPECT_EQ(plugin->FindExtension(PJRT_Extension_Type_Layouts), nullptr);
}

TEST(PluginTest, RejectsPluginOfAnotherMajorVersion) {
  auto plugin = Plugin::Load(TestPluginPath("kiln_test_plugin_v1_40"));
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(plugin.status().message().find("speaks PJRT C API 1.40"),
            std::string_view::npos)
      << plugin.status().ToString();
  EXPECT_NE(plugin.status().message().find("major version 0"),
            std::string_view::npos)
      << plugin.status().ToString();
}

TEST(PluginTest, RejectsPluginOlderThanTheOldestSupportedMinor) {
  auto plugin = Plugin::Load(TestPluginPath("kiln_test_plugin_v0_20"));
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(plugin.status().message().find("0.20"), std::string_view::npos)
      << plugin.status().ToString();
  EXPECT_NE(plugin.status().message().find("0.29"), std::string_view::npos)
      << plugin.status().ToString();
}

TEST(PluginTest, RejectsLibraryWithoutGetPjrtApi) {
  std::string path = TestPluginPath("kiln_test_plugin_no_api");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(plugin.status().message(),
            path + " is not a PJRT plugin: it exports no GetPjrtApi symbol");
}

TEST(PluginTest, RejectsMissingFileAndNonLibrary) {
  auto missing = Plugin::Load("/nonexistent/libpjrt_nothing.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/libpjrt_nothing.so"),
            std::string_view::npos);

  std::string text =
      kiln::testing::BuildDir() + "/client_test_not_a_library.so";
  FILE* file = std::fopen(text.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("not an ELF file\n", file);
  std::fclose(file);
  auto not_library = Plugin::Load(text);
  ASSERT_FALSE(not_library.ok());
  EXPECT_EQ(not_library.status().code(), StatusCode::kNotFound);
  EXPECT_NE(not_library.status().message().find("cannot load PJRT plugin"),
            std::string_view::npos);
  std::remove(text.c_str());

  auto empty = Plugin::Load("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

TEST(PluginTest, RejectsTableTooSmallForTheErrorSlots) {
  PJRT_Api api{};
  api.struct_size = offsetof(PJRT_Api, PJRT_Error_Message);
  api.pjrt_api_version.major_version = 0;
  api.pjrt_api_version.minor_version = 112;
  auto plugin = Plugin::FromApi(&api, "tiny table");
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plugin.status().message().find("tiny table"),
            std::string_view::npos);
  EXPECT_FALSE(Plugin::FromApi(nullptr, "null").ok());
}

TEST(PluginTest, CopyNamedValuesRejectsUnknownTypesAndNullLists) {
  PJRT_NamedValue value{};
  value.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  value.name = "weird";
  value.name_size = 5;
  // An out-of-range enum, stored as a plugin's C code could store it.
  const int nine = 9;
  std::memcpy(&value.type, &nine, sizeof(nine));
  auto copied = CopyNamedValues(&value, 1);
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(copied.status().message().find("'weird'"), std::string_view::npos);
  EXPECT_FALSE(CopyNamedValues(nullptr, 3).ok());
  ASSERT_OK_AND_ASSIGN(auto none, CopyNamedValues(nullptr, 0));
  EXPECT_TRUE(none.empty());

  const int64_t list[2] = {4, 5};
  value.type = PJRT_NamedValue_kInt64List;
  value.int64_array_value = list;
  value.value_size = 2;
  ASSERT_OK_AND_ASSIGN(auto values, CopyNamedValues(&value, 1));
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].name, "weird");
  EXPECT_EQ(values[0].ValueToString(), "[4, 5]");
}

}  // namespace
}  // namespace kiln::client
