#include "runtime/transfer.h"

#include <atomic>
#include <cstring>
#include <limits>

#include "base/logging.h"
#include "runtime/device.h"
#include "runtime/host_layout.h"

namespace kiln::runtime {
namespace {

// Runs `work` on `queue` once `ready` fires with OK, and sets `done` with
// work's status; an error in `ready` goes to `done` without running `work`.
void RunWhenReady(const std::shared_ptr<Event>& ready,
                  std::shared_ptr<WorkQueue> queue,
                  std::function<Status()> work, std::shared_ptr<Event> done) {
  ready->OnReady([queue = std::move(queue), work = std::move(work),
                  done = std::move(done)](const Status& status) mutable {
    if (!status.ok()) {
      done->Set(status).IgnoreError();
      return;
    }
    queue->Enqueue([work = std::move(work), done = std::move(done)]() mutable {
      Status result = work();
      // The work's holds on storage go before anyone hears it is done, so
      // whoever waits on `done` sees the bytes released if they were the
      // last use (and borrowed memory returned to its owner).
      work = nullptr;
      done->Set(std::move(result)).IgnoreError();
    });
  });
}

// Buffers live only on this process's devices (a device of another process
// has no queue to run the transfer on).
Status CheckAddressable(const MemorySpace& memory) {
  const Device* device = memory.device();
  if (device->addressable()) return OkStatus();
  return InvalidArgumentError(device->debug_string(), " belongs to process ",
                              device->process_index(),
                              "; buffers can only be placed on this "
                              "process's devices");
}

// The storage of a buffer that is about to be read: errors when the buffer
// was deleted; null when it holds an error (its ready event carries it, so
// work chained on that event never runs).
StatusOr<std::shared_ptr<Storage>> StorageForRead(const Buffer& buffer) {
  return buffer.AcquireStorage();
}

// Copies host elements into a buffer's storage: `strides` are the host's
// (nullopt: dense row-major), `device_strides` the buffer layout's (empty:
// row-major).
void CopyIntoStorage(const Shape& shape, const void* data,
                     const std::optional<std::vector<int64_t>>& strides,
                     const std::vector<int64_t>& device_strides,
                     Storage& storage) {
  if (!device_strides.empty()) {
    CopyStrided(shape, data, strides ? *strides : DenseByteStrides(shape),
                storage.data(), device_strides);
  } else if (strides.has_value()) {
    GatherToDense(shape, data, *strides, storage.data());
  } else if (shape.byte_size() > 0) {
    std::memcpy(storage.data(), data, shape.byte_size());
  }
  CanonicalizeElements(shape.dtype(), storage.data(), shape.element_count());
}

// The byte strides of `buffer`'s storage, or empty when it is row-major.
std::vector<int64_t> StorageStrides(const Buffer& buffer) {
  if (buffer.minor_to_major().empty()) return {};
  return LayoutByteStrides(buffer.shape(), buffer.minor_to_major());
}

bool IsAligned(const void* data, size_t alignment) {
  return reinterpret_cast<uintptr_t>(data) % alignment == 0;
}

Status CheckRawRange(const Buffer& buffer, int64_t offset, int64_t size) {
  const int64_t total = buffer.on_device_size();
  if (offset < 0 || size < 0 || offset > total || size > total - offset) {
    return InvalidArgumentError("the raw copy of ", size, " bytes at offset ",
                                offset, " does not fit in ", buffer.ToString(),
                                ", which has ", total, " bytes");
  }
  return OkStatus();
}

}  // namespace

StatusOr<HostTransfer> TransferFromHost(
    const void* data, const Shape& shape,
    std::optional<std::span<const int64_t>> byte_strides,
    HostBufferSemantics semantics, MemorySpace* memory,
    std::span<const int64_t> device_minor_to_major) {
  KILN_CHECK(memory != nullptr);
  RETURN_IF_ERROR(CheckAddressable(*memory));
  RETURN_IF_ERROR(CheckMinorToMajor(device_minor_to_major, shape.rank()));
  std::vector<int64_t> layout;
  std::vector<int64_t> device_strides;
  if (!IsRowMajorLayout(device_minor_to_major)) {
    layout.assign(device_minor_to_major.begin(), device_minor_to_major.end());
    device_strides = LayoutByteStrides(shape, layout);
  }
  if (data == nullptr && shape.byte_size() > 0) {
    return InvalidArgumentError("the host data for ", shape.ToString(), " (",
                                shape.byte_size(), " bytes) is null");
  }
  // Strides equal to the dense layout are dropped, so the copy below can
  // be a memcpy and zero-copy stays possible.
  std::optional<std::vector<int64_t>> strides;
  if (byte_strides.has_value()) {
    RETURN_IF_ERROR(CheckSourceStrides(shape, *byte_strides));
    RETURN_IF_ERROR(CheckHostSpan(data, shape, *byte_strides));
    if (!IsDenseRowMajor(shape, *byte_strides)) {
      strides.emplace(byte_strides->begin(), byte_strides->end());
    }
  }
  const DTypeInfo& info = GetDTypeInfo(shape.dtype());
  const bool zero_copy =
      (semantics == HostBufferSemantics::kImmutableZeroCopy ||
       semantics == HostBufferSemantics::kMutableZeroCopy) &&
      !strides.has_value() && layout.empty() &&
      info.canonicalize == Canonicalize::kNone &&
      shape.byte_size() > 0 && IsAligned(data, kMinExternalAlignment);
  if (zero_copy) {
    // The buffer borrows the host memory; the owner gets it back (the done
    // event fires) when the last user of the storage lets go.
    std::shared_ptr<Event> done = Event::Create();
    std::shared_ptr<Storage> storage = Storage::Wrap(
        const_cast<void*>(data), static_cast<size_t>(shape.byte_size()),
        semantics == HostBufferSemantics::kMutableZeroCopy,
        [done] { done->Set().IgnoreError(); });
    return HostTransfer{
        Buffer::Create(shape, memory, std::move(storage), Event::CreateReady()),
        std::move(done)};
  }
  ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer,
                   Buffer::CreatePending(shape, memory, std::move(layout)));
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> storage, buffer->AcquireStorage());
  if (semantics == HostBufferSemantics::kImmutableOnlyDuringCall) {
    CopyIntoStorage(shape, data, strides, device_strides, *storage);
    buffer->ready_event()->Set().IgnoreError();
    return HostTransfer{std::move(buffer), Event::CreateReady()};
  }
  // The host memory stays valid until `done` fires: copy on the queue.
  std::shared_ptr<Event> done = Event::Create();
  memory->device()->queue()->Enqueue(
      [shape, data, strides = std::move(strides),
       device_strides = std::move(device_strides),
       storage = std::move(storage), ready = buffer->ready_event(),
       done]() mutable {
        CopyIntoStorage(shape, data, strides, device_strides, *storage);
        storage.reset();  // the buffer holds it; this task is done with it
        // The host memory is released first, so whoever sees the buffer ready
        // also sees the transfer's done callbacks finished.
        done->Set().IgnoreError();
        ready->Set().IgnoreError();
      });
  return HostTransfer{std::move(buffer), std::move(done)};
}

