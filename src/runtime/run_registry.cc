#include "runtime/run_registry.h"

#include "runtime/buffer.h"

namespace kiln::runtime {

RunControl::~RunControl() {
  if (registry_ != nullptr) registry_->Unlink(this);
}

void RunControl::Register(std::shared_ptr<RunRegistry> registry,
                          const void* owner,
                          const std::vector<std::shared_ptr<Buffer>>& outputs) {
  if (registry == nullptr || registry_ != nullptr) return;
  owner_ = owner;
  outputs_.assign(outputs.begin(), outputs.end());
  registry_ = std::move(registry);
  registry_->Link(this);
}

bool RunControl::Observed() const {
  for (const std::weak_ptr<Buffer>& weak : outputs_) {
    std::shared_ptr<Buffer> buffer = weak.lock();
    if (buffer != nullptr && !buffer->IsDeleted()) return true;
  }
  return false;
}

void RunRegistry::Link(RunControl* run) {
  std::lock_guard<std::mutex> lock(mutex_);
  run->next_ = head_;
  if (head_ != nullptr) head_->previous_ = run;
  head_ = run;
}

void RunRegistry::Unlink(RunControl* run) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (run->previous_ != nullptr) {
    run->previous_->next_ = run->next_;
  } else {
    head_ = run->next_;
  }
  if (run->next_ != nullptr) run->next_->previous_ = run->previous_;
}

void RunRegistry::CancelAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (RunControl* run = head_; run != nullptr; run = run->next_) run->Cancel();
}

void RunRegistry::CancelUnobserved(const void* owner) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (RunControl* run = head_; run != nullptr; run = run->next_) {
    if (run->owner_ == owner && !run->Observed()) run->Cancel();
  }
}

size_t RunRegistry::LiveCount() {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t live = 0;
  for (RunControl* run = head_; run != nullptr; run = run->next_) ++live;
  return live;
}

}  // namespace kiln::runtime
