#include "runtime/run_registry.h"

#include <algorithm>

#include "runtime/buffer.h"

namespace kiln::runtime {

void RunControl::WatchOutputs(
    const std::vector<std::shared_ptr<Buffer>>& outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  outputs_.assign(outputs.begin(), outputs.end());
}

bool RunControl::Observed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::weak_ptr<Buffer>& weak : outputs_) {
    std::shared_ptr<Buffer> buffer = weak.lock();
    if (buffer != nullptr && !buffer->IsDeleted()) return true;
  }
  return false;
}

void RunRegistry::Add(const std::shared_ptr<RunControl>& run) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Drop finished runs now and then, so that the list stays as long as
  // the runs in flight (amortized O(1) per run).
  if (++added_since_prune_ > 64 && added_since_prune_ > runs_.size() / 2) {
    runs_.erase(std::remove_if(runs_.begin(), runs_.end(),
                               [](const std::weak_ptr<RunControl>& weak) {
                                 return weak.expired();
                               }),
                runs_.end());
    added_since_prune_ = 0;
  }
  runs_.push_back(run);
}

void RunRegistry::CancelAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::weak_ptr<RunControl>& weak : runs_) {
    if (std::shared_ptr<RunControl> run = weak.lock()) run->Cancel();
  }
}

void RunRegistry::CancelUnobserved() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::weak_ptr<RunControl>& weak : runs_) {
    std::shared_ptr<RunControl> run = weak.lock();
    if (run != nullptr && !run->Observed()) run->Cancel();
  }
}

size_t RunRegistry::LiveCount() {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t live = 0;
  for (const std::weak_ptr<RunControl>& weak : runs_) {
    if (!weak.expired()) ++live;
  }
  return live;
}

}  // namespace kiln::runtime
