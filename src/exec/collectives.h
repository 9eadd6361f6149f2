// Collectives between the participants of one launch, in one process.
//
// A launch of a program over N devices runs N plans at once (one per
// participant, numbered by flattened id: replica_id * num_partitions +
// partition_id). They share one Communicator. A collective step is a
// meeting: the members of a group each publish the addresses of their
// inputs and outputs, wait until the whole group is there, do their share
// of the work by reading (and, for all_reduce, writing) their peers' memory
// directly, and wait again until every member is done, so nobody's memory
// is freed or overwritten while a peer still uses it.
//
// Meetings are keyed by (step id, group, invocation count): the step id
// names the collective op in the program (the same in every participant's
// plan), the group tells apart the disjoint groups of one step, and the
// count, kept per participant and step, tells apart the iterations of a
// loop. A failed participant aborts the communicator: peers waiting for a
// meeting, or reaching one later, fail at once naming it. A meeting whose
// members do not all arrive within the timeout fails with
// DEADLINE_EXCEEDED naming the missing ones.
//
// The communicator also carries the channels of send and recv: queues of
// messages by channel and receiver (see Communicator::Send).
#ifndef KILN_EXEC_COLLECTIVES_H_
#define KILN_EXEC_COLLECTIVES_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "ir/element_type.h"

namespace kiln::exec {

using ir::ElementType;

// The reductions a collective between processes can do itself.
enum class ProcessReduction { kSum, kProduct, kMax, kMin };

// Collectives between participants in several processes (a launch whose
// device assignment spans processes). Each participant is a rank of its
// group, named by the global device ids of the group in rank order, and
// calls the collective itself: ranks in this process and in others are
// treated alike (runtime/gloo_collectives.h implements it over Gloo).
// Every call blocks until the collective is done, fails with UNAVAILABLE
// when a peer goes away and DEADLINE_EXCEEDED after the timeout.
class ProcessCollectives {
 public:
  virtual ~ProcessCollectives() = default;

  // out = the reduction of every rank's `count` elements of `type`
  // (in == out is allowed). UNIMPLEMENTED for types it cannot reduce.
  virtual Status AllReduce(const std::vector<int>& devices, int rank,
                           ElementType type, ProcessReduction reduction,
                           const std::byte* in, std::byte* out,
                           int64_t count) = 0;
  // out (devices.size() * bytes) = every rank's `bytes` bytes, in rank
  // order.
  virtual Status AllGather(const std::vector<int>& devices, int rank,
                           const std::byte* in, std::byte* out,
                           int64_t bytes) = 0;
  // in and out hold devices.size() blocks of `bytes`: block r of `in` goes
  // to rank r, block r of `out` comes from rank r.
  virtual Status AllToAll(const std::vector<int>& devices, int rank,
                          const std::byte* in, std::byte* out,
                          int64_t bytes) = 0;
  // data (`bytes`) of rank `root` is copied into every rank's `data`.
  virtual Status Broadcast(const std::vector<int>& devices, int rank, int root,
                           std::byte* data, int64_t bytes) = 0;
  // Sends `send` to the ranks `send_to` and receives `recv` from rank
  // `recv_from` (-1: nothing), `bytes` each.
  virtual Status SendReceive(const std::vector<int>& devices, int rank,
                             const std::byte* send,
                             const std::vector<int>& send_to, std::byte* recv,
                             int recv_from, int64_t bytes) = 0;
};

// Where a launch's participants are, when they span processes: the global
// device id of each participant and whether it runs in this process.
struct CrossProcessLaunch {
  std::shared_ptr<ProcessCollectives> collectives;
  std::vector<int> devices;
  std::vector<bool> local;
};

// The process groups of one collective step over flattened participant
// ids, resolved when the plan is built (compile/ applies the StableHLO
// process-group modes). Members are listed in group order: rank r of a
// group is `groups[g][r]`.
struct CollectiveGroups {
  std::vector<std::vector<int>> groups;
  // Per participant: its group, or -1 when it is in none; its rank there.
  std::vector<int> group_of;
  std::vector<int> rank_of;

  // Builds the index from `groups` over `num_participants` participants.
  static CollectiveGroups Make(std::vector<std::vector<int>> groups,
                               int num_participants);
  int num_participants() const { return static_cast<int>(group_of.size()); }
  // The members of `participant`'s group (empty when it is in none).
  const std::vector<int>& GroupOf(int participant) const;
  // The size of the largest group.
  int64_t LargestGroup() const;
};

// What one member brings to a meeting: the addresses of its inputs and
// outputs for this step.
struct Contribution {
  std::vector<const std::byte*> inputs;
  std::vector<std::byte*> outputs;
};

class Communicator;

// One meeting, joined: the contributions of every member by rank. Leaving
// (explicitly or by destruction) waits until every member has left, so a
// member's memory stays valid while any peer may still use it.
class Meeting {
 public:
  Meeting() = default;
  Meeting(Meeting&& other) noexcept { *this = std::move(other); }
  Meeting& operator=(Meeting&& other) noexcept;
  ~Meeting() { Leave(); }