StatusOr<int64_t> HostTransferSize(
    const Shape& shape, std::optional<std::span<const int64_t>> byte_strides) {
  if (!byte_strides.has_value()) return shape.byte_size();
  return CheckDestinationStrides(shape, *byte_strides,
                                 std::numeric_limits<int64_t>::max());
}

StatusOr<std::shared_ptr<Event>> TransferToHost(
    const std::shared_ptr<Buffer>& buffer, void* dst, int64_t dst_size,
    std::optional<std::span<const int64_t>> byte_strides) {
  const Shape& shape = buffer->shape();
  std::optional<std::vector<int64_t>> strides;
  if (byte_strides.has_value()) {
    RETURN_IF_ERROR(CheckDestinationStrides(shape, *byte_strides, dst_size));
    if (!IsDenseRowMajor(shape, *byte_strides)) {
      strides.emplace(byte_strides->begin(), byte_strides->end());
    }
  } else if (dst_size < shape.byte_size()) {
    return InvalidArgumentError("the destination has ", dst_size,
                                " bytes, but ", buffer->ToString(), " needs ",
                                shape.byte_size());
  }
  if (dst == nullptr && shape.byte_size() > 0) {
    return InvalidArgumentError("the destination for ", buffer->ToString(),
                                " is null");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> storage, StorageForRead(*buffer));
  std::shared_ptr<Event> done = Event::Create();
  RunWhenReady(
      buffer->ready_event(), buffer->device()->queue(),
      [shape, storage = std::move(storage), dst, strides = std::move(strides),
       device_strides = StorageStrides(*buffer)] {
        if (!device_strides.empty()) {
          CopyStrided(shape, storage->data(), device_strides, dst,
                      strides ? *strides : DenseByteStrides(shape));
        } else if (strides.has_value()) {
          ScatterFromDense(shape, storage->data(), dst, *strides);
        } else if (shape.byte_size() > 0) {
          std::memcpy(dst, storage->data(), shape.byte_size());
        }
        return OkStatus();
      },
      done);
  return done;
}

