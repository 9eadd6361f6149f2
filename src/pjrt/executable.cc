// Compilation and the PJRT_Executable_* / PJRT_LoadedExecutable_* queries
// (execution is in execute.cc).
//
// A PJRT_LoadedExecutable is a runtime::Executable on a client's devices;
// a PJRT_Executable is a second handle on the same compiled program, for
// the queries that do not need devices. Both share one ExecutableState
// holding the stable arrays and strings the queries hand out.
#include <cstring>
#include <filesystem>

#include "base/file.h"
#include "base/fingerprint.h"
#include "base/logging.h"
#include "ir/printer.h"
#include "parse/parse.h"
#include "proto/xla_hlo.pb.h"
#include "pjrt/args.h"
#include "pjrt/compile_options.h"
#include "pjrt/element_types.h"
#include "pjrt/entry_points.h"
#include "pjrt/handles.h"
#include "runtime/device.h"

// The payloads of the results that come with a deleter.
struct PJRT_SerializedExecutable {
  std::string bytes;
};
struct PJRT_SerializedCompileOptions {
  std::string bytes;
};
struct PJRT_DeviceAssignmentSerialized {
  std::string bytes;
};

namespace kiln::pjrt {
namespace {

// Serialized executables: "KILNEXEC", a format number, the platform version
// that wrote it, the compile options and the program. Loading compiles the
// program again (Kiln compiles in milliseconds), so the blob stays valid
// for as long as the program's format does; a blob of another Kiln version
// is still refused, as frameworks expect of a cache entry from elsewhere.
constexpr std::string_view kSerializedMagic = "KILNEXEC";
constexpr uint32_t kSerializedFormat = 1;

void AppendU64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>(value >> (8 * i)));
}

void AppendBytes(std::string& out, std::string_view bytes) {
  AppendU64(out, bytes.size());
  out.append(bytes);
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  StatusOr<uint64_t> U64(std::string_view what) {
    if (bytes_.size() < 8) return Truncated(what);
    uint64_t value = 0;
    for (int i = 7; i >= 0; --i) {
      value = (value << 8) | static_cast<uint8_t>(bytes_[i]);
    }
    bytes_.remove_prefix(8);
    return value;
  }
  StatusOr<std::string_view> Bytes(std::string_view what) {
    ASSIGN_OR_RETURN(uint64_t size, U64(what));
    if (size > bytes_.size()) return Truncated(what);
    std::string_view out = bytes_.substr(0, size);
    bytes_.remove_prefix(size);
    return out;
  }
  bool empty() const { return bytes_.empty(); }

 private:
  Status Truncated(std::string_view what) {
    return InvalidArgumentError(
        "the serialized Kiln executable is truncated (in its ", what, ")");
  }
  std::string_view bytes_;
};

std::string Serialize(const ExecutableState& state) {
  std::string out(kSerializedMagic);
  AppendU64(out, kSerializedFormat);
  AppendBytes(out, runtime::Client::PlatformVersion());
  AppendBytes(out, state.compile_options);
  AppendBytes(out, state.program);
  return out;
}

struct Deserialized {
  std::string_view compile_options;
  std::string_view program;
};

StatusOr<Deserialized> Deserialize(std::string_view bytes) {
  if (bytes.substr(0, kSerializedMagic.size()) != kSerializedMagic) {
    return InvalidArgumentError(
        "the bytes (", bytes.size(),
        ") are not an executable serialized by Kiln (no KILNEXEC header); "
        "executables of other plugins cannot be loaded");
  }
  Reader reader(bytes.substr(kSerializedMagic.size()));
  ASSIGN_OR_RETURN(uint64_t format, reader.U64("format number"));
  ASSIGN_OR_RETURN(std::string_view version, reader.Bytes("version"));
  if (format != kSerializedFormat ||
      version != runtime::Client::PlatformVersion()) {
    return InvalidArgumentError(
        "the executable was serialized by ", version, " (format ", format,
        "); this plugin is ", runtime::Client::PlatformVersion(), " (format ",
        kSerializedFormat, "): compile the program again");
  }
  Deserialized out;
  ASSIGN_OR_RETURN(out.compile_options, reader.Bytes("compile options"));
  ASSIGN_OR_RETURN(out.program, reader.Bytes("program"));
  if (!reader.empty()) {
    return InvalidArgumentError(
        "the serialized Kiln executable has trailing bytes");
  }
  return out;
}

