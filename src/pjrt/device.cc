// The PJRT_DeviceDescription_* and PJRT_Device_* entry points.
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/handles.h"

// What PJRT_Device_GetAttributes hands out for its deleter to free: the
// attributes themselves belong to the device, so there is nothing inside.
struct PJRT_Device_Attributes {
  int unused = 0;
};

namespace kiln::pjrt {
namespace {

void DeleteDeviceAttributes(PJRT_Device_Attributes* attributes) {
  delete attributes;
}

}  // namespace

PJRT_Error* PJRT_DeviceDescription_Id(PJRT_DeviceDescription_Id_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_DeviceDescription_Id_Args, id);
    ASSIGN_OR_RETURN(
        PJRT_DeviceDescription * description,
        CheckDescription(args->device_description,
                         "PJRT_DeviceDescription_Id_Args.device_description"));
    args->id = description->description.id;
    return OkStatus();
  });
}

PJRT_Error* PJRT_DeviceDescription_ProcessIndex(
    PJRT_DeviceDescription_ProcessIndex_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_DeviceDescription_ProcessIndex_Args,
                         process_index);
    ASSIGN_OR_RETURN(
        PJRT_DeviceDescription * description,
        CheckDescription(
            args->device_description,
            "PJRT_DeviceDescription_ProcessIndex_Args.device_description"));
    args->process_index = description->description.process_index;
    return OkStatus();
  });
}

PJRT_Error* PJRT_DeviceDescription_Attributes(
    PJRT_DeviceDescription_Attributes_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_DeviceDescription_Attributes_Args,
                         attributes);
    ASSIGN_OR_RETURN(
        PJRT_DeviceDescription * description,
        CheckDescription(
            args->device_description,
            "PJRT_DeviceDescription_Attributes_Args.device_description"));
    args->num_attributes = description->attributes.size();
    args->attributes = description->attributes.data();
    return OkStatus();
  });
}

PJRT_Error* PJRT_DeviceDescription_Kind(
    PJRT_DeviceDescription_Kind_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_DeviceDescription_Kind_Args,
                         device_kind_size);
    ASSIGN_OR_RETURN(
        PJRT_DeviceDescription * description,
        CheckDescription(
            args->device_description,
            "PJRT_DeviceDescription_Kind_Args.device_description"));
    const std::string& kind = description->description.kind;
    args->device_kind = kind.data();
    args->device_kind_size = kind.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_DeviceDescription_DebugString(
    PJRT_DeviceDescription_DebugString_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_DeviceDescription_DebugString_Args,
                         debug_string_size);
    ASSIGN_OR_RETURN(
        PJRT_DeviceDescription * description,
        CheckDescription(
            args->device_description,
            "PJRT_DeviceDescription_DebugString_Args.device_description"));
    const std::string& text = description->description.debug_string;
    args->debug_string = text.data();
    args->debug_string_size = text.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_DeviceDescription_ToString(
    PJRT_DeviceDescription_ToString_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_DeviceDescription_ToString_Args,
                         to_string_size);
    ASSIGN_OR_RETURN(
        PJRT_DeviceDescription * description,
        CheckDescription(
            args->device_description,
            "PJRT_DeviceDescription_ToString_Args.device_description"));
    const std::string& text = description->description.to_string;
    args->to_string = text.data();
    args->to_string_size = text.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Device_GetDescription(PJRT_Device_GetDescription_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Device_GetDescription_Args,
                         device_description);
    ASSIGN_OR_RETURN(
        PJRT_Device * device,
        CheckDevice(args->device, "PJRT_Device_GetDescription_Args.device"));
    args->device_description = &device->description;
    return OkStatus();
  });
}

