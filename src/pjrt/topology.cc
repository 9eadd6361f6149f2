// The PJRT_TopologyDescription_* entry points.
#include "base/logging.h"
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/handles.h"
#include "pjrt/platform.h"
#include "runtime/memory_space.h"

// What PJRT_TopologyDescription_Serialize hands out with the bytes; the
// caller frees it with the deleter that comes with it.
struct PJRT_SerializedTopology {
  std::string bytes;
};

namespace kiln::pjrt {
namespace {

void DeleteSerializedTopology(PJRT_SerializedTopology* serialized) {
  delete serialized;
}

// A topology the caller owns, with description objects of its own.
PJRT_TopologyDescription* NewStandaloneTopology(runtime::Topology topology) {
  auto* handle = new PJRT_TopologyDescription();
  handle->topology = std::move(topology);
  for (const runtime::DeviceDescription& device : handle->topology.devices()) {
    auto description = std::make_unique<PJRT_DeviceDescription>();
    description->description = device;
    handle->descriptions.push_back(description.get());
    handle->owned_descriptions.push_back(std::move(description));
  }
  handle->attributes.AddInt64(
      "cpu_device_count", static_cast<int64_t>(handle->descriptions.size()));
  return handle;
}

// Every memory kind's id, in kind order; lives as long as the process.
const std::vector<int>& MemoryKindIds() {
  static const std::vector<int>* ids = [] {
    auto* list = new std::vector<int>();
    for (int kind = 0; kind < runtime::kNumMemoryKinds; ++kind) {
      list->push_back(
          runtime::MemoryKindId(static_cast<runtime::MemoryKind>(kind)));
    }
    return list;
  }();
  return *ids;
}

}  // namespace

PJRT_Error* PJRT_TopologyDescription_Create(
    PJRT_TopologyDescription_Create_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_TopologyDescription_Create_Args, topology);
    ASSIGN_OR_RETURN(
        std::vector<NamedValue> options,
        ReadNamedValues(args->create_options, args->num_options,
                        "PJRT_TopologyDescription_Create_Args.create_options"));
    int64_t device_count = 1;
    std::vector<std::string> ignored;
    for (const NamedValue& option : options) {
      if (option.name == "cpu_device_count") {
        ASSIGN_OR_RETURN(device_count, IntegerOption(option));
      } else {
        ignored.push_back(option.ToString());
      }
    }
    if (!ignored.empty()) {
      KILN_LOG(DEBUG) << "PJRT_TopologyDescription_Create: ignoring options "
                         "Kiln does not know: "
                      << StrJoin(ignored, ", ");
    }
    if (device_count < 1 || device_count > runtime::kMaxDevices) {
      return InvalidArgumentError(
          "PJRT_TopologyDescription_Create: cpu_device_count is ", device_count,
          "; it must be between 1 and ", runtime::kMaxDevices);
    }
    // The topology name is free-form for a CPU platform; it is not read.
    ASSIGN_OR_RETURN(runtime::Topology topology,
                     runtime::Topology::ForCpu(static_cast<int>(device_count)));
    args->topology = NewStandaloneTopology(std::move(topology));
    return OkStatus();
  });
}

PJRT_Error* PJRT_TopologyDescription_Destroy(
    PJRT_TopologyDescription_Destroy_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_TopologyDescription_Destroy_Args, topology);
    if (args->topology == nullptr) return OkStatus();
    ASSIGN_OR_RETURN(
        const PJRT_TopologyDescription* topology,
        CheckTopology(args->topology,
                      "PJRT_TopologyDescription_Destroy_Args.topology"));
    // A client's topology goes with its client.
    if (topology->owned_by_client) return OkStatus();
    delete args->topology;
    return OkStatus();
  });
}

