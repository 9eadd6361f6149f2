#include "plugin_harness.h"

#include <dlfcn.h>

#include <cstring>

#include "support/test_support.h"

namespace kiln::testing {

const PJRT_Api* LoadPlugin() {
  static const PJRT_Api* api = []() -> const PJRT_Api* {
    std::string path = BuildDir() + "/lib/libpjrt_kiln.so";
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      ADD_FAILURE() << "dlopen(" << path << "): " << dlerror();
      return nullptr;
    }
    using GetApi = const PJRT_Api* (*)();
    auto get_api = reinterpret_cast<GetApi>(dlsym(library, "GetPjrtApi"));
    if (get_api == nullptr) {
      ADD_FAILURE() << path << " has no GetPjrtApi";
      return nullptr;
    }
    return get_api();
  }();
  return api;
}

ErrorInfo TakeError(const PJRT_Api* api, PJRT_Error* error) {
  ErrorInfo info;
  if (error == nullptr) return info;
  auto code = KILN_ARGS(PJRT_Error_GetCode_Args);
  code.error = error;
  PJRT_Error* code_error = api->PJRT_Error_GetCode(&code);
  EXPECT_EQ(code_error, nullptr) << "PJRT_Error_GetCode failed";
  info.code = code.code;
  auto message = KILN_ARGS(PJRT_Error_Message_Args);
  message.error = error;
  api->PJRT_Error_Message(&message);
  info.message.assign(message.message, message.message_size);
  auto payloads = KILN_ARGS(PJRT_Error_ForEachPayload_Args);
  payloads.error = error;
  payloads.user_arg = &info.payloads;
  payloads.visitor = [](const char* key, size_t key_size, const char* value,
                        size_t value_size, void* user_arg) {
    static_cast<std::vector<std::pair<std::string, std::string>>*>(user_arg)
        ->emplace_back(std::string(key, key_size),
                       std::string(value, value_size));
  };
  EXPECT_EQ(api->PJRT_Error_ForEachPayload(&payloads), nullptr);
  auto destroy = KILN_ARGS(PJRT_Error_Destroy_Args);
  destroy.error = error;
  api->PJRT_Error_Destroy(&destroy);
  return info;
}

std::string Describe(const ErrorInfo& info) {
  if (info.code == PJRT_Error_Code_OK) return "OK";
  return "code " + std::to_string(info.code) + ": " + info.message;
}

void PluginTest::SetUp() {
  api_ = LoadPlugin();
  ASSERT_NE(api_, nullptr);
  client_ = CreateClient(device_count_);
  ASSERT_NE(client_, nullptr);
}

void PluginTest::TearDown() {
  if (client_ != nullptr) DestroyClient(client_);
  client_ = nullptr;
}

