// A small PJRT plugin built only for the client's tests. It pretends to be
// older than the client: it reports PJRT C API 0.<TEST_PLUGIN_MINOR> and a
// PJRT_Api that ends at TEST_PLUGIN_TABLE_END (a slot name), placed so that
// the byte after its last slot is the first byte of an inaccessible page. A
// client that reads past the plugin's struct_size crashes; a client that
// calls a slot newer than the reported minor hits a trap that aborts with
// the slot's name.
//
// Behind the table: two devices with one "device" memory each, host buffers
// that are plain byte vectors, and events that are always ready. It
// "compiles" only modules named @sum (answering UNIMPLEMENTED to anything
// else) into executables whose one output is the elementwise sum of their
// f32 inputs; `tf.aliasing_output = 0` in the text donates input 0. Built in
// variants (see CMakeLists.txt): another major version, a library without
// GetPjrtApi, and one that misbehaves on purpose (TEST_PLUGIN_MISBEHAVE: its
// sums are off by one and it never donates), for `kiln conform` to fail on.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pjrt_c_api.h"

#define KILN_TEST_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::atomic<int> initialize_count{0};

struct TestError : PJRT_Error {
  PJRT_Error_Code code;
  std::string message;
};

PJRT_Error* MakeError(PJRT_Error_Code code, std::string message) {
  auto* error = new TestError();
  error->vtable = nullptr;
  error->code = code;
  error->message = std::move(message);
  return error;
}

struct TestMemory : PJRT_Memory {
  int id;
  std::vector<PJRT_Device*> devices;
};

struct TestDevice {
  int id;
  TestMemory* memory;
};

}  // namespace

struct PJRT_DeviceDescription {
  TestDevice* device;
};

struct PJRT_Device {
  TestDevice device;
  PJRT_DeviceDescription description;
};

struct PJRT_Client {
  PJRT_Device devices[2];
  TestMemory memories[2];
  PJRT_Device* device_list[2];
  PJRT_Memory* memory_list[2];
};

struct PJRT_Buffer {
  PJRT_Client* client;
  PJRT_Device* device;
  PJRT_Buffer_Type type;
  std::vector<int64_t> dims;
  std::vector<char> bytes;
  bool deleted = false;
};

struct PJRT_Event {
  int unused;
};

struct PJRT_LoadedExecutable {
  PJRT_Client* client;
  bool donates_first;
};

struct PJRT_Executable {
  PJRT_LoadedExecutable* loaded;
};

namespace {

constexpr const char kPlatformName[] = "kiln_test";
constexpr const char kDeviceKind[] = "test device";
constexpr const char kMemoryKind[] = "device";

void ErrorDestroy(PJRT_Error_Destroy_Args* args) {
  delete static_cast<TestError*>(args->error);
}

void ErrorMessage(PJRT_Error_Message_Args* args) {
  auto* error = static_cast<const TestError*>(args->error);
  args->message = error->message.data();
  args->message_size = error->message.size();
}

PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args) {
  args->code = static_cast<const TestError*>(args->error)->code;
  return nullptr;
}

PJRT_Error* PluginInitialize(PJRT_Plugin_Initialize_Args*) {
  ++initialize_count;
  return nullptr;
}

PJRT_Error* PluginAttributes(PJRT_Plugin_Attributes_Args* args) {
  static const int64_t kVersion[3] = {1, 0, 0};
  static PJRT_NamedValue attributes[2];
  attributes[0].struct_size = PJRT_NamedValue_STRUCT_SIZE;
  attributes[0].name = "stablehlo_current_version";
  attributes[0].name_size = std::strlen(attributes[0].name);
  attributes[0].type = PJRT_NamedValue_kInt64List;
  attributes[0].int64_array_value = kVersion;
  attributes[0].value_size = 3;
  attributes[1].struct_size = PJRT_NamedValue_STRUCT_SIZE;
  attributes[1].name = "test_plugin";
  attributes[1].name_size = std::strlen(attributes[1].name);
  attributes[1].type = PJRT_NamedValue_kBool;
  attributes[1].bool_value = true;
  attributes[1].value_size = 1;
  args->attributes = attributes;
  args->num_attributes = 2;
  return nullptr;
}

PJRT_Error* EventDestroy(PJRT_Event_Destroy_Args* args) {
  delete args->event;
  return nullptr;
}