PJRT_Error* PJRT_TopologyDescription_PlatformName(
    PJRT_TopologyDescription_PlatformName_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_TopologyDescription_PlatformName_Args,
                         platform_name_size);
    RETURN_IF_ERROR(CheckTopology(
        args->topology, "PJRT_TopologyDescription_PlatformName_Args.topology"));
    args->platform_name = PlatformName().data();
    args->platform_name_size = PlatformName().size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_TopologyDescription_PlatformVersion(
    PJRT_TopologyDescription_PlatformVersion_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_TopologyDescription_PlatformVersion_Args,
                         platform_version_size);
    RETURN_IF_ERROR(CheckTopology(
        args->topology,
        "PJRT_TopologyDescription_PlatformVersion_Args.topology"));
    args->platform_version = PlatformVersion().data();
    args->platform_version_size = PlatformVersion().size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_TopologyDescription_GetDeviceDescriptions(
    PJRT_TopologyDescription_GetDeviceDescriptions_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args,
                         PJRT_TopologyDescription_GetDeviceDescriptions_Args,
                         num_descriptions);
    ASSIGN_OR_RETURN(
        const PJRT_TopologyDescription* topology,
        CheckTopology(
            args->topology,
            "PJRT_TopologyDescription_GetDeviceDescriptions_Args.topology"));
    args->descriptions = topology->descriptions.data();
    args->num_descriptions = topology->descriptions.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_TopologyDescription_Serialize(
    PJRT_TopologyDescription_Serialize_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_TopologyDescription_Serialize_Args,
                         serialized_topology_deleter);
    ASSIGN_OR_RETURN(
        const PJRT_TopologyDescription* topology,
        CheckTopology(args->topology,
                      "PJRT_TopologyDescription_Serialize_Args.topology"));
    auto* serialized =
        new PJRT_SerializedTopology{topology->topology.Serialize()};
    args->serialized_bytes = serialized->bytes.data();
    args->serialized_bytes_size = serialized->bytes.size();
    args->serialized_topology = serialized;
    args->serialized_topology_deleter = &DeleteSerializedTopology;
    return OkStatus();
  });
}

PJRT_Error* PJRT_TopologyDescription_Deserialize(
    PJRT_TopologyDescription_Deserialize_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_TopologyDescription_Deserialize_Args,
                         topology);
    if (args->serialized_topology == nullptr &&
        args->serialized_topology_size > 0) {
      return InvalidArgumentError(
          "PJRT_TopologyDescription_Deserialize_Args.serialized_topology is "
          "null");
    }
    std::string_view bytes(
        args->serialized_topology == nullptr ? "" : args->serialized_topology,
        args->serialized_topology_size);
    auto topology = runtime::Topology::Deserialize(bytes);
    if (!topology.ok()) {
      return topology.status().WithContext(
          "PJRT_TopologyDescription_Deserialize");
    }
    args->topology = NewStandaloneTopology(std::move(*topology));
    return OkStatus();
  });
}

PJRT_Error* PJRT_TopologyDescription_Attributes(
    PJRT_TopologyDescription_Attributes_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_TopologyDescription_Attributes_Args,
                         num_attributes);
    ASSIGN_OR_RETURN(
        const PJRT_TopologyDescription* topology,
        CheckTopology(args->topology,
                      "PJRT_TopologyDescription_Attributes_Args.topology"));
    args->attributes = topology->attributes.data();
    args->num_attributes = topology->attributes.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_TopologyDescription_Fingerprint(
    PJRT_TopologyDescription_Fingerprint_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_TopologyDescription_Fingerprint_Args,
                         fingerprint);
    ASSIGN_OR_RETURN(
        const PJRT_TopologyDescription* topology,
        CheckTopology(args->topology,
                      "PJRT_TopologyDescription_Fingerprint_Args.topology"));
    args->fingerprint = topology->topology.Fingerprint();
    return OkStatus();
  });
}

PJRT_Error* PJRT_TopologyDescription_GetMemorySpaceKindIds(
    PJRT_TopologyDescription_GetMemorySpaceKindIds_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args,
                         PJRT_TopologyDescription_GetMemorySpaceKindIds_Args,
                         num_memory_space_kind_ids);
    RETURN_IF_ERROR(CheckTopology(
        args->topology,
        "PJRT_TopologyDescription_GetMemorySpaceKindIds_Args.topology"));
    // Every device has one memory space of each kind.
    args->memory_space_kind_ids = MemoryKindIds().data();
    args->num_memory_space_kind_ids = MemoryKindIds().size();
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
