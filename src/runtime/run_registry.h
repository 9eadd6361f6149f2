// Stopping runs whose results nobody can receive any more.
//
// Every execution has a RunControl: the flag its plan polls between steps
// and loop iterations (exec::RunOptions::cancel) and weak references to its
// output buffers. While the run lives its control is linked into the
// client's RunRegistry (an intrusive list: joining and leaving take one
// short lock and no allocation):
//   - destroying the client cancels every run in it, so that its
//     destructor, which waits for its queues to drain, cannot wait forever
//     on a `while` loop that never ends;
//   - destroying an executable cancels those of its runs whose outputs are
//     all gone (destroyed or deleted): their results can reach nobody. A
//     run whose results someone still holds goes on, as with XLA: an
//     execution does not depend on its executable's handle staying alive.
// A cancelled run stops within one step and fails with CANCELLED; its
// outputs carry that error.
#ifndef KILN_RUNTIME_RUN_REGISTRY_H_
#define KILN_RUNTIME_RUN_REGISTRY_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace kiln::runtime {

class Buffer;
class RunRegistry;

class RunControl {
 public:
  RunControl() = default;
  // Leaves the registry it joined.
  ~RunControl();
  RunControl(const RunControl&) = delete;
  RunControl& operator=(const RunControl&) = delete;

  const std::atomic<bool>* flag() const { return &cancel_; }
  void Cancel() { cancel_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancel_.load(std::memory_order_relaxed); }

  // Joins `registry` (once) as a run of `owner` (its executable, only
  // compared), watching `outputs`.
  void Register(std::shared_ptr<RunRegistry> registry, const void* owner,
                const std::vector<std::shared_ptr<Buffer>>& outputs);

 private:
  friend class RunRegistry;
  // Whether some output buffer is alive and not deleted.
  bool Observed() const;

  std::atomic<bool> cancel_{false};
  std::shared_ptr<RunRegistry> registry_;
  const void* owner_ = nullptr;
  // Set before the control is linked, read only under the registry's lock.
  std::vector<std::weak_ptr<Buffer>> outputs_;
  RunControl* previous_ = nullptr;
  RunControl* next_ = nullptr;
};

class RunRegistry {
 public:
  void CancelAll();
  // Cancels the runs of `owner` that RunControl::Observed says nobody can
  // receive.
  void CancelUnobserved(const void* owner);
  // Runs linked now (for tests).
  size_t LiveCount();

 private:
  friend class RunControl;
  void Link(RunControl* run);
  void Unlink(RunControl* run);

  std::mutex mutex_;
  RunControl* head_ = nullptr;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_RUN_REGISTRY_H_
