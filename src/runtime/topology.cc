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
  return ForCpuProcesses(device_count, 1);
}

StatusOr<Topology> Topology::ForCpuProcesses(int devices_per_process,
                                             int process_count) {
  if (devices_per_process < 1 || devices_per_process > kMaxDevices) {
    return InvalidArgumentError("the device count must be between 1 and ",
                                kMaxDevices, ", but ", devices_per_process,
                                " was requested");
  }
  if (process_count < 1 ||
      int64_t{process_count} * devices_per_process > kMaxDevices) {
    return InvalidArgumentError(
        process_count, " processes of ", devices_per_process,
        " devices do not fit the limit of ", kMaxDevices, " devices");
  }
  Topology topology;
  topology.process_count_ = process_count;
  for (int p = 0; p < process_count; ++p) {
    for (int i = 0; i < devices_per_process; ++i) {
      topology.devices_.push_back(
          DeviceDescription::ForCpu(p * devices_per_process + i, p));
    }
  }
  return topology;
}

std::string Topology::Serialize() const {
  return StrCat(kSerializedPrefix, "processes=", process_count(),
                "; cpu_devices=", devices_.size() / process_count_);
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
  if (!StartsWith(processes, "processes=") ||
      !StartsWith(devices, "cpu_devices=")) {
    return bad();
  }
  std::optional<int64_t> process_count =
      ParseInt64(processes.substr(std::string_view("processes=").size()));
  std::optional<int64_t> count =
      ParseInt64(devices.substr(std::string_view("cpu_devices=").size()));
  if (!count.has_value() || *count < 1 || *count > kMaxDevices) return bad();
  if (!process_count.has_value() || *process_count < 1 ||
      *process_count * *count > kMaxDevices) {
    return bad();
  }
  return ForCpuProcesses(static_cast<int>(*count),
                         static_cast<int>(*process_count));
}

uint64_t Topology::Fingerprint() const { return Fingerprint64(Serialize()); }

}  // namespace kiln::runtime
