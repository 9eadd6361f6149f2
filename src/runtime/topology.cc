#include "runtime/topology.h"

#include "base/fingerprint.h"
#include "base/strings.h"
#include "runtime/client.h"

namespace kiln::runtime {
namespace {

constexpr std::string_view kSerializedPrefix = "kiln-topology v1; ";

}  // namespace

DeviceDescription DeviceDescription::ForCpu(int id, int process_index) {
  DeviceDescription description;
  description.id = id;
  description.process_index = process_index;
  description.kind = "cpu";
  description.debug_string = StrCat("kiln:cpu:", id);
  description.to_string = StrCat("KilnCpuDevice(id=", id, ")");
  return description;
}

StatusOr<Topology> Topology::ForCpu(int device_count) {
  if (device_count < 1 || device_count > kMaxDevices) {
    return InvalidArgumentError("the device count must be between 1 and ",
                                kMaxDevices, ", but ", device_count,
                                " was requested");
  }
  Topology topology;
  for (int id = 0; id < device_count; ++id) {
    topology.devices_.push_back(DeviceDescription::ForCpu(id, 0));
  }
  return topology;
}

std::string Topology::Serialize() const {
  return StrCat(kSerializedPrefix, "processes=", process_count(),
                "; cpu_devices=", devices_.size());
}

StatusOr<Topology> Topology::Deserialize(std::string_view bytes) {
  auto bad = [&] {
    return InvalidArgumentError(
        "not a serialized Kiln topology (expected \"", kSerializedPrefix,
        "processes=1; cpu_devices=N\"): \"", EscapeForMessage(bytes), "\"");
  };
  if (!StartsWith(bytes, kSerializedPrefix)) return bad();
  std::vector<std::string_view> fields =
      StrSplit(bytes.substr(kSerializedPrefix.size()), ';');
  if (fields.size() != 2) return bad();
  std::string_view processes = StripWhitespace(fields[0]);
  std::string_view devices = StripWhitespace(fields[1]);
  if (processes != "processes=1" || !StartsWith(devices, "cpu_devices=")) {
    return bad();
  }
  std::optional<int64_t> count =
      ParseInt64(devices.substr(std::string_view("cpu_devices=").size()));
  if (!count.has_value() || *count < 1 || *count > kMaxDevices) return bad();
  return ForCpu(static_cast<int>(*count));
}

uint64_t Topology::Fingerprint() const { return Fingerprint64(Serialize()); }

}  // namespace kiln::runtime
