// Topologies: what devices a platform has, without the devices themselves.
//
// A client's topology describes its devices; a topology can also be built
// on its own (to describe a machine without creating a client) and moved
// between processes as bytes.
#ifndef KILN_RUNTIME_TOPOLOGY_H_
#define KILN_RUNTIME_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::runtime {

// What is known of a device without the device: its ids and names.
struct DeviceDescription {
  int id = 0;
  int process_index = 0;
  std::string kind;          // "cpu"
  std::string debug_string;  // "kiln:cpu:0"
  std::string to_string;     // "KilnCpuDevice(id=0)"

  // The description of CPU device `id` of process `process_index`.
  static DeviceDescription ForCpu(int id, int process_index);
};

class Topology {
 public:
  // `device_count` CPU devices in one process. INVALID_ARGUMENT outside
  // [1, kMaxDevices].
  static StatusOr<Topology> ForCpu(int device_count);
  // `devices_per_process` CPU devices in each of `process_count`
  // processes; device p * devices_per_process + i is device i of process
  // p.
  static StatusOr<Topology> ForCpuProcesses(int devices_per_process,
                                            int process_count);
  // Reads what Serialize wrote. INVALID_ARGUMENT for anything else.
  static StatusOr<Topology> Deserialize(std::string_view bytes);

  const std::vector<DeviceDescription>& devices() const { return devices_; }
  int process_count() const { return process_count_; }

  // A stable text form: "kiln-topology v1; processes=1; cpu_devices=4"
  // (cpu_devices counts the devices of one process).
  std::string Serialize() const;
  // A fingerprint of the serialized form.
  uint64_t Fingerprint() const;

 private:
  std::vector<DeviceDescription> devices_;
  int process_count_ = 1;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_TOPOLOGY_H_