PJRT_Error* EventIsReady(PJRT_Event_IsReady_Args* args) {
  args->is_ready = true;
  return nullptr;
}

PJRT_Error* EventError(PJRT_Event_Error_Args*) { return nullptr; }
PJRT_Error* EventAwait(PJRT_Event_Await_Args*) { return nullptr; }

PJRT_Error* EventOnReady(PJRT_Event_OnReady_Args* args) {
  args->callback(nullptr, args->user_arg);
  return nullptr;
}

PJRT_Error* ClientCreate(PJRT_Client_Create_Args* args) {
  auto* client = new PJRT_Client();
  for (int i = 0; i < 2; ++i) {
    TestMemory& memory = client->memories[i];
    memory.vtable = nullptr;
    memory.id = i;
    memory.devices = {&client->devices[i]};
    PJRT_Device& device = client->devices[i];
    device.device.id = i;
    device.device.memory = &memory;
    device.description.device = &device.device;
    client->device_list[i] = &device;
    client->memory_list[i] = &memory;
  }
  args->client = client;
  return nullptr;
}

PJRT_Error* ClientDestroy(PJRT_Client_Destroy_Args* args) {
  delete args->client;
  return nullptr;
}

PJRT_Error* ClientPlatformName(PJRT_Client_PlatformName_Args* args) {
  args->platform_name = kPlatformName;
  args->platform_name_size = std::strlen(kPlatformName);
  return nullptr;
}

PJRT_Error* ClientProcessIndex(PJRT_Client_ProcessIndex_Args* args) {
  args->process_index = 0;
  return nullptr;
}

PJRT_Error* ClientPlatformVersion(PJRT_Client_PlatformVersion_Args* args) {
  static const char kVersion[] = "test 0.40";
  args->platform_version = kVersion;
  args->platform_version_size = std::strlen(kVersion);
  return nullptr;
}

PJRT_Error* ClientDevices(PJRT_Client_Devices_Args* args) {
  args->devices = args->client->device_list;
  args->num_devices = 2;
  return nullptr;
}

PJRT_Error* ClientAddressableDevices(
    PJRT_Client_AddressableDevices_Args* args) {
  args->addressable_devices = args->client->device_list;
  args->num_addressable_devices = 2;
  return nullptr;
}

PJRT_Error* ClientLookupDevice(PJRT_Client_LookupDevice_Args* args) {
  if (args->id < 0 || args->id >= 2) {
    return MakeError(
        PJRT_Error_Code_INVALID_ARGUMENT,
        "No matching device found for device_id " + std::to_string(args->id));
  }
  args->device = args->client->device_list[args->id];
  return nullptr;
}

PJRT_Error* ClientAddressableMemories(
    PJRT_Client_AddressableMemories_Args* args) {
  args->addressable_memories = args->client->memory_list;
  args->num_addressable_memories = 2;
  return nullptr;
}

constexpr char kExecutableMagic[] = "kiln-test-executable:";
std::atomic<int> execute_count{0};

PJRT_Error* ClientCompile(PJRT_Client_Compile_Args* args) {
  std::string code(args->program->code, args->program->code_size);
  if (code.find("module @sum ") == std::string::npos) {
    return MakeError(PJRT_Error_Code_UNIMPLEMENTED,
                     "PJRT_Client_Compile is not implemented by the test "
                     "plugin (it compiles only modules named @sum)");
  }
  args->executable = new PJRT_LoadedExecutable{
      args->client,
      code.find("tf.aliasing_output = 0 : i32") != std::string::npos};
  return nullptr;
}

PJRT_Error* LoadedExecutableDestroy(PJRT_LoadedExecutable_Destroy_Args* args) {
  delete args->executable;
  return nullptr;
}

PJRT_Error* LoadedExecutableGetExecutable(
    PJRT_LoadedExecutable_GetExecutable_Args* args) {
  args->executable = new PJRT_Executable{args->loaded_executable};
  return nullptr;
}

PJRT_Error* LoadedExecutableAddressableDevices(
    PJRT_LoadedExecutable_AddressableDevices_Args* args) {
  args->addressable_devices = args->executable->client->device_list;
  args->num_addressable_devices = 2;
  return nullptr;
}

