// jaxlib's C-API client sequence for `jax.jit(f)(x)`, replayed call by call
// against libpjrt_kiln.so (shared/reference/pjrt-c-api-notes.md, sections
// 4.1 to 4.5): load and initialize, create the client and read everything
// its constructor reads, compile (a portable artifact of the corpus and a
// small text program) with the compile options jax serializes, query what
// jaxlib queries after compiling, upload with a memory, execute with
// completion events, read back with a host layout and tear everything down.
// Calls jaxlib wraps in a fatal check are asserted to succeed.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "plugin_harness.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

// f(x, y) = (x . y, x * x + 1, convert<i32>(x . y)) for x: 2x3, y: 3x2.
constexpr char kJitProgram[] = R"mlir(
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x2xf32>) -> (tensor<2x2xf32> {jax.result_info = "[0]"}, tensor<2x3xf32> {jax.result_info = "[1]"}, tensor<2x2xi32> {jax.result_info = "[2]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    %1 = stablehlo.multiply %arg0, %arg0 : tensor<2x3xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<2x3xf32>
    %2 = stablehlo.add %1, %cst : tensor<2x3xf32>
    %3 = stablehlo.convert %0 : (tensor<2x2xf32>) -> tensor<2x2xi32>
    return %0, %2, %3 : tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x2xi32>
  }
}
)mlir";

// x = [[1, 2, 3], [4, 5, 6]], y = [[1, 0], [0, 1], [1, 1]].
const std::vector<float> kX = {1, 2, 3, 4, 5, 6};
const std::vector<float> kY = {1, 0, 0, 1, 1, 1};
// By hand: row 0 of x . y = (1*1 + 2*0 + 3*1, 1*0 + 2*1 + 3*1) = (4, 5);
// row 1 = (4 + 6, 5 + 6) = (10, 11). x * x + 1 = 2, 5, 10, 17, 26, 37.
const std::vector<float> kDot = {4, 5, 10, 11};
const std::vector<float> kSquarePlusOne = {2, 5, 10, 17, 26, 37};
const std::vector<int32_t> kDotAsInt = {4, 5, 10, 11};

std::string Str(const char* data, size_t size) {
  return data == nullptr ? std::string() : std::string(data, size);
}

// The fixture loads the plugin but creates no client: the replay does.
class JaxReplayTest : public PluginTest {
 protected:
  void SetUp() override {
    api_ = LoadPlugin();
    ASSERT_NE(api_, nullptr);
  }

  // §4.1-4.2: version check, Initialize, Attributes, Client_Create and what
  // the client's constructor and IFRT read. Leaves client_ set.
  void CreateClientAsJax(int devices) {
    // Version check: the framework takes the plugin only at 0.x with the
    // minor it knows (or newer).
    ASSERT_EQ(api_->pjrt_api_version.major_version, PJRT_API_MAJOR);
    ASSERT_EQ(api_->pjrt_api_version.minor_version, PJRT_API_MINOR);
    ASSERT_GE(api_->struct_size, sizeof(PJRT_Api));

    auto init = KILN_ARGS(PJRT_Plugin_Initialize_Args);
    PJRT_ASSERT_OK(api_, api_->PJRT_Plugin_Initialize(&init));

    auto attributes = KILN_ARGS(PJRT_Plugin_Attributes_Args);
    PJRT_ASSERT_OK(api_, api_->PJRT_Plugin_Attributes(&attributes));
    bool found_version = false;
    for (size_t i = 0; i < attributes.num_attributes; ++i) {
      const PJRT_NamedValue& value = attributes.attributes[i];
      if (Str(value.name, value.name_size) != "stablehlo_current_version") {
        continue;
      }
      found_version = true;
      // jaxlib reads it as std::get<std::vector<int64_t>>: any other type
      // crashes the framework.
      ASSERT_EQ(value.type, PJRT_NamedValue_kInt64List);
      ASSERT_EQ(value.value_size, 3u);
      EXPECT_GE(value.int64_array_value[0], 1);
      EXPECT_GE(value.int64_array_value[1], 0);
      EXPECT_GE(value.int64_array_value[2], 0);
    }
    EXPECT_TRUE(found_version);

    // Create options as jax builds them from register_plugin(options=...)
    // and the config string (which gives strings).
    PJRT_NamedValue options[2] = {KILN_ARGS(PJRT_NamedValue),
                                  KILN_ARGS(PJRT_NamedValue)};
    options[0].name = "cpu_device_count";
    options[0].name_size = std::strlen(options[0].name);
    options[0].type = PJRT_NamedValue_kInt64;
    options[0].int64_value = devices;
    options[0].value_size = 1;
    std::string unknown_value = "ignored";
    options[1].name = "jax_replay_unknown_option";
    options[1].name_size = std::strlen(options[1].name);
    options[1].type = PJRT_NamedValue_kString;
    options[1].string_value = unknown_value.c_str();
    options[1].value_size = unknown_value.size();
    auto create = KILN_ARGS(PJRT_Client_Create_Args);
    create.create_options = options;
    create.num_options = 2;
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_Create(&create));
    ASSERT_NE(create.client, nullptr);
    client_ = create.client;

