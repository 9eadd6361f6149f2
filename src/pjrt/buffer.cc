// The PJRT_Buffer_* entry points that query or release a buffer (copies
// and transfers are in buffer_copy.cc).
#include "pjrt/args.h"
#include "pjrt/element_types.h"
#include "pjrt/entry_points.h"
#include "pjrt/handles.h"
#include "pjrt/layouts.h"

namespace kiln::pjrt {
namespace {

// The bytes of a buffer that is still alive and holds bytes (not an
// error), for calls that hand out its address.
StatusOr<std::shared_ptr<runtime::Storage>> LiveStorage(
    const PJRT_Buffer& buffer, std::string_view slot) {
  auto storage = buffer.buffer->AcquireStorage();
  if (!storage.ok()) return storage.status().WithContext(slot);
  if (*storage == nullptr) {
    return FailedPreconditionError(
        slot, ": the buffer ", buffer.buffer->ToString(),
        " holds an error instead of bytes: ",
        buffer.buffer->ready_event()->status().ToString());
  }
  return storage;
}

}  // namespace

PJRT_Error* PJRT_Buffer_Destroy(PJRT_Buffer_Destroy_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_Destroy_Args, buffer);
    if (args->buffer == nullptr) return OkStatus();
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_Destroy_Args.buffer"));
    // As Delete, then the handle goes. Work in flight keeps the bytes.
    buffer->buffer->Delete();
    buffer->tag = HandleTag{};
    delete buffer;
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_ElementType(PJRT_Buffer_ElementType_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_ElementType_Args, type);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_ElementType_Args.buffer"));
    args->type = DTypeToPjrt(buffer->buffer->dtype());
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_Dimensions(PJRT_Buffer_Dimensions_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_Dimensions_Args, num_dims);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_Dimensions_Args.buffer"));
    args->dims = buffer->dims().data();
    args->num_dims = buffer->dims().size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_UnpaddedDimensions(
    PJRT_Buffer_UnpaddedDimensions_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_UnpaddedDimensions_Args, num_dims);
    ASSIGN_OR_RETURN(PJRT_Buffer * buffer,
                     CheckBuffer(args->buffer,
                                 "PJRT_Buffer_UnpaddedDimensions_Args.buffer"));
    // Kiln's shapes are static: nothing is padded.
    args->unpadded_dims = buffer->dims().data();
    args->num_dims = buffer->dims().size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_DynamicDimensionIndices(
    PJRT_Buffer_DynamicDimensionIndices_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_DynamicDimensionIndices_Args,
                         num_dynamic_dims);
    RETURN_IF_ERROR(CheckBuffer(
        args->buffer, "PJRT_Buffer_DynamicDimensionIndices_Args.buffer"));
    args->dynamic_dim_indices = nullptr;
    args->num_dynamic_dims = 0;
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_GetMemoryLayout(
    PJRT_Buffer_GetMemoryLayout_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_GetMemoryLayout_Args, layout);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_GetMemoryLayout_Args.buffer"));
    FillDenseLayout(buffer->minor_to_major(), &args->layout);
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_OnDeviceSizeInBytes(
    PJRT_Buffer_OnDeviceSizeInBytes_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_OnDeviceSizeInBytes_Args,
                         on_device_size_in_bytes);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer,
                    "PJRT_Buffer_OnDeviceSizeInBytes_Args.buffer"));
    args->on_device_size_in_bytes =
        static_cast<size_t>(buffer->buffer->on_device_size());
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_Device(PJRT_Buffer_Device_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_Device_Args, device);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_Device_Args.buffer"));
    args->device = buffer->client->device_handle(buffer->buffer->device());
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_Memory(PJRT_Buffer_Memory_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_Memory_Args, memory);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_Memory_Args.buffer"));
    args->memory =
        buffer->client->memory_handle(buffer->buffer->memory_space());
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_Delete(PJRT_Buffer_Delete_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_Delete_Args, buffer);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_Delete_Args.buffer"));
    buffer->buffer->Delete();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_IsDeleted(PJRT_Buffer_IsDeleted_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_IsDeleted_Args, is_deleted);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_IsDeleted_Args.buffer"));
    args->is_deleted = buffer->buffer->IsDeleted();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_IsOnCpu(PJRT_Buffer_IsOnCpu_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_IsOnCpu_Args, is_on_cpu);
    RETURN_IF_ERROR(
        CheckBuffer(args->buffer, "PJRT_Buffer_IsOnCpu_Args.buffer"));
    // Every Kiln buffer is host memory: frameworks may read it in place
    // (holding an external reference while they do).
    args->is_on_cpu = true;
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_ReadyEvent(PJRT_Buffer_ReadyEvent_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_ReadyEvent_Args, event);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_ReadyEvent_Args.buffer"));
    if (buffer->buffer->IsDeleted()) {
      // As XLA does: the event, not the call, reports the deleted buffer.
      args->event = NewEventHandle(runtime::Event::CreateReady(
          FailedPreconditionError("PJRT_Buffer_ReadyEvent: the buffer ",
                                  buffer->buffer->ToString(), " was deleted")));
      return OkStatus();
    }
    args->event = NewEventHandle(buffer->buffer->ready_event());
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_UnsafePointer(PJRT_Buffer_UnsafePointer_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_UnsafePointer_Args, buffer_pointer);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer, "PJRT_Buffer_UnsafePointer_Args.buffer"));
    ASSIGN_OR_RETURN(std::shared_ptr<runtime::Storage> storage,
                     LiveStorage(*buffer, "PJRT_Buffer_UnsafePointer"));
    args->buffer_pointer = reinterpret_cast<uintptr_t>(storage->data());
    return OkStatus();
  });
}

PJRT_Error* PJRT_Buffer_IncreaseExternalReferenceCount(
    PJRT_Buffer_IncreaseExternalReferenceCount_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_IncreaseExternalReferenceCount_Args,
                         buffer);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer,
                    "PJRT_Buffer_IncreaseExternalReferenceCount_Args.buffer"));
    return buffer->buffer->IncreaseExternalReferenceCount();
  });
}

PJRT_Error* PJRT_Buffer_DecreaseExternalReferenceCount(
    PJRT_Buffer_DecreaseExternalReferenceCount_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_DecreaseExternalReferenceCount_Args,
                         buffer);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer,
                    "PJRT_Buffer_DecreaseExternalReferenceCount_Args.buffer"));
    return buffer->buffer->DecreaseExternalReferenceCount();
  });
}

PJRT_Error* PJRT_Buffer_OpaqueDeviceMemoryDataPointer(
    PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args,
                         device_memory_ptr);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer,
                    "PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args.buffer"));
    ASSIGN_OR_RETURN(
        std::shared_ptr<runtime::Storage> storage,
        LiveStorage(*buffer, "PJRT_Buffer_OpaqueDeviceMemoryDataPointer"));
    args->device_memory_ptr = storage->data();
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