PJRT_Error* ExecutableDestroy(PJRT_Executable_Destroy_Args* args) {
  delete args->executable;
  return nullptr;
}

PJRT_Error* ExecutableName(PJRT_Executable_Name_Args* args) {
  args->executable_name = "sum";
  args->executable_name_size = 3;
  return nullptr;
}

PJRT_Error* ExecutableNumOutputs(PJRT_Executable_NumOutputs_Args* args) {
  args->num_outputs = 1;
  return nullptr;
}

struct SerializedHolder {
  std::string bytes;
};

PJRT_Error* ExecutableSerialize(PJRT_Executable_Serialize_Args* args) {
  auto* holder = new SerializedHolder{
      std::string(kExecutableMagic) +
      (args->executable->loaded->donates_first ? "1" : "0")};
  args->serialized_bytes = holder->bytes.data();
  args->serialized_bytes_size = holder->bytes.size();
  args->serialized_executable =
      reinterpret_cast<PJRT_SerializedExecutable*>(holder);
  args->serialized_executable_deleter = [](PJRT_SerializedExecutable* blob) {
    delete reinterpret_cast<SerializedHolder*>(blob);
  };
  return nullptr;
}

PJRT_Error* ExecutableDeserializeAndLoad(
    PJRT_Executable_DeserializeAndLoad_Args* args) {
  std::string bytes(args->serialized_executable,
                    args->serialized_executable_size);
  std::string magic(kExecutableMagic);
  if (bytes.size() != magic.size() + 1 ||
      bytes.compare(0, magic.size(), magic)) {
    return MakeError(PJRT_Error_Code_INVALID_ARGUMENT,
                     "not a serialized test-plugin executable");
  }
  args->loaded_executable =
      new PJRT_LoadedExecutable{args->client, bytes.back() == '1'};
  return nullptr;
}

PJRT_Error* LoadedExecutableExecute(PJRT_LoadedExecutable_Execute_Args* args) {
  const PJRT_ExecuteOptions* options = args->options;
  bool first_donatable = args->executable->donates_first;
#ifdef TEST_PLUGIN_MISBEHAVE
  first_donatable = false;
#endif
  if (options != nullptr) {
    for (size_t i = 0; i < options->num_non_donatable_input_indices; ++i) {
      if (options->non_donatable_input_indices[i] == 0) first_donatable = false;
    }
  }
  if (args->num_args == 0) {
    return MakeError(PJRT_Error_Code_INVALID_ARGUMENT, "sum of no inputs");
  }
  for (size_t d = 0; d < args->num_devices; ++d) {
    PJRT_Buffer* const* inputs = args->argument_lists[d];
    for (size_t a = 0; a < args->num_args; ++a) {
      if (inputs[a]->deleted) {
        return MakeError(PJRT_Error_Code_FAILED_PRECONDITION,
                         "argument " + std::to_string(a) + " is deleted");
      }
      if (inputs[a]->type != PJRT_Buffer_Type_F32 ||
          inputs[a]->bytes.size() != inputs[0]->bytes.size()) {
        return MakeError(PJRT_Error_Code_INVALID_ARGUMENT,
                         "sum of inputs of different shapes");
      }
    }
  }
  for (size_t d = 0; d < args->num_devices; ++d) {
    PJRT_Buffer* const* inputs = args->argument_lists[d];
    auto* out = new PJRT_Buffer();
    out->device = args->execute_device != nullptr ? args->execute_device
                                                  : inputs[0]->device;
    out->type = PJRT_Buffer_Type_F32;
    out->dims = inputs[0]->dims;
    out->bytes.assign(inputs[0]->bytes.size(), 0);
    float* sum = reinterpret_cast<float*>(out->bytes.data());
    for (size_t a = 0; a < args->num_args; ++a) {
      const float* in = reinterpret_cast<const float*>(inputs[a]->bytes.data());
      for (size_t i = 0; i < out->bytes.size() / 4; ++i) sum[i] += in[i];
    }
#ifdef TEST_PLUGIN_MISBEHAVE
    for (size_t i = 0; i < out->bytes.size() / 4; ++i) sum[i] += 1;
#endif
    if (first_donatable) {
      inputs[0]->deleted = true;
      inputs[0]->bytes.clear();
    }
    args->output_lists[d][0] = out;
    if (args->device_complete_events != nullptr) {
      args->device_complete_events[d] = new PJRT_Event();
    }
  }
  ++execute_count;
  return nullptr;
}

