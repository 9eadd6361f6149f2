// Executable: a PJRT_LoadedExecutable (and the PJRT_Executable behind it).
#include "base/strings.h"
#include "client/pjrt_util.h"
#include "kiln/pjrt.h"

namespace kiln::client {

using internal::CopyString;
using internal::OptionalQuery;

Executable::~Executable() {
  const Plugin& plugin = client_->plugin();
  if (executable_ != nullptr) {
    auto args = KILN_PJRT_ARGS(PJRT_Executable_Destroy_Args);
    args.executable = executable_;
    Status status = KILN_PJRT_CALL(plugin, PJRT_Executable_Destroy, args);
    status.IgnoreError();
  }
  if (handle_ != nullptr) {
    auto args = KILN_PJRT_ARGS(PJRT_LoadedExecutable_Destroy_Args);
    args.executable = handle_;
    Status status = KILN_PJRT_CALL(plugin, PJRT_LoadedExecutable_Destroy, args);
    status.IgnoreError();
  }
}

Status Executable::Describe() {
  const Plugin& plugin = client_->plugin();
  auto get_args = KILN_PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get_args.loaded_executable = handle_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(plugin, PJRT_LoadedExecutable_GetExecutable, get_args));
  executable_ = get_args.executable;
  if (executable_ == nullptr) {
    return InternalError("PJRT_LoadedExecutable_GetExecutable returned null");
  }

  auto name_args = KILN_PJRT_ARGS(PJRT_Executable_Name_Args);
  name_args.executable = executable_;
  ASSIGN_OR_RETURN(
      bool has_name,
      OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_Executable_Name, name_args)));
  if (has_name) {
    name_ =
        CopyString(name_args.executable_name, name_args.executable_name_size);
  }

  auto replicas_args = KILN_PJRT_ARGS(PJRT_Executable_NumReplicas_Args);
  replicas_args.executable = executable_;
  ASSIGN_OR_RETURN(bool has_replicas,
                   OptionalQuery(KILN_PJRT_CALL(
                       plugin, PJRT_Executable_NumReplicas, replicas_args)));
  if (has_replicas) num_replicas_ = replicas_args.num_replicas;

  auto partitions_args = KILN_PJRT_ARGS(PJRT_Executable_NumPartitions_Args);
  partitions_args.executable = executable_;
  ASSIGN_OR_RETURN(
      bool has_partitions,
      OptionalQuery(KILN_PJRT_CALL(plugin, PJRT_Executable_NumPartitions,
                                   partitions_args)));
  if (has_partitions) num_partitions_ = partitions_args.num_partitions;

  auto outputs_args = KILN_PJRT_ARGS(PJRT_Executable_NumOutputs_Args);
  outputs_args.executable = executable_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(plugin, PJRT_Executable_NumOutputs, outputs_args));
  num_outputs_ = outputs_args.num_outputs;

  auto fingerprint_args = KILN_PJRT_ARGS(PJRT_Executable_Fingerprint_Args);
  fingerprint_args.executable = executable_;
  ASSIGN_OR_RETURN(bool has_fingerprint,
                   OptionalQuery(KILN_PJRT_CALL(
                       plugin, PJRT_Executable_Fingerprint, fingerprint_args)));
  if (has_fingerprint && fingerprint_args.executable_fingerprint != nullptr) {
    fingerprint_ = CopyString(fingerprint_args.executable_fingerprint,
                              fingerprint_args.executable_fingerprint_size);
  }

  auto devices_args =
      KILN_PJRT_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args);
  devices_args.executable = handle_;
  ASSIGN_OR_RETURN(
      bool has_devices,
      OptionalQuery(KILN_PJRT_CALL(
          plugin, PJRT_LoadedExecutable_AddressableDevices, devices_args)));
  if (has_devices) {
    for (size_t i = 0; i < devices_args.num_addressable_devices; ++i) {
      Device* device = client_->FindDevice(devices_args.addressable_devices[i]);
      if (device != nullptr) addressable_devices_.push_back(device);
    }
  }
  return OkStatus();
}

StatusOr<std::vector<Shape>> Executable::OutputShapes() const {
  const Plugin& plugin = client_->plugin();
  auto types_args = KILN_PJRT_ARGS(PJRT_Executable_OutputElementTypes_Args);
  types_args.executable = executable_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(plugin, PJRT_Executable_OutputElementTypes, types_args));
  auto dims_args = KILN_PJRT_ARGS(PJRT_Executable_OutputDimensions_Args);
  dims_args.executable = executable_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(plugin, PJRT_Executable_OutputDimensions, dims_args));
  if (types_args.num_output_types != dims_args.num_outputs) {
    return InternalError("plugin reports ", types_args.num_output_types,
                         " output types but ", dims_args.num_outputs,
                         " output dimension lists");
  }
  if (dims_args.num_outputs > 0 &&
      (types_args.output_types == nullptr || dims_args.dim_sizes == nullptr)) {
    return InternalError("plugin reported ", dims_args.num_outputs,
                         " outputs with a null type or dimension list");
  }
  std::vector<Shape> shapes;
  const int64_t* dims = dims_args.dims;
  for (size_t i = 0; i < dims_args.num_outputs; ++i) {
    Shape shape;
    ASSIGN_OR_RETURN(
        shape.element_type,
        internal::CheckedBufferType(types_args.output_types[i],
                                    "PJRT_Executable_OutputElementTypes"));
    size_t rank = dims_args.dim_sizes[i];
    if (rank > 0 && dims == nullptr) {
      return InternalError(
          "plugin reported output dimensions with a null "
          "list");
    }
    shape.dimensions.assign(dims, dims + rank);
    dims += rank;
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

StatusOr<std::string> Executable::Serialize() const {
  auto args = KILN_PJRT_ARGS(PJRT_Executable_Serialize_Args);
  args.executable = executable_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(client_->plugin(), PJRT_Executable_Serialize, args));
  std::string bytes =
      CopyString(args.serialized_bytes, args.serialized_bytes_size);
  if (args.serialized_executable_deleter != nullptr) {
    args.serialized_executable_deleter(args.serialized_executable);
  }
  return bytes;
}

