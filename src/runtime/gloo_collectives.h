// Collectives between processes over Gloo (TCP).
//
// Every participant of a cross-process group is a Gloo rank of its own: a
// group of devices [d0, d1, ...] (global ids, rank order) has one Gloo
// context per rank, made on first use by the process that owns that
// device, connected through the job's key-value store under the prefix
// "kiln/gloo/<d0,d1,...>/<generation>/", and kept for later launches.
// Every process names a group's contexts the same way, so no process has to
// announce them. A context is used by one device's queue at a time, and
// every process runs the same collectives in the same order, which is what
// Gloo's slot numbering needs.
//
// Failures: Gloo's C++ exceptions stop here. A peer that closed its
// connection (a process that died) gives UNAVAILABLE, Gloo's timeout (the
// client's collective timeout) DEADLINE_EXCEEDED. A context that failed is
// dropped; a later collective of the group makes a new one under the next
// generation (which works only when every process of the group does so,
// i.e. after the whole job has seen the failure).
#ifndef KILN_RUNTIME_GLOO_COLLECTIVES_H_
#define KILN_RUNTIME_GLOO_COLLECTIVES_H_

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "exec/collectives.h"
#include "runtime/key_value_store.h"

namespace gloo {
class Context;
namespace transport {
class Device;
}  // namespace transport
}  // namespace gloo

namespace kiln::runtime {

class GlooCollectives : public exec::ProcessCollectives {
 public:
  // Collectives whose TCP endpoints listen on `hostname` (an address of
  // this machine; "127.0.0.1" for processes on one machine) and whose
  // contexts meet through `store`.
  static StatusOr<std::shared_ptr<GlooCollectives>> Create(
      std::shared_ptr<KeyValueStore> store, const std::string& hostname,
      std::chrono::milliseconds timeout);
  ~GlooCollectives() override;

  Status AllReduce(const std::vector<int>& devices, int rank,
                   ir::ElementType type, exec::ProcessReduction reduction,
                   const std::byte* in, std::byte* out, int64_t count) override;
  Status AllGather(const std::vector<int>& devices, int rank,
                   const std::byte* in, std::byte* out, int64_t bytes) override;
  Status AllToAll(const std::vector<int>& devices, int rank,
                  const std::byte* in, std::byte* out, int64_t bytes) override;
  Status Broadcast(const std::vector<int>& devices, int rank, int root,
                   std::byte* data, int64_t bytes) override;
  Status SendReceive(const std::vector<int>& devices, int rank,
                     const std::byte* send, const std::vector<int>& send_to,
                     std::byte* recv, int recv_from, int64_t bytes) override;

 private:
  GlooCollectives() = default;
  using Key = std::pair<std::vector<int>, int>;  // group, rank
  struct Slot {
    std::mutex mutex;
    std::shared_ptr<gloo::Context> context;
    int generation = 0;
  };
  // The context of rank `rank` of `devices`, made on first use.
  StatusOr<std::shared_ptr<gloo::Context>> ContextFor(
      const std::vector<int>& devices, int rank);
  // Drops the context of (devices, rank) after a failure.
  void Drop(const std::vector<int>& devices, int rank);

  class StoreAdapter;
  std::shared_ptr<KeyValueStore> store_;
  std::unique_ptr<StoreAdapter> adapter_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::chrono::milliseconds timeout_{0};
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<Slot>> slots_;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_GLOO_COLLECTIVES_H_
