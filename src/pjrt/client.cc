// The PJRT_Client_* entry points that are about the client itself (buffer
// creation is in buffer_create.cc).
#include <algorithm>

#include "base/logging.h"
#include "compile/spmd_partition.h"
#include "exec/kernels/host_callback.h"
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/handles.h"
#include "pjrt/key_value_store.h"
#include "pjrt/platform.h"
#include "pjrt_c_api.h"

namespace kiln::pjrt {
namespace {

struct CreateOptions {
  runtime::ClientOptions client;
  std::vector<std::string> ignored;
};

StatusOr<CreateOptions> ParseCreateOptions(
    const std::vector<NamedValue>& options) {
  CreateOptions result;
  for (const NamedValue& option : options) {
    if (option.name == "cpu_device_count") {
      ASSIGN_OR_RETURN(int64_t count, IntegerOption(option));
      if (count < 1 || count > runtime::kMaxDevices) {
        return InvalidArgumentError("PJRT_Client_Create: cpu_device_count is ",
                                    count, "; it must be between 1 and ",
                                    runtime::kMaxDevices);
      }
      result.client.device_count = static_cast<int>(count);
    } else if (option.name == "memory_limit_bytes") {
      // The most the client's devices may hold at once, all together.
      ASSIGN_OR_RETURN(int64_t bytes, IntegerOption(option));
      if (bytes < 1) {
        return InvalidArgumentError("PJRT_Client_Create: memory_limit_bytes is ",
                                    bytes, "; it must be a positive number of "
                                    "bytes");
      }
      result.client.memory_limit_bytes = bytes;
    } else if (option.name == "collective_timeout_seconds") {
      // How long a collective waits for the other devices of its launch.
      ASSIGN_OR_RETURN(double seconds, NumberOption(option));
      if (!(seconds > 0) || seconds > 1e9) {
        return InvalidArgumentError(
            "PJRT_Client_Create: collective_timeout_seconds is ", seconds,
            "; it must be a positive number of seconds");
      }
      result.client.collective_timeout_seconds = seconds;
    } else if (option.name == "kiln_host_callback_trampoline") {
      // The address of the host's callback trampoline (exec/kernels/
      // host_callback.h), set by Kiln's Python package. One per process.
      ASSIGN_OR_RETURN(int64_t address, IntegerOption(option));
      exec::SetHostCallbackTrampoline(
          reinterpret_cast<exec::HostCallbackTrampoline>(
              static_cast<uintptr_t>(address)));
      // A host that hands Kiln addresses to call also lowers JAX's
      // inspect_array_sharding, whose callback's address is in the program.
      compile::AllowInspectShardingCallbacks(address != 0);
    } else if (option.name == "num_nodes" || option.name == "node_id") {
      // A job of several processes (JAX passes its distributed client's
      // process count and id under these names).
      ASSIGN_OR_RETURN(int64_t value, IntegerOption(option));
      if (value < 0 || value > runtime::kMaxDevices) {
        return InvalidArgumentError("PJRT_Client_Create: ", option.ToString(),
                                    " is out of range");
      }
      (option.name == "num_nodes" ? result.client.process_count
                                  : result.client.process_index) =
          static_cast<int>(value);
    } else if (option.name == "collectives_hostname") {
      // The address this process's Gloo endpoints listen on.
      const std::string* hostname = std::get_if<std::string>(&option.value);
      if (hostname == nullptr) {
        return InvalidArgumentError(
            "PJRT_Client_Create: collectives_hostname must be a string");
      }
      result.client.collectives_hostname = *hostname;
    } else {
      result.ignored.push_back(option.ToString());
    }
  }
  return result;
}

std::unique_ptr<PJRT_Client> MakeClientHandles(
    std::unique_ptr<runtime::Client> runtime_client) {
  auto client = std::make_unique<PJRT_Client>();
  client->runtime = std::move(runtime_client);
  for (runtime::Device* device : client->runtime->devices()) {
    auto handle = std::make_unique<PJRT_Device>();
    handle->device = device;
    handle->client = client.get();
    handle->description.description = device->description();
    client->devices.push_back(handle.get());
    if (device->addressable()) {
      client->addressable_devices.push_back(handle.get());
    }
    client->owned_devices.push_back(std::move(handle));
  }
  for (runtime::MemorySpace* memory : client->runtime->memory_spaces()) {
    auto handle = std::make_unique<Memory>();
    handle->memory = memory;
    handle->client = client.get();
    handle->devices.push_back(client->device_handle(memory->device()));
    client->memories.push_back(handle.get());
    if (memory->device()->addressable()) {
      client->addressable_memories.push_back(handle.get());
    }
    client->owned_memories.push_back(std::move(handle));
  }
  for (PJRT_Device* device : client->devices) {
    // A device of another process has no memory this process can address.
    if (!device->device->addressable()) continue;
    for (runtime::MemorySpace* memory : device->device->memory_spaces()) {
      device->memories.push_back(client->memory_handle(memory));
    }
    device->default_memory =
        client->memory_handle(device->device->default_memory_space());
  }
  // The client's topology describes its devices with the same description
  // objects the devices hand out.
  auto topology = std::make_unique<PJRT_TopologyDescription>();
  topology->topology = client->runtime->topology();
  topology->owned_by_client = true;
  for (PJRT_Device* device : client->devices) {
    topology->descriptions.push_back(&device->description);
  }
  topology->attributes.AddInt64(
      "cpu_device_count",
      static_cast<int64_t>(client->addressable_devices.size()));
  client->topology = std::move(topology);
  return client;
}

}  // namespace

const std::string& PlatformName() { return runtime::Client::PlatformName(); }

const std::string& PlatformVersion() {
  static const std::string* version =
      new std::string(StrCat(runtime::Client::PlatformVersion(), " (PJRT ",
                             PJRT_API_MAJOR, ".", PJRT_API_MINOR, ")"));
  return *version;
}

PJRT_Error* PJRT_Client_Create(PJRT_Client_Create_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_Create_Args, client);
    ASSIGN_OR_RETURN(std::vector<NamedValue> options,
                     ReadNamedValues(args->create_options, args->num_options,
                                     "PJRT_Client_Create_Args.create_options"));
    ASSIGN_OR_RETURN(CreateOptions parsed, ParseCreateOptions(options));
    if (!parsed.ignored.empty()) {
      KILN_LOG(DEBUG) << "PJRT_Client_Create: ignoring options Kiln does not "
                         "know: "
                      << StrJoin(parsed.ignored, ", ");
    }
    // The key-value callbacks matter only to clients of several
    // processes: they exchange their devices and meet for collectives
    // through them.
    if (parsed.client.process_count > 1) {
      ASSIGN_OR_RETURN(parsed.client.store, CallbackKeyValueStore(*args));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<runtime::Client> runtime_client,
                     runtime::Client::Create(parsed.client));
    args->client = MakeClientHandles(std::move(runtime_client)).release();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_Destroy(PJRT_Client_Destroy_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_Destroy_Args, client);
    if (args->client == nullptr) return OkStatus();
    ASSIGN_OR_RETURN(
        PJRT_Client * client,
        CheckClient(args->client, "PJRT_Client_Destroy_Args.client"));
    client->tag = HandleTag{};
    // Finishes the work queued on the devices, then stops their threads.
    delete client;
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_PlatformName(PJRT_Client_PlatformName_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_PlatformName_Args,
                         platform_name_size);
    RETURN_IF_ERROR(
        CheckClient(args->client, "PJRT_Client_PlatformName_Args.client"));
    args->platform_name = PlatformName().data();
    args->platform_name_size = PlatformName().size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_ProcessIndex(PJRT_Client_ProcessIndex_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_ProcessIndex_Args, process_index);
    ASSIGN_OR_RETURN(
        PJRT_Client * client,
        CheckClient(args->client, "PJRT_Client_ProcessIndex_Args.client"));
    args->process_index = client->runtime->process_index();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_PlatformVersion(
    PJRT_Client_PlatformVersion_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_PlatformVersion_Args,
                         platform_version_size);
    RETURN_IF_ERROR(
        CheckClient(args->client, "PJRT_Client_PlatformVersion_Args.client"));
    args->platform_version = PlatformVersion().data();
    args->platform_version_size = PlatformVersion().size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_Devices(PJRT_Client_Devices_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_Devices_Args, num_devices);
    ASSIGN_OR_RETURN(
        PJRT_Client * client,
        CheckClient(args->client, "PJRT_Client_Devices_Args.client"));
    args->devices = client->devices.data();
    args->num_devices = client->devices.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_AddressableDevices(
    PJRT_Client_AddressableDevices_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_AddressableDevices_Args,
                         num_addressable_devices);
    ASSIGN_OR_RETURN(PJRT_Client * client,
                     CheckClient(args->client,
                                 "PJRT_Client_AddressableDevices_Args.client"));
    args->addressable_devices = client->addressable_devices.data();
    args->num_addressable_devices = client->addressable_devices.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_LookupDevice(PJRT_Client_LookupDevice_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_LookupDevice_Args, device);
    ASSIGN_OR_RETURN(
        PJRT_Client * client,
        CheckClient(args->client, "PJRT_Client_LookupDevice_Args.client"));
    ASSIGN_OR_RETURN(runtime::Device * device,
                     client->runtime->LookupDevice(args->id));
    args->device = client->device_handle(device);
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_LookupAddressableDevice(
    PJRT_Client_LookupAddressableDevice_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_LookupAddressableDevice_Args,
                         addressable_device);
    ASSIGN_OR_RETURN(
        PJRT_Client * client,
        CheckClient(args->client,
                    "PJRT_Client_LookupAddressableDevice_Args.client"));
    ASSIGN_OR_RETURN(
        runtime::Device * device,
        client->runtime->LookupAddressableDevice(args->local_hardware_id));
    args->addressable_device = client->device_handle(device);
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_AddressableMemories(
    PJRT_Client_AddressableMemories_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_AddressableMemories_Args,
                         num_addressable_memories);
    ASSIGN_OR_RETURN(
        PJRT_Client * client,
        CheckClient(args->client,
                    "PJRT_Client_AddressableMemories_Args.client"));
    args->addressable_memories = client->addressable_memories.data();
    args->num_addressable_memories = client->addressable_memories.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_DefaultDeviceAssignment(
    PJRT_Client_DefaultDeviceAssignment_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_DefaultDeviceAssignment_Args,
                         default_assignment);
    ASSIGN_OR_RETURN(
        PJRT_Client * client,
        CheckClient(args->client,
                    "PJRT_Client_DefaultDeviceAssignment_Args.client"));
    // The size check comes first and its text is XLA's, which conformance
    // suites match exactly.
    const int64_t needed =
        static_cast<int64_t>(args->num_replicas) * args->num_partitions;
    if (args->num_replicas > 0 && args->num_partitions > 0 &&
        args->default_assignment_size < static_cast<uint64_t>(needed)) {
      return FailedPreconditionError(
          "PJRT_Client_DefaultDeviceAssignment: `default_assignment_size` ",
          args->default_assignment_size, " < `num_replicas * num_partitions`, ",
          args->num_replicas, " * ", args->num_partitions, " = ", needed);
    }
    ASSIGN_OR_RETURN(std::vector<int> assignment,
                     client->runtime->DefaultDeviceAssignment(
                         args->num_replicas, args->num_partitions));
    if (args->default_assignment == nullptr) {
      return InvalidArgumentError(
          "PJRT_Client_DefaultDeviceAssignment_Args.default_assignment is "
          "null");
    }
    std::copy(assignment.begin(), assignment.end(), args->default_assignment);
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_TopologyDescription(
    PJRT_Client_TopologyDescription_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_TopologyDescription_Args, topology);
    ASSIGN_OR_RETURN(
        PJRT_Client * client,
        CheckClient(args->client,
                    "PJRT_Client_TopologyDescription_Args.client"));
    // Owned by the client, like XLA's: valid until the client is destroyed.
    args->topology = client->topology.get();
    return OkStatus();
  });
}

}  // namespace kiln::pjrt