PJRT_Error* ClientBufferFromHostBuffer(
    PJRT_Client_BufferFromHostBuffer_Args* args) {
  if (args->type != PJRT_Buffer_Type_F32 &&
      args->type != PJRT_Buffer_Type_S32) {
    return MakeError(PJRT_Error_Code_UNIMPLEMENTED,
                     "the test plugin holds only f32 and s32 buffers");
  }
  PJRT_Device* device = args->device;
  if (device == nullptr && args->memory != nullptr) {
    device = static_cast<TestMemory*>(args->memory)->devices[0];
  }
  if (device == nullptr) {
    return MakeError(PJRT_Error_Code_INVALID_ARGUMENT, "no device or memory");
  }
  auto* buffer = new PJRT_Buffer();
  buffer->client = nullptr;
  buffer->device = device;
  buffer->type = args->type;
  buffer->dims.assign(args->dims, args->dims + args->num_dims);
  size_t bytes = 4;
  for (int64_t dim : buffer->dims) bytes *= static_cast<size_t>(dim);
  const char* data = static_cast<const char*>(args->data);
  buffer->bytes.assign(data, data + bytes);
  args->buffer = buffer;
  args->done_with_host_buffer = new PJRT_Event();
  return nullptr;
}

PJRT_Error* DescriptionId(PJRT_DeviceDescription_Id_Args* args) {
  args->id = args->device_description->device->id;
  return nullptr;
}

PJRT_Error* DescriptionProcessIndex(
    PJRT_DeviceDescription_ProcessIndex_Args* args) {
  args->process_index = 0;
  return nullptr;
}

PJRT_Error* DescriptionAttributes(
    PJRT_DeviceDescription_Attributes_Args* args) {
  args->attributes = nullptr;
  args->num_attributes = 0;
  return nullptr;
}

PJRT_Error* DescriptionKind(PJRT_DeviceDescription_Kind_Args* args) {
  args->device_kind = kDeviceKind;
  args->device_kind_size = std::strlen(kDeviceKind);
  return nullptr;
}

PJRT_Error* DescriptionDebugString(
    PJRT_DeviceDescription_DebugString_Args* args) {
  args->debug_string = kDeviceKind;
  args->debug_string_size = std::strlen(kDeviceKind);
  return nullptr;
}

PJRT_Error* DescriptionToString(PJRT_DeviceDescription_ToString_Args* args) {
  args->to_string = kDeviceKind;
  args->to_string_size = std::strlen(kDeviceKind);
  return nullptr;
}

PJRT_Error* DeviceGetDescription(PJRT_Device_GetDescription_Args* args) {
  args->device_description = &args->device->description;
  return nullptr;
}

PJRT_Error* DeviceIsAddressable(PJRT_Device_IsAddressable_Args* args) {
  args->is_addressable = true;
  return nullptr;
}

PJRT_Error* DeviceLocalHardwareId(PJRT_Device_LocalHardwareId_Args* args) {
  args->local_hardware_id = args->device->device.id;
  return nullptr;
}

PJRT_Error* DeviceAddressableMemories(
    PJRT_Device_AddressableMemories_Args* args) {
  static thread_local PJRT_Memory* memory;
  memory = args->device->device.memory;
  args->memories = &memory;
  args->num_memories = 1;
  return nullptr;
}

PJRT_Error* DeviceDefaultMemory(PJRT_Device_DefaultMemory_Args* args) {
  args->memory = args->device->device.memory;
  return nullptr;
}

PJRT_Error* MemoryId(PJRT_Memory_Id_Args* args) {
  args->id = static_cast<TestMemory*>(args->memory)->id;
  return nullptr;
}

PJRT_Error* MemoryKind(PJRT_Memory_Kind_Args* args) {
  args->kind = kMemoryKind;
  args->kind_size = std::strlen(kMemoryKind);
  return nullptr;
}

PJRT_Error* MemoryAddressableByDevices(
    PJRT_Memory_AddressableByDevices_Args* args) {
  auto* memory = static_cast<TestMemory*>(args->memory);
  args->devices = memory->devices.data();
  args->num_devices = memory->devices.size();
  return nullptr;
}

