// The bytes behind a buffer: owned aligned memory, or host memory that
// someone else owns (zero-copy host buffers and views of device memory).
//
// Storage is shared (std::shared_ptr): a buffer holds it, and so does every
// transfer or copy in flight and every external reference, so the bytes
// stay valid until the last user is done even when the buffer is deleted
// meanwhile. Owned storage is counted in its memory's statistics from
// allocation to release.
#ifndef KILN_RUNTIME_STORAGE_H_
#define KILN_RUNTIME_STORAGE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <unordered_map>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>

#include "base/status.h"

namespace kiln::runtime {

// Alignment of storage Kiln allocates (a cache line).
inline constexpr size_t kStorageAlignment = 64;
// Alignment host memory needs for Kiln to use it in place, and that views
// of external memory must have.
inline constexpr size_t kMinExternalAlignment = 16;

// The memory one client may allocate (ClientOptions::memory_limit_bytes).
// Every allocation Kiln makes for the client's devices (buffers, execute
// outputs, the scratch of a run in progress) takes its bytes from here
// before it reaches the system allocator, and gives them back when freed,
// so that a host process can bound what Kiln holds and get a clear error,
// not the kernel's OOM killer, when a program wants more.
class MemoryBudget {
 public:
  explicit MemoryBudget(int64_t limit_bytes) : limit_(limit_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  int64_t limit() const { return limit_; }
  int64_t in_use() const { return in_use_.load(); }
  // Takes `bytes`, or RESOURCE_EXHAUSTED naming the bytes, the limit and
  // what is in use when they would take the use past the limit. Callers
  // add what the bytes were for (Status::WithContext) only on failure, so
  // that the path that succeeds builds no strings.
  Status Reserve(int64_t bytes);
  void Release(int64_t bytes) { in_use_.fetch_sub(bytes); }

 private:
  const int64_t limit_;
  std::atomic<int64_t> in_use_{0};
};

// Bytes held from a budget for as long as the reservation lives (a run's
// scratch arena while the run is in progress).
class MemoryReservation {
 public:
  MemoryReservation() = default;
  static StatusOr<MemoryReservation> Take(std::shared_ptr<MemoryBudget> budget,
                                          int64_t bytes);
  MemoryReservation(MemoryReservation&& other) noexcept;
  MemoryReservation& operator=(MemoryReservation&& other) noexcept;
  ~MemoryReservation();

 private:
  std::shared_ptr<MemoryBudget> budget_;
  int64_t bytes_ = 0;
};

// Freed allocations, kept for the next allocation of the same size. An
// array freed and allocated again every execute otherwise goes back to the
// C library, which returns it to the kernel (a large one at once, small
// ones when their heap shrinks) and gets it back page by page, each first
// touch a page fault: a sixth of a memory-bound program's time for a 64
// MiB output, and most of a training step's 19 small outputs when the
// step is issued before the last one ends (its donated buffers still
// held, so not reused: 386 us a step against 116 when each waited). Holds
// at most kMaxBlocks blocks and kMaxBytes bytes, the oldest leaving first;
// what it holds is not in use (MemoryCounters, MemoryBudget) and is freed
// with the device's counters.
class BlockCache {
 public:
  static constexpr size_t kMaxBlocks = 256;
  static constexpr size_t kMaxBytes = size_t{1} << 30;

  BlockCache() = default;
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  ~BlockCache();

  // A kept block of exactly `bytes`, or null.
  void* Take(size_t bytes);
  // Keeps `data` (`bytes` long, from std::aligned_alloc) or frees it.
  void Give(void* data, size_t bytes);

 private:
  using Block = std::pair<void*, size_t>;
  std::mutex mutex_;
  std::list<Block> blocks_;  // oldest first
  // The kept blocks of each size, their places in blocks_, oldest first.
  std::unordered_map<size_t, std::deque<std::list<Block>::iterator>> by_size_;
  size_t bytes_ = 0;
};

// Allocation counters of one device, shared by its storage so that storage
// released after the device is gone still has something to count into.
struct MemoryCounters {
  // The client's budget that the device's allocations draw from (null: no
  // limit). Set when the device is made, never changed.
  std::shared_ptr<MemoryBudget> budget;
  std::atomic<int64_t> bytes_in_use{0};
  std::atomic<int64_t> peak_bytes_in_use{0};
  std::atomic<int64_t> num_allocs{0};
  std::atomic<int64_t> largest_alloc_size{0};
  BlockCache blocks;

  void Add(int64_t bytes);
  void Remove(int64_t bytes);
  // Restarts the peak at the current use (PJRT_Device_ClearMemoryStats).
  void ResetPeak();
};

// What a new allocation holds: zeros, or whatever the memory held (for
// bytes the caller writes in full before anyone reads them, such as an
// execute's outputs: zeroing them first was a whole extra pass over
// memory).
enum class StorageFill { kZeros, kUninitialized };

class Storage {
 public:
  // Allocates `size` bytes aligned to kStorageAlignment, filled as `fill`
  // says, and counts them in `counters` (may be null) and its budget.
  // RESOURCE_EXHAUSTED when they would pass the budget's limit or the
  // system has no memory for them (callers add what they were for).
  static StatusOr<std::shared_ptr<Storage>> Allocate(
      size_t size, std::shared_ptr<MemoryCounters> counters,
      StorageFill fill = StorageFill::kZeros);

  // Uses `size` bytes at `data`, owned elsewhere; `on_release` (may be
  // empty) runs once when the last user lets go of them. `writable` says
  // whether Kiln may ever write to them (e.g. reuse them for a donated
  // output); host memory lent for reading only is not.
  static std::shared_ptr<Storage> Wrap(void* data, size_t size, bool writable,
                                       std::function<void()> on_release);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  // Whether the bytes belong to someone outside Kiln.
  bool is_external() const { return !owned_; }
  // Whether Kiln may write to the bytes after they became a buffer's.
  bool writable() const { return writable_; }

 private:
  Storage() = default;

  void* data_ = nullptr;
  size_t size_ = 0;
  bool owned_ = false;
  bool writable_ = true;
  std::shared_ptr<MemoryCounters> counters_;
  std::function<void()> on_release_;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_STORAGE_H_
