// Client: PJRT_Client creation, device and memory discovery, host-to-device
// transfers, compilation and loading.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/strings.h"
#include "client/pjrt_util.h"
#include "kiln/pjrt.h"

namespace kiln::client {

using internal::CopyString;
using internal::OptionalQuery;

namespace {

// More handles than this in one list is taken as a broken plugin rather
// than read (the list is the plugin's memory, its length its word).
constexpr size_t kMaxHandles = size_t{1} << 20;

template <typename T>
Status CheckHandleList(T* const* list, size_t count, std::string_view what) {
  if (count > kMaxHandles) {
    return InternalError("plugin reported ", count, " ", what, "; more than ",
                         kMaxHandles, " is not plausible");
  }
  if (count > 0 && list == nullptr) {
    return InternalError("plugin reported ", count, " ", what,
                         " with a null list");
  }
  return OkStatus();
}

// Fills a PJRT_NamedValue array viewing `options` (which must outlive it).
std::vector<PJRT_NamedValue> ViewNamedValues(
    const std::vector<NamedValue>& options) {
  std::vector<PJRT_NamedValue> out;
  out.reserve(options.size());
  for (const NamedValue& option : options) {
    PJRT_NamedValue value{};
    value.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    value.name = option.name.data();
    value.name_size = option.name.size();
    if (auto* s = std::get_if<std::string>(&option.value)) {
      value.type = PJRT_NamedValue_kString;
      value.string_value = s->data();
      value.value_size = s->size();
    } else if (auto* i = std::get_if<int64_t>(&option.value)) {
      value.type = PJRT_NamedValue_kInt64;
      value.int64_value = *i;
      value.value_size = 1;
    } else if (auto* list = std::get_if<std::vector<int64_t>>(&option.value)) {
      value.type = PJRT_NamedValue_kInt64List;
      value.int64_array_value = list->data();
      value.value_size = list->size();
    } else if (auto* f = std::get_if<float>(&option.value)) {
      value.type = PJRT_NamedValue_kFloat;
      value.float_value = *f;
      value.value_size = 1;
    } else {
      value.type = PJRT_NamedValue_kBool;
      value.bool_value = std::get<bool>(option.value);
      value.value_size = 1;
    }
    out.push_back(value);
  }
  return out;
}

// The key-value callbacks over a KeyValueStore (the user argument).
// Errors go back through the plugin's callback_error.
PJRT_Error* CallbackFailure(PJRT_CallbackError* make_error,
                            const Status& status) {
  if (make_error == nullptr || *make_error == nullptr) return nullptr;
  const std::string message = status.ToString();
  return (*make_error)(static_cast<PJRT_Error_Code>(status.code()),
                       message.data(), message.size());
}

void DeleteValue(char* value) { delete[] value; }

PJRT_Error* KeyValueGet(PJRT_KeyValueGetCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  StatusOr<std::string> value =
      store->Get(std::string_view(args->key, args->key_size),
                 std::chrono::milliseconds(std::max(0, args->timeout_in_ms)));
  if (!value.ok()) return CallbackFailure(args->callback_error, value.status());
  char* copy = new char[value->size() + 1];
  std::memcpy(copy, value->data(), value->size());
  copy[value->size()] = '\0';
  args->value = copy;
  args->value_size = value->size();
  args->value_deleter_callback = &DeleteValue;
  return nullptr;
}

PJRT_Error* KeyValuePut(PJRT_KeyValuePutCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  Status status = store->Put(std::string_view(args->key, args->key_size),
                             std::string_view(args->value, args->value_size));
  if (!status.ok()) return CallbackFailure(args->callback_error, status);
  return nullptr;
}

}  // namespace

StatusOr<std::shared_ptr<Client>> Client::Create(
    std::shared_ptr<const Plugin> plugin,
    const std::vector<NamedValue>& options,
    std::shared_ptr<KeyValueStore> store) {
  if (plugin == nullptr) return InvalidArgumentError("plugin is null");
  std::vector<PJRT_NamedValue> raw_options = ViewNamedValues(options);
  auto args = KILN_PJRT_ARGS(PJRT_Client_Create_Args);
  args.create_options = raw_options.empty() ? nullptr : raw_options.data();
  args.num_options = raw_options.size();
  if (store != nullptr) {
    args.kv_get_callback = &KeyValueGet;
    args.kv_get_user_arg = store.get();
    args.kv_put_callback = &KeyValuePut;
    args.kv_put_user_arg = store.get();
  }
  RETURN_IF_ERROR(KILN_PJRT_CALL(*plugin, PJRT_Client_Create, args));
  if (args.client == nullptr) {
    return InternalError("PJRT_Client_Create of ", plugin->path(),
                         " succeeded but returned no client");
  }
  std::shared_ptr<Client> client(new Client(std::move(plugin)));
  client->handle_ = args.client;
  client->store_ = std::move(store);
  RETURN_IF_ERROR(client->Describe());
  return client;
}

Client::~Client() {
  if (handle_ == nullptr) return;
  auto args = KILN_PJRT_ARGS(PJRT_Client_Destroy_Args);
  args.client = handle_;
  Status status = KILN_PJRT_CALL(*plugin_, PJRT_Client_Destroy, args);
  status.IgnoreError();
}

Status Client::Describe() {
  const Plugin& plugin = *plugin_;
  {
    auto args = KILN_PJRT_ARGS(PJRT_Client_PlatformName_Args);
    args.client = handle_;
    RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_Client_PlatformName, args));
    platform_name_ = CopyString(args.platform_name, args.platform_name_size);
  }
  {
    auto args = KILN_PJRT_ARGS(PJRT_Client_PlatformVersion_Args);
    args.client = handle_;
    ASSIGN_OR_RETURN(bool present,
                     OptionalQuery(KILN_PJRT_CALL(
                         plugin, PJRT_Client_PlatformVersion, args)));
    if (present) {
      platform_version_ =
          CopyString(args.platform_version, args.platform_version_size);
    }
  }
  {
    auto args = KILN_PJRT_ARGS(PJRT_Client_ProcessIndex_Args);
    args.client = handle_;
    ASSIGN_OR_RETURN(
        bool present,
        OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_Client_ProcessIndex, args)));
    if (present) process_index_ = args.process_index;
  }

  auto devices_args = KILN_PJRT_ARGS(PJRT_Client_Devices_Args);
  devices_args.client = handle_;
  RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_Client_Devices, devices_args));
  RETURN_IF_ERROR(CheckHandleList(devices_args.devices,
                                  devices_args.num_devices, "devices"));
  for (size_t i = 0; i < devices_args.num_devices; ++i) {
    auto device = std::make_unique<Device>();
    device->client_ = this;
    device->handle_ = devices_args.devices[i];
    if (device->handle_ == nullptr) {
      return InternalError("PJRT_Client_Devices returned a null device at ", i);
    }
    auto description_args = KILN_PJRT_ARGS(PJRT_Device_GetDescription_Args);
    description_args.device = device->handle_;
    RETURN_IF_ERROR(
        KILN_PJRT_CALL(plugin, PJRT_Device_GetDescription, description_args));
    PJRT_DeviceDescription* description = description_args.device_description;

    auto id_args = KILN_PJRT_ARGS(PJRT_DeviceDescription_Id_Args);
    id_args.device_description = description;
    RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_DeviceDescription_Id, id_args));
    device->id_ = id_args.id;

    auto process_args =
        KILN_PJRT_ARGS(PJRT_DeviceDescription_ProcessIndex_Args);
    process_args.device_description = description;
    ASSIGN_OR_RETURN(
        bool has_process,
        OptionalQuery(KILN_PJRT_CALL(
            plugin, PJRT_DeviceDescription_ProcessIndex, process_args)));
    if (has_process) device->process_index_ = process_args.process_index;

    auto kind_args = KILN_PJRT_ARGS(PJRT_DeviceDescription_Kind_Args);
    kind_args.device_description = description;
    ASSIGN_OR_RETURN(bool has_kind,
                     OptionalQuery(KILN_PJRT_CALL(
                         plugin, PJRT_DeviceDescription_Kind, kind_args)));
    if (has_kind) {
      device->kind_ =
          CopyString(kind_args.device_kind, kind_args.device_kind_size);
    }

    auto debug_args = KILN_PJRT_ARGS(PJRT_DeviceDescription_DebugString_Args);
    debug_args.device_description = description;
    ASSIGN_OR_RETURN(
        bool has_debug,
        OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_DeviceDescription_DebugString,
                                     debug_args)));
    if (has_debug) {
      device->debug_string_ =
          CopyString(debug_args.debug_string, debug_args.debug_string_size);
    }

    auto to_string_args = KILN_PJRT_ARGS(PJRT_DeviceDescription_ToString_Args);
    to_string_args.device_description = description;
    ASSIGN_OR_RETURN(
        bool has_to_string,
        OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_DeviceDescription_ToString,
                                     to_string_args)));
    if (has_to_string) {
      device->to_string_ =
          CopyString(to_string_args.to_string, to_string_args.to_string_size);
    }

    auto attributes_args =
        KILN_PJRT_ARGS(PJRT_DeviceDescription_Attributes_Args);
    attributes_args.device_description = description;
    ASSIGN_OR_RETURN(
        bool has_attributes,
        OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_DeviceDescription_Attributes,
                                     attributes_args)));
    if (has_attributes) {
      ASSIGN_OR_RETURN(device->attributes_,
                       CopyNamedValues(attributes_args.attributes,
                                       attributes_args.num_attributes));
    }

    auto addressable_args = KILN_PJRT_ARGS(PJRT_Device_IsAddressable_Args);
    addressable_args.device = device->handle_;
    ASSIGN_OR_RETURN(bool has_addressable,
                     OptionalQuery(KILN_PJRT_CALL(
                         plugin, PJRT_Device_IsAddressable, addressable_args)));
    if (has_addressable) device->addressable_ = addressable_args.is_addressable;

    auto hardware_args = KILN_PJRT_ARGS(PJRT_Device_LocalHardwareId_Args);
    hardware_args.device = device->handle_;
    ASSIGN_OR_RETURN(bool has_hardware_id,
                     OptionalQuery(KILN_PJRT_CALL(
                         plugin, PJRT_Device_LocalHardwareId, hardware_args)));
    if (has_hardware_id) {
      device->local_hardware_id_ = hardware_args.local_hardware_id;
    }

    device_by_handle_[device->handle_] = device.get();
    devices_.push_back(device.get());
    device_storage_.push_back(std::move(device));
  }

  auto addressable_args = KILN_PJRT_ARGS(PJRT_Client_AddressableDevices_Args);
  addressable_args.client = handle_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(plugin, PJRT_Client_AddressableDevices, addressable_args));
  RETURN_IF_ERROR(CheckHandleList(addressable_args.addressable_devices,
                                  addressable_args.num_addressable_devices,
                                  "addressable devices"));
  for (size_t i = 0; i < addressable_args.num_addressable_devices; ++i) {
    Device* device = FindDevice(addressable_args.addressable_devices[i]);
    if (device == nullptr) {
      return InternalError("PJRT_Client_AddressableDevices returned device ", i,
                           " that PJRT_Client_Devices did not list");
    }
    device->addressable_ = true;
    addressable_devices_.push_back(device);
  }

  auto memories_args = KILN_PJRT_ARGS(PJRT_Client_AddressableMemories_Args);
  memories_args.client = handle_;
  ASSIGN_OR_RETURN(
      bool has_memories,
      OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_Client_AddressableMemories,
                                   memories_args)));
  if (has_memories) {
    RETURN_IF_ERROR(CheckHandleList(memories_args.addressable_memories,
                                    memories_args.num_addressable_memories,
                                    "memories"));
    for (size_t i = 0; i < memories_args.num_addressable_memories; ++i) {
      ASSIGN_OR_RETURN(Memory * memory,
                       AddMemory(memories_args.addressable_memories[i]));
      (void)memory;
    }
  }

  for (Device* device : addressable_devices_) {
    auto args = KILN_PJRT_ARGS(PJRT_Device_AddressableMemories_Args);
    args.device = device->handle_;
    ASSIGN_OR_RETURN(bool has_device_memories,
                     OptionalQuery(KILN_PJRT_CALL(
                         plugin, PJRT_Device_AddressableMemories, args)));
    if (has_device_memories) {
      RETURN_IF_ERROR(
          CheckHandleList(args.memories, args.num_memories, "memories"));
      for (size_t i = 0; i < args.num_memories; ++i) {
        ASSIGN_OR_RETURN(Memory * memory, AddMemory(args.memories[i]));
        device->memories_.push_back(memory);
      }
    }
    auto default_args = KILN_PJRT_ARGS(PJRT_Device_DefaultMemory_Args);
    default_args.device = device->handle_;
    ASSIGN_OR_RETURN(bool has_default,
                     OptionalQuery(KILN_PJRT_CALL(
                         plugin, PJRT_Device_DefaultMemory, default_args)));
    if (has_default && default_args.memory != nullptr) {
      ASSIGN_OR_RETURN(device->default_memory_, AddMemory(default_args.memory));
    }
  }

  for (Memory* memory : memories_) {
    auto args = KILN_PJRT_ARGS(PJRT_Memory_AddressableByDevices_Args);
    args.memory = memory->handle_;
    ASSIGN_OR_RETURN(bool has_devices,
                     OptionalQuery(KILN_PJRT_CALL(
                         plugin, PJRT_Memory_AddressableByDevices, args)));
    if (!has_devices) continue;
    RETURN_IF_ERROR(CheckHandleList(args.devices, args.num_devices, "devices"));
    for (size_t i = 0; i < args.num_devices; ++i) {
      Device* device = FindDevice(args.devices[i]);
      if (device != nullptr) memory->devices_.push_back(device);
    }
  }
  return OkStatus();
}