    auto topology = KILN_ARGS(PJRT_Client_TopologyDescription_Args);
    topology.client = client_;
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_TopologyDescription(&topology));
    ASSERT_NE(topology.topology, nullptr);
    auto topology_version =
        KILN_ARGS(PJRT_TopologyDescription_PlatformVersion_Args);
    topology_version.topology = topology.topology;
    PJRT_ASSERT_OK(api_, api_->PJRT_TopologyDescription_PlatformVersion(
                             &topology_version));
    auto topology_name = KILN_ARGS(PJRT_TopologyDescription_PlatformName_Args);
    topology_name.topology = topology.topology;
    PJRT_ASSERT_OK(api_,
                   api_->PJRT_TopologyDescription_PlatformName(&topology_name));
    auto topology_attributes =
        KILN_ARGS(PJRT_TopologyDescription_Attributes_Args);
    topology_attributes.topology = topology.topology;
    PJRT_ASSERT_OK(
        api_, api_->PJRT_TopologyDescription_Attributes(&topology_attributes));

    auto version = KILN_ARGS(PJRT_Client_PlatformVersion_Args);
    version.client = client_;
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_PlatformVersion(&version));
    auto name = KILN_ARGS(PJRT_Client_PlatformName_Args);
    name.client = client_;
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_PlatformName(&name));
    // The topology describes the same platform as the client.
    EXPECT_EQ(
        Str(name.platform_name, name.platform_name_size),
        Str(topology_name.platform_name, topology_name.platform_name_size));
    EXPECT_EQ(Str(version.platform_version, version.platform_version_size),
              Str(topology_version.platform_version,
                  topology_version.platform_version_size));

    auto list = KILN_ARGS(PJRT_Client_Devices_Args);
    list.client = client_;
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_Devices(&list));
    ASSERT_EQ(list.num_devices, static_cast<size_t>(devices));
    devices_.assign(list.devices, list.devices + list.num_devices);
    for (PJRT_Device* device : devices_) {
      auto description = KILN_ARGS(PJRT_Device_GetDescription_Args);
      description.device = device;
      PJRT_ASSERT_OK(api_, api_->PJRT_Device_GetDescription(&description));
      auto description_attributes =
          KILN_ARGS(PJRT_DeviceDescription_Attributes_Args);
      description_attributes.device_description =
          description.device_description;
      PJRT_ASSERT_OK(api_, api_->PJRT_DeviceDescription_Attributes(
                               &description_attributes));
      // minor >= 92 and a non-null slot: GetAttributes, whose deleter
      // jaxlib CHECKs and always calls.
      ASSERT_NE(api_->PJRT_Device_GetAttributes, nullptr);
      auto device_attributes = KILN_ARGS(PJRT_Device_GetAttributes_Args);
      device_attributes.device = device;
      PJRT_ASSERT_OK(api_, api_->PJRT_Device_GetAttributes(&device_attributes));
      ASSERT_NE(device_attributes.attributes_deleter, nullptr);
      device_attributes.attributes_deleter(device_attributes.device_attributes);
    }

    auto addressable = KILN_ARGS(PJRT_Client_AddressableDevices_Args);
    addressable.client = client_;
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_AddressableDevices(&addressable));
    ASSERT_EQ(addressable.num_addressable_devices, devices_.size());

    auto memories = KILN_ARGS(PJRT_Client_AddressableMemories_Args);
    memories.client = client_;
    PJRT_ASSERT_OK(api_, api_->PJRT_Client_AddressableMemories(&memories));
    ASSERT_GE(memories.num_addressable_memories, devices_.size());
    for (size_t i = 0; i < memories.num_addressable_memories; ++i) {
      auto by_devices = KILN_ARGS(PJRT_Memory_AddressableByDevices_Args);
      by_devices.memory = memories.addressable_memories[i];
      PJRT_ASSERT_OK(api_, api_->PJRT_Memory_AddressableByDevices(&by_devices));
      EXPECT_GE(by_devices.num_devices, 1u);
    }

    // IFRT's wrapping: per device its ids, kind and strings, lookup by id,
    // the device's memories and its default memory.
    for (size_t i = 0; i < devices_.size(); ++i) {
      PJRT_Device* device = devices_[i];
      auto is_addressable = KILN_ARGS(PJRT_Device_IsAddressable_Args);
      is_addressable.device = device;
      PJRT_ASSERT_OK(api_, api_->PJRT_Device_IsAddressable(&is_addressable));
      EXPECT_TRUE(is_addressable.is_addressable);
      auto description = KILN_ARGS(PJRT_Device_GetDescription_Args);
      description.device = device;
      PJRT_ASSERT_OK(api_, api_->PJRT_Device_GetDescription(&description));
      auto id = KILN_ARGS(PJRT_DeviceDescription_Id_Args);
      id.device_description = description.device_description;
      PJRT_ASSERT_OK(api_, api_->PJRT_DeviceDescription_Id(&id));
      auto hardware_id = KILN_ARGS(PJRT_Device_LocalHardwareId_Args);
      hardware_id.device = device;
      PJRT_ASSERT_OK(api_, api_->PJRT_Device_LocalHardwareId(&hardware_id));
      auto kind = KILN_ARGS(PJRT_DeviceDescription_Kind_Args);
      kind.device_description = description.device_description;
      PJRT_ASSERT_OK(api_, api_->PJRT_DeviceDescription_Kind(&kind));
      auto lookup = KILN_ARGS(PJRT_Client_LookupDevice_Args);
      lookup.client = client_;
      lookup.id = id.id;
      PJRT_ASSERT_OK(api_, api_->PJRT_Client_LookupDevice(&lookup));
      EXPECT_EQ(lookup.device, device);
      EXPECT_FALSE(Memories(device).empty());
      PJRT_Memory* memory = DefaultMemory(device);
      ASSERT_NE(memory, nullptr);
      default_memories_.push_back(memory);
    }
  }

  // §4.3 step 1: MemoryStats of the first addressable device (jaxlib
  // copies bytes_limit into the build options when set).
  void ReadMemoryStats() {
    auto stats = KILN_ARGS(PJRT_Device_MemoryStats_Args);
    stats.device = devices_[0];
    PJRT_ASSERT_OK(api_, api_->PJRT_Device_MemoryStats(&stats));
    EXPECT_TRUE(stats.bytes_limit_is_set);
    EXPECT_GT(stats.bytes_limit, 0);
  }

  // §4.3 steps 5-7: what the loaded executable's constructor, IFRT and
  // jaxlib read after every compile. Returns the number of outputs.
  size_t QueryAsJax(PJRT_LoadedExecutable* loaded,
                    const std::vector<PJRT_Device*>& expected_devices,
                    const std::string& expected_assignment) {
    PJRT_Executable* executable = GetExecutable(loaded);
    EXPECT_NE(executable, nullptr);
    if (executable == nullptr) return 0;

    auto addressable = KILN_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args);
    addressable.executable = loaded;
    PJRT_EXPECT_OK(
        api_, api_->PJRT_LoadedExecutable_AddressableDevices(&addressable));
    EXPECT_EQ(
        std::vector<PJRT_Device*>(addressable.addressable_devices,
                                  addressable.addressable_devices +
                                      addressable.num_addressable_devices),
        expected_devices);

    if (api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds != nullptr) {
      auto logical =
          KILN_ARGS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args);
      logical.executable = loaded;
      PJRT_EXPECT_OK(
          api_,
          api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&logical));
      // An empty list is allowed; otherwise one entry per device.
      if (logical.num_addressable_device_logical_ids != 0) {
        EXPECT_EQ(logical.num_addressable_device_logical_ids,
                  expected_devices.size());
      }
    }

    auto assignment = KILN_ARGS(PJRT_LoadedExecutable_GetDeviceAssignment_Args);
    assignment.executable = loaded;
    PJRT_EXPECT_OK(
        api_, api_->PJRT_LoadedExecutable_GetDeviceAssignment(&assignment));
    EXPECT_EQ(
        Str(assignment.serialized_bytes, assignment.serialized_bytes_size),
        expected_assignment);
    // The deleter is called unconditionally, even for zero bytes.
    EXPECT_NE(assignment.serialized_device_assignment_deleter, nullptr);
    if (assignment.serialized_device_assignment_deleter != nullptr) {
      assignment.serialized_device_assignment_deleter(
          assignment.serialized_device_assignment);
    }

    auto replicas = KILN_ARGS(PJRT_Executable_NumReplicas_Args);
    replicas.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_NumReplicas(&replicas));

    auto kinds = KILN_ARGS(PJRT_Executable_OutputMemoryKinds_Args);
    kinds.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_OutputMemoryKinds(&kinds));
    for (size_t i = 0; i < kinds.num_outputs; ++i) {
      EXPECT_EQ(Str(kinds.memory_kinds[i], kinds.memory_kind_sizes[i]),
                "device");
    }

    auto fingerprint = KILN_ARGS(PJRT_Executable_Fingerprint_Args);
    fingerprint.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_Fingerprint(&fingerprint));
    EXPECT_GT(fingerprint.executable_fingerprint_size, 0u);

    auto outputs = KILN_ARGS(PJRT_Executable_NumOutputs_Args);
    outputs.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_NumOutputs(&outputs));
    EXPECT_EQ(kinds.num_outputs, outputs.num_outputs);

    auto name = KILN_ARGS(PJRT_Executable_Name_Args);
    name.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_Name(&name));
    last_name_ = Str(name.executable_name, name.executable_name_size);

    auto partitions = KILN_ARGS(PJRT_Executable_NumPartitions_Args);
    partitions.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_NumPartitions(&partitions));
    last_replicas_ = replicas.num_replicas;
    last_partitions_ = partitions.num_partitions;

    auto types = KILN_ARGS(PJRT_Executable_OutputElementTypes_Args);
    types.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_OutputElementTypes(&types));
    last_types_.assign(types.output_types,
                       types.output_types + types.num_output_types);

    auto dims = KILN_ARGS(PJRT_Executable_OutputDimensions_Args);
    dims.executable = executable;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_OutputDimensions(&dims));
    last_dims_.clear();
    size_t offset = 0;
    for (size_t i = 0; i < dims.num_outputs; ++i) {
      last_dims_.emplace_back(dims.dims + offset,
                              dims.dims + offset + dims.dim_sizes[i]);
      offset += dims.dim_sizes[i];
    }
    DestroyExecutable(executable);
    return outputs.num_outputs;
  }

  // §4.5: device_put through a memory (device null), with the done event
  // handled by OnReady as the framework does.
  PJRT_Buffer* PutAsJax(const void* data, PJRT_Buffer_Type type,
                        const std::vector<int64_t>& dims, PJRT_Memory* memory) {
    auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = client_;
    args.data = data;
    args.type = type;
    args.dims = dims.data();
    args.num_dims = dims.size();
    args.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
    args.memory = memory;
    ErrorInfo info =
        TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
    if (info.code != PJRT_Error_Code_OK) return nullptr;
    EXPECT_NE(args.done_with_host_buffer, nullptr);
    // The framework keeps the host data alive until done fires; this test
    // waits for it before the data goes.
    EXPECT_EQ(AwaitOnReady(args.done_with_host_buffer).code,
              PJRT_Error_Code_OK);
    return args.buffer;
  }

  // OnReady with a callback that destroys the event inside it (as jaxlib
  // does), then waits until the callback has run. Returns its status.
  ErrorInfo AwaitOnReady(PJRT_Event* event) {
    struct State {
      const PJRT_Api* api;
      PJRT_Event* event;
      std::atomic<bool> done{false};
      PJRT_Error* error = nullptr;
    };
    State state{api_, event};
    auto args = KILN_ARGS(PJRT_Event_OnReady_Args);
    args.event = event;
    args.user_arg = &state;
    args.callback = [](PJRT_Error* error, void* user_arg) {
      auto* s = static_cast<State*>(user_arg);
      s->error = error;
      auto destroy = KILN_ARGS(PJRT_Event_Destroy_Args);
      destroy.event = s->event;
      s->api->PJRT_Event_Destroy(&destroy);
      s->done.store(true, std::memory_order_release);
    };
    ErrorInfo on_ready = TakeError(api_, api_->PJRT_Event_OnReady(&args));
    EXPECT_EQ(on_ready.code, PJRT_Error_Code_OK) << Describe(on_ready);
    if (on_ready.code != PJRT_Error_Code_OK) return on_ready;
    while (!state.done.load(std::memory_order_acquire)) {
      std::this_thread::yield();
    }
    return TakeError(api_, state.error);
  }

  // §4.5 np.asarray: IsDeleted, ReadyEvent (awaited), IsOnCpu, then
  // ToHostBuffer with the Tiled host layout n-1..0 jaxlib passes.
  std::vector<uint8_t> FetchAsJax(PJRT_Buffer* buffer, size_t rank) {
    EXPECT_FALSE(IsDeleted(buffer));
    auto ready = KILN_ARGS(PJRT_Buffer_ReadyEvent_Args);
    ready.buffer = buffer;
    PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_ReadyEvent(&ready));
    EXPECT_EQ(AwaitOnReady(ready.event).code, PJRT_Error_Code_OK);
    auto on_cpu = KILN_ARGS(PJRT_Buffer_IsOnCpu_Args);
    on_cpu.buffer = buffer;
    PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_IsOnCpu(&on_cpu));

    std::vector<int64_t> minor_to_major;
    for (size_t i = rank; i > 0; --i) {
      minor_to_major.push_back(static_cast<int64_t>(i - 1));
    }
    PJRT_Buffer_MemoryLayout layout{};
    layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
    layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
    layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
    layout.tiled.minor_to_major = minor_to_major.data();
    layout.tiled.minor_to_major_size = minor_to_major.size();
    auto size = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
    size.src = buffer;
    size.host_layout = &layout;
    PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_ToHostBuffer(&size));
    std::vector<uint8_t> bytes(size.dst_size);
    uint8_t dummy = 0;
    auto copy = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
    copy.src = buffer;
    copy.host_layout = &layout;
    copy.dst = bytes.empty() ? &dummy : bytes.data();
    copy.dst_size = bytes.size();
    PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_ToHostBuffer(&copy));
    EXPECT_NE(copy.event, nullptr);  // CHECKed by jaxlib
    if (copy.event != nullptr) {
      EXPECT_EQ(AwaitOnReady(copy.event).code, PJRT_Error_Code_OK);
    }
    return bytes;
  }

  template <typename T>
  static std::vector<T> As(const std::vector<uint8_t>& bytes) {
    std::vector<T> values(bytes.size() / sizeof(T));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
    return values;
  }

  // Executes `loaded` as IFRT does (NumOutputs, then Execute with
  // device_complete_events, OnReady on each) and checks the outputs of the
  // jit program on every device.
  void RunJitProgram(PJRT_LoadedExecutable* loaded,
                     const std::vector<PJRT_Device*>& devices,
                     PJRT_Device* execute_device) {
    std::vector<std::vector<PJRT_Buffer*>> arguments;
    for (PJRT_Device* device : devices) {
      size_t d = 0;
      while (devices_[d] != device) ++d;
      arguments.push_back({PutAsJax(kX.data(), PJRT_Buffer_Type_F32, {2, 3},
                                    default_memories_[d]),
                           PutAsJax(kY.data(), PJRT_Buffer_Type_F32, {3, 2},
                                    default_memories_[d])});
    }
    ExecuteResult result = Execute(loaded, arguments, execute_device);
    ASSERT_EQ(result.error.code, PJRT_Error_Code_OK) << Describe(result.error);
    ASSERT_EQ(result.events.size(), devices.size());
    for (PJRT_Event* event : result.events) {
      EXPECT_EQ(AwaitOnReady(event).code, PJRT_Error_Code_OK);
    }
    ASSERT_EQ(result.outputs.size(), devices.size());
    for (size_t d = 0; d < devices.size(); ++d) {
      const std::vector<PJRT_Buffer*>& out = result.outputs[d];
      ASSERT_EQ(out.size(), 3u);
      for (PJRT_Buffer* buffer : out) {
        auto device = KILN_ARGS(PJRT_Buffer_Device_Args);
        device.buffer = buffer;
        PJRT_EXPECT_OK(api_, api_->PJRT_Buffer_Device(&device));
        EXPECT_EQ(device.device, devices[d]) << "output " << d;
      }
      EXPECT_EQ(As<float>(FetchAsJax(out[0], 2)), kDot) << "device " << d;
      EXPECT_EQ(As<float>(FetchAsJax(out[1], 2)), kSquarePlusOne)
          << "device " << d;
      EXPECT_EQ(As<int32_t>(FetchAsJax(out[2], 2)), kDotAsInt)
          << "device " << d;
      // Inputs are borrowed, not donated: still alive.
      EXPECT_FALSE(IsDeleted(arguments[d][0]));
      DestroyBuffers(out);
      DestroyBuffers(arguments[d]);
    }
  }

  // Tears down as the framework does at exit: the client last.
  void DestroyClientAsJax() {
    DestroyClient(client_);
    client_ = nullptr;
  }

  std::vector<PJRT_Device*> devices_;
  std::vector<PJRT_Memory*> default_memories_;
  std::string last_name_;
  size_t last_replicas_ = 0, last_partitions_ = 0;
  std::vector<PJRT_Buffer_Type> last_types_;
  std::vector<std::vector<int64_t>> last_dims_;
};

