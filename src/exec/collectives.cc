#include "exec/collectives.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/strings.h"

namespace kiln::exec {
namespace {

using Clock = std::chrono::steady_clock;

// How often a wait looks at its cancel flag.
constexpr std::chrono::milliseconds kPollInterval(50);

}  // namespace

// --- CollectiveGroups -------------------------------------------------------

CollectiveGroups CollectiveGroups::Make(std::vector<std::vector<int>> groups,
                                        int num_participants) {
  CollectiveGroups result;
  result.groups = std::move(groups);
  result.group_of.assign(num_participants, -1);
  result.rank_of.assign(num_participants, -1);
  for (size_t g = 0; g < result.groups.size(); ++g) {
    for (size_t r = 0; r < result.groups[g].size(); ++r) {
      int member = result.groups[g][r];
      if (member < 0 || member >= num_participants) continue;
      result.group_of[member] = static_cast<int>(g);
      result.rank_of[member] = static_cast<int>(r);
    }
  }
  return result;
}

const std::vector<int>& CollectiveGroups::GroupOf(int participant) const {
  static const std::vector<int>* none = new std::vector<int>();
  if (participant < 0 || participant >= num_participants() ||
      group_of[participant] < 0) {
    return *none;
  }
  return groups[group_of[participant]];
}

int64_t CollectiveGroups::LargestGroup() const {
  int64_t largest = 0;
  for (const auto& group : groups) {
    largest = std::max<int64_t>(largest, static_cast<int64_t>(group.size()));
  }
  return largest;
}

// --- Meeting ----------------------------------------------------------------

struct Meeting::State {
  State(std::tuple<int64_t, int, int64_t> key, int size)
      : key(key), members(size), arrived(size, false) {}
  std::tuple<int64_t, int, int64_t> key;
  std::vector<Contribution> members;
  std::vector<bool> arrived;
  int num_arrived = 0;
  int num_left = 0;
};

Meeting& Meeting::operator=(Meeting&& other) noexcept {
  if (this != &other) {
    Leave();
    communicator_ = other.communicator_;
    state_ = std::move(other.state_);
    rank_ = other.rank_;
    other.communicator_ = nullptr;
    other.rank_ = -1;
  }
  return *this;
}

Meeting Meeting::Alone(Contribution contribution) {
  Meeting meeting;
  meeting.state_ =
      std::make_shared<State>(std::tuple<int64_t, int, int64_t>{}, 1);
  meeting.state_->members[0] = std::move(contribution);
  meeting.state_->arrived[0] = true;
  meeting.state_->num_arrived = 1;
  meeting.rank_ = 0;
  return meeting;
}

int Meeting::size() const { return static_cast<int>(state_->members.size()); }

const Contribution& Meeting::member(int rank) const {
  return state_->members[rank];
}

void Meeting::Leave() {
  if (communicator_ == nullptr || state_ == nullptr) return;
  communicator_->LeaveMeeting(state_);
  communicator_ = nullptr;
  state_.reset();
}

// --- Communicator
// -------------------------------------------------------------

std::chrono::milliseconds Communicator::DefaultTimeout() {
  if (const char* text = std::getenv("KILN_COLLECTIVE_TIMEOUT_S")) {
    char* end = nullptr;
    double seconds = std::strtod(text, &end);
    if (end != text && seconds > 0) {
      return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    }
  }
  return std::chrono::seconds(300);
}

Communicator::Communicator(int num_participants,
                           std::chrono::milliseconds timeout)
    : num_participants_(num_participants),
      timeout_(timeout),
      counts_(num_participants),
      finished_(num_participants, false) {}

Status Communicator::FailureLocked() const {
  return AbortedError("participant ", failed_participant_,
                      " failed: ", failure_.ToString());
}

void Communicator::AbortLocked(int participant, const Status& status) {
  if (!failure_.ok()) return;
  failure_ = status.ok() ? InternalError("aborted without an error") : status;
  failed_participant_ = participant;
  changed_.notify_all();
}

void Communicator::Abort(int participant, const Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  AbortLocked(participant, status);
}

void Communicator::Finish(int participant) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (participant >= 0 && participant < num_participants_) {
    finished_[participant] = true;
  }
  changed_.notify_all();
}

bool Communicator::SpansProcesses(const std::vector<int>& group) const {
  if (cross_process_.collectives == nullptr) return false;
  for (int member : group) {
    if (member >= 0 && member < static_cast<int>(cross_process_.local.size()) &&
        !cross_process_.local[member]) {
      return true;
    }
  }
  return false;
}

std::optional<Status> Communicator::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_.ok()) return std::nullopt;
  return FailureLocked();
}