// A program a caller passed: the MLIR bytes Kiln compiles ("mlir" as given;
// an HLO module, "hlo" or "hlo_with_config", read into Kiln's IR and printed,
// so a serialized executable holds StableHLO whatever the format was), and
// an HLO module as an HloModuleProtoWithConfig.
struct Program {
  std::string mlir;
  std::string hlo_with_config;
};

StatusOr<Program> ProgramBytes(const PJRT_Program* program,
                               std::string_view what) {
  RETURN_IF_ERROR(
      CheckStruct(program, PJRT_STRUCT_SIZE(PJRT_Program, format_size), what));
  if (program->format == nullptr && program->format_size > 0) {
    return InvalidArgumentError(what, ".format is null");
  }
  std::string_view format(program->format == nullptr ? "" : program->format,
                          program->format_size);
  bool hlo = format == "hlo" || format == "hlo_with_config";
  if (!hlo && format != "mlir") {
    // XLA's exact text (its conformance test checks it).
    return InvalidArgumentError("Unknown program format '", format, "'.");
  }
  if (program->code == nullptr && program->code_size > 0) {
    return InvalidArgumentError(what, ".code is null");
  }
  if (program->code_size == 0) {
    return InvalidArgumentError(what, " is empty");
  }
  std::string_view code(program->code, program->code_size);
  Program out;
  if (!hlo) {
    out.mlir = std::string(code);
    return out;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                   parse::ParseProgram(code, format, "<hlo program>"));
  out.mlir = ir::PrintModule(*module);
  if (format == "hlo_with_config") {
    out.hlo_with_config = std::string(code);
  } else {
    // The module as it came, with the config XLA insists on when it reads
    // the module back: the entry layout (the module's own program shape).
    xla::HloModuleProtoWithConfig wrapped;
    xla::HloModuleProto& hlo = *wrapped.mutable_hlo_module();
    hlo.ParseFromArray(code.data(), static_cast<int>(code.size()));
    xla::HloModuleConfigProto& config = *wrapped.mutable_config();
    if (hlo.has_host_program_shape()) {
      *config.mutable_entry_computation_layout() = hlo.host_program_shape();
    } else {
      for (const auto& computation : hlo.computations()) {
        if (computation.id() == hlo.entry_computation_id()) {
          *config.mutable_entry_computation_layout() =
              computation.program_shape();
        }
      }
    }
    config.set_replica_count(1);
    config.set_num_partitions(1);
    out.hlo_with_config = wrapped.SerializeAsString();
  }
  return out;
}

// The serialized compile options a caller passed (empty when none).
StatusOr<std::string_view> OptionsBytes(const char* bytes, size_t size,
                                        std::string_view what) {
  if (bytes == nullptr && size > 0) {
    return InvalidArgumentError(what, " is null");
  }
  return std::string_view(bytes == nullptr ? "" : bytes, size);
}