  // A meeting of one: `contribution` alone, nothing to wait for.
  static Meeting Alone(Contribution contribution);

  int rank() const { return rank_; }
  int size() const;
  const Contribution& member(int rank) const;
  // Waits until every member is done with the meeting.
  void Leave();

 private:
  friend class Communicator;
  struct State;
  Communicator* communicator_ = nullptr;
  std::shared_ptr<State> state_;
  int rank_ = -1;
};

class Communicator {
 public:
  // The default timeout: KILN_COLLECTIVE_TIMEOUT_S when it is set to a
  // positive number of seconds, else 300 s.
  static std::chrono::milliseconds DefaultTimeout();

  Communicator(int num_participants, std::chrono::milliseconds timeout);
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int num_participants() const { return num_participants_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Marks this launch as spanning processes (before any run starts).
  void SetCrossProcess(CrossProcessLaunch cross_process) {
    cross_process_ = std::move(cross_process);
  }
  // Whether `group` has a member in another process: its collectives then
  // go through cross_process().collectives instead of a meeting.
  bool SpansProcesses(const std::vector<int>& group) const;
  const CrossProcessLaunch& cross_process() const { return cross_process_; }

  // Joins the meeting of step `step_id` for group `group_index` (members
  // `group`, where `participant` has rank `rank`), bringing
  // `contribution`, and waits for the whole group. Fails at once when the
  // communicator is aborted (naming the participant that failed), when a
  // member it waits for has finished its run, when `cancel` becomes true,
  // or after the timeout (DEADLINE_EXCEEDED naming who did not arrive).
  // A member that fails here aborts the communicator itself, before any
  // peer could read its memory.
  StatusOr<Meeting> Join(int64_t step_id, int group_index,
                         const std::vector<int>& group, int participant,
                         int rank, Contribution contribution,
                         const std::atomic<bool>* cancel = nullptr);

  // Channels (stablehlo.send / recv): a send leaves a copy of its bytes in
  // the queue of (`channel`, `receiver`) and returns at once; a receive
  // takes the oldest message of (`channel`, `receiver`), waiting for one.
  // `receiver` is the receiving participant, or kAnyReceiver for a channel
  // whose messages go to whoever receives first (the StableHLO
  // interpreter's channels). A receive fails at once when the communicator
  // is aborted, when every other participant has finished its run with
  // nothing left in the queue, when `cancel` becomes true, or after the
  // timeout; a message of another size than the receiver expects is an
  // error (the programs disagree about the channel).
  // Host transfers (`host`) and device channels of one handle are
  // different channels.
  static constexpr int kAnyReceiver = -1;
  Status Send(int64_t channel, bool host, int receiver, int participant,
              std::string message);
  Status Receive(int64_t channel, bool host, int receiver, int participant,
                 std::byte* out, int64_t bytes,
                 const std::atomic<bool>* cancel = nullptr);

  // Records that `participant` failed with `status`: every wait of a peer
  // fails from now on. The first failure is the one reported.
  void Abort(int participant, const Status& status);
  // Records that `participant` finished its run: peers still waiting for
  // it at a meeting fail instead of waiting for the timeout.
  void Finish(int participant);
  // The first failure, if any.
  std::optional<Status> failure() const;

 private:
  friend class Meeting;
  using Key = std::tuple<int64_t, int, int64_t>;  // step, group, count
  Status FailureLocked() const;
  void AbortLocked(int participant, const Status& status);
  void LeaveMeeting(const std::shared_ptr<Meeting::State>& state);

  const int num_participants_;
  const std::chrono::milliseconds timeout_;
  CrossProcessLaunch cross_process_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<Key, std::shared_ptr<Meeting::State>> meetings_;
  // Per participant: how often it has joined each step.
  std::vector<std::unordered_map<int64_t, int64_t>> counts_;
  std::vector<bool> finished_;
  // Messages sent and not yet received, by (channel, host, receiver).
  std::map<std::tuple<int64_t, bool, int>, std::deque<std::string>> channels_;
  int failed_participant_ = -1;
  Status failure_;
};

}  // namespace kiln::exec

#endif  // KILN_EXEC_COLLECTIVES_H_