StatusOr<Meeting> Communicator::Join(int64_t step_id, int group_index,
                                     const std::vector<int>& group,
                                     int participant, int rank,
                                     Contribution contribution,
                                     const std::atomic<bool>* cancel) {
  if (participant < 0 || participant >= num_participants_ || rank < 0 ||
      rank >= static_cast<int>(group.size())) {
    return InternalError("participant ", participant, " (rank ", rank,
                         ") does not fit a communicator of ", num_participants_,
                         " participants");
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (!failure_.ok()) return FailureLocked();
  const int64_t count = counts_[participant][step_id]++;
  const Key key{step_id, group_index, count};
  std::shared_ptr<Meeting::State>& slot = meetings_[key];
  if (slot == nullptr) {
    slot =
        std::make_shared<Meeting::State>(key, static_cast<int>(group.size()));
  }
  std::shared_ptr<Meeting::State> state = slot;
  state->members[rank] = std::move(contribution);
  state->arrived[rank] = true;
  const int size = static_cast<int>(group.size());
  if (++state->num_arrived == size) changed_.notify_all();

  const Clock::time_point deadline = Clock::now() + timeout_;
  while (state->num_arrived < size) {
    // A member that gives up must make sure no peer reads its memory
    // later: failing under the lock marks the whole communicator failed
    // before anyone else can complete this meeting.
    if (!failure_.ok()) return FailureLocked();
    for (int r = 0; r < size; ++r) {
      if (!state->arrived[r] && finished_[group[r]]) {
        Status status = FailedPreconditionError(
            "participant ", group[r],
            " finished its run without reaching this collective (the "
            "participants do not run the same collectives)");
        AbortLocked(participant, status);
        return status;
      }
    }
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      Status status = CancelledError("the run was cancelled");
      AbortLocked(participant, status);
      return status;
    }
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      std::vector<int> missing;
      for (int r = 0; r < size; ++r) {
        if (!state->arrived[r]) missing.push_back(group[r]);
      }
      Status status = DeadlineExceededError(
          "participant", missing.size() == 1 ? " " : "s ",
          StrJoin(missing, ", "), " of group [", StrJoin(group, ", "),
          "] did not arrive within ",
          std::chrono::duration<double>(timeout_).count(), " s");
      AbortLocked(participant, status);
      return status;
    }
    changed_.wait_until(lock, std::min(deadline, now + kPollInterval));
  }
  Meeting meeting;
  meeting.communicator_ = this;
  meeting.state_ = std::move(state);
  meeting.rank_ = rank;
  return meeting;
}

Status Communicator::Send(int64_t channel, bool host, int receiver,
                          int participant, std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_.ok()) return FailureLocked();
  if (participant < 0 || participant >= num_participants_ ||
      receiver < kAnyReceiver || receiver >= num_participants_) {
    return InternalError("a send from participant ", participant, " to ",
                         receiver, " does not fit a communicator of ",
                         num_participants_, " participants");
  }
  channels_[{channel, host, receiver}].push_back(std::move(message));
  changed_.notify_all();
  return OkStatus();
}

Status Communicator::Receive(int64_t channel, bool host, int receiver,
                             int participant, std::byte* out, int64_t bytes,
                             const std::atomic<bool>* cancel) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (participant < 0 || participant >= num_participants_ ||
      receiver < kAnyReceiver || receiver >= num_participants_) {
    return InternalError("a receive of participant ", participant,
                         " does not fit a communicator of ", num_participants_,
                         " participants");
  }
  const Clock::time_point deadline = Clock::now() + timeout_;
  const std::tuple<int64_t, bool, int> key{channel, host, receiver};
  const std::string name = StrCat(host ? "host channel " : "channel ", channel);
  while (true) {
    if (!failure_.ok()) return FailureLocked();
    auto queue = channels_.find(key);
    if (queue != channels_.end() && !queue->second.empty()) {
      std::string message = std::move(queue->second.front());
      queue->second.pop_front();
      if (static_cast<int64_t>(message.size()) != bytes) {
        Status status = InvalidArgumentError(
            name, ": participant ", participant, " receives ", bytes,
            " bytes but was sent ", message.size(),
            " (the programs disagree about what the channel carries)");
        AbortLocked(participant, status);
        return status;
      }
      if (bytes > 0) std::memcpy(out, message.data(), bytes);
      return OkStatus();
    }
    bool others_done = true;
    for (int p = 0; p < num_participants_; ++p) {
      others_done = others_done && (p == participant || finished_[p]);
    }
    if (others_done) {
      Status status = FailedPreconditionError(
          name, ": participant ", participant,
          " waits to receive, but every other participant has finished its "
          "run without sending on it");
      AbortLocked(participant, status);
      return status;
    }
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      Status status = CancelledError("the run was cancelled");
      AbortLocked(participant, status);
      return status;
    }
    const Clock::time_point now = Clock::now();
    if (now >= deadline) {
      Status status = DeadlineExceededError(
          name, ": participant ", participant, " received nothing within ",
          std::chrono::duration<double>(timeout_).count(), " s");
      AbortLocked(participant, status);
      return status;
    }
    changed_.wait_until(lock, std::min(deadline, now + kPollInterval));
  }
}

void Communicator::LeaveMeeting(const std::shared_ptr<Meeting::State>& state) {
  std::unique_lock<std::mutex> lock(mutex_);
  const int size = static_cast<int>(state->members.size());
  if (++state->num_left == size) {
    // Everyone has arrived and left: no one looks this meeting up again
    // (counts only grow), so it can go.
    meetings_.erase(state->key);
    changed_.notify_all();
    return;
  }
  // Every member has arrived, so each is doing a bounded share of work:
  // wait for all of them, even after an abort, since a peer may still be
  // reading or writing this member's memory.
  changed_.wait(lock, [&] { return state->num_left == size; });
}

}  // namespace kiln::exec
