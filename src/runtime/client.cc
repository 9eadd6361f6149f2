#include "runtime/client.h"

#include <cmath>

#include "exec/collectives.h"

#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "0.0.0"
#endif

namespace kiln::runtime {

StatusOr<std::unique_ptr<Client>> Client::Create(const ClientOptions& options) {
  ASSIGN_OR_RETURN(Topology topology, Topology::ForCpu(options.device_count));
  const double timeout = options.collective_timeout_seconds;
  if (!(timeout >= 0) || timeout > 1e9) {
    return InvalidArgumentError("the collective timeout is ", timeout,
                                " s; it must be between 0 (the default) and "
                                "1e9 s");
  }
  std::unique_ptr<Client> client(new Client());
  client->topology_ = std::move(topology);
  client->collective_timeout_ =
      timeout > 0 ? std::chrono::milliseconds(
                        std::max<int64_t>(1, std::llround(timeout * 1000)))
                  : exec::Communicator::DefaultTimeout();
  for (int id = 0; id < options.device_count; ++id) {
    client->devices_.push_back(std::make_unique<Device>(
        id, client->process_index(), id * kNumMemoryKinds));
    Device* device = client->devices_.back().get();
    client->device_pointers_.push_back(device);
    for (MemorySpace* memory : device->memory_spaces()) {
      client->memory_spaces_.push_back(memory);
    }
  }
  return client;
}

Client::~Client() {
  // Stop every queue before any device is destroyed: a task finishing on
  // one queue may enqueue follow-up work on another.
  for (auto& device : devices_) device->queue()->Shutdown();
}

const std::string& Client::PlatformName() {
  static const std::string* name = new std::string("kiln");
  return *name;
}

const std::string& Client::PlatformVersion() {
  static const std::string* version =
      new std::string(StrCat("kiln ", KILN_VERSION_STRING));
  return *version;
}

StatusOr<Device*> Client::LookupDevice(int id) const {
  if (id < 0 || id >= static_cast<int>(devices_.size())) {
    return InvalidArgumentError("No matching device found for device_id ", id);
  }
  return devices_[id].get();
}

StatusOr<Device*> Client::LookupAddressableDevice(int local_hardware_id) const {
  for (const auto& device : devices_) {
    if (device->local_hardware_id() == local_hardware_id) return device.get();
  }
  return InvalidArgumentError("No matching device found for local_hardware_id ",
                              local_hardware_id);
}

StatusOr<std::vector<int>> Client::DefaultDeviceAssignment(
    int num_replicas, int num_partitions) const {
  if (num_replicas < 1 || num_partitions < 1) {
    return InvalidArgumentError(
        "a device assignment needs at least one replica and one partition, "
        "but ",
        num_replicas, " replicas and ", num_partitions,
        " partitions were requested");
  }
  int64_t needed = static_cast<int64_t>(num_replicas) * num_partitions;
  if (needed > static_cast<int64_t>(devices_.size())) {
    return InvalidArgumentError(
        num_replicas, " replicas x ", num_partitions, " partitions need ",
        needed, " devices, but the client has ", devices_.size(),
        " (the client option cpu_device_count sets how many)");
  }
  // Partition p of replica r runs on device p * num_replicas + r, as in
  // XLA's default placement: the replicas of one partition are neighbours.
  std::vector<int> assignment(needed);
  for (int r = 0; r < num_replicas; ++r) {
    for (int p = 0; p < num_partitions; ++p) {
      assignment[static_cast<size_t>(r) * num_partitions + p] =
          devices_[static_cast<size_t>(p) * num_replicas + r]->id();
    }
  }
  return assignment;
}

}  // namespace kiln::runtime
