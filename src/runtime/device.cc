#include "runtime/device.h"

#include <unistd.h>

#include "base/strings.h"

namespace kiln::runtime {

Device::Device(int id, int process_index, int first_memory_id,
               int local_hardware_id, bool addressable,
               std::shared_ptr<MemoryBudget> budget)
    : description_(DeviceDescription::ForCpu(id, process_index)),
      local_hardware_id_(local_hardware_id),
      addressable_(addressable),
      queue_(addressable ? std::make_shared<WorkQueue>(StrCat("kiln-cpu-", id))
                         : nullptr),
      counters_(std::make_shared<MemoryCounters>()),
      in_flight_(addressable ? std::make_shared<InFlightLimit>() : nullptr) {
  counters_->budget = std::move(budget);
  for (int kind = 0; kind < kNumMemoryKinds; ++kind) {
    memory_spaces_.push_back(std::make_unique<MemorySpace>(
        first_memory_id + kind, static_cast<MemoryKind>(kind), this));
    memory_space_pointers_.push_back(memory_spaces_.back().get());
  }
}

Device::~Device() {
  if (queue_ != nullptr) queue_->Shutdown();
}

MemoryStats Device::GetMemoryStats() const {
  MemoryStats stats;
  stats.bytes_in_use = counters_->bytes_in_use.load();
  stats.peak_bytes_in_use = counters_->peak_bytes_in_use.load();
  stats.num_allocs = counters_->num_allocs.load();
  stats.largest_alloc_size = counters_->largest_alloc_size.load();
  stats.bytes_limit = counters_->budget ? counters_->budget->limit()
                                        : PhysicalMemoryBytes();
  return stats;
}

int64_t PhysicalMemoryBytes() {
  static const int64_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return int64_t{1} << 40;
    return static_cast<int64_t>(pages) * page_size;
  }();
  return bytes;
}

}  // namespace kiln::runtime