StatusOr<Memory*> Client::AddMemory(PJRT_Memory* handle) {
  if (handle == nullptr) return InternalError("plugin returned a null memory");
  if (Memory* known = FindMemory(handle)) return known;
  const Plugin& plugin = *plugin_;
  auto memory = std::make_unique<Memory>();
  memory->handle_ = handle;

  auto id_args = KILN_PJRT_ARGS(PJRT_Memory_Id_Args);
  id_args.memory = handle;
  RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_Memory_Id, id_args));
  memory->id_ = id_args.id;

  auto kind_args = KILN_PJRT_ARGS(PJRT_Memory_Kind_Args);
  kind_args.memory = handle;
  ASSIGN_OR_RETURN(bool has_kind, OptionalQuery(KILN_PJRT_CALL(
                                      plugin, PJRT_Memory_Kind, kind_args)));
  if (has_kind) memory->kind_ = CopyString(kind_args.kind, kind_args.kind_size);

  auto kind_id_args = KILN_PJRT_ARGS(PJRT_Memory_Kind_Id_Args);
  kind_id_args.memory = handle;
  ASSIGN_OR_RETURN(
      bool has_kind_id,
      OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_Memory_Kind_Id, kind_id_args)));
  if (has_kind_id) memory->kind_id_ = kind_id_args.kind_id;

  auto debug_args = KILN_PJRT_ARGS(PJRT_Memory_DebugString_Args);
  debug_args.memory = handle;
  ASSIGN_OR_RETURN(bool has_debug,
                   OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_Memory_DebugString,
                                                debug_args)));
  if (has_debug) {
    memory->debug_string_ =
        CopyString(debug_args.debug_string, debug_args.debug_string_size);
  }

  auto to_string_args = KILN_PJRT_ARGS(PJRT_Memory_ToString_Args);
  to_string_args.memory = handle;
  ASSIGN_OR_RETURN(bool has_to_string,
                   OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_Memory_ToString,
                                                to_string_args)));
  if (has_to_string) {
    memory->to_string_ =
        CopyString(to_string_args.to_string, to_string_args.to_string_size);
  }

  Memory* raw = memory.get();
  memory_by_handle_[handle] = raw;
  memories_.push_back(raw);
  memory_storage_.push_back(std::move(memory));
  return raw;
}