StatusOr<std::shared_ptr<Event>> CopyRawToHost(
    const std::shared_ptr<Buffer>& buffer, void* dst, int64_t offset,
    int64_t size) {
  RETURN_IF_ERROR(CheckRawRange(*buffer, offset, size));
  if (dst == nullptr && size > 0) {
    return InvalidArgumentError("the destination of the raw copy of ", size,
                                " bytes from ", buffer->ToString(), " is null");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> storage, StorageForRead(*buffer));
  std::shared_ptr<Event> done = Event::Create();
  RunWhenReady(
      buffer->ready_event(), buffer->device()->queue(),
      [storage = std::move(storage), dst, offset, size] {
        if (size > 0) {
          std::memcpy(dst, static_cast<uint8_t*>(storage->data()) + offset,
                      size);
        }
        return OkStatus();
      },
      done);
  return done;
}

StatusOr<DeferredRawCopy> CopyRawToHostDeferred(
    const std::shared_ptr<Buffer>& buffer, int64_t offset, int64_t size) {
  RETURN_IF_ERROR(CheckRawRange(*buffer, offset, size));
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> storage, StorageForRead(*buffer));
  // The destination arrives through `destination_known`; the pointer is
  // written before that event is set and read only after it fired.
  auto destination = std::make_shared<void*>(nullptr);
  std::shared_ptr<Event> destination_known = Event::Create();
  std::shared_ptr<Event> done = Event::Create();
  RunWhenReady(
      Event::AfterAll({buffer->ready_event(), destination_known}),
      buffer->device()->queue(),
      [storage = std::move(storage), destination, offset, size]() -> Status {
        if (size > 0) {
          if (*destination == nullptr) {
            return InvalidArgumentError(
                "the destination of the raw copy is null");
          }
          std::memcpy(*destination,
                      static_cast<uint8_t*>(storage->data()) + offset, size);
        }
        return OkStatus();
      },
      done);
  DeferredRawCopy copy;
  copy.done = std::move(done);
  auto claimed = std::make_shared<std::atomic<bool>>(false);
  copy.provide_destination = [destination, destination_known,
                              claimed](StatusOr<void*> dst) {
    if (claimed->exchange(true)) return;  // only the first call counts
    if (!dst.ok()) {
      destination_known->Set(dst.status()).IgnoreError();
      return;
    }
    *destination = *dst;
    destination_known->Set().IgnoreError();
  };
  return copy;
}

StatusOr<std::shared_ptr<Buffer>> CopyToMemory(
    const std::shared_ptr<Buffer>& buffer, MemorySpace* memory) {
  KILN_CHECK(memory != nullptr);
  RETURN_IF_ERROR(CheckAddressable(*memory));
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> source, StorageForRead(*buffer));
  ASSIGN_OR_RETURN(std::shared_ptr<Buffer> copy,
                   Buffer::CreatePending(buffer->shape(), memory,
                                         buffer->minor_to_major()));
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> target, copy->AcquireStorage());
  const int64_t bytes = buffer->on_device_size();
  RunWhenReady(
      buffer->ready_event(), memory->device()->queue(),
      [source = std::move(source), target = std::move(target), bytes] {
        if (bytes > 0) std::memcpy(target->data(), source->data(), bytes);
        return OkStatus();
      },
      copy->ready_event());
  return copy;
}

StatusOr<std::shared_ptr<Buffer>> Relayout(
    const std::shared_ptr<Buffer>& buffer,
    std::span<const int64_t> minor_to_major) {
  const Shape& shape = buffer->shape();
  RETURN_IF_ERROR(CheckMinorToMajor(minor_to_major, shape.rank()));
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> source, StorageForRead(*buffer));
  std::vector<int64_t> layout(minor_to_major.begin(), minor_to_major.end());
  ASSIGN_OR_RETURN(std::shared_ptr<Buffer> copy,
                   Buffer::CreatePending(shape, buffer->memory_space(), layout));
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> target, copy->AcquireStorage());
  RunWhenReady(
      buffer->ready_event(), buffer->device()->queue(),
      [shape, source = std::move(source), target = std::move(target),
       from = LayoutByteStrides(shape, buffer->minor_to_major()),
       to = LayoutByteStrides(shape, layout)] {
        CopyStrided(shape, source->data(), from, target->data(), to);
        return OkStatus();
      },
      copy->ready_event());
  return copy;
}

}  // namespace kiln::runtime
