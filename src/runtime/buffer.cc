#include "runtime/buffer.h"

#include "base/logging.h"
#include "runtime/device.h"
#include "runtime/host_layout.h"

namespace kiln::runtime {

Buffer::Buffer(Shape shape, MemorySpace* memory,
               std::shared_ptr<Storage> storage, std::shared_ptr<Event> ready,
               std::vector<int64_t> minor_to_major)
    : shape_(std::move(shape)),
      memory_(memory),
      ready_(std::move(ready)),
      minor_to_major_(IsRowMajorLayout(minor_to_major)
                          ? std::vector<int64_t>()
                          : std::move(minor_to_major)),
      storage_(std::move(storage)) {}

std::shared_ptr<Buffer> Buffer::Create(Shape shape, MemorySpace* memory,
                                       std::shared_ptr<Storage> storage,
                                       std::shared_ptr<Event> ready,
                                       std::vector<int64_t> minor_to_major) {
  KILN_CHECK(memory != nullptr && ready != nullptr);
  KILN_CHECK(storage == nullptr ||
             storage->size() >= static_cast<size_t>(shape.byte_size()))
      << "storage of " << storage->size() << " bytes for " << shape.ToString();
  KILN_CHECK(minor_to_major.empty() ||
             minor_to_major.size() == shape.rank())
      << "a layout of " << minor_to_major.size() << " dimensions for "
      << shape.ToString();
  return std::shared_ptr<Buffer>(
      new Buffer(std::move(shape), memory, std::move(storage), std::move(ready),
                 std::move(minor_to_major)));
}

StatusOr<std::shared_ptr<Buffer>> Buffer::CreateZeroed(
    Shape shape, MemorySpace* memory, std::vector<int64_t> minor_to_major) {
  ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer,
                   CreatePending(std::move(shape), memory,
                                 std::move(minor_to_major)));
  buffer->ready_event()->Set().IgnoreError();
  return buffer;
}

StatusOr<std::shared_ptr<Buffer>> Buffer::CreatePending(
    Shape shape, MemorySpace* memory, std::vector<int64_t> minor_to_major) {
  KILN_CHECK(memory != nullptr);
  // The client's memory budget bounds it (by default, the machine's
  // memory).
  StatusOr<std::shared_ptr<Storage>> storage = Storage::Allocate(
      static_cast<size_t>(shape.byte_size()), memory->device()->counters());
  if (!storage.ok()) {
    return storage.status().WithContext(StrCat(
        "a buffer of ", shape.ToString(), " on ", memory->device()->debug_string()));
  }
  return Create(std::move(shape), memory, std::move(storage).value(),
                Event::Create(), std::move(minor_to_major));
}

std::shared_ptr<Buffer> Buffer::CreateError(Shape shape, MemorySpace* memory,
                                            Status error) {
  KILN_CHECK(!error.ok());
  return Create(std::move(shape), memory, nullptr,
                Event::CreateReady(std::move(error)));
}

Status Buffer::DeletedError() const {
  return FailedPreconditionError("the buffer ", ToString(), " was ",
                                 donated_ ? "donated" : "deleted");
}

StatusOr<std::shared_ptr<Storage>> Buffer::AcquireStorage() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (deleted_) return DeletedError();
  return storage_;
}

void Buffer::Delete() {
  std::shared_ptr<Storage> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    deleted_ = true;
    released.swap(storage_);
  }
  // `released` goes out of scope without the lock held: releasing the last
  // hold on borrowed host memory runs its owner's callback.
}

bool Buffer::IsDeleted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return deleted_;
}

StatusOr<std::shared_ptr<Storage>> Buffer::Donate() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (deleted_) return DeletedError();
  if (storage_ == nullptr) {
    return FailedPreconditionError("the buffer ", ToString(),
                                   " holds an error and cannot be donated");
  }
  if (external_references_ > 0) {
    return FailedPreconditionError(
        "the buffer ", ToString(), " has ", external_references_,
        " external references and cannot be donated");
  }
  deleted_ = true;
  donated_ = true;
  std::shared_ptr<Storage> storage;
  storage.swap(storage_);
  return storage;
}

Status Buffer::IncreaseExternalReferenceCount() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (deleted_) return DeletedError();
  if (storage_ == nullptr) {
    return FailedPreconditionError("the buffer ", ToString(),
                                   " holds an error instead of bytes");
  }
  if (external_references_++ == 0) external_hold_ = storage_;
  return OkStatus();
}

Status Buffer::DecreaseExternalReferenceCount() {
  std::shared_ptr<Storage> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (external_references_ == 0) {
      return InvalidArgumentError(
          "Attempting to decrease reference on a buffer with zero reference "
          "count.");
    }
    if (--external_references_ == 0) released.swap(external_hold_);
  }
  return OkStatus();
}

int Buffer::external_reference_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return external_references_;
}

std::string Buffer::ToString() const {
  if (minor_to_major_.empty()) {
    return StrCat(shape_.ToString(), " in ", memory_->debug_string());
  }
  return StrCat(shape_.ToString(), LayoutToString(minor_to_major_), " in ",
                memory_->debug_string());
}

}  // namespace kiln::runtime