PJRT_Error* BufferDestroy(PJRT_Buffer_Destroy_Args* args) {
  delete args->buffer;
  return nullptr;
}

PJRT_Error* BufferElementType(PJRT_Buffer_ElementType_Args* args) {
  args->type = args->buffer->type;
  return nullptr;
}

PJRT_Error* BufferDimensions(PJRT_Buffer_Dimensions_Args* args) {
  args->dims = args->buffer->dims.data();
  args->num_dims = args->buffer->dims.size();
  return nullptr;
}

PJRT_Error* BufferDevice(PJRT_Buffer_Device_Args* args) {
  args->device = args->buffer->device;
  return nullptr;
}

PJRT_Error* BufferDelete(PJRT_Buffer_Delete_Args* args) {
  args->buffer->deleted = true;
  args->buffer->bytes.clear();
  return nullptr;
}

PJRT_Error* BufferIsDeleted(PJRT_Buffer_IsDeleted_Args* args) {
  args->is_deleted = args->buffer->deleted;
  return nullptr;
}

PJRT_Error* BufferToHostBuffer(PJRT_Buffer_ToHostBuffer_Args* args) {
  PJRT_Buffer* buffer = args->src;
  if (buffer->deleted) {
    return MakeError(PJRT_Error_Code_FAILED_PRECONDITION,
                     "buffer has been deleted");
  }
  if (args->dst == nullptr) {
    args->dst_size = buffer->bytes.size();
    return nullptr;
  }
  if (args->dst_size < buffer->bytes.size()) {
    return MakeError(PJRT_Error_Code_INVALID_ARGUMENT, "dst too small");
  }
  std::memcpy(args->dst, buffer->bytes.data(), buffer->bytes.size());
  args->event = new PJRT_Event();
  return nullptr;
}

PJRT_Error* BufferReadyEvent(PJRT_Buffer_ReadyEvent_Args* args) {
  args->event = new PJRT_Event();
  return nullptr;
}

// A slot newer than the reported minor version: the client must never call
// it. Each trap knows its slot's name.
#define TEST_TRAP(slot)                                                      \
  PJRT_Error* Trap_##slot(void*) {                                           \
    std::fprintf(stderr, "test plugin: client called %s, newer than 0.%d\n", \
                 #slot, TEST_PLUGIN_MINOR);                                  \
    std::abort();                                                            \
  }

#define KILN_PJRT_SLOT(slot, minor, state) TEST_TRAP(slot)
#include "pjrt_c_api_slots.def"

struct SlotMinor {
  size_t offset;
  int minor;
  void* trap;
};