StatusOr<Device*> Client::LookupDevice(int id) const {
  auto args = KILN_PJRT_ARGS(PJRT_Client_LookupDevice_Args);
  args.client = handle_;
  args.id = id;
  RETURN_IF_ERROR(KILN_PJRT_CALL(*plugin_, PJRT_Client_LookupDevice, args));
  Device* device = FindDevice(args.device);
  if (device == nullptr) {
    return InternalError("PJRT_Client_LookupDevice(", id,
                         ") returned a device the client did not list");
  }
  return device;
}

Device* Client::FindDevice(const PJRT_Device* handle) const {
  auto found = device_by_handle_.find(handle);
  return found == device_by_handle_.end() ? nullptr : found->second;
}

Memory* Client::FindMemory(const PJRT_Memory* handle) const {
  auto found = memory_by_handle_.find(handle);
  return found == memory_by_handle_.end() ? nullptr : found->second;
}

StatusOr<std::unique_ptr<Buffer>> Client::BufferFromHost(
    const void* data, const Shape& shape, const Device* device,
    const Memory* memory, HostBufferSemantics semantics,
    Future* done_with_host_buffer) const {
  RETURN_IF_ERROR(ValidateShape(shape));
  if (data == nullptr && shape.ByteSize() > 0) {
    return InvalidArgumentError("host data for ", shape.ToString(), " is null");
  }
  if (device == nullptr && memory == nullptr) {
    return InvalidArgumentError("BufferFromHost needs a device or a memory");
  }
  if (device != nullptr && FindDevice(device->handle()) != device) {
    return InvalidArgumentError("device ", device->id(),
                                " belongs to another client");
  }
  if (memory != nullptr && FindMemory(memory->handle()) != memory) {
    return InvalidArgumentError("memory ", memory->id(),
                                " belongs to another client");
  }
  auto args = KILN_PJRT_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = handle_;
  // PJRT wants a non-null pointer even for zero bytes.
  static const char kEmpty[1] = {0};
  args.data = data == nullptr ? kEmpty : data;
  args.type = shape.element_type;
  args.dims = shape.dimensions.data();
  args.num_dims = shape.dimensions.size();
  args.host_buffer_semantics = static_cast<PJRT_HostBufferSemantics>(semantics);
  if (memory != nullptr) {
    args.memory = memory->handle();
  } else {
    args.device = device->handle();
  }
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(*plugin_, PJRT_Client_BufferFromHostBuffer, args));
  Future done(plugin_, args.done_with_host_buffer);
  if (args.buffer == nullptr) {
    return InternalError("PJRT_Client_BufferFromHostBuffer returned no buffer");
  }
  std::unique_ptr<Buffer> buffer(new Buffer(shared_from_this(), args.buffer));
  buffer->shape_ = shape;
  if (memory == nullptr) {
    buffer->device_ = FindDevice(device->handle());
  } else {
    auto device_args = KILN_PJRT_ARGS(PJRT_Buffer_Device_Args);
    device_args.buffer = args.buffer;
    ASSIGN_OR_RETURN(bool has_device,
                     OptionalQuery(KILN_PJRT_CALL(*plugin_, PJRT_Buffer_Device,
                                                  device_args)));
    if (has_device) buffer->device_ = FindDevice(device_args.device);
  }
  if (semantics != HostBufferSemantics::kImmutableOnlyDuringCall) {
    if (done_with_host_buffer != nullptr) {
      *done_with_host_buffer = std::move(done);
    } else {
      RETURN_IF_ERROR(done.Await());
    }
  }
  return buffer;
}

