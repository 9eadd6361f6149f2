// The serialized XLA messages of compilation: xla.CompileOptionsProto in
// (PJRT_Client_Compile, PJRT_Executable_DeserializeAndLoad) and
// xla.DeviceAssignmentProto out (PJRT_LoadedExecutable_GetDeviceAssignment).
#ifndef KILN_PJRT_COMPILE_OPTIONS_H_
#define KILN_PJRT_COMPILE_OPTIONS_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "runtime/client.h"
#include "runtime/executable.h"

namespace kiln::pjrt {

// Reads a serialized xla.CompileOptionsProto into what Kiln compiles with:
// replicas, partitions, the device assignment (or one device from
// device_ordinal), portability. Fields Kiln does not know are kept and
// ignored. INVALID_ARGUMENT for bytes that are not such a message or
// contradict themselves; UNIMPLEMENTED for what Kiln cannot honor
// (tupled parameters, argument layouts other than row-major).
StatusOr<runtime::CompileSpec> ParseCompileOptions(
    std::string_view bytes, const runtime::Client& client);

// The executable's devices as a serialized xla.DeviceAssignmentProto (one
// computation per partition, listing the device of each replica); empty
// for a portable executable.
std::string SerializeDeviceAssignment(const runtime::Executable& executable);

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_COMPILE_OPTIONS_H_