// xla.DeviceAssignmentProto for one replica and one partition on device 0:
// replica_count 1 (08 01), computation_count 1 (10 01), one computation
// device row (1a 03) holding replica_device_ids [0] (0a 01 00).
const std::string kOneByOneOnDeviceZero("\x08\x01\x10\x01\x1a\x03\x0a\x01\x00",
                                        9);

TEST_F(JaxReplayTest, JitOfTextProgramOnOneDevice) {
  ASSERT_NO_FATAL_FAILURE(CreateClientAsJax(1));
  ASSERT_NO_FATAL_FAILURE(ReadMemoryStats());
  // The options jax serializes for a jit on one device.
  std::string options = JaxCompileOptions(1, 1);
  PJRT_LoadedExecutable* loaded = Compile(kJitProgram, options);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(QueryAsJax(loaded, {devices_[0]}, kOneByOneOnDeviceZero), 3u);
  EXPECT_EQ(last_replicas_, 1u);
  EXPECT_EQ(last_partitions_, 1u);
  EXPECT_EQ(last_types_, (std::vector<PJRT_Buffer_Type>{PJRT_Buffer_Type_F32,
                                                        PJRT_Buffer_Type_F32,
                                                        PJRT_Buffer_Type_S32}));
  EXPECT_EQ(last_dims_,
            (std::vector<std::vector<int64_t>>{{2, 2}, {2, 3}, {2, 2}}));
  EXPECT_FALSE(last_name_.empty());
  RunJitProgram(loaded, {devices_[0]}, nullptr);
  // A second call of the same executable, as a jitted function is reused.
  RunJitProgram(loaded, {devices_[0]}, nullptr);
  DestroyLoadedExecutable(loaded);
  DestroyClientAsJax();
}

