// Transfers between host memory and buffers, and copies between buffers.
//
// Each operation checks its arguments on the calling thread and returns
// errors there; the copying itself runs on a device's work queue once the
// source is ready, and an event reports when it is done. A source whose
// ready event carries an error passes that error on to the operation's
// event (and to the destination buffer's ready event).
#ifndef KILN_RUNTIME_TRANSFER_H_
#define KILN_RUNTIME_TRANSFER_H_

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "base/status.h"
#include "runtime/buffer.h"
#include "runtime/event.h"

namespace kiln::runtime {

// How long the host memory given to TransferFromHost stays valid, as PJRT's
// PJRT_HostBufferSemantics describes it.
enum class HostBufferSemantics {
  // Valid only during the call: copied before TransferFromHost returns.
  kImmutableOnlyDuringCall,
  // Valid until the done event fires: copied on the device's queue.
  kImmutableUntilTransferCompletes,
  // Valid until the done event fires, and unchanged meanwhile: used in
  // place when the layout and alignment allow, else copied.
  kImmutableZeroCopy,
  // As kImmutableZeroCopy; Kiln never writes to a ready buffer's bytes, so
  // the two behave the same.
  kMutableZeroCopy,
};

struct HostTransfer {
  std::shared_ptr<Buffer> buffer;
  // Fires when Kiln no longer reads the host memory.
  std::shared_ptr<Event> done_with_host_buffer;
};

// Makes a buffer of `shape` in `memory` from host memory at `data`, laid
// out by `byte_strides` (dense row-major when nullopt). Sub-byte and
// boolean elements arrive one per byte and are canonicalized (see
// CanonicalizeElements); such buffers are never zero-copy. The buffer's
// layout is `device_minor_to_major` (empty: row-major; checked here);
// buffers of another layout than row-major are never zero-copy either.
StatusOr<HostTransfer> TransferFromHost(
    const void* data, const Shape& shape,
    std::optional<std::span<const int64_t>> byte_strides,
    HostBufferSemantics semantics, MemorySpace* memory,
    std::span<const int64_t> device_minor_to_major = {});

// Copies the elements of `buffer` into `dst_size` bytes at `dst`, laid out
// by `byte_strides` (dense row-major when nullopt). The event fires once
// `dst` holds them. See HostTransferSize for the size needed.
StatusOr<std::shared_ptr<Event>> TransferToHost(
    const std::shared_ptr<Buffer>& buffer, void* dst, int64_t dst_size,
    std::optional<std::span<const int64_t>> byte_strides);

// Bytes TransferToHost needs for `shape` laid out by `byte_strides`.
StatusOr<int64_t> HostTransferSize(
    const Shape& shape, std::optional<std::span<const int64_t>> byte_strides);

// Copies `size` bytes of the buffer's storage from `offset` to `dst`.
StatusOr<std::shared_ptr<Event>> CopyRawToHost(
    const std::shared_ptr<Buffer>& buffer, void* dst, int64_t offset,
    int64_t size);

// As CopyRawToHost, for a destination that is not known yet: call
// `provide_destination` exactly once, with the destination or with an error
// that cancels the copy; the event fires when the copy is done (or with
// that error).
struct DeferredRawCopy {
  std::shared_ptr<Event> done;
  std::function<void(StatusOr<void*>)> provide_destination;
};
StatusOr<DeferredRawCopy> CopyRawToHostDeferred(
    const std::shared_ptr<Buffer>& buffer, int64_t offset, int64_t size);

// A new buffer in `memory` with the same shape, layout and bytes as
// `buffer`.
StatusOr<std::shared_ptr<Buffer>> CopyToMemory(
    const std::shared_ptr<Buffer>& buffer, MemorySpace* memory);

// A new buffer in `buffer`'s memory with its elements laid out by
// `minor_to_major` (empty: row-major; checked here), copied on the device's
// queue once `buffer` is ready.
StatusOr<std::shared_ptr<Buffer>> Relayout(
    const std::shared_ptr<Buffer>& buffer,
    std::span<const int64_t> minor_to_major);

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_TRANSFER_H_
