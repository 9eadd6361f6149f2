// Two clients of one job through the C API, in one process: each is
// created with num_nodes = 2, its node_id and key-value callbacks over one
// in-memory store (what a framework's distributed client provides), on its
// own thread. Checks what the device and client slots say about the other
// process's devices, that buffers cannot go there, and the kv error path.
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

struct MemoryStore {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, std::string> values;
};

PJRT_Error* StoreGet(PJRT_KeyValueGetCallback_Args* args) {
  auto* store = static_cast<MemoryStore*>(args->user_arg);
  std::unique_lock<std::mutex> lock(store->mutex);
  const std::string key(args->key, args->key_size);
  if (!store->changed.wait_for(lock,
                               std::chrono::milliseconds(args->timeout_in_ms),
                               [&] { return store->values.count(key) > 0; })) {
    const std::string message = "no key " + key;
    return (*args->callback_error)(PJRT_Error_Code_DEADLINE_EXCEEDED,
                                   message.data(), message.size());
  }
  const std::string& value = store->values[key];
  args->value = new char[value.size()];
  std::memcpy(args->value, value.data(), value.size());
  args->value_size = value.size();
  args->value_deleter_callback = [](char* value) { delete[] value; };
  return nullptr;
}

PJRT_Error* StorePut(PJRT_KeyValuePutCallback_Args* args) {
  auto* store = static_cast<MemoryStore*>(args->user_arg);
  std::lock_guard<std::mutex> lock(store->mutex);
  store->values[std::string(args->key, args->key_size)] =
      std::string(args->value, args->value_size);
  store->changed.notify_all();
  return nullptr;
}

PJRT_NamedValue IntOption(const char* name, int64_t value) {
  PJRT_NamedValue option = KILN_ARGS(PJRT_NamedValue);
  option.name = name;
  option.name_size = std::strlen(name);
  option.type = PJRT_NamedValue_kInt64;
  option.int64_value = value;
  option.value_size = 1;
  return option;
}

class MultiprocessTest : public PluginTest {
 protected:
  // Creates process `node` of 2 with `devices` devices over `store`.
  ErrorInfo Create(MemoryStore& store, int node, int devices,
                   PJRT_Client** client, double timeout_seconds = 20) {
    std::vector<PJRT_NamedValue> options = {
        IntOption("num_nodes", 2), IntOption("node_id", node),
        IntOption("cpu_device_count", devices)};
    PJRT_NamedValue timeout = KILN_ARGS(PJRT_NamedValue);
    timeout.name = "collective_timeout_seconds";
    timeout.name_size = std::strlen(timeout.name);
    timeout.type = PJRT_NamedValue_kFloat;
    timeout.float_value = static_cast<float>(timeout_seconds);
    timeout.value_size = 1;
    options.push_back(timeout);
    auto args = KILN_ARGS(PJRT_Client_Create_Args);
    args.create_options = options.data();
    args.num_options = options.size();
    args.kv_get_callback = &StoreGet;
    args.kv_get_user_arg = &store;
    args.kv_put_callback = &StorePut;
    args.kv_put_user_arg = &store;
    ErrorInfo error = TakeError(api_, api_->PJRT_Client_Create(&args));
    *client = args.client;
    return error;
  }

  bool IsAddressable(PJRT_Device* device) {
    auto args = KILN_ARGS(PJRT_Device_IsAddressable_Args);
    args.device = device;
    EXPECT_EQ(TakeError(api_, api_->PJRT_Device_IsAddressable(&args)).code,
              PJRT_Error_Code_OK);
    return args.is_addressable;
  }
  int ProcessIndexOf(PJRT_Device* device) {
    auto describe = KILN_ARGS(PJRT_Device_GetDescription_Args);
    describe.device = device;
    EXPECT_EQ(TakeError(api_, api_->PJRT_Device_GetDescription(&describe)).code,
              PJRT_Error_Code_OK);
    auto args = KILN_ARGS(PJRT_DeviceDescription_ProcessIndex_Args);
    args.device_description = describe.device_description;
    EXPECT_EQ(
        TakeError(api_, api_->PJRT_DeviceDescription_ProcessIndex(&args)).code,
        PJRT_Error_Code_OK);
    return args.process_index;
  }
};