PJRT_Client* PluginTest::CreateClient(int devices) {
  PJRT_NamedValue option = KILN_ARGS(PJRT_NamedValue);
  option.name = "cpu_device_count";
  option.name_size = std::strlen(option.name);
  option.type = PJRT_NamedValue_kInt64;
  option.int64_value = devices;
  option.value_size = 1;
  auto args = KILN_ARGS(PJRT_Client_Create_Args);
  args.create_options = &option;
  args.num_options = 1;
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_Create(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
  return args.client;
}

void PluginTest::DestroyClient(PJRT_Client* client) {
  auto args = KILN_ARGS(PJRT_Client_Destroy_Args);
  args.client = client;
  PJRT_EXPECT_OK(api_, api_->PJRT_Client_Destroy(&args));
}

std::vector<PJRT_Device*> PluginTest::Devices(PJRT_Client* client) {
  auto args = KILN_ARGS(PJRT_Client_Devices_Args);
  args.client = client == nullptr ? client_ : client;
  PJRT_EXPECT_OK(api_, api_->PJRT_Client_Devices(&args));
  return std::vector<PJRT_Device*>(args.devices,
                                   args.devices + args.num_devices);
}

std::vector<PJRT_Memory*> PluginTest::Memories(PJRT_Device* device) {
  auto args = KILN_ARGS(PJRT_Device_AddressableMemories_Args);
  args.device = device;
  PJRT_EXPECT_OK(api_, api_->PJRT_Device_AddressableMemories(&args));
  return std::vector<PJRT_Memory*>(args.memories,
                                   args.memories + args.num_memories);
}

PJRT_Memory* PluginTest::DefaultMemory(PJRT_Device* device) {
  auto args = KILN_ARGS(PJRT_Device_DefaultMemory_Args);
  args.device = device;
  PJRT_EXPECT_OK(api_, api_->PJRT_Device_DefaultMemory(&args));
  return args.memory;
}

std::string PluginTest::MemoryKind(PJRT_Memory* memory) {
  auto args = KILN_ARGS(PJRT_Memory_Kind_Args);
  args.memory = memory;
  PJRT_EXPECT_OK(api_, api_->PJRT_Memory_Kind(&args));
  return std::string(args.kind, args.kind_size);
}

PJRT_Buffer* PluginTest::Upload(const void* data, PJRT_Buffer_Type type,
                                const std::vector<int64_t>& dims,
                                PJRT_Device* device, PJRT_Memory* memory,
                                PJRT_HostBufferSemantics semantics,
                                const std::vector<int64_t>* byte_strides) {
  auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client_;
  args.data = data;
  args.type = type;
  args.dims = dims.data();
  args.num_dims = dims.size();
  if (byte_strides != nullptr) {
    args.byte_strides = byte_strides->data();
    args.num_byte_strides = byte_strides->size();
  }
  args.host_buffer_semantics = semantics;
  args.device = device;
  args.memory = memory;
  ErrorInfo info =
      TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
  if (info.code != PJRT_Error_Code_OK) return nullptr;
  ErrorInfo done = AwaitAndDestroy(args.done_with_host_buffer);
  EXPECT_EQ(done.code, PJRT_Error_Code_OK) << Describe(done);
  return args.buffer;
}

PJRT_Buffer* PluginTest::UploadF32(const std::vector<float>& values,
                                   const std::vector<int64_t>& dims,
                                   PJRT_Device* device) {
  if (device == nullptr) device = Devices()[0];
  return Upload(values.data(), PJRT_Buffer_Type_F32, dims, device);
}

std::vector<uint8_t> PluginTest::Download(PJRT_Buffer* buffer) {
  auto query = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  query.src = buffer;
  PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_ToHostBuffer(&query));
  std::vector<uint8_t> bytes(query.dst_size);
  auto args = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = buffer;
  // A non-null destination even for zero bytes, as frameworks pass.
  uint8_t dummy = 0;
  args.dst = bytes.empty() ? &dummy : bytes.data();
  args.dst_size = bytes.size();
  ErrorInfo info = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
  if (info.code != PJRT_Error_Code_OK) return {};
  EXPECT_NE(args.event, nullptr);
  ErrorInfo done = AwaitAndDestroy(args.event);
  EXPECT_EQ(done.code, PJRT_Error_Code_OK) << Describe(done);
  return bytes;
}

std::vector<float> PluginTest::DownloadF32(PJRT_Buffer* buffer) {
  std::vector<uint8_t> bytes = Download(buffer);
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

ErrorInfo PluginTest::AwaitAndDestroy(PJRT_Event* event) {
  if (event == nullptr) {
    ADD_FAILURE() << "no event";
    return ErrorInfo{PJRT_Error_Code_INTERNAL, "no event", {}};
  }
  auto args = KILN_ARGS(PJRT_Event_Await_Args);
  args.event = event;
  ErrorInfo info = TakeError(api_, api_->PJRT_Event_Await(&args));
  DestroyEvent(event);
  return info;
}

void PluginTest::DestroyBuffer(PJRT_Buffer* buffer) {
  auto args = KILN_ARGS(PJRT_Buffer_Destroy_Args);
  args.buffer = buffer;
  PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_Destroy(&args));
}

void PluginTest::DestroyEvent(PJRT_Event* event) {
  auto args = KILN_ARGS(PJRT_Event_Destroy_Args);
  args.event = event;
  PJRT_EXPECT_OK(api_, api_->PJRT_Event_Destroy(&args));
}

}  // namespace kiln::testing