StatusOr<ExecuteResult> Executable::Execute(
    std::span<const std::vector<Buffer*>> arguments,
    const ExecuteOptions& options, Device* execute_device) const {
  const Plugin& plugin = client_->plugin();
  size_t num_devices = arguments.size();
  if (num_devices == 0) {
    return InvalidArgumentError("Execute of ", name_,
                                " needs the arguments of at least one device");
  }
  if (execute_device != nullptr && num_devices != 1) {
    return InvalidArgumentError("Execute of ", name_, " on one device got ",
                                num_devices, " argument lists");
  }
  size_t num_args = arguments[0].size();
  std::vector<std::vector<PJRT_Buffer*>> argument_handles(num_devices);
  std::vector<PJRT_Buffer* const*> argument_lists(num_devices);
  for (size_t d = 0; d < num_devices; ++d) {
    if (arguments[d].size() != num_args) {
      return InvalidArgumentError("Execute of ", name_, ": device ", d, " has ",
                                  arguments[d].size(),
                                  " arguments, device 0 has ", num_args);
    }
    for (size_t a = 0; a < num_args; ++a) {
      const Buffer* buffer = arguments[d][a];
      if (buffer == nullptr) {
        return InvalidArgumentError("Execute of ", name_, ": argument ", a,
                                    " of device ", d, " is null");
      }
      if (&buffer->client() != client_.get()) {
        return InvalidArgumentError("Execute of ", name_, ": argument ", a,
                                    " belongs to another client");
      }
      argument_handles[d].push_back(buffer->handle());
    }
    argument_lists[d] = argument_handles[d].data();
  }

  std::vector<std::vector<PJRT_Buffer*>> output_handles(
      num_devices, std::vector<PJRT_Buffer*>(num_outputs_, nullptr));
  std::vector<PJRT_Buffer**> output_lists(num_devices);
  for (size_t d = 0; d < num_devices; ++d) {
    output_lists[d] = output_handles[d].data();
  }
  std::vector<PJRT_Event*> complete_events(num_devices, nullptr);

  PJRT_ExecuteOptions execute_options{};
  execute_options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  execute_options.launch_id = options.launch_id;
  execute_options.non_donatable_input_indices =
      options.non_donatable_input_indices.data();
  execute_options.num_non_donatable_input_indices =
      options.non_donatable_input_indices.size();

  auto args = KILN_PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args);
  args.executable = handle_;
  args.options = &execute_options;
  args.argument_lists = argument_lists.data();
  args.num_devices = num_devices;
  args.num_args = num_args;
  args.output_lists = output_lists.data();
  args.device_complete_events = complete_events.data();
  args.execute_device =
      execute_device == nullptr ? nullptr : execute_device->handle();
  RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_LoadedExecutable_Execute, args));

  // Take ownership of everything first, so an error below leaks nothing.
  ExecuteResult result;
  result.outputs.resize(num_devices);
  for (size_t d = 0; d < num_devices; ++d) {
    result.device_complete.emplace_back(client_->shared_plugin(),
                                        complete_events[d]);
    for (PJRT_Buffer* handle : output_handles[d]) {
      result.outputs[d].push_back(
          handle == nullptr
              ? nullptr
              : std::unique_ptr<Buffer>(new Buffer(client_, handle)));
    }
  }
  for (size_t d = 0; d < num_devices; ++d) {
    for (size_t o = 0; o < result.outputs[d].size(); ++o) {
      if (result.outputs[d][o] == nullptr) {
        return InternalError("Execute of ", name_, " left output ", o,
                             " of device ", d, " null");
      }
      RETURN_IF_ERROR(result.outputs[d][o]->Describe());
    }
  }
  return result;
}

Status Executable::Delete() {
  auto args = KILN_PJRT_ARGS(PJRT_LoadedExecutable_Delete_Args);
  args.executable = handle_;
  return KILN_PJRT_CALL(client_->plugin(), PJRT_LoadedExecutable_Delete, args);
}

StatusOr<bool> Executable::IsDeleted() const {
  auto args = KILN_PJRT_ARGS(PJRT_LoadedExecutable_IsDeleted_Args);
  args.executable = handle_;
  RETURN_IF_ERROR(
      KILN_PJRT_CALL(client_->plugin(), PJRT_LoadedExecutable_IsDeleted, args));
  return args.is_deleted;
}

}  // namespace kiln::client
