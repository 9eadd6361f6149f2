// The plugin and its client: version, attributes, platform, devices and
// their ids, memories.
#include <algorithm>
#include <set>

#include "tools/conform/checks.h"

namespace kiln::conform {
namespace {

using client::Device;
using client::Memory;
using client::NamedValue;

StatusOr<std::string> ApiVersion(CheckContext& context) {
  const client::Plugin& plugin = *context.plugin;
  // The client refuses other majors and minors under its floor at load
  // time; what is left to check is that the table holds its own header.
  if (plugin.major_version() != 0) {
    return Mismatch("major version ", plugin.major_version(), ", expected 0");
  }
  if (plugin.api_struct_size() < offsetof(PJRT_Api, PJRT_Client_Create)) {
    return Mismatch("PJRT_Api.struct_size ", plugin.api_struct_size(),
                    " does not reach PJRT_Client_Create");
  }
  return StrCat("PJRT C API ", plugin.version_string(), ", PJRT_Api of ",
                plugin.api_struct_size(), " bytes, ",
                plugin.AvailableSlots().size(), " slots the client may call");
}

// stablehlo_current_version and stablehlo_minimum_version, when present:
// [major, minor, patch] with minimum <= current.
StatusOr<std::string> PluginAttributes(CheckContext& context) {
  const client::Plugin& plugin = *context.plugin;
  if (plugin.api().PJRT_Plugin_Attributes == nullptr) {
    return NotApplicable("the plugin has no PJRT_Plugin_Attributes");
  }
  std::set<std::string> names;
  for (const NamedValue& attribute : plugin.attributes()) {
    if (attribute.name.empty()) return Mismatch("an attribute has no name");
    if (!names.insert(attribute.name).second) {
      return Mismatch("attribute ", attribute.name, " appears twice");
    }
  }
  std::vector<int64_t> versions[2];
  const char* kVersionNames[2] = {"stablehlo_minimum_version",
                                  "stablehlo_current_version"};
  for (int i = 0; i < 2; ++i) {
    const NamedValue* attribute = plugin.FindAttribute(kVersionNames[i]);
    if (attribute == nullptr) continue;
    const auto* list = std::get_if<std::vector<int64_t>>(&attribute->value);
    if (list == nullptr || list->size() != 3) {
      return Mismatch(kVersionNames[i], " is ", attribute->ValueToString(),
                      ", expected an int64 list [major, minor, patch]");
    }
    versions[i] = *list;
  }
  if (!versions[0].empty() && !versions[1].empty() &&
      versions[0] > versions[1]) {
    return Mismatch("stablehlo_minimum_version ", StrJoin(versions[0], "."),
                    " is newer than stablehlo_current_version ",
                    StrJoin(versions[1], "."));
  }
  std::string detail = StrCat(names.size(), " attributes");
  if (!versions[1].empty()) {
    StrAppend(detail, ", StableHLO ", StrJoin(versions[1], "."));
  }
  return detail;
}

StatusOr<std::string> Platform(CheckContext& context) {
  const client::Client& client = *context.client;
  if (client.platform_name().empty()) {
    return Mismatch("PJRT_Client_PlatformName is empty");
  }
  for (char c : client.platform_name()) {
    if (c <= ' ' || c > '~') {
      return Mismatch("platform name '",
                      EscapeForMessage(client.platform_name()),
                      "' has a blank or unprintable character");
    }
  }
  return StrCat("platform ", client.platform_name(), ", version '",
                EscapeForMessage(client.platform_version(), 80), "'");
}

StatusOr<std::string> ProcessIndex(CheckContext& context) {
  const client::Client& client = *context.client;
  // The suite makes its client without a key-value store: one process.
  if (client.process_index() != 0) {
    return Mismatch("process index ", client.process_index(),
                    " for a client of one process, expected 0");
  }
  for (const Device* device : client.addressable_devices()) {
    if (device->process_index() != client.process_index()) {
      return Mismatch("addressable device ", device->id(), " is of process ",
                      device->process_index(), ", the client is process ",
                      client.process_index());
    }
  }
  return std::string("process 0 of 1; its devices say so too");
}

StatusOr<std::string> Devices(CheckContext& context) {
  const client::Client& client = *context.client;
  if (client.devices().empty()) return Mismatch("no devices");
  if (client.addressable_devices().empty()) {
    return Mismatch("no addressable devices");
  }
  std::set<int> ids;
  for (const Device* device : client.devices()) {
    if (device->id() < 0) return Mismatch("device id ", device->id(), " < 0");
    if (!ids.insert(device->id()).second) {
      return Mismatch("device id ", device->id(), " appears twice");
    }
    if (device->kind().empty()) {
      return Mismatch("device ", device->id(), " has no kind");
    }
  }
  std::vector<int> addressable_ids;
  for (const Device* device : client.addressable_devices()) {
    if (std::find(client.devices().begin(), client.devices().end(), device) ==
        client.devices().end()) {
      return Mismatch("addressable device ", device->id(),
                      " is not among PJRT_Client_Devices");
    }
    if (!device->addressable()) {
      return Mismatch("device ", device->id(),
                      " is addressable but PJRT_Device_IsAddressable says no");
    }
    addressable_ids.push_back(device->id());
  }
  return StrCat(client.devices().size(), " devices (",
                client.addressable_devices().size(), " addressable), ids ",
                StrJoin(addressable_ids, ","), ", kind '",
                FirstDevice(context).kind(), "'");
}

// With a create option that asks for a number of devices (XLA's and Kiln's
// CPU plugins read cpu_device_count), the client has that many.
StatusOr<std::string> DeviceCountOption(CheckContext& context) {
  for (const NamedValue& option : context.create_options) {
    if (!EndsWith(option.name, "device_count")) continue;
    const auto* count = std::get_if<int64_t>(&option.value);
    if (count == nullptr) continue;
    size_t have = context.client->addressable_devices().size();
    if (have != static_cast<size_t>(*count)) {
      return Mismatch(option.name, "=", *count, " gave ", have,
                      " addressable devices");
    }
    return StrCat(option.name, "=", *count, " gave ", have, " devices");
  }
  return NotApplicable(
      "no *device_count create option given (--option cpu_device_count=N)");
}

StatusOr<std::string> LookupDevice(CheckContext& context) {
  const client::Client& client = *context.client;
  for (const Device* device : client.devices()) {
    auto found = client.LookupDevice(device->id());
    if (!found.ok()) {
      return found.status().WithContext(
          StrCat("PJRT_Client_LookupDevice(", device->id(), ")"));
    }
    if (*found != device) {
      return Mismatch("PJRT_Client_LookupDevice(", device->id(),
                      ") is another device");
    }
  }
  return StrCat("each of the ", client.devices().size(),
                " ids finds its device");
}

StatusOr<std::string> DefaultDeviceAssignment(CheckContext& context) {
  const client::Client& client = *context.client;
  int replicas = static_cast<int>(client.addressable_devices().size());
  ASSIGN_OR_RETURN(std::vector<int> ids,
                   client.DefaultDeviceAssignment(replicas, 1));
  if (ids.size() != static_cast<size_t>(replicas)) {
    return Mismatch(ids.size(), " ids for ", replicas, " replicas");
  }
  std::set<int> distinct(ids.begin(), ids.end());
  if (distinct.size() != ids.size()) {
    return Mismatch("the assignment [", StrJoin(ids, ","),
                    "] uses a device twice");
  }
  for (int id : ids) {
    if (!client.LookupDevice(id).ok()) {
      return Mismatch("the assignment names device ", id, ", which is unknown");
    }
  }
  return StrCat(replicas, " replicas on [", StrJoin(ids, ","), "]");
}

StatusOr<std::string> DeviceMemories(CheckContext& context) {
  const client::Client& client = *context.client;
  size_t total = 0;
  std::set<std::string> kinds;
  for (const Device* device : client.addressable_devices()) {
    total += device->memories().size();
    if (device->default_memory() != nullptr &&
        std::find(device->memories().begin(), device->memories().end(),
                  device->default_memory()) == device->memories().end()) {
      return Mismatch("device ", device->id(),
                      "'s default memory is not among its memories");
    }
    for (const Memory* memory : device->memories()) {
      if (memory->kind().empty()) {
        return Mismatch("memory ", memory->id(), " of device ", device->id(),
                        " has no kind");
      }
      kinds.insert(memory->kind());
      if (std::find(memory->devices().begin(), memory->devices().end(),
                    device) == memory->devices().end()) {
        return Mismatch("memory ", memory->id(), " (", memory->kind(),
                        ") of device ", device->id(),
                        " does not list the device among its own");
      }
      if (std::find(client.memories().begin(), client.memories().end(),
                    memory) == client.memories().end()) {
        return Mismatch("memory ", memory->id(), " of device ", device->id(),
                        " is not among PJRT_Client_AddressableMemories");
      }
    }
  }
  if (total == 0) return NotApplicable("the plugin reports no memories");
  const Device& first = FirstDevice(context);
  return StrCat(total, " memories, kinds ", StrJoin(kinds, ","), "; device ",
                first.id(), "'s default: ",
                first.default_memory() ? first.default_memory()->kind()
                                       : std::string("(none)"));
}

// A buffer put in each memory of the first device reads back and reports
// that memory.
StatusOr<std::string> BufferInEachMemory(CheckContext& context) {
  const Device& device = FirstDevice(context);
  if (device.memories().empty()) {
    return NotApplicable("the plugin reports no memories");
  }
  HostArray values = MakeArray<float>(PJRT_Buffer_Type_F32, {3}, {1, 2, 3});
  std::vector<std::string> kinds;
  for (const Memory* memory : device.memories()) {
    std::string where =
        StrCat("a buffer in memory ", memory->id(), " (", memory->kind(), ")");
    ASSIGN_OR_RETURN(auto buffer,
                     context.client->BufferFromHost(
                         values.bytes.data(), values.shape, nullptr, memory));
    RETURN_IF_ERROR(ExpectContents(where, *buffer, values));
    ASSIGN_OR_RETURN(Memory * reported, buffer->GetMemory());
    if (reported != memory) {
      return Mismatch(where, " reports memory ",
                      reported ? reported->kind() : std::string("(unknown)"));
    }
    kinds.push_back(memory->kind());
  }
  return StrCat("round trips through ", StrJoin(kinds, ", "));
}

StatusOr<std::string> DefaultMemoryOfBuffer(CheckContext& context) {
  const Device& device = FirstDevice(context);
  if (device.default_memory() == nullptr) {
    return NotApplicable("device ", device.id(), " reports no default memory");
  }
  HostArray values = MakeArray<float>(PJRT_Buffer_Type_F32, {2}, {1, 2});
  ASSIGN_OR_RETURN(auto buffer, Upload(context, values, device));
  ASSIGN_OR_RETURN(Memory * memory, buffer->GetMemory());
  if (memory != device.default_memory()) {
    return Mismatch("a buffer made on device ", device.id(), " is in memory ",
                    memory ? memory->kind() : std::string("(unknown)"),
                    ", not the device's default");
  }
  return StrCat("in ", memory->kind());
}

}  // namespace

void AddPlatformChecks(std::vector<Check>& checks) {
  checks.push_back({"api.version", CheckKind::kRequired,
                    "major 0, a table that reaches the client slots",
                    ApiVersion});
  checks.push_back({"api.attributes", CheckKind::kOptional,
                    "unique attribute names; StableHLO versions well formed",
                    PluginAttributes});
  checks.push_back({"client.platform", CheckKind::kRequired,
                    "a printable platform name, and its version", Platform});
  checks.push_back({"client.process_index", CheckKind::kRequired,
                    "process 0 for a client of one process", ProcessIndex});
  checks.push_back({"client.devices", CheckKind::kRequired,
                    "unique non-negative ids, kinds; addressable among all",
                    Devices});
  checks.push_back({"client.device_count_option", CheckKind::kOptional,
                    "a *device_count create option gives that many devices",
                    DeviceCountOption});
  checks.push_back({"client.lookup_device", CheckKind::kRequired,
                    "PJRT_Client_LookupDevice finds every device by its id",
                    LookupDevice});
  checks.push_back({"client.default_device_assignment", CheckKind::kOptional,
                    "one distinct known device per replica",
                    DefaultDeviceAssignment});
  checks.push_back(
      {"memory.device_memories", CheckKind::kOptional,
       "memories with kinds, listing their devices; default among them",
       DeviceMemories});
  checks.push_back(
      {"memory.buffer_in_each_memory", CheckKind::kOptional,
       "a buffer in each memory of device 0 reads back and knows it",
       BufferInEachMemory});
  checks.push_back({"memory.default_memory_of_buffer", CheckKind::kOptional,
                    "a buffer made on a device is in its default memory",
                    DefaultMemoryOfBuffer});
}

}  // namespace kiln::conform
