// A CPU device: an id, a work queue, three memory spaces and allocation
// counters.
//
// Devices share the machine's cores; what makes them separate is their
// queues (work for one device runs in order on its own thread) and their
// memory accounting.
#ifndef KILN_RUNTIME_DEVICE_H_
#define KILN_RUNTIME_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/in_flight.h"
#include "runtime/memory_space.h"
#include "runtime/storage.h"
#include "runtime/topology.h"
#include "runtime/work_queue.h"

namespace kiln::runtime {

// What PJRT_Device_MemoryStats reports for a device.
struct MemoryStats {
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  int64_t num_allocs = 0;
  int64_t largest_alloc_size = 0;
  int64_t bytes_limit = 0;
};

class Device {
 public:
  // Device `id` (global) of process `process_index`, the
  // `local_hardware_id`-th of that process; its memory spaces get ids
  // `first_memory_id` onwards, one per memory kind. A device of another
  // process (not `addressable`) has no queue: it is only named (in device
  // assignments) and runs nothing here. Its allocations draw from
  // `budget`, the client's (may be null: no limit).
  Device(int id, int process_index, int first_memory_id, int local_hardware_id,
         bool addressable, std::shared_ptr<MemoryBudget> budget = nullptr);
  // Finishes the queued work, then stops the queue.
  ~Device();

  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // Global id, unique in the client.
  int id() const { return description_.id; }
  // The id among its process's devices (the same as id() in a single
  // process).
  int local_hardware_id() const { return local_hardware_id_; }
  // Whether the device belongs to this process.
  bool addressable() const { return addressable_; }
  int process_index() const { return description_.process_index; }
  const DeviceDescription& description() const { return description_; }
  // "cpu".
  const std::string& kind() const { return description_.kind; }
  // "kiln:cpu:0".
  const std::string& debug_string() const { return description_.debug_string; }
  // "KilnCpuDevice(id=0)".
  const std::string& to_string() const { return description_.to_string; }

  // The memory spaces in MemoryKind order; the first (`device`) is the
  // default.
  const std::vector<MemorySpace*>& memory_spaces() const {
    return memory_space_pointers_;
  }
  MemorySpace* default_memory_space() const {
    return memory_space_pointers_.front();
  }
  MemorySpace* memory_space(MemoryKind kind) const {
    return memory_space_pointers_[static_cast<int>(kind)];
  }

  // Null for a device of another process.
  const std::shared_ptr<WorkQueue>& queue() const { return queue_; }
  const std::shared_ptr<MemoryCounters>& counters() const { return counters_; }
  // The bound on this device's executions in flight (null for a device of
  // another process).
  const std::shared_ptr<InFlightLimit>& in_flight() const { return in_flight_; }

  // Bytes allocated for buffers of this device (all its memory spaces),
  // and the limit: the client's memory limit (shared by its devices).
  MemoryStats GetMemoryStats() const;
  void ClearMemoryStats() { counters_->ResetPeak(); }

 private:
  DeviceDescription description_;
  int local_hardware_id_ = 0;
  bool addressable_ = true;
  std::vector<std::unique_ptr<MemorySpace>> memory_spaces_;
  std::vector<MemorySpace*> memory_space_pointers_;
  std::shared_ptr<WorkQueue> queue_;
  std::shared_ptr<MemoryCounters> counters_;
  std::shared_ptr<InFlightLimit> in_flight_;
};

// The machine's physical memory in bytes: the most one buffer may take.
int64_t PhysicalMemoryBytes();

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_DEVICE_H_
