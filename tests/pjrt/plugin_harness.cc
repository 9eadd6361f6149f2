#include "plugin_harness.h"

#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "proto/xla_compile_options.pb.h"
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

PJRT_Buffer* PluginTest::ErrorBufferF32(PJRT_Error_Code code,
                                        const std::string& message,
                                        const std::vector<int64_t>& dims) {
  auto args = KILN_ARGS(PJRT_Client_CreateErrorBuffer_Args);
  args.client = client_;
  args.error_code = code;
  args.error_message = message.data();
  args.error_message_size = message.size();
  args.shape_dims = dims.data();
  args.shape_num_dims = dims.size();
  args.shape_element_type = PJRT_Buffer_Type_F32;
  args.memory = DefaultMemory(Devices()[0]);
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_CreateErrorBuffer(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
  return args.buffer;
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

std::string JaxCompileOptions(int replicas, int partitions, bool portable,
                              const std::vector<int64_t>& device_ids) {
  xla::CompileOptionsProto proto;
  proto.set_profile_version(-1);
  proto.set_compile_portable_executable(portable);
  xla::ExecutableBuildOptionsProto* build =
      proto.mutable_executable_build_options();
  build->set_device_ordinal(-1);
  build->set_num_replicas(replicas);
  build->set_num_partitions(partitions);
  build->set_use_spmd_partitioning(true);
  if (!portable) {
    xla::DeviceAssignmentProto* assignment = build->mutable_device_assignment();
    assignment->set_replica_count(replicas);
    assignment->set_computation_count(partitions);
    for (int p = 0; p < partitions; ++p) {
      auto* row = assignment->add_computation_devices();
      for (int r = 0; r < replicas; ++r) {
        int64_t index = int64_t{p} * replicas + r;
        row->add_replica_device_ids(device_ids.empty() ? index
                                                       : device_ids[index]);
      }
    }
  }
  std::string bytes;
  EXPECT_TRUE(proto.SerializeToString(&bytes));
  return bytes;
}

std::string ReadFileOrFail(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

ErrorInfo PluginTest::TryCompile(std::string_view code,
                                 const std::string& options,
                                 PJRT_LoadedExecutable** executable,
                                 std::string_view format, PJRT_Client* client) {
  auto program = KILN_ARGS(PJRT_Program);
  // The C API takes a mutable pointer but only reads the program.
  program.code = const_cast<char*>(code.data());
  program.code_size = code.size();
  program.format = format.data();
  program.format_size = format.size();
  auto args = KILN_ARGS(PJRT_Client_Compile_Args);
  args.client = client == nullptr ? client_ : client;
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  ErrorInfo info = TakeError(api_, api_->PJRT_Client_Compile(&args));
  *executable = info.code == PJRT_Error_Code_OK ? args.executable : nullptr;
  if (info.code != PJRT_Error_Code_OK) {
    EXPECT_EQ(args.executable, nullptr) << "an executable despite an error";
  }
  return info;
}

PJRT_LoadedExecutable* PluginTest::Compile(std::string_view code,
                                           const std::string& options,
                                           PJRT_Client* client) {
  PJRT_LoadedExecutable* executable = nullptr;
  ErrorInfo info = TryCompile(code, options, &executable, "mlir", client);
  EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
  if (info.code == PJRT_Error_Code_OK) {
    EXPECT_NE(executable, nullptr);
  }
  return executable;
}

PJRT_Executable* PluginTest::GetExecutable(PJRT_LoadedExecutable* loaded) {
  auto args = KILN_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  args.loaded_executable = loaded;
  PJRT_EXPECT_OK(api_, api_->PJRT_LoadedExecutable_GetExecutable(&args));
  return args.executable;
}

void PluginTest::DestroyExecutable(PJRT_Executable* executable) {
  auto args = KILN_ARGS(PJRT_Executable_Destroy_Args);
  args.executable = executable;
  PJRT_EXPECT_OK(api_, api_->PJRT_Executable_Destroy(&args));
}

void PluginTest::DestroyLoadedExecutable(PJRT_LoadedExecutable* loaded) {
  auto args = KILN_ARGS(PJRT_LoadedExecutable_Destroy_Args);
  args.executable = loaded;
  PJRT_EXPECT_OK(api_, api_->PJRT_LoadedExecutable_Destroy(&args));
}

size_t PluginTest::NumOutputs(PJRT_LoadedExecutable* loaded) {
  PJRT_Executable* executable = GetExecutable(loaded);
  if (executable == nullptr) return 0;
  auto args = KILN_ARGS(PJRT_Executable_NumOutputs_Args);
  args.executable = executable;
  PJRT_EXPECT_OK(api_, api_->PJRT_Executable_NumOutputs(&args));
  DestroyExecutable(executable);
  return args.num_outputs;
}

ExecuteResult PluginTest::Execute(
    PJRT_LoadedExecutable* loaded,
    const std::vector<std::vector<PJRT_Buffer*>>& arguments,
    PJRT_Device* execute_device, const std::vector<int64_t>& non_donatable,
    bool events) {
  ExecuteResult result;
  size_t num_outputs = NumOutputs(loaded);
  size_t num_devices = arguments.size();
  std::vector<std::vector<PJRT_Buffer*>> outputs(
      num_devices, std::vector<PJRT_Buffer*>(num_outputs, nullptr));
  std::vector<PJRT_Buffer* const*> argument_lists;
  std::vector<PJRT_Buffer**> output_lists;
  for (size_t d = 0; d < num_devices; ++d) {
    argument_lists.push_back(arguments[d].data());
    output_lists.push_back(outputs[d].data());
  }
  std::vector<PJRT_Event*> complete(num_devices, nullptr);
  auto options = KILN_ARGS(PJRT_ExecuteOptions);
  options.non_donatable_input_indices = non_donatable.data();
  options.num_non_donatable_input_indices = non_donatable.size();
  auto args = KILN_ARGS(PJRT_LoadedExecutable_Execute_Args);
  args.executable = loaded;
  args.options = &options;
  args.argument_lists = argument_lists.data();
  args.num_devices = num_devices;
  args.num_args = num_devices == 0 ? 0 : arguments[0].size();
  args.output_lists = output_lists.data();
  args.device_complete_events = events ? complete.data() : nullptr;
  args.execute_device = execute_device;
  result.error = TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
  if (result.error.code != PJRT_Error_Code_OK) return result;
  for (const auto& list : outputs) {
    for (PJRT_Buffer* buffer : list) EXPECT_NE(buffer, nullptr);
  }
  result.outputs = std::move(outputs);
  if (events) {
    for (PJRT_Event* event : complete) EXPECT_NE(event, nullptr);
    result.events = std::move(complete);
  }
  return result;
}

std::vector<PJRT_Buffer*> PluginTest::ExecuteAndAwait(
    PJRT_LoadedExecutable* loaded, const std::vector<PJRT_Buffer*>& arguments,
    PJRT_Device* execute_device) {
  ExecuteResult result = Execute(loaded, {arguments}, execute_device);
  EXPECT_EQ(result.error.code, PJRT_Error_Code_OK) << Describe(result.error);
  if (result.error.code != PJRT_Error_Code_OK) return {};
  for (PJRT_Event* event : result.events) {
    ErrorInfo done = AwaitAndDestroy(event);
    EXPECT_EQ(done.code, PJRT_Error_Code_OK) << Describe(done);
  }
  return result.outputs.empty() ? std::vector<PJRT_Buffer*>{}
                                : result.outputs[0];
}

ErrorInfo PluginTest::TryDownload(PJRT_Buffer* buffer,
                                  std::vector<uint8_t>* bytes) {
  auto query = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  query.src = buffer;
  ErrorInfo info = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&query));
  if (info.code != PJRT_Error_Code_OK) return info;
  bytes->assign(query.dst_size, 0);
  auto args = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = buffer;
  uint8_t dummy = 0;
  args.dst = bytes->empty() ? &dummy : bytes->data();
  args.dst_size = bytes->size();
  info = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
  if (info.code != PJRT_Error_Code_OK) return info;
  if (args.event == nullptr) {
    return ErrorInfo{
        PJRT_Error_Code_INTERNAL, "ToHostBuffer gave no event", {}};
  }
  return AwaitAndDestroy(args.event);
}

bool PluginTest::IsDeleted(PJRT_Buffer* buffer) {
  auto args = KILN_ARGS(PJRT_Buffer_IsDeleted_Args);
  args.buffer = buffer;
  PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_IsDeleted(&args));
  return args.is_deleted;
}

void PluginTest::DestroyBuffers(const std::vector<PJRT_Buffer*>& buffers) {
  for (PJRT_Buffer* buffer : buffers) {
    if (buffer != nullptr) DestroyBuffer(buffer);
  }
}

}  // namespace kiln::testing
