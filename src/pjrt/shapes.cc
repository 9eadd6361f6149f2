#include "pjrt/shapes.h"

#include <algorithm>
#include <span>

#include "pjrt/element_types.h"

namespace kiln::pjrt {

StatusOr<runtime::Shape> ReadShape(int type, const int64_t* dims,
                                   size_t num_dims, std::string_view what) {
  ASSIGN_OR_RETURN(runtime::DType dtype,
                   DTypeFromPjrt(type, StrCat(what, "element type")));
  if (num_dims > runtime::kMaxRank) {
    return InvalidArgumentError(what, "num_dims is ", num_dims,
                                "; Kiln supports at most ", runtime::kMaxRank,
                                " dimensions");
  }
  if (dims == nullptr && num_dims > 0) {
    return InvalidArgumentError(what, "dims is null, but num_dims is ",
                                num_dims);
  }
  auto shape = runtime::Shape::Make(
      dtype, std::span<const int64_t>(dims, dims == nullptr ? 0 : num_dims));
  if (!shape.ok()) return shape.status().WithContext(StrCat(what, "dims"));
  return shape;
}

namespace {

// Buffers live only on this process's devices.
Status CheckAddressable(const Memory& memory, std::string_view what) {
  const runtime::Device* device = memory.memory->device();
  if (device->addressable()) return OkStatus();
  return InvalidArgumentError(
      what, ": ", device->debug_string(), " belongs to process ",
      device->process_index(),
      "; buffers can only be placed on this process's devices");
}

}  // namespace

StatusOr<Memory*> ResolvePlacement(PJRT_Client* client, PJRT_Device* device,
                                   PJRT_Memory* memory, std::string_view what) {
  PJRT_Device* checked_device = nullptr;
  if (device != nullptr) {
    ASSIGN_OR_RETURN(checked_device,
                     CheckDevice(device, StrCat(what, "device")));
    RETURN_IF_ERROR(CheckSameClient(checked_device->client, client,
                                    StrCat(what, "device")));
  }
  if (memory != nullptr) {
    ASSIGN_OR_RETURN(Memory * checked,
                     CheckMemory(memory, StrCat(what, "memory")));
    RETURN_IF_ERROR(
        CheckSameClient(checked->client, client, StrCat(what, "memory")));
    if (checked_device != nullptr &&
        std::find(checked->devices.begin(), checked->devices.end(),
                  checked_device) == checked->devices.end()) {
      return InvalidArgumentError(what, "memory (",
                                  checked->memory->debug_string(),
                                  ") is not addressable by ", what, "device (",
                                  checked_device->device->debug_string(), ")");
    }
    RETURN_IF_ERROR(CheckAddressable(*checked, StrCat(what, "memory")));
    return checked;
  }
  if (checked_device == nullptr) {
    return InvalidArgumentError(what, "device and ", what,
                                "memory are both null; one must be given");
  }
  const runtime::Device* target = checked_device->device;
  if (!target->addressable()) {
    return InvalidArgumentError(
        what, "device: ", target->debug_string(), " belongs to process ",
        target->process_index(),
        "; buffers can only be placed on this process's devices");
  }
  return static_cast<Memory*>(checked_device->default_memory);
}

}  // namespace kiln::pjrt