std::shared_ptr<const ExecutableState> MakeExecutableState(
    std::shared_ptr<runtime::Executable> executable,
    const runtime::Client* client, std::string compile_options,
    std::string program) {
  auto state = std::make_shared<ExecutableState>();
  state->client = client;
  state->compile_options = std::move(compile_options);
  state->program = std::move(program);
  state->fingerprint = FingerprintToHex(executable->fingerprint());
  for (const runtime::ValueInfo& output : executable->outputs()) {
    state->output_types.push_back(DTypeToPjrt(output.shape.dtype()));
    state->output_ranks.push_back(output.shape.rank());
    state->output_dims.insert(state->output_dims.end(),
                              output.shape.dims().begin(),
                              output.shape.dims().end());
    std::string_view kind = runtime::MemoryKindName(output.memory_kind);
    state->output_kinds.push_back(kind.data());
    state->output_kind_sizes.push_back(kind.size());
  }
  for (const runtime::ValueInfo& parameter : executable->parameters()) {
    std::string_view kind = runtime::MemoryKindName(parameter.memory_kind);
    state->parameter_kinds.push_back(kind.data());
    state->parameter_kind_sizes.push_back(kind.size());
  }
  // Full minor-to-major orders (row-major where the executable keeps none).
  auto layout_of = [](const runtime::ValueInfo& value) {
    auto layout = std::make_unique<PJRT_Layouts_MemoryLayout>();
    layout->minor_to_major = value.minor_to_major;
    if (layout->minor_to_major.empty()) {
      for (size_t d = value.shape.rank(); d-- > 0;) {
        layout->minor_to_major.push_back(static_cast<int64_t>(d));
      }
    }
    return layout;
  };
  for (const runtime::ValueInfo& parameter : executable->parameters()) {
    state->parameter_layouts.push_back(layout_of(parameter));
    state->parameter_layout_handles.push_back(
        state->parameter_layouts.back().get());
  }
  for (const runtime::ValueInfo& output : executable->outputs()) {
    state->output_layouts.push_back(layout_of(output));
    state->output_layout_handles.push_back(state->output_layouts.back().get());
  }
  for (const std::string& sharding : executable->parameter_shardings()) {
    state->parameter_shardings.push_back(sharding.data());
    state->parameter_sharding_sizes.push_back(sharding.size());
  }
  for (const std::string& sharding : executable->output_shardings()) {
    state->output_shardings.push_back(sharding.data());
    state->output_sharding_sizes.push_back(sharding.size());
  }
  // XLA's names for the same estimates.
  const runtime::CostAnalysis& cost = executable->cost();
  state->cost_properties.AddFloat("flops", static_cast<float>(cost.flops));
  state->cost_properties.AddFloat("transcendentals",
                                  static_cast<float>(cost.transcendentals));
  state->cost_properties.AddFloat("bytes accessed",
                                  static_cast<float>(cost.bytes_accessed));
  state->executable = std::move(executable);
  return state;
}

// With KILN_DUMP_DIR set (created if missing), every program a framework
// compiles is written there as it arrived (`<fingerprint>.program`, with its
// `.options` proto), so that `kiln print` and `kiln run` can replay it. A
// failed write is only logged.
void DumpProgram(std::string_view program, std::string_view options) {
  std::string dir = GetEnv("KILN_DUMP_DIR");
  if (dir.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    KILN_LOG(WARNING) << "KILN_DUMP_DIR: cannot create " << dir << ": "
                      << error.message();
    return;
  }
  std::string stem = dir + "/" +
                     FingerprintToHex(FingerprintCombine(
                         Fingerprint64(program), Fingerprint64(options)));
  for (Status status : {WriteFile(stem + ".program", program),
                        WriteFile(stem + ".options", options)}) {
    if (!status.ok()) {
      KILN_LOG(WARNING) << "KILN_DUMP_DIR: " << status.ToString();
    }
  }
}

StatusOr<std::shared_ptr<const ExecutableState>> CompileState(
    PJRT_Client* client, std::string_view program, std::string_view options,
    std::string hlo_with_config = "") {
  DumpProgram(program, options);
  ASSIGN_OR_RETURN(runtime::CompileSpec spec,
                   ParseCompileOptions(options, *client->runtime));
  ASSIGN_OR_RETURN(
      std::shared_ptr<runtime::Executable> executable,
      runtime::Executable::Compile(*client->runtime, program, spec));
  std::shared_ptr<const ExecutableState> state =
      MakeExecutableState(std::move(executable), client->runtime.get(),
                          std::string(options), std::string(program));
  const_cast<ExecutableState&>(*state).hlo_with_config =
      std::move(hlo_with_config);
  return state;
}

PJRT_LoadedExecutable* NewLoaded(PJRT_Client* client,
                                 std::shared_ptr<const ExecutableState> state) {
  auto* loaded = new PJRT_LoadedExecutable();
  loaded->client = client;
  const runtime::Executable& executable = *state->executable;
  const int partitions = executable.num_partitions();
  const std::vector<runtime::Device*>& devices =
      executable.addressable_devices();
  for (size_t i = 0; i < devices.size(); ++i) {
    const int position = executable.addressable_positions()[i];
    loaded->addressable_devices.push_back(client->device_handle(devices[i]));
    loaded->logical_ids.push_back(
        PJRT_LogicalDeviceIds{position / partitions, position % partitions});
  }
  loaded->state = std::move(state);
  return loaded;
}