// What jaxlib asks only when the user does: compiled.cost_analysis(),
// .memory_analysis(), .as_text(), parameter memory kinds, code size.
TEST_F(JaxReplayTest, OnDemandQueries) {
  ASSERT_NO_FATAL_FAILURE(CreateClientAsJax(1));
  PJRT_LoadedExecutable* loaded = Compile(kJitProgram, JaxCompileOptions());
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);

  auto cost = KILN_ARGS(PJRT_Executable_GetCostAnalysis_Args);
  cost.executable = executable;
  PJRT_EXPECT_OK(api_, api_->PJRT_Executable_GetCostAnalysis(&cost));
  double flops = -1;
  for (size_t i = 0; i < cost.num_properties; ++i) {
    const PJRT_NamedValue& p = cost.properties[i];
    if (Str(p.name, p.name_size) == "flops") {
      ASSERT_EQ(p.type, PJRT_NamedValue_kFloat);
      flops = p.float_value;
    }
  }
  // The dot alone is 2 * 2 * 2 * 3 = 24 (a multiply-add counts two); the
  // elementwise multiply and add are 6 each, the convert at most 4.
  EXPECT_GE(flops, 24);
  EXPECT_LE(flops, 40);

  auto stats = KILN_ARGS(PJRT_Executable_GetCompiledMemoryStats_Args);
  stats.executable = executable;
  PJRT_EXPECT_OK(api_, api_->PJRT_Executable_GetCompiledMemoryStats(&stats));
  // Arguments 2x3 + 3x2 f32 = 48 bytes; outputs 2x2 f32 + 2x3 f32 + 2x2
  // i32 = 16 + 24 + 16 = 56 bytes.
  EXPECT_EQ(stats.argument_size_in_bytes, 48);
  EXPECT_EQ(stats.output_size_in_bytes, 56);
  EXPECT_EQ(stats.alias_size_in_bytes, 0);

  auto kinds = KILN_ARGS(PJRT_Executable_ParameterMemoryKinds_Args);
  kinds.executable = executable;
  PJRT_EXPECT_OK(api_, api_->PJRT_Executable_ParameterMemoryKinds(&kinds));
  ASSERT_EQ(kinds.num_parameters, 2u);
  for (size_t i = 0; i < kinds.num_parameters; ++i) {
    EXPECT_EQ(Str(kinds.memory_kinds[i], kinds.memory_kind_sizes[i]), "device");
  }

  auto code_size = KILN_ARGS(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args);
  code_size.executable = executable;
  PJRT_EXPECT_OK(api_,
                 api_->PJRT_Executable_SizeOfGeneratedCodeInBytes(&code_size));
  EXPECT_GE(code_size.size_in_bytes, 0);

  // as_text(): the two-call protocol; a buffer too small for the text is
  // refused rather than overrun.
  auto program = KILN_ARGS(PJRT_Program);
  auto size = KILN_ARGS(PJRT_Executable_OptimizedProgram_Args);
  size.executable = executable;
  size.program = &program;
  PJRT_EXPECT_OK(api_, api_->PJRT_Executable_OptimizedProgram(&size));
  ASSERT_GT(program.code_size, 1u);
  std::string text(program.code_size, '\0');
  std::string guard(8, '#');
  std::string small = std::string(program.code_size - 1, '\0') + guard;
  program.code = small.data();
  program.code_size = program.code_size - 1;
  auto too_small = KILN_ARGS(PJRT_Executable_OptimizedProgram_Args);
  too_small.executable = executable;
  too_small.program = &program;
  ErrorInfo refused =
      TakeError(api_, api_->PJRT_Executable_OptimizedProgram(&too_small));
  EXPECT_EQ(refused.code, PJRT_Error_Code_INVALID_ARGUMENT)
      << Describe(refused);
  EXPECT_EQ(small.substr(small.size() - guard.size()), guard);
  program.code = text.data();
  program.code_size = text.size();
  auto fill = KILN_ARGS(PJRT_Executable_OptimizedProgram_Args);
  fill.executable = executable;
  fill.program = &program;
  PJRT_EXPECT_OK(api_, api_->PJRT_Executable_OptimizedProgram(&fill));
  EXPECT_NE(text.find("stablehlo.dot_general"), std::string::npos) << text;

  // Fingerprints: the same program compiled again has the same one, a
  // different program (or placement) another.
  auto fingerprint = [&](PJRT_LoadedExecutable* l) {
    PJRT_Executable* e = GetExecutable(l);
    auto args = KILN_ARGS(PJRT_Executable_Fingerprint_Args);
    args.executable = e;
    PJRT_EXPECT_OK(api_, api_->PJRT_Executable_Fingerprint(&args));
    std::string result(args.executable_fingerprint,
                       args.executable_fingerprint_size);
    DestroyExecutable(e);
    return result;
  };
  PJRT_LoadedExecutable* same = Compile(kJitProgram, JaxCompileOptions());
  PJRT_LoadedExecutable* portable =
      Compile(kJitProgram, JaxCompileOptions(1, 1, true));
  std::string other_program = kJitProgram;
  other_program.replace(other_program.find("stablehlo.add"), 13,
                        "stablehlo.subtract");
  PJRT_LoadedExecutable* other = Compile(other_program, JaxCompileOptions());
  ASSERT_NE(same, nullptr);
  ASSERT_NE(portable, nullptr);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(fingerprint(same), fingerprint(loaded));
  EXPECT_NE(fingerprint(other), fingerprint(loaded));
  EXPECT_NE(fingerprint(portable), fingerprint(loaded));
  DestroyLoadedExecutable(same);
  DestroyLoadedExecutable(portable);
  DestroyLoadedExecutable(other);
  DestroyExecutable(executable);
  DestroyLoadedExecutable(loaded);
  DestroyClientAsJax();
}