StatusOr<std::unique_ptr<Executable>> Client::Compile(
    std::string_view program, std::string_view format,
    std::string_view compile_options) const {
  PJRT_Program pjrt_program{};
  pjrt_program.struct_size = PJRT_Program_STRUCT_SIZE;
  // The C API's `code` is not const; the plugin only reads it.
  pjrt_program.code = const_cast<char*>(program.data());
  pjrt_program.code_size = program.size();
  pjrt_program.format = format.data();
  pjrt_program.format_size = format.size();
  auto args = KILN_PJRT_ARGS(PJRT_Client_Compile_Args);
  args.client = handle_;
  args.program = &pjrt_program;
  args.compile_options = compile_options.data();
  args.compile_options_size = compile_options.size();
  RETURN_IF_ERROR(KILN_PJRT_CALL(*plugin_, PJRT_Client_Compile, args));
  return WrapExecutable(args.executable);
}

StatusOr<std::unique_ptr<Executable>> Client::DeserializeAndLoad(
    std::string_view serialized, std::string_view compile_options) const {
  auto args = KILN_PJRT_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
  args.client = handle_;
  args.serialized_executable = serialized.data();
  args.serialized_executable_size = serialized.size();
  if (!compile_options.empty()) {
    args.overridden_serialized_compile_options = compile_options.data();
    args.overridden_serialized_compile_options_size = compile_options.size();
  }
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(*plugin_, PJRT_Executable_DeserializeAndLoad, args));
  return WrapExecutable(args.loaded_executable);
}