PJRT_Executable* NewExecutable(std::shared_ptr<const ExecutableState> state) {
  auto* handle = new PJRT_Executable();
  handle->state = std::move(state);
  return handle;
}

#define KILN_EXECUTABLE_OF(args, T)                                      \
  ASSIGN_OR_RETURN(PJRT_Executable* executable,                          \
                   CheckExecutable(args->executable, #T ".executable")); \
  const ExecutableState& state = *executable->state

#define KILN_LOADED_OF(args, T)                   \
  ASSIGN_OR_RETURN(PJRT_LoadedExecutable* loaded, \
                   CheckLoadedExecutable(args->executable, #T ".executable"))

}  // namespace

// --- Compile and load -------------------------------------------------------

PJRT_Error* PJRT_Client_Compile(PJRT_Client_Compile_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_Compile_Args, executable);
    ASSIGN_OR_RETURN(
        PJRT_Client * client,
        CheckClient(args->client, "PJRT_Client_Compile_Args.client"));
    ASSIGN_OR_RETURN(
        Program program,
        ProgramBytes(args->program, "PJRT_Client_Compile_Args.program"));
    ASSIGN_OR_RETURN(
        std::string_view options,
        OptionsBytes(args->compile_options, args->compile_options_size,
                     "PJRT_Client_Compile_Args.compile_options"));
    ASSIGN_OR_RETURN(std::shared_ptr<const ExecutableState> state,
                     CompileState(client, program.mlir, options,
                                  std::move(program.hlo_with_config)));
    args->executable = NewLoaded(client, std::move(state));
    return OkStatus();
  });
}

PJRT_Error* PJRT_Compile(PJRT_Compile_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Compile_Args, executable);
    if (args->client == nullptr) {
      return UnimplementedError(
          "PJRT_Compile without a client: Kiln compiles for a client's "
          "devices; pass the client (or use PJRT_Client_Compile)");
    }
    ASSIGN_OR_RETURN(PJRT_Client * client,
                     CheckClient(args->client, "PJRT_Compile_Args.client"));
    ASSIGN_OR_RETURN(Program program,
                     ProgramBytes(args->program, "PJRT_Compile_Args.program"));
    ASSIGN_OR_RETURN(
        std::string_view options,
        OptionsBytes(args->compile_options, args->compile_options_size,
                     "PJRT_Compile_Args.compile_options"));
    ASSIGN_OR_RETURN(std::shared_ptr<const ExecutableState> state,
                     CompileState(client, program.mlir, options,
                                  std::move(program.hlo_with_config)));
    args->executable = NewExecutable(std::move(state));
    return OkStatus();
  });
}

PJRT_Error* PJRT_Client_Load(PJRT_Client_Load_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Client_Load_Args, loaded_executable);
    ASSIGN_OR_RETURN(PJRT_Client * client,
                     CheckClient(args->client, "PJRT_Client_Load_Args.client"));
    ASSIGN_OR_RETURN(
        PJRT_Executable * executable,
        CheckExecutable(args->executable, "PJRT_Client_Load_Args.executable"));
    ASSIGN_OR_RETURN(
        std::string_view options,
        OptionsBytes(args->compile_options, args->compile_options_size,
                     "PJRT_Client_Load_Args.compile_options"));
    const ExecutableState& state = *executable->state;
    // The compiled program is bound to the devices of the client it was
    // compiled for; anything else compiles it again.
    bool same_client = state.client == client->runtime.get() &&
                       (options.empty() || options == state.compile_options);
    if (same_client) {
      args->loaded_executable = NewLoaded(client, executable->state);
      return OkStatus();
    }
    ASSIGN_OR_RETURN(
        std::shared_ptr<const ExecutableState> loaded,
        CompileState(client, state.program,
                     options.empty() ? std::string_view(state.compile_options)
                                     : options,
                     state.hlo_with_config));
    args->loaded_executable = NewLoaded(client, std::move(loaded));
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_DeserializeAndLoad(
    PJRT_Executable_DeserializeAndLoad_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_DeserializeAndLoad_Args,
                         loaded_executable);
    ASSIGN_OR_RETURN(
        PJRT_Client * client,
        CheckClient(args->client,
                    "PJRT_Executable_DeserializeAndLoad_Args.client"));
    if (args->serialized_executable == nullptr) {
      return InvalidArgumentError(
          "PJRT_Executable_DeserializeAndLoad_Args.serialized_executable is "
          "null");
    }
    ASSIGN_OR_RETURN(Deserialized blob, Deserialize(std::string_view(
                                            args->serialized_executable,
                                            args->serialized_executable_size)));
    std::string_view options = blob.compile_options;
    if (KILN_PJRT_HAS_FIELD(args, PJRT_Executable_DeserializeAndLoad_Args,
                            overridden_serialized_compile_options_size) &&
        args->overridden_serialized_compile_options != nullptr &&
        args->overridden_serialized_compile_options_size > 0) {
      options =
          std::string_view(args->overridden_serialized_compile_options,
                           args->overridden_serialized_compile_options_size);
    }
    ASSIGN_OR_RETURN(std::shared_ptr<const ExecutableState> state,
                     CompileState(client, blob.program, options));
    args->loaded_executable = NewLoaded(client, std::move(state));
    return OkStatus();
  });
}

