#include "pjrt/compile_options.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "proto/xla_compile_options.pb.h"
#include "runtime/device.h"

namespace kiln::pjrt {
namespace {

// Compiler options by name (JAX's `jit(..., compiler_options={...})`, the
// proto's `env_option_overrides`). XLA applies each to its DebugOptions or
// build options and refuses names it does not have; JAX's users rely on the
// refusal to catch typos. Kiln has none of XLA's passes, so it accepts and
// ignores every option named like one of XLA's (`xla_*`) and the effort
// knobs, checks the value's type where it knows the option, and refuses
// anything else with XLA's words.
enum class OptionType { kBool, kInt, kFloat, kString };

struct KnownOption {
  std::string_view name;
  OptionType type;
};

constexpr KnownOption kKnownOptions[] = {
    {"exec_time_optimization_effort", OptionType::kFloat},
    {"memory_fitting_effort", OptionType::kFloat},
    {"optimization_level", OptionType::kInt},
    {"memory_fitting_level", OptionType::kInt},
    {"xla_embed_ir_in_executable", OptionType::kBool},
    {"xla_dump_to", OptionType::kString},
    {"xla_dump_hlo_as_text", OptionType::kBool},
    {"xla_dump_hlo_as_proto", OptionType::kBool},
    {"xla_dump_hlo_module_re", OptionType::kString},
    {"xla_dump_hlo_pass_re", OptionType::kString},
    {"xla_backend_optimization_level", OptionType::kInt},
    {"xla_cpu_enable_fast_math", OptionType::kBool},
    {"xla_cpu_fast_math_honor_nans", OptionType::kBool},
    {"xla_cpu_fast_math_honor_infs", OptionType::kBool},
    {"xla_cpu_fast_math_honor_division", OptionType::kBool},
    {"xla_cpu_fast_math_honor_functions", OptionType::kBool},
    {"xla_cpu_use_thunk_runtime", OptionType::kBool},
    {"xla_cpu_parallel_codegen_split_count", OptionType::kInt},
    {"xla_llvm_disable_expensive_passes", OptionType::kBool},
    {"xla_disable_hlo_passes", OptionType::kString},
    {"xla_enable_hlo_passes_only", OptionType::kString},
    {"xla_detailed_logging", OptionType::kBool},
    {"xla_enable_dumping", OptionType::kBool},
};

const char* TypeName(OptionType type) {
  switch (type) {
    case OptionType::kBool:
      return "bool";
    case OptionType::kInt:
      return "int64";
    case OptionType::kFloat:
      return "double";
    case OptionType::kString:
      return "string";
  }
  return "?";
}

// Whether `text` spells a value of `type` the way XLA's flag parser reads
// strings (absl's SimpleAtob / SimpleAtoi / SimpleAtod).
bool ParsesAs(std::string_view text, OptionType type) {
  std::string lower;
  for (char c : text) lower.push_back(static_cast<char>(std::tolower(c)));
  switch (type) {
    case OptionType::kBool:
      for (const char* word :
           {"true", "t", "yes", "y", "1", "false", "f", "no", "n", "0"}) {
        if (lower == word) return true;
      }
      return false;
    case OptionType::kInt: {
      if (lower.empty()) return false;
      size_t start = lower[0] == '-' || lower[0] == '+' ? 1 : 0;
      if (start == lower.size()) return false;
      for (size_t i = start; i < lower.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(lower[i]))) return false;
      }
      return true;
    }
    case OptionType::kFloat: {
      if (lower.empty()) return false;
      char* end = nullptr;
      std::strtod(lower.c_str(), &end);
      return end == lower.c_str() + lower.size();
    }
    case OptionType::kString:
      return true;
  }
  return false;
}

std::string ValueText(const xla::OptionOverrideProto& value) {
  switch (value.value_case()) {
    case xla::OptionOverrideProto::kStringField:
      return value.string_field();
    case xla::OptionOverrideProto::kBoolField:
      return value.bool_field() ? "true" : "false";
    case xla::OptionOverrideProto::kIntField:
      return std::to_string(value.int_field());
    case xla::OptionOverrideProto::kDoubleField:
      return std::to_string(value.double_field());
    default:
      return "";
  }
}

