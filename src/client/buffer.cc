// Buffer: a PJRT_Buffer owned by the client.
#include "base/strings.h"
#include "client/pjrt_util.h"
#include "kiln/pjrt.h"

namespace kiln::client {

using internal::OptionalQuery;

Buffer::~Buffer() {
  if (handle_ == nullptr) return;
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_Destroy_Args);
  args.buffer = handle_;
  Status status = KILN_PJRT_CALL(client_->plugin(), PJRT_Buffer_Destroy, args);
  status.IgnoreError();
}

Status Buffer::Describe() {
  const Plugin& plugin = client_->plugin();
  auto type_args = KILN_PJRT_ARGS(PJRT_Buffer_ElementType_Args);
  type_args.buffer = handle_;
  RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_Buffer_ElementType, type_args));
  auto dims_args = KILN_PJRT_ARGS(PJRT_Buffer_Dimensions_Args);
  dims_args.buffer = handle_;
  RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_Buffer_Dimensions, dims_args));
  if (dims_args.num_dims > 0 && dims_args.dims == nullptr) {
    return InternalError("PJRT_Buffer_Dimensions returned ", dims_args.num_dims,
                         " dimensions with a null list");
  }
  ASSIGN_OR_RETURN(
      shape_.element_type,
      internal::CheckedBufferType(type_args.type, "PJRT_Buffer_ElementType"));
  shape_.dimensions.assign(dims_args.dims, dims_args.dims + dims_args.num_dims);
  auto device_args = KILN_PJRT_ARGS(PJRT_Buffer_Device_Args);
  device_args.buffer = handle_;
  ASSIGN_OR_RETURN(
      bool has_device,
      OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_Buffer_Device, device_args)));
  if (has_device) device_ = client_->FindDevice(device_args.device);
  return OkStatus();
}

StatusOr<Future> Buffer::ReadyEvent() const {
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args);
  args.buffer = handle_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(client_->plugin(), PJRT_Buffer_ReadyEvent, args));
  return Future(client_->shared_plugin(), args.event);
}

Status Buffer::AwaitReady() const {
  ASSIGN_OR_RETURN(Future ready, ReadyEvent());
  return ready.Await();
}

StatusOr<Future> Buffer::ToHostAsync(void* dst, size_t dst_size) const {
  int64_t expected = shape_.ByteSize();
  if (static_cast<int64_t>(dst_size) != expected) {
    return InvalidArgumentError("host buffer of ", dst_size, " bytes for ",
                                shape_.ToString(), ", which needs ", expected);
  }
  // A dummy destination for empty arrays: PJRT reads a null `dst` as a
  // size query.
  char dummy = 0;
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = handle_;
  args.dst = dst == nullptr || dst_size == 0 ? &dummy : dst;
  args.dst_size = dst_size;
  if (dst_size == 0) {
    // The dummy lives on this stack frame: wait before leaving it.
    RETURN_IF_ERROR(
        KILN_PJRT_CALL(client_->plugin(), PJRT_Buffer_ToHostBuffer, args));
    Future done(client_->shared_plugin(), args.event);
    RETURN_IF_ERROR(done.Await());
    return Future();
  }
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(client_->plugin(), PJRT_Buffer_ToHostBuffer, args));
  return Future(client_->shared_plugin(), args.event);
}

Status Buffer::ToHost(void* dst, size_t dst_size) const {
  ASSIGN_OR_RETURN(Future done, ToHostAsync(dst, dst_size));
  return done.Await();
}

StatusOr<size_t> Buffer::OnDeviceSizeInBytes() const {
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
  args.buffer = handle_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(client_->plugin(), PJRT_Buffer_OnDeviceSizeInBytes, args));
  return args.on_device_size_in_bytes;
}

StatusOr<std::unique_ptr<Buffer>> Buffer::CopyToDevice(
    const Device& device) const {
  if (client_->FindDevice(device.handle()) != &device) {
    return InvalidArgumentError("device ", device.id(),
                                " belongs to another client");
  }
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_CopyToDevice_Args);
  args.buffer = handle_;
  args.dst_device = device.handle();
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(client_->plugin(), PJRT_Buffer_CopyToDevice, args));
  if (args.dst_buffer == nullptr) {
    return InternalError("PJRT_Buffer_CopyToDevice returned no buffer");
  }
  std::unique_ptr<Buffer> copy(new Buffer(client_, args.dst_buffer));
  RETURN_IF_ERROR(copy->Describe());
  return copy;
}

StatusOr<std::unique_ptr<Buffer>> Buffer::CopyToMemory(
    const Memory& memory) const {
  if (client_->FindMemory(memory.handle()) != &memory) {
    return InvalidArgumentError("memory ", memory.id(),
                                " belongs to another client");
  }
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_CopyToMemory_Args);
  args.buffer = handle_;
  args.dst_memory = memory.handle();
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(client_->plugin(), PJRT_Buffer_CopyToMemory, args));
  if (args.dst_buffer == nullptr) {
    return InternalError("PJRT_Buffer_CopyToMemory returned no buffer");
  }
  std::unique_ptr<Buffer> copy(new Buffer(client_, args.dst_buffer));
  RETURN_IF_ERROR(copy->Describe());
  return copy;
}

Status Buffer::Delete() {
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_Delete_Args);
  args.buffer = handle_;
  return KILN_PJRT_CALL(client_->plugin(), PJRT_Buffer_Delete, args);
}

StatusOr<bool> Buffer::IsDeleted() const {
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_IsDeleted_Args);
  args.buffer = handle_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(client_->plugin(), PJRT_Buffer_IsDeleted, args));
  return args.is_deleted;
}

StatusOr<Memory*> Buffer::GetMemory() const {
  auto args = KILN_PJRT_ARGS(PJRT_Buffer_Memory_Args);
  args.buffer = handle_;
  RETURN_IF_ERROR(KILN_PJRT_CALL(client_->plugin(), PJRT_Buffer_Memory, args));
  Memory* memory = client_->FindMemory(args.memory);
  if (memory == nullptr) {
    return InternalError("PJRT_Buffer_Memory returned a memory the client ",
                         "did not list");
  }
  return memory;
}

}  // namespace kiln::client