// --- PJRT_Executable -----------------------------------------------------

PJRT_Error* PJRT_Executable_Destroy(PJRT_Executable_Destroy_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_Destroy_Args, executable);
    if (args->executable == nullptr) return OkStatus();
    ASSIGN_OR_RETURN(
        PJRT_Executable * executable,
        CheckExecutable(args->executable,
                        "PJRT_Executable_Destroy_Args.executable"));
    executable->tag = HandleTag{};
    delete executable;
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_Name(PJRT_Executable_Name_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_Name_Args, executable_name_size);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_Name_Args);
    const std::string& name = state.executable->name();
    args->executable_name = name.data();
    args->executable_name_size = name.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_NumReplicas(
    PJRT_Executable_NumReplicas_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_NumReplicas_Args, num_replicas);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_NumReplicas_Args);
    args->num_replicas = state.executable->num_replicas();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_NumPartitions(
    PJRT_Executable_NumPartitions_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_NumPartitions_Args,
                         num_partitions);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_NumPartitions_Args);
    args->num_partitions = state.executable->num_partitions();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_NumOutputs(PJRT_Executable_NumOutputs_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_NumOutputs_Args, num_outputs);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_NumOutputs_Args);
    args->num_outputs = state.executable->outputs().size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_SizeOfGeneratedCodeInBytes(
    PJRT_Executable_SizeOfGeneratedCodeInBytes_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_SizeOfGeneratedCodeInBytes_Args,
                         size_in_bytes);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_SizeOfGeneratedCodeInBytes_Args);
    args->size_in_bytes = state.executable->memory_stats().constant_bytes;
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_GetCostAnalysis(
    PJRT_Executable_GetCostAnalysis_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_GetCostAnalysis_Args,
                         properties);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_GetCostAnalysis_Args);
    args->properties = state.cost_properties.data();
    args->num_properties = state.cost_properties.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_OutputMemoryKinds(
    PJRT_Executable_OutputMemoryKinds_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_OutputMemoryKinds_Args,
                         memory_kind_sizes);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_OutputMemoryKinds_Args);
    args->num_outputs = state.output_kinds.size();
    args->memory_kinds = state.output_kinds.data();
    args->memory_kind_sizes = state.output_kind_sizes.data();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_ParameterMemoryKinds(
    PJRT_Executable_ParameterMemoryKinds_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_ParameterMemoryKinds_Args,
                         memory_kind_sizes);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_ParameterMemoryKinds_Args);
    args->num_parameters = state.parameter_kinds.size();
    args->memory_kinds = state.parameter_kinds.data();
    args->memory_kind_sizes = state.parameter_kind_sizes.data();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_OutputElementTypes(
    PJRT_Executable_OutputElementTypes_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_OutputElementTypes_Args,
                         num_output_types);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_OutputElementTypes_Args);
    args->output_types =
        const_cast<PJRT_Buffer_Type*>(state.output_types.data());
    args->num_output_types = state.output_types.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_OutputDimensions(
    PJRT_Executable_OutputDimensions_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_OutputDimensions_Args,
                         dim_sizes);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_OutputDimensions_Args);
    args->num_outputs = state.output_ranks.size();
    args->dims = state.output_dims.data();
    args->dim_sizes = state.output_ranks.data();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_Fingerprint(
    PJRT_Executable_Fingerprint_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_Fingerprint_Args,
                         executable_fingerprint_size);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_Fingerprint_Args);
    args->executable_fingerprint = state.fingerprint.data();
    args->executable_fingerprint_size = state.fingerprint.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_GetCompiledMemoryStats(
    PJRT_Executable_GetCompiledMemoryStats_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_GetCompiledMemoryStats_Args,
                         peak_memory_in_bytes);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_GetCompiledMemoryStats_Args);
    const runtime::CompiledMemoryStats& stats =
        state.executable->memory_stats();
    args->generated_code_size_in_bytes = stats.constant_bytes;
    args->argument_size_in_bytes = stats.argument_bytes;
    args->output_size_in_bytes = stats.output_bytes;
    args->alias_size_in_bytes = stats.alias_bytes;
    args->temp_size_in_bytes = stats.temp_bytes;
    // Kiln's devices are host memory: nothing is counted twice as "host".
    args->host_generated_code_size_in_bytes = 0;
    args->host_argument_size_in_bytes = 0;
    args->host_output_size_in_bytes = 0;
    args->host_alias_size_in_bytes = 0;
    args->host_temp_size_in_bytes = 0;
    // At most: arguments, outputs that do not reuse an argument, scratch.
    args->peak_memory_in_bytes = stats.argument_bytes + stats.output_bytes -
                                 stats.alias_bytes + stats.temp_bytes;
    if (KILN_PJRT_HAS_FIELD(args, PJRT_Executable_GetCompiledMemoryStats_Args,
                            peak_unpadded_heap_bytes)) {
      args->total_size_in_bytes = args->peak_memory_in_bytes;
      args->total_allocation_bytes =
          stats.output_bytes - stats.alias_bytes + stats.temp_bytes;
      args->indefinite_allocations = 0;
      args->peak_unpadded_heap_bytes = stats.temp_bytes;
    }
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_OptimizedProgram(
    PJRT_Executable_OptimizedProgram_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_OptimizedProgram_Args, program);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_OptimizedProgram_Args);
    PJRT_Program* program = args->program;
    RETURN_IF_ERROR(
        CheckStruct(program, PJRT_STRUCT_SIZE(PJRT_Program, format_size),
                    "PJRT_Executable_OptimizedProgram_Args.program"));
    // A program that came as HLO goes back as HLO: frameworks convert
    // "mlir" to HLO to read it, and not every op Kiln's reader writes
    // (chlo.erf) converts.
    bool hlo = !state.hlo_with_config.empty();
    std::string_view kFormat = hlo ? "hlo_with_config" : "mlir";
    const std::string& text =
        hlo ? state.hlo_with_config : state.executable->optimized_text();
    program->format = kFormat.data();
    program->format_size = kFormat.size();
    if (program->code == nullptr) {
      // First call of the two: the size the caller must allocate.
      program->code_size = text.size();
      return OkStatus();
    }
    if (program->code_size < text.size()) {
      return InvalidArgumentError(
          "PJRT_Executable_OptimizedProgram_Args.program has ",
          program->code_size, " bytes for a program of ", text.size());
    }
    std::memcpy(program->code, text.data(), text.size());
    program->code_size = text.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_Serialize(PJRT_Executable_Serialize_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_Serialize_Args,
                         serialized_executable_deleter);
    ASSIGN_OR_RETURN(
        PJRT_Executable * executable,
        CheckExecutable(const_cast<PJRT_Executable*>(args->executable),
                        "PJRT_Executable_Serialize_Args.executable"));
    auto* serialized =
        new PJRT_SerializedExecutable{Serialize(*executable->state)};
    args->serialized_bytes = serialized->bytes.data();
    args->serialized_bytes_size = serialized->bytes.size();
    args->serialized_executable = serialized;
    args->serialized_executable_deleter = [](PJRT_SerializedExecutable* s) {
      delete s;
    };
    return OkStatus();
  });
}