TEST_F(JaxReplayTest, CompilesPortableArtifactFromTheCorpus) {
  KILN_REQUIRE_SHARED_DIR(shared);
  // A portable artifact (VHLO bytecode, producer StableHLO 1.0.0) as jax
  // sends it: format "mlir", the bytes told apart from text by content.
  std::string artifact =
      ReadFileOrFail(shared + "/corpus/models/searchless_chess_9m.mlir.bc");
  ASSERT_FALSE(artifact.empty());
  ASSERT_EQ(artifact.compare(0, 4, "ML\xEFR"), 0) << "not MLIR bytecode";
  ASSERT_NO_FATAL_FAILURE(CreateClientAsJax(1));
  ASSERT_NO_FATAL_FAILURE(ReadMemoryStats());
  PJRT_LoadedExecutable* loaded = Compile(artifact, JaxCompileOptions(1, 1));
  ASSERT_NE(loaded, nullptr);
  // @main(95 weights and a 33x79 i32 board) -> tensor<33x79x128xf32>.
  EXPECT_EQ(QueryAsJax(loaded, {devices_[0]}, kOneByOneOnDeviceZero), 1u);
  EXPECT_EQ(last_types_, std::vector<PJRT_Buffer_Type>{PJRT_Buffer_Type_F32});
  EXPECT_EQ(last_dims_, (std::vector<std::vector<int64_t>>{{33, 79, 128}}));
  DestroyLoadedExecutable(loaded);
  DestroyClientAsJax();
}

