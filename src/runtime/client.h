// The runtime's CPU client: N devices of one process, with their memory
// spaces, and the platform's names.
#ifndef KILN_RUNTIME_CLIENT_H_
#define KILN_RUNTIME_CLIENT_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "exec/collectives.h"
#include "runtime/device.h"
#include "runtime/key_value_store.h"
#include "runtime/memory_space.h"
#include "runtime/run_registry.h"
#include "runtime/topology.h"

namespace kiln::runtime {

// The most devices one client may have (each has its own thread).
inline constexpr int kMaxDevices = 1024;

struct ClientOptions {
  int device_count = 1;
  // How long a participant of a multi-device launch waits at a collective
  // for its peers before the launch fails with DEADLINE_EXCEEDED. 0: the
  // environment's KILN_COLLECTIVE_TIMEOUT_S, else 300 s.
  double collective_timeout_seconds = 0;
  // A client of a job of `process_count` processes (PJRT's num_nodes and
  // node_id). With more than one, `store` is required: each process puts
  // its device count there and reads the others', and the collectives
  // between processes (runtime/gloo_collectives.h) meet through it.
  int process_index = 0;
  int process_count = 1;
  std::shared_ptr<KeyValueStore> store;
  // The address Gloo's TCP endpoints listen on.
  std::string collectives_hostname = "127.0.0.1";
  // The most bytes the client's devices may hold at once (buffers, execute
  // outputs, the scratch of runs in progress), all devices together; an
  // allocation past it fails with RESOURCE_EXHAUSTED. 0: the machine's
  // physical memory.
  int64_t memory_limit_bytes = 0;
};

class Client {
 public:
  // INVALID_ARGUMENT when `device_count` is outside [1, kMaxDevices].
  static StatusOr<std::unique_ptr<Client>> Create(const ClientOptions& options);
  // Cancels the runs in flight (they end with CANCELLED), finishes the
  // work queued on every device, then stops the queues.
  ~Client();

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // "kiln".
  static const std::string& PlatformName();
  // "kiln 0.1.0".
  static const std::string& PlatformVersion();

  int process_index() const { return process_index_; }
  // What the devices allocate from (ClientOptions::memory_limit_bytes).
  const std::shared_ptr<MemoryBudget>& memory_budget() const {
    return memory_budget_;
  }
  // Every run in flight of the client's executables; the destructor
  // cancels them (run_registry.h).
  const std::shared_ptr<RunRegistry>& runs() const { return runs_; }
  int process_count() const { return process_count_; }
  // The collectives between processes (null in a single process).
  const std::shared_ptr<exec::ProcessCollectives>& process_collectives() const {
    return process_collectives_;
  }
  // How long collectives wait for peers (ClientOptions).
  std::chrono::milliseconds collective_timeout() const {
    return collective_timeout_;
  }
  // The topology of this client's devices.
  const Topology& topology() const { return topology_; }

  // All devices of all processes, by global id: device i of process p has
  // id p * (devices per process) + i.
  const std::vector<Device*>& devices() const { return device_pointers_; }
  // This process's devices, by local_hardware_id.
  const std::vector<Device*>& addressable_devices() const {
    return addressable_devices_;
  }
  // All memory spaces of all devices, by id.
  const std::vector<MemorySpace*>& memory_spaces() const {
    return memory_spaces_;
  }
  // The memory spaces of this process's devices.
  const std::vector<MemorySpace*>& addressable_memory_spaces() const {
    return addressable_memory_spaces_;
  }

  // INVALID_ARGUMENT "No matching device found for device_id <id>".
  StatusOr<Device*> LookupDevice(int id) const;
  // INVALID_ARGUMENT "No matching device found for local_hardware_id <id>".
  StatusOr<Device*> LookupAddressableDevice(int local_hardware_id) const;

  // The devices for `num_replicas` x `num_partitions`, as ids in
  // replica-major order (entry r * num_partitions + p): partition p of
  // replica r runs on device p * num_replicas + r. INVALID_ARGUMENT when a
  // count is not positive or more devices are needed than the client has.
  StatusOr<std::vector<int>> DefaultDeviceAssignment(int num_replicas,
                                                     int num_partitions) const;

 private:
  Client() = default;

  // Publishes this process's device count and reads the others'.
  static StatusOr<int> ExchangeDeviceCounts(const ClientOptions& options,
                                            std::chrono::milliseconds timeout);

  Topology topology_;
  int process_index_ = 0;
  int process_count_ = 1;
  std::chrono::milliseconds collective_timeout_{0};
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<Device*> device_pointers_;
  std::vector<Device*> addressable_devices_;
  std::vector<MemorySpace*> memory_spaces_;
  std::vector<MemorySpace*> addressable_memory_spaces_;
  std::shared_ptr<exec::ProcessCollectives> process_collectives_;
  std::shared_ptr<MemoryBudget> memory_budget_;
  std::shared_ptr<RunRegistry> runs_ = std::make_shared<RunRegistry>();
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_CLIENT_H_
