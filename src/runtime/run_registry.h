// Stopping runs whose results nobody can receive any more.
//
// Every execution has a RunControl: the flag its plan polls between steps
// and loop iterations (exec::RunOptions::cancel) and weak references to its
// output buffers. The client and the executable each keep a RunRegistry of
// their runs in flight:
//   - destroying the client cancels all of them, so that its destructor,
//     which waits for its queues to drain, cannot wait forever on a `while`
//     loop that never ends;
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

class RunControl {
 public:
  const std::atomic<bool>* flag() const { return &cancel_; }
  void Cancel() { cancel_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancel_.load(std::memory_order_relaxed); }

  // The run's output buffers, once they exist.
  void WatchOutputs(const std::vector<std::shared_ptr<Buffer>>& outputs);
  // Whether some output buffer is alive and not deleted.
  bool Observed() const;

 private:
  std::atomic<bool> cancel_{false};
  mutable std::mutex mutex_;
  std::vector<std::weak_ptr<Buffer>> outputs_;
};

class RunRegistry {
 public:
  // Keeps a weak reference: a finished run leaves on its own.
  void Add(const std::shared_ptr<RunControl>& run);
  void CancelAll();
  void CancelUnobserved();
  // Runs still registered and alive (for tests).
  size_t LiveCount();

 private:
  std::mutex mutex_;
  std::vector<std::weak_ptr<RunControl>> runs_;
  // Registrations since expired entries were last dropped.
  size_t added_since_prune_ = 0;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_RUN_REGISTRY_H_