Status CheckOptionOverride(const std::string& name,
                           const xla::OptionOverrideProto& value) {
  const KnownOption* known = nullptr;
  for (const KnownOption& option : kKnownOptions) {
    if (option.name == name) known = &option;
  }
  if (known == nullptr) {
    if (name.rfind("xla_", 0) == 0) return OkStatus();
    return InvalidArgumentError("No such compile option: '", name, "'");
  }
  bool fits = false;
  switch (value.value_case()) {
    case xla::OptionOverrideProto::kStringField:
      fits = ParsesAs(value.string_field(), known->type);
      break;
    case xla::OptionOverrideProto::kBoolField:
      fits = known->type == OptionType::kBool;
      break;
    case xla::OptionOverrideProto::kIntField:
      fits =
          known->type == OptionType::kInt || known->type == OptionType::kFloat;
      break;
    case xla::OptionOverrideProto::kDoubleField:
      fits = known->type == OptionType::kFloat;
      break;
    default:
      fits = false;
  }
  if (fits) return OkStatus();
  return InvalidArgumentError("While setting option ", name, ", '",
                              ValueText(value), "' is not a valid ",
                              TypeName(known->type), " value.");
}

}  // namespace

StatusOr<runtime::CompileSpec> ParseCompileOptions(
    std::string_view bytes, const runtime::Client& client) {
  xla::CompileOptionsProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgumentError(
        "compile_options (", bytes.size(),
        " bytes) are not a serialized xla.CompileOptionsProto");
  }
  for (const auto& [name, value] : proto.env_option_overrides()) {
    RETURN_IF_ERROR(CheckOptionOverride(name, value));
  }
  if (proto.parameter_is_tupled_arguments()) {
    return UnimplementedError(
        "parameter_is_tupled_arguments: Kiln takes one buffer per parameter");
  }
  runtime::CompileSpec spec;
  // Dense layouts in any order of the dimensions; the compiler checks them
  // against the program's arguments.
  for (int i = 0; i < proto.argument_layouts_size(); ++i) {
    const xla::ShapeProto& shape = proto.argument_layouts(i);
    std::vector<int64_t>& layout = spec.argument_layouts.emplace_back();
    if (!shape.has_layout()) continue;
    if (shape.layout().tiles_size() > 0) {
      return UnimplementedError("argument_layouts[", i,
                                "] has tiles; Kiln lays buffers out densely");
    }
    layout.assign(shape.layout().minor_to_major().begin(),
                  shape.layout().minor_to_major().end());
  }
  const xla::ExecutableBuildOptionsProto& build =
      proto.executable_build_options();
  // 0 means "unset" in proto3; frameworks mean one.
  int64_t replicas = build.num_replicas() == 0 ? 1 : build.num_replicas();
  int64_t partitions = build.num_partitions() == 0 ? 1 : build.num_partitions();
  if (replicas < 1 || partitions < 1 || replicas > runtime::kMaxDevices ||
      partitions > runtime::kMaxDevices) {
    return InvalidArgumentError(
        "num_replicas (", build.num_replicas(), ") and num_partitions (",
        build.num_partitions(), ") must be between 1 and ",
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
          " listed); the options ask for ", spec.num_replicas, " replicas x ",
          spec.num_partitions, " partitions");
    }
    spec.device_assignment.assign(
        static_cast<size_t>(spec.num_replicas) * spec.num_partitions, -1);
    for (int p = 0; p < spec.num_partitions; ++p) {
      const auto& ids = assignment.computation_devices(p).replica_device_ids();
      if (ids.size() != spec.num_replicas) {
        return InvalidArgumentError(
            "computation ", p, " of the device assignment lists ", ids.size(),
            " devices for ", spec.num_replicas, " replicas");
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
    ASSIGN_OR_RETURN(
        runtime::Device * device,
        client.LookupAddressableDevice(static_cast<int>(
            std::min<int64_t>(build.device_ordinal(), INT32_MAX))));
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
  const std::vector<runtime::Device*>& devices = executable.devices();
  for (int p = 0; p < partitions; ++p) {
    auto* computation = proto.add_computation_devices();
    for (int r = 0; r < replicas; ++r) {
      computation->add_replica_device_ids(devices[r * partitions + p]->id());
    }
  }
  return proto.SerializeAsString();
}

}  // namespace kiln::pjrt
