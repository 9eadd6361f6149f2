#include "exec/plan.h"

#include <new>

namespace kiln::exec {

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
  // Refuse sizes no machine can hold before asking the allocator, so an
  // absurd shape is an error rather than an overcommitted crash later.
  constexpr int64_t kMaxBytes = int64_t{1} << 46;  // 64 TiB
  if (bytes < 0 || bytes > kMaxBytes) {
    return ResourceExhaustedError("cannot allocate ", bytes, " bytes");
  }
  try {
    return AlignedBuffer(static_cast<size_t>(bytes));
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError("out of memory allocating ",
                                  HumanBytes(static_cast<uint64_t>(bytes)));
  }
}

}  // namespace kiln::exec
