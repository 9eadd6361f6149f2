#include "pjrt/compile_options.h"

#include "runtime/device.h"
#include "proto/xla_compile_options.pb.h"

namespace kiln::pjrt {

StatusOr<runtime::CompileSpec> ParseCompileOptions(
    std::string_view bytes, const runtime::Client& client) {
  xla::CompileOptionsProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgumentError(
        "compile_options (", bytes.size(),
        " bytes) are not a serialized xla.CompileOptionsProto");
  }
  if (proto.parameter_is_tupled_arguments()) {
    return UnimplementedError(
        "parameter_is_tupled_arguments: Kiln takes one buffer per parameter");
  }
  for (int i = 0; i < proto.argument_layouts_size(); ++i) {
    const xla::ShapeProto& shape = proto.argument_layouts(i);
    if (!shape.has_layout()) continue;
    const auto& minor_to_major = shape.layout().minor_to_major();
    for (int d = 0; d < minor_to_major.size(); ++d) {
      if (minor_to_major[d] != minor_to_major.size() - 1 - d) {
        return UnimplementedError(
            "argument_layouts[", i,
            "] is not row-major; Kiln keeps every buffer in row-major "
            "(major-to-minor) layout");
      }
    }
  }
  const xla::ExecutableBuildOptionsProto& build =
      proto.executable_build_options();
  runtime::CompileSpec spec;
  // 0 means "unset" in proto3; frameworks mean one.
  int64_t replicas = build.num_replicas() == 0 ? 1 : build.num_replicas();
  int64_t partitions =
      build.num_partitions() == 0 ? 1 : build.num_partitions();
  if (replicas < 1 || partitions < 1 || replicas > runtime::kMaxDevices ||
      partitions > runtime::kMaxDevices) {
    return InvalidArgumentError("num_replicas (", build.num_replicas(),
                                ") and num_partitions (",
                                build.num_partitions(),
                                ") must be between 1 and ",
                                runtime::kMaxDevices);
  }
  spec.num_replicas = static_cast<int>(replicas);
  spec.num_partitions = static_cast<int>(partitions);
  spec.portable = proto.compile_portable_executable();
  if (spec.portable) return spec;

  if (build.has_device_assignment()) {
    const xla::DeviceAssignmentProto& assignment = build.device_assignment();
    if (assignment.replica_count() != spec.num_replicas ||
        assignment.computation_count() != spec.num_partitions ||
        assignment.computation_devices_size() != spec.num_partitions) {
      return InvalidArgumentError(
          "the device assignment is ", assignment.replica_count(),
          " replicas x ", assignment.computation_count(), " computations (",
          assignment.computation_devices_size(),
          " listed); the options ask for ", spec.num_replicas,
          " replicas x ", spec.num_partitions, " partitions");
    }
    spec.device_assignment.assign(
        static_cast<size_t>(spec.num_replicas) * spec.num_partitions, -1);
    for (int p = 0; p < spec.num_partitions; ++p) {
      const auto& ids = assignment.computation_devices(p).replica_device_ids();
      if (ids.size() != spec.num_replicas) {
        return InvalidArgumentError("computation ", p,
                                    " of the device assignment lists ",
                                    ids.size(), " devices for ",
                                    spec.num_replicas, " replicas");
      }
      for (int r = 0; r < spec.num_replicas; ++r) {
        if (ids[r] < 0 || ids[r] > INT32_MAX) {
          return InvalidArgumentError("the device assignment names device ",
                                      ids[r]);
        }
        spec.device_assignment[r * spec.num_partitions + p] =
            static_cast<int>(ids[r]);
      }
    }
  } else if (build.device_ordinal() >= 0 && replicas * partitions == 1) {
    ASSIGN_OR_RETURN(runtime::Device * device,
                     client.LookupAddressableDevice(
                         static_cast<int>(std::min<int64_t>(
                             build.device_ordinal(), INT32_MAX))));
    spec.device_assignment = {device->id()};
  }
  return spec;
}

std::string SerializeDeviceAssignment(const runtime::Executable& executable) {
  if (executable.portable()) return "";
  xla::DeviceAssignmentProto proto;
  const int replicas = executable.num_replicas();
  const int partitions = executable.num_partitions();
  proto.set_replica_count(replicas);
  proto.set_computation_count(partitions);
  const std::vector<runtime::Device*>& devices =
      executable.addressable_devices();
  for (int p = 0; p < partitions; ++p) {
    auto* computation = proto.add_computation_devices();
    for (int r = 0; r < replicas; ++r) {
      computation->add_replica_device_ids(devices[r * partitions + p]->id());
    }
  }
  return proto.SerializeAsString();
}

}  // namespace kiln::pjrt