PJRT_Error* PJRT_Executable_GetCompileOptions(
    PJRT_Executable_GetCompileOptions_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Executable_GetCompileOptions_Args,
                         serialized_compile_options_deleter);
    KILN_EXECUTABLE_OF(args, PJRT_Executable_GetCompileOptions_Args);
    auto* options = new PJRT_SerializedCompileOptions{state.compile_options};
    args->serialized_bytes = options->bytes.data();
    args->serialized_bytes_size = options->bytes.size();
    args->serialized_compile_options = options;
    args->serialized_compile_options_deleter =
        [](PJRT_SerializedCompileOptions* s) { delete s; };
    return OkStatus();
  });
}

// --- PJRT_LoadedExecutable -------------------------------------------------

PJRT_Error* PJRT_LoadedExecutable_Destroy(
    PJRT_LoadedExecutable_Destroy_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_LoadedExecutable_Destroy_Args, executable);
    if (args->executable == nullptr) return OkStatus();
    KILN_LOADED_OF(args, PJRT_LoadedExecutable_Destroy_Args);
    // Executions in flight hold the plans they run.
    loaded->tag = HandleTag{};
    delete loaded;
    return OkStatus();
  });
}

PJRT_Error* PJRT_LoadedExecutable_GetExecutable(
    PJRT_LoadedExecutable_GetExecutable_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_LoadedExecutable_GetExecutable_Args,
                         executable);
    ASSIGN_OR_RETURN(
        PJRT_LoadedExecutable * loaded,
        CheckLoadedExecutable(
            args->loaded_executable,
            "PJRT_LoadedExecutable_GetExecutable_Args.loaded_executable"));
    args->executable = NewExecutable(loaded->state);
    return OkStatus();
  });
}

