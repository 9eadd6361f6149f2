#include "exec/plan.h"

#include <new>

#if defined(__linux__)
#include <sys/sysinfo.h>
#endif

#include "base/strings.h"

namespace kiln::exec {
namespace {

// The most bytes one buffer may take: the machine's memory (RAM and swap),
// or 64 TiB where that is unknown. A larger request can never be filled;
// refusing it before asking the allocator makes it an error on every
// allocator (sanitizer allocators abort on such sizes instead of throwing
// bad_alloc, and an overcommitting one would crash later instead).
int64_t MaxBufferBytes() {
  static const int64_t max_bytes = [] {
    constexpr uint64_t kUnknown = uint64_t{1} << 46;
#if defined(__linux__)
    struct sysinfo info;
    if (sysinfo(&info) == 0) {
      uint64_t total = (static_cast<uint64_t>(info.totalram) +
                        static_cast<uint64_t>(info.totalswap)) *
                       info.mem_unit;
      if (total > 0 && total < kUnknown) return static_cast<int64_t>(total);
    }
#endif
    return static_cast<int64_t>(kUnknown);
  }();
  return max_bytes;
}

}  // namespace

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  // Never zero bytes, so data() is a valid, aligned, non-null pointer even
  // for empty arrays.
  data_ = static_cast<std::byte*>(
      ::operator new(bytes == 0 ? kBufferAlignment : bytes,
                     std::align_val_t(kBufferAlignment)));
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    this->~AlignedBuffer();
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() {
  if (data_ != nullptr) {
    ::operator delete(data_, std::align_val_t(kBufferAlignment));
  }
  data_ = nullptr;
}

StatusOr<AlignedBuffer> AllocateAligned(int64_t bytes) {
  if (bytes < 0) {
    return ResourceExhaustedError("cannot allocate ", bytes, " bytes");
  }
  if (bytes > MaxBufferBytes()) {
    return ResourceExhaustedError(
        "cannot allocate ", HumanBytes(static_cast<uint64_t>(bytes)),
        ": more than this machine's memory (",
        HumanBytes(static_cast<uint64_t>(MaxBufferBytes())), ")");
  }
  try {
    return AlignedBuffer(static_cast<size_t>(bytes));
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError("out of memory allocating ",
                                  HumanBytes(static_cast<uint64_t>(bytes)));
  }
}

StatusOr<AlignedBuffer> ArenaCache::Take(int64_t bytes) {
  // A plan without scratch (a small elementwise program) takes no arena.
  if (bytes == 0) return AlignedBuffer();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < kept_.size(); ++i) {
      if (static_cast<int64_t>(kept_[i].size()) >= bytes) {
        AlignedBuffer arena = std::move(kept_[i]);
        kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i));
        return arena;
      }
    }
  }
  return AllocateAligned(bytes);
}

void ArenaCache::Give(AlignedBuffer arena) {
  if (arena.size() == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (kept_.size() < kMaxKept) kept_.push_back(std::move(arena));
}

}  // namespace kiln::exec
