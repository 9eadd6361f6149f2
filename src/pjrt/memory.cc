// The PJRT_Memory_* entry points.
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/handles.h"

namespace kiln::pjrt {

PJRT_Error* PJRT_Memory_Id(PJRT_Memory_Id_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Memory_Id_Args, id);
    ASSIGN_OR_RETURN(Memory * memory,
                     CheckMemory(args->memory, "PJRT_Memory_Id_Args.memory"));
    args->id = memory->memory->id();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Memory_Kind(PJRT_Memory_Kind_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Memory_Kind_Args, kind_size);
    ASSIGN_OR_RETURN(Memory * memory,
                     CheckMemory(args->memory, "PJRT_Memory_Kind_Args.memory"));
    std::string_view kind = memory->memory->kind_name();
    args->kind = kind.data();
    args->kind_size = kind.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Memory_Kind_Id(PJRT_Memory_Kind_Id_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Memory_Kind_Id_Args, kind_id);
    ASSIGN_OR_RETURN(
        Memory * memory,
        CheckMemory(args->memory, "PJRT_Memory_Kind_Id_Args.memory"));
    args->kind_id = memory->memory->kind_id();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Memory_DebugString(PJRT_Memory_DebugString_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Memory_DebugString_Args, debug_string_size);
    ASSIGN_OR_RETURN(
        Memory * memory,
        CheckMemory(args->memory, "PJRT_Memory_DebugString_Args.memory"));
    const std::string& text = memory->memory->debug_string();
    args->debug_string = text.data();
    args->debug_string_size = text.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Memory_ToString(PJRT_Memory_ToString_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Memory_ToString_Args, to_string_size);
    ASSIGN_OR_RETURN(
        Memory * memory,
        CheckMemory(args->memory, "PJRT_Memory_ToString_Args.memory"));
    const std::string& text = memory->memory->to_string();
    args->to_string = text.data();
    args->to_string_size = text.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Memory_AddressableByDevices(
    PJRT_Memory_AddressableByDevices_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Memory_AddressableByDevices_Args,
                         num_devices);
    ASSIGN_OR_RETURN(
        Memory * memory,
        CheckMemory(args->memory,
                    "PJRT_Memory_AddressableByDevices_Args.memory"));
    args->devices = memory->devices.data();
    args->num_devices = memory->devices.size();
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