#define KILN_PJRT_SLOT(slot, minor, state) \
  {offsetof(PJRT_Api, slot), minor, reinterpret_cast<void*>(&Trap_##slot)},
const SlotMinor kSlotMinors[] = {
#include "pjrt_c_api_slots.def"
};

[[maybe_unused]] PJRT_Api* BuildApi() {
  PJRT_Api api{};
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.major_version = TEST_PLUGIN_MAJOR;
  api.pjrt_api_version.minor_version = TEST_PLUGIN_MINOR;
  api.PJRT_Error_Destroy = ErrorDestroy;
  api.PJRT_Error_Message = ErrorMessage;
  api.PJRT_Error_GetCode = ErrorGetCode;
  api.PJRT_Plugin_Initialize = PluginInitialize;
  api.PJRT_Plugin_Attributes = PluginAttributes;
  api.PJRT_Event_Destroy = EventDestroy;
  api.PJRT_Event_IsReady = EventIsReady;
  api.PJRT_Event_Error = EventError;
  api.PJRT_Event_Await = EventAwait;
  api.PJRT_Event_OnReady = EventOnReady;
  api.PJRT_Client_Create = ClientCreate;
  api.PJRT_Client_Destroy = ClientDestroy;
  api.PJRT_Client_PlatformName = ClientPlatformName;
  api.PJRT_Client_ProcessIndex = ClientProcessIndex;
  api.PJRT_Client_PlatformVersion = ClientPlatformVersion;
  api.PJRT_Client_Devices = ClientDevices;
  api.PJRT_Client_AddressableDevices = ClientAddressableDevices;
  api.PJRT_Client_LookupDevice = ClientLookupDevice;
  api.PJRT_Client_AddressableMemories = ClientAddressableMemories;
  api.PJRT_Client_Compile = ClientCompile;
  api.PJRT_Client_BufferFromHostBuffer = ClientBufferFromHostBuffer;
  api.PJRT_DeviceDescription_Id = DescriptionId;
  api.PJRT_DeviceDescription_ProcessIndex = DescriptionProcessIndex;
  api.PJRT_DeviceDescription_Attributes = DescriptionAttributes;
  api.PJRT_DeviceDescription_Kind = DescriptionKind;
  api.PJRT_DeviceDescription_DebugString = DescriptionDebugString;
  api.PJRT_DeviceDescription_ToString = DescriptionToString;
  api.PJRT_Device_GetDescription = DeviceGetDescription;
  api.PJRT_Device_IsAddressable = DeviceIsAddressable;
  api.PJRT_Device_LocalHardwareId = DeviceLocalHardwareId;
  api.PJRT_Device_AddressableMemories = DeviceAddressableMemories;
  api.PJRT_Device_DefaultMemory = DeviceDefaultMemory;
  api.PJRT_Memory_Id = MemoryId;
  api.PJRT_Memory_Kind = MemoryKind;
  api.PJRT_Memory_AddressableByDevices = MemoryAddressableByDevices;
  api.PJRT_Buffer_Destroy = BufferDestroy;
  api.PJRT_Buffer_ElementType = BufferElementType;
  api.PJRT_Buffer_Dimensions = BufferDimensions;
  api.PJRT_Buffer_Device = BufferDevice;
  api.PJRT_Buffer_Delete = BufferDelete;
  api.PJRT_Buffer_IsDeleted = BufferIsDeleted;
  api.PJRT_Buffer_ToHostBuffer = BufferToHostBuffer;
  api.PJRT_Buffer_ReadyEvent = BufferReadyEvent;
  api.PJRT_LoadedExecutable_Destroy = LoadedExecutableDestroy;
  api.PJRT_LoadedExecutable_GetExecutable = LoadedExecutableGetExecutable;
  api.PJRT_LoadedExecutable_AddressableDevices =
      LoadedExecutableAddressableDevices;
  api.PJRT_LoadedExecutable_Execute = LoadedExecutableExecute;
  api.PJRT_Executable_Destroy = ExecutableDestroy;
  api.PJRT_Executable_Name = ExecutableName;
  api.PJRT_Executable_NumOutputs = ExecutableNumOutputs;
  api.PJRT_Executable_Serialize = ExecutableSerialize;
  api.PJRT_Executable_DeserializeAndLoad = ExecutableDeserializeAndLoad;
  // Every slot newer than our minor that still lies inside our table is a
  // trap, not a null: a client must gate on the version, not on null.
  for (const SlotMinor& slot : kSlotMinors) {
    if (slot.minor > TEST_PLUGIN_MINOR) {
      std::memcpy(reinterpret_cast<char*>(&api) + slot.offset, &slot.trap,
                  sizeof(void*));
    }
  }

  size_t table_size = offsetof(PJRT_Api, TEST_PLUGIN_TABLE_END) + sizeof(void*);
  api.struct_size = table_size;
  // Two pages: the table ends exactly where the second, inaccessible, page
  // begins.
  long page = sysconf(_SC_PAGESIZE);
  void* pages = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) std::abort();
  char* guard = static_cast<char*>(pages) + page;
  if (mprotect(guard, page, PROT_NONE) != 0) std::abort();
  // A table that starts mid-page is still aligned for its pointers.
  auto* table = reinterpret_cast<PJRT_Api*>(guard - table_size);
  std::memcpy(table, &api, table_size);
  return table;
}

}  // namespace

#ifndef TEST_PLUGIN_WITHOUT_GET_PJRT_API
KILN_TEST_EXPORT const PJRT_Api* GetPjrtApi() {
  static PJRT_Api* api = BuildApi();
  return api;
}
#else
// A library that looks like a plugin but exports another name.
KILN_TEST_EXPORT const PJRT_Api* GetPJRTApi() { return nullptr; }
#endif

// How many executions ran.
KILN_TEST_EXPORT int KilnTestPluginExecuteCount() {
  return execute_count.load();
}

// How many times PJRT_Plugin_Initialize ran (the client must call it once).
KILN_TEST_EXPORT int KilnTestPluginInitializeCount() {
  return initialize_count.load();
}
