#include "pjrt/handles.h"

#include <numeric>

namespace kiln::pjrt {
namespace {

// The PJRT_Memory function table: a user-data slot per key.
void* GetMemoryUserData(PJRT_Memory* memory, const void* key) {
  auto* self = static_cast<Memory*>(memory);
  std::lock_guard<std::mutex> lock(self->user_data_mutex);
  auto it = self->user_data.find(key);
  return it == self->user_data.end() ? nullptr : it->second.first;
}

void SetMemoryUserData(PJRT_Memory* memory, const void* key, void* data,
                       void (*destructor)(void*)) {
  auto* self = static_cast<Memory*>(memory);
  std::pair<void*, void (*)(void*)> old(nullptr, nullptr);
  {
    std::lock_guard<std::mutex> lock(self->user_data_mutex);
    auto it = self->user_data.find(key);
    if (it != self->user_data.end()) old = it->second;
    if (data == nullptr && destructor == nullptr) {
      if (it != self->user_data.end()) self->user_data.erase(it);
    } else {
      self->user_data[key] = {data, destructor};
    }
  }
  // The replaced value's destructor runs outside the lock: it is the
  // caller's code.
  if (old.second != nullptr && old.first != data) old.second(old.first);
}

const PJRT_Memory_FunctionTable kMemoryFunctions = {
    PJRT_Memory_FunctionTable_STRUCT_SIZE,
    nullptr,
    PJRT_Memory_STRUCT_SIZE,
    &GetMemoryUserData,
    &SetMemoryUserData,
};

template <typename T>
StatusOr<T*> CheckTagged(T* handle, HandleTag tag, std::string_view kind,
                         std::string_view what) {
  if (handle == nullptr) return InvalidArgumentError(what, " is null");
  if (handle->tag != tag) {
    return InvalidArgumentError(what, " is not a ", kind,
                                " made by Kiln (or was destroyed)");
  }
  return handle;
}

}  // namespace

Memory::Memory() { vtable = &kMemoryFunctions; }

Memory::~Memory() {
  for (auto& [key, entry] : user_data) {
    if (entry.second != nullptr) entry.second(entry.first);
  }
}

StatusOr<PJRT_Client*> CheckClient(PJRT_Client* client, std::string_view what) {
  return CheckTagged(client, HandleTag::kClient, "PJRT_Client", what);
}

StatusOr<PJRT_Device*> CheckDevice(PJRT_Device* device, std::string_view what) {
  return CheckTagged(device, HandleTag::kDevice, "PJRT_Device", what);
}

StatusOr<PJRT_DeviceDescription*> CheckDescription(
    PJRT_DeviceDescription* description, std::string_view what) {
  return CheckTagged(description, HandleTag::kDescription,
                     "PJRT_DeviceDescription", what);
}

StatusOr<Memory*> CheckMemory(PJRT_Memory* memory, std::string_view what) {
  if (memory == nullptr) return InvalidArgumentError(what, " is null");
  // The function table comes first in every PJRT_Memory; Kiln's is ours.
  if (memory->vtable != &kMemoryFunctions) {
    return InvalidArgumentError(what, " is not a PJRT_Memory made by Kiln");
  }
  return CheckTagged(static_cast<Memory*>(memory), HandleTag::kMemory,
                     "PJRT_Memory", what);
}

StatusOr<PJRT_Buffer*> CheckBuffer(PJRT_Buffer* buffer, std::string_view what) {
  return CheckTagged(buffer, HandleTag::kBuffer, "PJRT_Buffer", what);
}

StatusOr<PJRT_Event*> CheckEvent(PJRT_Event* event, std::string_view what) {
  return CheckTagged(event, HandleTag::kEvent, "PJRT_Event", what);
}

StatusOr<PJRT_Executable*> CheckExecutable(PJRT_Executable* executable,
                                           std::string_view what) {
  return CheckTagged(executable, HandleTag::kExecutable, "PJRT_Executable",
                     what);
}

StatusOr<PJRT_ExecuteContext*> CheckExecuteContext(PJRT_ExecuteContext* context,
                                                   std::string_view what) {
  return CheckTagged(context, HandleTag::kExecuteContext, "PJRT_ExecuteContext",
                     what);
}

StatusOr<PJRT_LoadedExecutable*> CheckLoadedExecutable(
    PJRT_LoadedExecutable* executable, std::string_view what) {
  return CheckTagged(executable, HandleTag::kLoadedExecutable,
                     "PJRT_LoadedExecutable", what);
}

StatusOr<const PJRT_TopologyDescription*> CheckTopology(
    const PJRT_TopologyDescription* topology, std::string_view what) {
  return CheckTagged(topology, HandleTag::kTopology, "PJRT_TopologyDescription",
                     what);
}

Status CheckSameClient(const PJRT_Client* owner, const PJRT_Client* client,
                       std::string_view what) {
  if (owner != client) {
    return InvalidArgumentError(what, " belongs to another client");
  }
  return OkStatus();
}

PJRT_Event* NewEventHandle(std::shared_ptr<runtime::Event> event) {
  auto* handle = new PJRT_Event();
  handle->event = std::move(event);
  return handle;
}

PJRT_Buffer* NewBufferHandle(std::shared_ptr<runtime::Buffer> buffer,
                             PJRT_Client* client) {
  return new PJRT_Buffer(std::move(buffer), client);
}

}  // namespace kiln::pjrt

const std::vector<int64_t>& PJRT_Buffer::minor_to_major() {
  std::call_once(minor_to_major_once_, [this] {
    minor_to_major_ = buffer->minor_to_major();
    if (minor_to_major_.empty()) {
      minor_to_major_.resize(dims().size());
      std::iota(minor_to_major_.rbegin(), minor_to_major_.rend(), 0);
    }
  });
  return minor_to_major_;
}