namespace kiln::pjrt {

// The framework's view of the job's processes (JAX's distributed client
// calls it whenever the coordination service sees a change). Kiln learns
// of a dead peer from its sockets anyway (collectives fail with
// UNAVAILABLE), so the states are only logged.
PJRT_Error* PJRT_Client_UpdateGlobalProcessInfo(
    PJRT_Client_UpdateGlobalProcessInfo_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_UpdateGlobalProcessInfo_Args,
                         num_process_infos);
    RETURN_IF_ERROR(CheckClient(
        args->client, "PJRT_Client_UpdateGlobalProcessInfo_Args.client"));
    if (args->num_process_infos > 0 && args->process_infos == nullptr) {
      return InvalidArgumentError(
          "PJRT_Client_UpdateGlobalProcessInfo_Args.process_infos is null");
    }
    for (size_t i = 0; i < args->num_process_infos; ++i) {
      const PJRT_ProcessInfo& info = args->process_infos[i];
      if (info.state != PJRT_ProcessState_kError &&
          info.state != PJRT_ProcessState_kDisconnected) {
        continue;
      }
      KILN_LOG(DEBUG) << "process " << info.task_id << " is "
                      << (info.state == PJRT_ProcessState_kError
                              ? "in error"
                              : "disconnected");
    }
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
