#include "kiln/compile_options.h"

#include "base/strings.h"
#include "proto/xla_compile_options.pb.h"

namespace kiln::client {

Status ValidateCompileOptions(const CompileOptions& options) {
  if (options.num_replicas < 1 || options.num_partitions < 1) {
    return InvalidArgumentError("compile options: ", options.num_replicas,
                                " replicas x ", options.num_partitions,
                                " partitions; both must be at least 1");
  }
  int64_t needed = int64_t{options.num_replicas} * options.num_partitions;
  if (!options.device_ids.empty() &&
      static_cast<int64_t>(options.device_ids.size()) != needed) {
    return InvalidArgumentError("compile options: ", options.device_ids.size(),
                                " device ids for ", options.num_replicas,
                                " replicas x ", options.num_partitions,
                                " partitions (expected ", needed, ")");
  }
  if (options.portable && needed != 1) {
    return InvalidArgumentError(
        "compile options: a portable executable has 1 replica and 1 "
        "partition, not ",
        options.num_replicas, " x ", options.num_partitions);
  }
  return OkStatus();
}

StatusOr<std::string> SerializeCompileOptions(const CompileOptions& options) {
  RETURN_IF_ERROR(ValidateCompileOptions(options));
  xla::CompileOptionsProto proto;
  proto.set_compile_portable_executable(options.portable);
  // -1 as JAX sends it: no profile to look for.
  proto.set_profile_version(-1);
  xla::ExecutableBuildOptionsProto* build =
      proto.mutable_executable_build_options();
  build->set_device_ordinal(-1);
  build->set_num_replicas(options.num_replicas);
  build->set_num_partitions(options.num_partitions);
  if (!options.device_ids.empty()) {
    xla::DeviceAssignmentProto* assignment = build->mutable_device_assignment();
    assignment->set_replica_count(options.num_replicas);
    assignment->set_computation_count(options.num_partitions);
    // One row per computation (partition), listing each replica's device.
    for (int p = 0; p < options.num_partitions; ++p) {
      auto* row = assignment->add_computation_devices();
      for (int r = 0; r < options.num_replicas; ++r) {
        row->add_replica_device_ids(
            options.device_ids[size_t{1} * r * options.num_partitions + p]);
      }
    }
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return InternalError("cannot serialize xla.CompileOptionsProto");
  }
  return bytes;
}

StatusOr<CompileOptions> ParseCompileOptions(const std::string& serialized) {
  xla::CompileOptionsProto proto;
  if (!proto.ParseFromString(serialized)) {
    return InvalidArgumentError("compile options: ", serialized.size(),
                                " bytes are not an xla.CompileOptionsProto");
  }
  CompileOptions options;
  const auto& build = proto.executable_build_options();
  // Bounded before anything is sized by them.
  constexpr int64_t kMaxCount = int64_t{1} << 16;
  if (build.num_replicas() < 0 || build.num_replicas() > kMaxCount ||
      build.num_partitions() < 0 || build.num_partitions() > kMaxCount) {
    return InvalidArgumentError("compile options: ", build.num_replicas(),
                                " replicas x ", build.num_partitions(),
                                " partitions; each must be in [0, ", kMaxCount,
                                "]");
  }
  options.num_replicas =
      build.num_replicas() == 0 ? 1 : static_cast<int>(build.num_replicas());
  options.num_partitions = build.num_partitions() == 0
                               ? 1
                               : static_cast<int>(build.num_partitions());
  options.portable = proto.compile_portable_executable();
  if (build.has_device_assignment()) {
    const auto& assignment = build.device_assignment();
    options.device_ids.assign(
        size_t{1} * options.num_replicas * options.num_partitions, -1);
    if (assignment.computation_devices_size() != options.num_partitions) {
      return InvalidArgumentError("compile options: device assignment has ",
                                  assignment.computation_devices_size(),
                                  " computations for ", options.num_partitions,
                                  " partitions");
    }
    for (int p = 0; p < options.num_partitions; ++p) {
      const auto& row = assignment.computation_devices(p);
      if (row.replica_device_ids_size() != options.num_replicas) {
        return InvalidArgumentError("compile options: computation ", p,
                                    " lists ", row.replica_device_ids_size(),
                                    " devices for ", options.num_replicas,
                                    " replicas");
      }
      for (int r = 0; r < options.num_replicas; ++r) {
        options.device_ids[size_t{1} * r * options.num_partitions + p] =
            row.replica_device_ids(r);
      }
    }
  }
  RETURN_IF_ERROR(ValidateCompileOptions(options));
  return options;
}

}  // namespace kiln::client
