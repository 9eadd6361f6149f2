#include "runtime/storage.h"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

#include "base/strings.h"

namespace kiln::runtime {

Status MemoryBudget::Reserve(int64_t bytes) {
  int64_t in_use = in_use_.load();
  do {
    if (bytes > limit_ - in_use) {
      return ResourceExhaustedError(
          "allocating ", HumanBytes(bytes), " (", bytes,
          " bytes) would pass the client's memory limit of ",
          HumanBytes(limit_), " (", limit_, " bytes) with ", HumanBytes(in_use),
          " in use; the limit is the create option memory_limit_bytes");
    }
  } while (!in_use_.compare_exchange_weak(in_use, in_use + bytes));
  return OkStatus();
}

StatusOr<MemoryReservation> MemoryReservation::Take(
    std::shared_ptr<MemoryBudget> budget, int64_t bytes) {
  MemoryReservation reservation;
  if (budget == nullptr || bytes <= 0) return reservation;
  RETURN_IF_ERROR(budget->Reserve(bytes));
  reservation.budget_ = std::move(budget);
  reservation.bytes_ = bytes;
  return reservation;
}

MemoryReservation::MemoryReservation(MemoryReservation&& other) noexcept
    : budget_(std::move(other.budget_)), bytes_(other.bytes_) {
  other.bytes_ = 0;
}

MemoryReservation& MemoryReservation::operator=(
    MemoryReservation&& other) noexcept {
  if (this != &other) {
    if (budget_ != nullptr) budget_->Release(bytes_);
    budget_ = std::move(other.budget_);
    bytes_ = other.bytes_;
    other.bytes_ = 0;
  }
  return *this;
}

MemoryReservation::~MemoryReservation() {
  if (budget_ != nullptr) budget_->Release(bytes_);
}

void MemoryCounters::Add(int64_t bytes) {
  int64_t in_use = bytes_in_use.fetch_add(bytes) + bytes;
  num_allocs.fetch_add(1);
  int64_t peak = peak_bytes_in_use.load();
  while (in_use > peak &&
         !peak_bytes_in_use.compare_exchange_weak(peak, in_use)) {
  }
  int64_t largest = largest_alloc_size.load();
  while (bytes > largest &&
         !largest_alloc_size.compare_exchange_weak(largest, bytes)) {
  }
}

void MemoryCounters::Remove(int64_t bytes) { bytes_in_use.fetch_sub(bytes); }

void MemoryCounters::ResetPeak() {
  peak_bytes_in_use.store(bytes_in_use.load());
}

BlockCache::~BlockCache() {
  for (auto [data, bytes] : blocks_) std::free(data);
}

void* BlockCache::Take(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto bin = by_size_.find(bytes);
  if (bin == by_size_.end()) return nullptr;
  // The newest of that size: the likeliest to be in cache still.
  std::list<Block>::iterator block = bin->second.back();
  bin->second.pop_back();
  if (bin->second.empty()) by_size_.erase(bin);
  void* data = block->first;
  bytes_ -= bytes;
  blocks_.erase(block);
  return data;
}

void BlockCache::Give(void* data, size_t bytes) {
  if (bytes > kMaxBytes) {
    std::free(data);
    return;
  }
  std::vector<void*> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks_.emplace_back(data, bytes);
    by_size_[bytes].push_back(std::prev(blocks_.end()));
    bytes_ += bytes;
    while (blocks_.size() > kMaxBlocks || bytes_ > kMaxBytes) {
      // The oldest block is the oldest of its size too.
      auto [old_data, old_bytes] = blocks_.front();
      auto bin = by_size_.find(old_bytes);
      bin->second.pop_front();
      if (bin->second.empty()) by_size_.erase(bin);
      evicted.push_back(old_data);
      bytes_ -= old_bytes;
      blocks_.pop_front();
    }
  }
  for (void* block : evicted) std::free(block);
}

namespace {

// The bytes std::aligned_alloc is asked for: a multiple of the alignment,
// and at least one (a zero size still gets a unique, valid pointer).
size_t RoundedSize(size_t size) {
  return size == 0 ? kStorageAlignment
                   : (size + kStorageAlignment - 1) / kStorageAlignment *
                         kStorageAlignment;
}

}  // namespace

StatusOr<std::shared_ptr<Storage>> Storage::Allocate(
    size_t size, std::shared_ptr<MemoryCounters> counters, StorageFill fill) {
  size_t rounded = RoundedSize(size);
  if (rounded < size || size > static_cast<size_t>(INT64_MAX)) {
    return ResourceExhaustedError("cannot allocate ", size, " bytes");
  }
  MemoryBudget* budget = counters ? counters->budget.get() : nullptr;
  if (budget != nullptr) {
    RETURN_IF_ERROR(budget->Reserve(static_cast<int64_t>(size)));
  }
  void* data = counters ? counters->blocks.Take(rounded) : nullptr;
  if (data == nullptr) data = std::aligned_alloc(kStorageAlignment, rounded);
  if (data == nullptr) {
    if (budget != nullptr) budget->Release(static_cast<int64_t>(size));
    return ResourceExhaustedError("out of memory allocating ",
                                  HumanBytes(size), " (", size, " bytes)");
  }
  if (fill == StorageFill::kZeros) std::memset(data, 0, rounded);
  std::shared_ptr<Storage> storage(new Storage());
  storage->data_ = data;
  storage->size_ = size;
  storage->owned_ = true;
  storage->counters_ = std::move(counters);
  if (storage->counters_) storage->counters_->Add(static_cast<int64_t>(size));
  return storage;
}

std::shared_ptr<Storage> Storage::Wrap(void* data, size_t size, bool writable,
                                       std::function<void()> on_release) {
  std::shared_ptr<Storage> storage(new Storage());
  storage->data_ = data;
  storage->size_ = size;
  storage->owned_ = false;
  storage->writable_ = writable;
  storage->on_release_ = std::move(on_release);
  return storage;
}

Storage::~Storage() {
  if (owned_) {
    if (counters_) {
      counters_->blocks.Give(data_, RoundedSize(size_));
    } else {
      std::free(data_);
    }
    if (counters_) {
      counters_->Remove(static_cast<int64_t>(size_));
      if (counters_->budget) counters_->budget->Release(static_cast<int64_t>(size_));
    }
  }
  if (on_release_) on_release_();
}

}  // namespace kiln::runtime
