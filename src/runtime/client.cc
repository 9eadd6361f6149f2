#include "runtime/client.h"

#include <cmath>

#include "exec/collectives.h"
#include "runtime/gloo_collectives.h"

#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "0.0.0"
#endif

namespace kiln::runtime {

StatusOr<int> Client::ExchangeDeviceCounts(const ClientOptions& options,
                                           std::chrono::milliseconds timeout) {
  KeyValueStore& store = *options.store;
  const std::string mine = StrCat("cpu_devices=", options.device_count);
  RETURN_IF_ERROR(
      store.Put(StrCat("kiln/topology/process/", options.process_index), mine)
          .WithContext("publishing this process's devices"));
  for (int p = 0; p < options.process_count; ++p) {
    if (p == options.process_index) continue;
    StatusOr<std::string> read =
        store.Get(StrCat("kiln/topology/process/", p), timeout);
    if (!read.ok()) {
      return read.status().WithContext(StrCat(
          "reading the devices of process ", p, " of ", options.process_count));
    }
    const std::string& theirs = *read;
    if (theirs != mine) {
      return InvalidArgumentError(
          "process ", p, " has ", theirs, " and process ",
          options.process_index, " has ", mine,
          "; every process of a job needs the same number of devices");
    }
  }
  return options.device_count;
}

StatusOr<std::unique_ptr<Client>> Client::Create(const ClientOptions& options) {
  const double timeout = options.collective_timeout_seconds;
  if (!(timeout >= 0) || timeout > 1e9) {
    return InvalidArgumentError("the collective timeout is ", timeout,
                                " s; it must be between 0 (the default) and "
                                "1e9 s");
  }
  if (options.process_count < 1 || options.process_index < 0 ||
      options.process_index >= options.process_count) {
    return InvalidArgumentError("process ", options.process_index, " of ",
                                options.process_count,
                                ": the index must be in [0, count)");
  }
  if (options.process_count > 1 && options.store == nullptr) {
    return InvalidArgumentError(
        "a client of ", options.process_count,
        " processes needs a key-value store shared by them (PJRT's "
        "kv_get_callback and kv_put_callback)");
  }
  ASSIGN_OR_RETURN(
      Topology topology,
      Topology::ForCpuProcesses(options.device_count, options.process_count));
  if (options.memory_limit_bytes < 0) {
    return InvalidArgumentError("the memory limit is ",
                                options.memory_limit_bytes,
                                " bytes; it must be positive (0: the machine's "
                                "memory)");
  }
  std::unique_ptr<Client> client(new Client());
  client->topology_ = std::move(topology);
  client->memory_budget_ = std::make_shared<MemoryBudget>(
      options.memory_limit_bytes > 0 ? options.memory_limit_bytes
                                     : PhysicalMemoryBytes());
  client->process_index_ = options.process_index;
  client->process_count_ = options.process_count;
  client->collective_timeout_ =
      timeout > 0 ? std::chrono::milliseconds(
                        std::max<int64_t>(1, std::llround(timeout * 1000)))
                  : exec::Communicator::DefaultTimeout();
  if (options.process_count > 1) {
    RETURN_IF_ERROR(
        ExchangeDeviceCounts(options, client->collective_timeout_).status());
    ASSIGN_OR_RETURN(
        client->process_collectives_,
        GlooCollectives::Create(options.store, options.collectives_hostname,
                                client->collective_timeout_));
  }
  const int per_process = options.device_count;
  for (int p = 0; p < options.process_count; ++p) {
    for (int local = 0; local < per_process; ++local) {
      const int id = p * per_process + local;
      const bool addressable = p == options.process_index;
      client->devices_.push_back(std::make_unique<Device>(
          id, p, id * kNumMemoryKinds, local, addressable,
          client->memory_budget_));
      Device* device = client->devices_.back().get();
      client->device_pointers_.push_back(device);
      if (addressable) client->addressable_devices_.push_back(device);
      for (MemorySpace* memory : device->memory_spaces()) {
        client->memory_spaces_.push_back(memory);
        if (addressable) client->addressable_memory_spaces_.push_back(memory);
      }
    }
  }
  return client;
}

Client::~Client() {
  // A run that never ends (a `while` loop whose condition stays true)
  // would keep the queues below from draining.
  runs_->CancelAll();
  // Stop every queue before any device is destroyed: a task finishing on
  // one queue may enqueue follow-up work on another.
  for (Device* device : addressable_devices_) device->queue()->Shutdown();
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
  for (Device* device : addressable_devices_) {
    if (device->local_hardware_id() == local_hardware_id) return device;
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