TEST_F(JaxReplayTest, PortableExecutableRunsOnEachOfFourDevices) {
  ASSERT_NO_FATAL_FAILURE(CreateClientAsJax(4));
  ASSERT_NO_FATAL_FAILURE(ReadMemoryStats());
  // One replica, one partition, no fixed device: the device is chosen per
  // call with execute_device. A portable executable has no assignment
  // (GetDeviceAssignment answers zero bytes).
  PJRT_LoadedExecutable* loaded =
      Compile(kJitProgram, JaxCompileOptions(1, 1, /*portable=*/true));
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  auto assignment = KILN_ARGS(PJRT_LoadedExecutable_GetDeviceAssignment_Args);
  assignment.executable = loaded;
  PJRT_EXPECT_OK(api_,
                 api_->PJRT_LoadedExecutable_GetDeviceAssignment(&assignment));
  EXPECT_EQ(assignment.serialized_bytes_size, 0u);
  ASSERT_NE(assignment.serialized_device_assignment_deleter, nullptr);
  assignment.serialized_device_assignment_deleter(
      assignment.serialized_device_assignment);
  DestroyExecutable(executable);
  for (PJRT_Device* device : devices_) {
    SCOPED_TRACE("execute_device " + std::to_string(&device - &devices_[0]));
    RunJitProgram(loaded, {device}, device);
  }
  DestroyLoadedExecutable(loaded);
  DestroyClientAsJax();
}