StatusOr<std::unique_ptr<Executable>> Client::WrapExecutable(
    PJRT_LoadedExecutable* handle) const {
  if (handle == nullptr) {
    return InternalError("plugin reported success but returned no executable");
  }
  std::unique_ptr<Executable> executable(
      new Executable(shared_from_this(), handle));
  RETURN_IF_ERROR(executable->Describe());
  return executable;
}

StatusOr<std::vector<int>> Client::DefaultDeviceAssignment(
    int num_replicas, int num_partitions) const {
  if (num_replicas < 1 || num_partitions < 1 ||
      int64_t{num_replicas} * num_partitions > int64_t{1} << 20) {
    return InvalidArgumentError("device assignment of ", num_replicas,
                                " replicas x ", num_partitions,
                                " partitions: both must be in [1, 2^20]");
  }
  std::vector<int> assignment(size_t{1} * num_replicas * num_partitions);
  auto args = KILN_PJRT_ARGS(PJRT_Client_DefaultDeviceAssignment_Args);
  args.client = handle_;
  args.num_replicas = num_replicas;
  args.num_partitions = num_partitions;
  args.default_assignment_size = assignment.size();
  args.default_assignment = assignment.data();
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(*plugin_, PJRT_Client_DefaultDeviceAssignment, args));
  return assignment;
}