PJRT_Error* PJRT_LoadedExecutable_AddressableDevices(
    PJRT_LoadedExecutable_AddressableDevices_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_LoadedExecutable_AddressableDevices_Args,
                         num_addressable_devices);
    KILN_LOADED_OF(args, PJRT_LoadedExecutable_AddressableDevices_Args);
    args->addressable_devices = loaded->addressable_devices.data();
    args->num_addressable_devices = loaded->addressable_devices.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_LoadedExecutable_AddressableDeviceLogicalIds(
    PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args,
                         PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args,
                         num_addressable_device_logical_ids);
    KILN_LOADED_OF(args,
                   PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args);
    args->addressable_device_logical_ids = loaded->logical_ids.data();
    args->num_addressable_device_logical_ids = loaded->logical_ids.size();
    return OkStatus();
  });
}

PJRT_Error* PJRT_LoadedExecutable_GetDeviceAssignment(
    PJRT_LoadedExecutable_GetDeviceAssignment_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_LoadedExecutable_GetDeviceAssignment_Args,
                         serialized_device_assignment_deleter);
    KILN_LOADED_OF(args, PJRT_LoadedExecutable_GetDeviceAssignment_Args);
    auto* assignment = new PJRT_DeviceAssignmentSerialized{
        SerializeDeviceAssignment(*loaded->state->executable)};
    args->serialized_bytes = assignment->bytes.data();
    args->serialized_bytes_size = assignment->bytes.size();
    args->serialized_device_assignment = assignment;
    // Called even for an empty assignment (a portable executable).
    args->serialized_device_assignment_deleter =
        [](PJRT_DeviceAssignmentSerialized* s) { delete s; };
    return OkStatus();
  });
}

PJRT_Error* PJRT_LoadedExecutable_Delete(
    PJRT_LoadedExecutable_Delete_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_LoadedExecutable_Delete_Args, executable);
    KILN_LOADED_OF(args, PJRT_LoadedExecutable_Delete_Args);
    loaded->deleted.store(true);
    return OkStatus();
  });
}

PJRT_Error* PJRT_LoadedExecutable_IsDeleted(
    PJRT_LoadedExecutable_IsDeleted_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_LoadedExecutable_IsDeleted_Args,
                         is_deleted);
    KILN_LOADED_OF(args, PJRT_LoadedExecutable_IsDeleted_Args);
    args->is_deleted = loaded->deleted.load();
    return OkStatus();
  });
}

PJRT_Error* PJRT_LoadedExecutable_Fingerprint(
    PJRT_LoadedExecutable_Fingerprint_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_LoadedExecutable_Fingerprint_Args,
                         executable_fingerprint_size);
    KILN_LOADED_OF(args, PJRT_LoadedExecutable_Fingerprint_Args);
    args->executable_fingerprint = loaded->state->fingerprint.data();
    args->executable_fingerprint_size = loaded->state->fingerprint.size();
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