PJRT_Error* PJRT_Device_IsAddressable(PJRT_Device_IsAddressable_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Device_IsAddressable_Args, is_addressable);
    ASSIGN_OR_RETURN(
        PJRT_Device * device,
        CheckDevice(args->device, "PJRT_Device_IsAddressable_Args.device"));
    args->is_addressable = device->device->addressable();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Device_LocalHardwareId(
    PJRT_Device_LocalHardwareId_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Device_LocalHardwareId_Args,
                         local_hardware_id);
    ASSIGN_OR_RETURN(
        PJRT_Device * device,
        CheckDevice(args->device, "PJRT_Device_LocalHardwareId_Args.device"));
    args->local_hardware_id = device->device->local_hardware_id();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Device_AddressableMemories(
    PJRT_Device_AddressableMemories_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Device_AddressableMemories_Args,
                         num_memories);
    ASSIGN_OR_RETURN(
        PJRT_Device * device,
        CheckDevice(args->device,
                    "PJRT_Device_AddressableMemories_Args.device"));
    args->memories = device->memories.data();
    args->num_memories = device->memories.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Device_DefaultMemory(PJRT_Device_DefaultMemory_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Device_DefaultMemory_Args, memory);
    ASSIGN_OR_RETURN(
        PJRT_Device * device,
        CheckDevice(args->device, "PJRT_Device_DefaultMemory_Args.device"));
    if (device->default_memory == nullptr) {
      return InvalidArgumentError(
          "PJRT_Device_DefaultMemory: ", device->device->debug_string(),
          " belongs to process ", device->device->process_index(),
          " and has no memory this process can address");
    }
    args->memory = device->default_memory;
    return OkStatus();
  });
}

PJRT_Error* PJRT_Device_MemoryStats(PJRT_Device_MemoryStats_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Device_MemoryStats_Args, bytes_in_use);
    ASSIGN_OR_RETURN(
        PJRT_Device * device,
        CheckDevice(args->device, "PJRT_Device_MemoryStats_Args.device"));
    const runtime::MemoryStats stats = device->device->GetMemoryStats();
    args->bytes_in_use = stats.bytes_in_use;
    // Every optional statistic inside the caller's struct gets its value and
    // its _is_set flag written, set or not; nothing past struct_size is.
#define KILN_PJRT_STAT(field, known, value)                   \
  if (KILN_PJRT_HAS_FIELD(args, PJRT_Device_MemoryStats_Args, \
                          field##_is_set)) {                  \
    args->field = (known) ? (value) : 0;                      \
    args->field##_is_set = (known);                           \
  }
    KILN_PJRT_STAT(peak_bytes_in_use, true, stats.peak_bytes_in_use)
    KILN_PJRT_STAT(num_allocs, true, stats.num_allocs)
    KILN_PJRT_STAT(largest_alloc_size, true, stats.largest_alloc_size)
    KILN_PJRT_STAT(bytes_limit, true, stats.bytes_limit)
    KILN_PJRT_STAT(bytes_reserved, false, 0)
    KILN_PJRT_STAT(peak_bytes_reserved, false, 0)
    KILN_PJRT_STAT(bytes_reservable_limit, false, 0)
    KILN_PJRT_STAT(largest_free_block_bytes, false, 0)
    KILN_PJRT_STAT(pool_bytes, false, 0)
    KILN_PJRT_STAT(peak_pool_bytes, false, 0)
#undef KILN_PJRT_STAT
    return OkStatus();
  });
}

PJRT_Error* PJRT_Device_ClearMemoryStats(
    PJRT_Device_ClearMemoryStats_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Device_ClearMemoryStats_Args, device);
    ASSIGN_OR_RETURN(
        PJRT_Device * device,
        CheckDevice(args->device, "PJRT_Device_ClearMemoryStats_Args.device"));
    device->device->ClearMemoryStats();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Device_GetAttributes(PJRT_Device_GetAttributes_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Device_GetAttributes_Args,
                         attributes_deleter);
    ASSIGN_OR_RETURN(
        PJRT_Device * device,
        CheckDevice(args->device, "PJRT_Device_GetAttributes_Args.device"));
    // Frameworks always call the deleter on device_attributes, so both are
    // real even though the attributes live in the device.
    args->attributes = device->description.attributes.data();
    args->num_attributes = device->description.attributes.size();
    args->device_attributes = new PJRT_Device_Attributes();
    args->attributes_deleter = &DeleteDeviceAttributes;
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
