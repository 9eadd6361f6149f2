// `kiln info`: loads a PJRT plugin through the client and prints what it
// reports: version, platform, attributes, extensions, devices and memories.
// With --processes N --process I --store DIR the client is process I of a
// job of N sharing the file key-value store DIR (start one `kiln info` per
// process): it prints every process's devices.
#include <cstdio>
#include <string>

#include "base/file.h"
#include "base/strings.h"
#include "kiln/computation_client.h"
#include "kiln/key_value_store.h"
#include "kiln/pjrt.h"
#include "kiln/plugin.h"
#include "tools/kiln/command.h"
#include "tools/kiln/plugin_choice.h"

namespace kiln::cli {
namespace {

using client::Client;
using client::Device;
using client::Memory;
using client::NamedValue;
using client::Plugin;

std::string Quoted(const std::string& text) {
  return StrCat("\"", EscapeForMessage(text, 200), "\"");
}

void PrintMemory(const Memory& memory, bool is_default, const char* indent) {
  std::string kind_id = memory.kind_id().has_value()
                            ? StrCat(", kind id ", *memory.kind_id())
                            : std::string();
  std::printf("%smemory %d: kind %s%s%s\n", indent, memory.id(),
              Quoted(memory.kind()).c_str(), kind_id.c_str(),
              is_default ? " (default)" : "");
  if (!memory.to_string().empty()) {
    std::printf("%s  %s\n", indent, memory.to_string().c_str());
  }
}

void PrintDevice(const Device& device) {
  std::printf("  device %d: kind %s, process %d, local hardware id %d%s\n",
              device.id(), Quoted(device.kind()).c_str(),
              device.process_index(), device.local_hardware_id(),
              device.addressable() ? ", addressable" : "");
  if (!device.to_string().empty()) {
    std::printf("    %s\n", device.to_string().c_str());
  }
  for (const NamedValue& attribute : device.attributes()) {
    std::printf("    %s = %s\n", attribute.name.c_str(),
                attribute.ValueToString().c_str());
  }
  std::printf("    memories: %zu\n", device.memories().size());
  for (const Memory* memory : device.memories()) {
    PrintMemory(*memory, memory == device.default_memory(), "      ");
  }
}

int RunInfo(Arguments& args) {
  auto plugin_path = ChoosePlugin(args.TakeFlag("plugin"), std::nullopt);
  std::optional<std::string> devices_flag = args.TakeFlag("devices");
  std::optional<std::string> processes_flag = args.TakeFlag("processes");
  std::optional<std::string> process_flag = args.TakeFlag("process");
  std::optional<std::string> store_flag = args.TakeFlag("store");
  if (!args.RejectUnknownFlags("info")) return 2;
  if (!args.rest().empty()) {
    std::fprintf(stderr, "kiln info: unexpected argument '%s'\n",
                 args.rest()[0].c_str());
    return 2;
  }
  if (!plugin_path.ok()) {
    std::fprintf(stderr, "kiln info: %s\n",
                 plugin_path.status().ToString().c_str());
    return 1;
  }
  std::vector<NamedValue> options;
  if (devices_flag) {
    std::optional<int64_t> count = ParseInt64(*devices_flag);
    if (!count || *count < 1) {
      std::fprintf(stderr,
                   "kiln info: --devices takes a positive count, not '%s'\n",
                   devices_flag->c_str());
      return 2;
    }
    // The option name the CPU plugins (XLA's and Kiln's) read.
    options.push_back({"cpu_device_count", NamedValue::Value(*count)});
  }

  std::shared_ptr<client::KeyValueStore> store;
  if (processes_flag || process_flag || store_flag) {
    std::optional<int64_t> processes =
        processes_flag ? ParseInt64(*processes_flag) : std::nullopt;
    std::optional<int64_t> process =
        process_flag ? ParseInt64(*process_flag) : std::nullopt;
    if (!processes || !process || !store_flag || *processes < 1 ||
        *process < 0 || *process >= *processes) {
      std::fprintf(stderr,
                   "kiln info: a job of several processes needs --processes "
                   "N, --process I (0 <= I < N) and --store DIR\n");
      return 2;
    }
    auto opened = client::FileKeyValueStore::Open(*store_flag);
    if (!opened.ok()) {
      std::fprintf(stderr, "kiln info: %s\n",
                   opened.status().ToString().c_str());
      return 1;
    }
    store = *opened;
    options.push_back({"num_nodes", NamedValue::Value(*processes)});
    options.push_back({"node_id", NamedValue::Value(*process)});
  }

  auto plugin = Plugin::Load(*plugin_path);
  if (!plugin.ok()) {
    std::fprintf(stderr, "kiln info: %s\n", plugin.status().ToString().c_str());
    return 1;
  }
  std::printf("plugin: %s\n", (*plugin)->path().c_str());
  std::printf("PJRT C API: %s (PJRT_Api of %zu bytes, %zu of 138 slots)\n",
              (*plugin)->version_string().c_str(), (*plugin)->api_struct_size(),
              (*plugin)->AvailableSlots().size());
  std::printf("plugin attributes: %zu\n", (*plugin)->attributes().size());
  for (const NamedValue& attribute : (*plugin)->attributes()) {
    std::printf("  %s = %s\n", attribute.name.c_str(),
                attribute.ValueToString().c_str());
  }
  std::vector<std::string> extensions;
  for (PJRT_Extension_Type type : (*plugin)->extension_types()) {
    extensions.push_back(client::ExtensionTypeName(type));
  }
  std::printf("extensions: %s\n", extensions.empty()
                                      ? "(none)"
                                      : StrJoin(extensions, ", ").c_str());

  auto pjrt_client = Client::Create(*plugin, options, store);
  if (!pjrt_client.ok()) {
    std::fprintf(stderr, "kiln info: PJRT_Client_Create: %s\n",
                 pjrt_client.status().ToString().c_str());
    return 1;
  }
  const Client& c = **pjrt_client;
  std::printf("platform: %s\n", c.platform_name().c_str());
  std::printf("platform version: %s\n", c.platform_version().c_str());
  std::printf("process index: %d\n", c.process_index());
  std::printf("devices: %zu (%zu addressable)\n", c.devices().size(),
              c.addressable_devices().size());
  for (const Device* device : c.devices()) PrintDevice(*device);
  std::printf("addressable memories: %zu\n", c.memories().size());
  return 0;
}

}  // namespace

KILN_REGISTER_COMMAND(info, "info",
                      "info [--plugin PATH] [--devices N] [--processes N "
                      "--process I --store DIR]",
                      "load a PJRT plugin and list its devices and memories",
                      RunInfo);

}  // namespace kiln::cli
