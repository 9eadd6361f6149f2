// A runtime buffer: a shape in a memory space, the storage holding its
// bytes, and the event that fires when those bytes are final.
//
// The bytes are dense, in the order of the buffer's layout: XLA's
// minor-to-major permutation of the dimensions (minor_to_major()[0] varies
// fastest). Most buffers are row-major, the default, which is stored as an
// empty permutation; frameworks ask for others (JAX's `Format`), and
// executables take and give them where their program says so.
//
// Buffers are shared (std::shared_ptr) and immutable once ready. A buffer
// can be created before its bytes exist (a transfer or, later, an
// execution will write them): its ready event is pending until the writer
// sets it, with OK or with the error that stopped it. Delete drops the
// buffer's hold on its storage; work already in flight and external
// references keep the bytes alive until they are done.
#ifndef KILN_RUNTIME_BUFFER_H_
#define KILN_RUNTIME_BUFFER_H_

#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "runtime/event.h"
#include "runtime/memory_space.h"
#include "runtime/shape.h"
#include "runtime/storage.h"

namespace kiln::runtime {

class Device;

class Buffer {
 public:
  // A buffer of `shape` in `memory` whose bytes are `storage` (which must
  // hold at least shape.byte_size() bytes), final once `ready` fires.
  // `minor_to_major` is its layout (empty or row-major: the default; any
  // other must be a permutation of the dimensions, which callers check).
  static std::shared_ptr<Buffer> Create(
      Shape shape, MemorySpace* memory, std::shared_ptr<Storage> storage,
      std::shared_ptr<Event> ready, std::vector<int64_t> minor_to_major = {});

  // A buffer with fresh zero-filled storage in `memory`, ready at once.
  static StatusOr<std::shared_ptr<Buffer>> CreateZeroed(
      Shape shape, MemorySpace* memory,
      std::vector<int64_t> minor_to_major = {});

  // A buffer with fresh storage whose ready event is pending: the caller
  // writes the bytes, then sets the event (see ready_event()).
  static StatusOr<std::shared_ptr<Buffer>> CreatePending(
      Shape shape, MemorySpace* memory,
      std::vector<int64_t> minor_to_major = {});

  // A buffer that holds no bytes, only `error`: its ready event carries it,
  // so every reader of the buffer gets the error.
  static std::shared_ptr<Buffer> CreateError(Shape shape, MemorySpace* memory,
                                             Status error);

  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const Shape& shape() const { return shape_; }
  DType dtype() const { return shape_.dtype(); }
  MemorySpace* memory_space() const { return memory_; }
  Device* device() const { return memory_->device(); }
  const std::shared_ptr<Event>& ready_event() const { return ready_; }
  // The layout: empty for row-major (see the file comment).
  const std::vector<int64_t>& minor_to_major() const { return minor_to_major_; }
  // Bytes of storage the buffer takes (its dense row-major size).
  int64_t on_device_size() const { return shape_.byte_size(); }

  // The storage, for reading or (before the ready event fires) writing.
  // Null for a buffer that holds an error instead of bytes (its ready event
  // carries the error). FAILED_PRECONDITION when the buffer was deleted or
  // donated.
  StatusOr<std::shared_ptr<Storage>> AcquireStorage() const;

  // Releases the buffer's hold on its storage. Idempotent.
  void Delete();
  bool IsDeleted() const;

  // Takes the storage out of the buffer for an operation that reuses it
  // (donation): the buffer counts as deleted afterwards.
  // FAILED_PRECONDITION when the buffer was deleted, holds an error, or has
  // external references.
  StatusOr<std::shared_ptr<Storage>> Donate();

  // External references (e.g. a framework's zero-copy view of the bytes)
  // keep the storage alive even after Delete. Increasing needs a buffer
  // that is not deleted (FAILED_PRECONDITION otherwise).
  Status IncreaseExternalReferenceCount();
  // INVALID_ARGUMENT "Attempting to decrease reference on a buffer with zero
  // reference count." when there are none.
  Status DecreaseExternalReferenceCount();
  int external_reference_count() const;

  // "f32[4] in kiln:cpu:0:device".
  std::string ToString() const;

 private:
  Buffer(Shape shape, MemorySpace* memory, std::shared_ptr<Storage> storage,
         std::shared_ptr<Event> ready, std::vector<int64_t> minor_to_major);

  Status DeletedError() const;

  const Shape shape_;
  MemorySpace* const memory_;
  const std::shared_ptr<Event> ready_;
  const std::vector<int64_t> minor_to_major_;

  mutable std::mutex mutex_;
  std::shared_ptr<Storage> storage_;  // null once deleted
  bool deleted_ = false;
  bool donated_ = false;
  int external_references_ = 0;
  std::shared_ptr<Storage> external_hold_;  // set while references exist
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_BUFFER_H_