StatusOr<DeviceMemoryStats> Device::GetMemoryStats() const {
  auto args = KILN_PJRT_ARGS(PJRT_Device_MemoryStats_Args);
  args.device = handle_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(client_->plugin(), PJRT_Device_MemoryStats, args));
  DeviceMemoryStats stats;
  stats.bytes_in_use = args.bytes_in_use;
  auto set = [](bool is_set, int64_t value) {
    return is_set ? std::optional<int64_t>(value) : std::nullopt;
  };
  stats.peak_bytes_in_use =
      set(args.peak_bytes_in_use_is_set, args.peak_bytes_in_use);
  stats.num_allocs = set(args.num_allocs_is_set, args.num_allocs);
  stats.largest_alloc_size =
      set(args.largest_alloc_size_is_set, args.largest_alloc_size);
  stats.bytes_limit = set(args.bytes_limit_is_set, args.bytes_limit);
  stats.bytes_reserved = set(args.bytes_reserved_is_set, args.bytes_reserved);
  stats.peak_bytes_reserved =
      set(args.peak_bytes_reserved_is_set, args.peak_bytes_reserved);
  stats.bytes_reservable_limit =
      set(args.bytes_reservable_limit_is_set, args.bytes_reservable_limit);
  stats.largest_free_block_bytes =
      set(args.largest_free_block_bytes_is_set, args.largest_free_block_bytes);
  stats.pool_bytes = set(args.pool_bytes_is_set, args.pool_bytes);
  stats.peak_pool_bytes =
      set(args.peak_pool_bytes_is_set, args.peak_pool_bytes);
  return stats;
}

}  // namespace kiln::client