TEST_F(JaxReplayTest, OneByOneExecutableOnEachOfFourDevices) {
  ASSERT_NO_FATAL_FAILURE(CreateClientAsJax(4));
  // jax compiles a jit for the device its inputs live on: one replica, one
  // partition, assigned to that device. Each executable runs there through
  // the multi-device path (execute_device null) and through
  // execute_device naming its device.
  for (size_t d = 0; d < devices_.size(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    std::string options =
        JaxCompileOptions(1, 1, false, {static_cast<int64_t>(d)});
    // The 1x1 assignment with replica_device_ids [d] (d < 128: one byte).
    std::string expected_assignment = kOneByOneOnDeviceZero;
    expected_assignment.back() = static_cast<char>(d);
    PJRT_LoadedExecutable* loaded = Compile(kJitProgram, options);
    ASSERT_NE(loaded, nullptr);
    EXPECT_EQ(QueryAsJax(loaded, {devices_[d]}, expected_assignment), 3u);
    RunJitProgram(loaded, {devices_[d]}, nullptr);
    RunJitProgram(loaded, {devices_[d]}, devices_[d]);
    DestroyLoadedExecutable(loaded);
  }
  DestroyClientAsJax();
}

TEST_F(JaxReplayTest, FourReplicasInOneExecute) {
  ASSERT_NO_FATAL_FAILURE(CreateClientAsJax(4));
  // Replicated program, no collectives: one Execute with an argument list
  // per device; every device computes the same outputs.
  PJRT_LoadedExecutable* loaded = Compile(kJitProgram, JaxCompileOptions(4, 1));
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  auto replicas = KILN_ARGS(PJRT_Executable_NumReplicas_Args);
  replicas.executable = executable;
  PJRT_EXPECT_OK(api_, api_->PJRT_Executable_NumReplicas(&replicas));
  EXPECT_EQ(replicas.num_replicas, 4u);
  DestroyExecutable(executable);
  auto addressable = KILN_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args);
  addressable.executable = loaded;
  PJRT_EXPECT_OK(api_,
                 api_->PJRT_LoadedExecutable_AddressableDevices(&addressable));
  // Replica r on device r (partition 0 of replica r: 0 * 4 + r).
  EXPECT_EQ(std::vector<PJRT_Device*>(addressable.addressable_devices,
                                      addressable.addressable_devices +
                                          addressable.num_addressable_devices),
            devices_);
  auto logical =
      KILN_ARGS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args);
  logical.executable = loaded;
  PJRT_EXPECT_OK(
      api_, api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&logical));
  ASSERT_EQ(logical.num_addressable_device_logical_ids, 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(logical.addressable_device_logical_ids[r].replica, r);
    EXPECT_EQ(logical.addressable_device_logical_ids[r].partition, 0);
  }
  RunJitProgram(loaded, devices_, nullptr);
  DestroyLoadedExecutable(loaded);
  DestroyClientAsJax();
}

}  // namespace
}  // namespace kiln::testing