TEST_F(MultiprocessTest, ProcessesSeeEachOthersDevices) {
  MemoryStore store;
  PJRT_Client* clients[2] = {nullptr, nullptr};
  ErrorInfo errors[2];
  std::thread other([&] { errors[1] = Create(store, 1, 2, &clients[1]); });
  errors[0] = Create(store, 0, 2, &clients[0]);
  other.join();
  for (int node = 0; node < 2; ++node) {
    ASSERT_EQ(errors[node].code, PJRT_Error_Code_OK) << errors[node].message;
    PJRT_Client* client = clients[node];
    auto index = KILN_ARGS(PJRT_Client_ProcessIndex_Args);
    index.client = client;
    ASSERT_EQ(TakeError(api_, api_->PJRT_Client_ProcessIndex(&index)).code,
              PJRT_Error_Code_OK);
    EXPECT_EQ(index.process_index, node);
    std::vector<PJRT_Device*> all = Devices(client);
    ASSERT_EQ(all.size(), 4u);
    auto local = KILN_ARGS(PJRT_Client_AddressableDevices_Args);
    local.client = client;
    ASSERT_EQ(
        TakeError(api_, api_->PJRT_Client_AddressableDevices(&local)).code,
        PJRT_Error_Code_OK);
    ASSERT_EQ(local.num_addressable_devices, 2u);
    EXPECT_EQ(local.addressable_devices[0], all[node * 2]);
    EXPECT_EQ(local.addressable_devices[1], all[node * 2 + 1]);
    for (int id = 0; id < 4; ++id) {
      EXPECT_EQ(IsAddressable(all[id]), id / 2 == node) << id;
      EXPECT_EQ(ProcessIndexOf(all[id]), id / 2) << id;
    }
    auto memories = KILN_ARGS(PJRT_Client_AddressableMemories_Args);
    memories.client = client;
    ASSERT_EQ(
        TakeError(api_, api_->PJRT_Client_AddressableMemories(&memories)).code,
        PJRT_Error_Code_OK);
    EXPECT_EQ(memories.num_addressable_memories, 6u);
    // A buffer on the other process's device is refused.
    const float data[2] = {1, 2};
    const int64_t dims[1] = {2};
    auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    upload.client = client;
    upload.data = data;
    upload.type = PJRT_Buffer_Type_F32;
    upload.dims = dims;
    upload.num_dims = 1;
    upload.device = all[(1 - node) * 2];
    ErrorInfo refused =
        TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload));
    EXPECT_EQ(refused.code, PJRT_Error_Code_INVALID_ARGUMENT);
    EXPECT_NE(refused.message.find("belongs to process"), std::string::npos)
        << refused.message;
    // The framework's view of the processes is accepted.
    PJRT_ProcessInfo info{};
    info.struct_size = sizeof(info);
    info.task_id = 1 - node;
    info.state = PJRT_ProcessState_kConnected;
    auto update = KILN_ARGS(PJRT_Client_UpdateGlobalProcessInfo_Args);
    update.client = client;
    update.process_infos = &info;
    update.num_process_infos = 1;
    EXPECT_EQ(
        TakeError(api_, api_->PJRT_Client_UpdateGlobalProcessInfo(&update))
            .code,
        PJRT_Error_Code_OK);
  }
  for (PJRT_Client* client : clients) DestroyClient(client);
}

TEST_F(MultiprocessTest, AMissingPeerFailsTheCreateInTime) {
  MemoryStore store;
  PJRT_Client* client = nullptr;
  ErrorInfo error = Create(store, 0, 1, &client, /*timeout_seconds=*/0.2);
  EXPECT_EQ(error.code, PJRT_Error_Code_DEADLINE_EXCEEDED) << error.message;
  EXPECT_NE(error.message.find("process 1"), std::string::npos)
      << error.message;
  EXPECT_EQ(client, nullptr);
}

}  // namespace
}  // namespace kiln::testing
