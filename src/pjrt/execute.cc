// PJRT_LoadedExecutable_Execute: checks every device's arguments, then
// starts the executions (one launch of every device, or the one device
// named by execute_device) and hands out the output buffers and completion
// events at once.
#include <atomic>
#include <set>

#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/handles.h"

namespace kiln::pjrt {
namespace {

// The execute options Kiln honors, read from what the caller's struct
// holds; options Kiln cannot honor are errors, not silently dropped.
struct ExecuteOptions {
  std::set<int> non_donatable;
  int64_t launch_id = 0;
  std::shared_ptr<const exec::FfiUserData> ffi_user_data;
};

StatusOr<ExecuteOptions> ReadExecuteOptions(const PJRT_ExecuteOptions* options,
                                            size_t num_args) {
  ExecuteOptions result;
  std::set<int>& non_donatable = result.non_donatable;
  if (options == nullptr) return result;
  RETURN_IF_ERROR(CheckStruct(options,
                              PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, launch_id),
                              "PJRT_LoadedExecutable_Execute_Args.options"));
  if (options->num_send_ops > 0 || options->num_recv_ops > 0) {
    return UnimplementedError(
        "PJRT_ExecuteOptions: host send/recv callbacks (",
        options->num_send_ops, " send, ", options->num_recv_ops,
        " recv) are not supported: Kiln programs cannot use host channels");
  }
  // launch_id pairs up the executions of one multi-device launch started
  // one device at a time (execute_device set): those of a program with
  // collectives meet in one communicator.
  result.launch_id = options->launch_id;
  if (KILN_PJRT_HAS_FIELD(options, PJRT_ExecuteOptions,
                          num_non_donatable_input_indices) &&
      options->num_non_donatable_input_indices > 0) {
    if (options->non_donatable_input_indices == nullptr) {
      return InvalidArgumentError(
          "PJRT_ExecuteOptions.non_donatable_input_indices is null");
    }
    for (size_t i = 0; i < options->num_non_donatable_input_indices; ++i) {
      int64_t index = options->non_donatable_input_indices[i];
      if (index < 0 || static_cast<uint64_t>(index) >= num_args) {
        return InvalidArgumentError(
            "PJRT_ExecuteOptions.non_donatable_input_indices[", i, "] is ",
            index, "; the executable takes ", num_args, " arguments");
      }
      non_donatable.insert(static_cast<int>(index));
    }
  }
  if (KILN_PJRT_HAS_FIELD(options, PJRT_ExecuteOptions, context) &&
      options->context != nullptr) {
    // The user data FFI handlers of this execution read (pjrt/ffi.cc).
    ASSIGN_OR_RETURN(
        PJRT_ExecuteContext * context,
        CheckExecuteContext(options->context, "PJRT_ExecuteOptions.context"));
    result.ffi_user_data = context->user_data;
  }
  // call_location is a caller's note for debugging; nothing to honor.
  if (KILN_PJRT_HAS_FIELD(options, PJRT_ExecuteOptions, incarnation_ids) &&
      options->num_tasks > 0) {
    if (options->task_ids == nullptr) {
      return InvalidArgumentError("PJRT_ExecuteOptions.task_ids is null");
    }
    for (size_t i = 0; i < options->num_tasks; ++i) {
      if (options->task_ids[i] != 0) {
        return UnimplementedError("PJRT_ExecuteOptions names task ",
                                  options->task_ids[i],
                                  "; Kiln runs in one process (task 0)");
      }
    }
  }
  if (KILN_PJRT_HAS_FIELD(options, PJRT_ExecuteOptions, multi_slice_config) &&
      options->multi_slice_config != nullptr) {
    return UnimplementedError(
        "PJRT_ExecuteOptions.multi_slice_config: Kiln has one slice");
  }
  if (KILN_PJRT_HAS_FIELD(options, PJRT_ExecuteOptions,
                          num_hlo_output_callbacks) &&
      options->num_hlo_output_callbacks > 0) {
    return UnimplementedError(
        "PJRT_ExecuteOptions.hlo_output_callbacks are not supported");
  }
  return result;
}

}  // namespace

PJRT_Error* PJRT_LoadedExecutable_Execute(
    PJRT_LoadedExecutable_Execute_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_LoadedExecutable_Execute_Args,
                         device_complete_events);
    ASSIGN_OR_RETURN(
        PJRT_LoadedExecutable * loaded,
        CheckLoadedExecutable(args->executable,
                              "PJRT_LoadedExecutable_Execute_Args.executable"));
    if (loaded->deleted.load()) {
      return InvalidArgumentError(
          "PJRT_LoadedExecutable_Execute: the executable was deleted");
    }
    const runtime::Executable& executable = *loaded->state->executable;
    PJRT_Client* client = loaded->client;
    ASSIGN_OR_RETURN(ExecuteOptions options,
                     ReadExecuteOptions(args->options, args->num_args));

    // Which devices: one named device, or every device of the assignment.
    PJRT_Device* execute_device = nullptr;
    if (KILN_PJRT_HAS_FIELD(args, PJRT_LoadedExecutable_Execute_Args,
                            execute_device) &&
        args->execute_device != nullptr) {
      ASSIGN_OR_RETURN(
          execute_device,
          CheckDevice(args->execute_device,
                      "PJRT_LoadedExecutable_Execute_Args.execute_device"));
      RETURN_IF_ERROR(
          CheckSameClient(execute_device->client, client,
                          "PJRT_LoadedExecutable_Execute_Args.execute_device"));
      if (args->num_devices != 1) {
        return InvalidArgumentError(
            "PJRT_LoadedExecutable_Execute: with execute_device set, "
            "num_devices must be 1, not ",
            args->num_devices);
      }
    } else if (executable.portable()) {
      return InvalidArgumentError(
          "PJRT_LoadedExecutable_Execute: a portable executable runs on the "
          "device given as execute_device, and none was given");
    } else if (args->num_devices != loaded->addressable_devices.size()) {
      return InvalidArgumentError(
          "PJRT_LoadedExecutable_Execute: num_devices is ", args->num_devices,
          "; the executable runs on ", loaded->addressable_devices.size(),
          " devices (", executable.num_replicas(), " replicas x ",
          executable.num_partitions(), " partitions)");
    }
    const size_t num_devices = args->num_devices;
    const size_t num_args = args->num_args;
    const size_t num_outputs = executable.outputs().size();
    if (num_args > 0 && args->argument_lists == nullptr) {
      return InvalidArgumentError(
          "PJRT_LoadedExecutable_Execute_Args.argument_lists is null");
    }
    if (args->output_lists == nullptr) {
      return InvalidArgumentError(
          "PJRT_LoadedExecutable_Execute_Args.output_lists is null");
    }

    // Every device's request is checked before any starts.
    std::vector<runtime::ExecuteRequest> requests(num_devices);
    // One id per call: what FFI handlers read as the run's id.
    static std::atomic<int64_t> next_run_id{1};
    const int64_t run_id = next_run_id.fetch_add(1);
    for (size_t d = 0; d < num_devices; ++d) {
      runtime::ExecuteRequest& request = requests[d];
      if (execute_device != nullptr) {
        request.device = execute_device->device;
        // A one-device program runs on any device; a multi-device one
        // runs the replica or partition its assignment puts there.
      } else {
        request.position = static_cast<int>(d);
      }
      request.non_donatable = options.non_donatable;
      request.launch_id = options.launch_id;
      request.ffi_user_data = options.ffi_user_data;
      request.run_id = run_id;
      if (num_args > 0 && args->argument_lists[d] == nullptr) {
        return InvalidArgumentError(
            "PJRT_LoadedExecutable_Execute_Args.argument_lists[", d,
            "] is null");
      }
      if (num_outputs > 0 && args->output_lists[d] == nullptr) {
        return InvalidArgumentError(
            "PJRT_LoadedExecutable_Execute_Args.output_lists[", d, "] is null");
      }
      request.arguments.reserve(num_args);
      for (size_t a = 0; a < num_args; ++a) {
        PJRT_Buffer* handle = args->argument_lists[d][a];
        StatusOr<PJRT_Buffer*> buffer = CheckBuffer(handle, "argument");
        if (!buffer.ok() || (*buffer)->client != client) {
          // Named only when it fails: a dispatch is a microsecond, and the
          // name is a string per argument.
          const std::string what =
              StrCat("PJRT_LoadedExecutable_Execute_Args.argument_lists[", d,
                     "][", a, "]");
          RETURN_IF_ERROR(CheckBuffer(handle, what).status());
          return CheckSameClient((*buffer)->client, client, what);
        }
        request.arguments.push_back((*buffer)->buffer);
      }
    }

    // The runtime checks every device's request (arguments, shapes,
    // devices, donation) before any of them starts.
    std::vector<runtime::ExecuteResult> results;
    if (execute_device != nullptr) {
      auto result = executable.Execute(std::move(requests[0]));
      if (!result.ok()) {
        return result.status().WithContext("PJRT_LoadedExecutable_Execute");
      }
      results.push_back(std::move(result).value());
    } else {
      // Only a race (a buffer deleted since the check) or running out of
      // memory fails here; nothing has started then.
      auto launched = executable.ExecuteLaunch(std::move(requests));
      if (!launched.ok()) {
        return launched.status().WithContext("PJRT_LoadedExecutable_Execute");
      }
      results = std::move(launched).value();
    }
    for (size_t d = 0; d < num_devices; ++d) {
      for (size_t i = 0; i < num_outputs; ++i) {
        args->output_lists[d][i] =
            NewBufferHandle(std::move(results[d].outputs[i]), client);
      }
      if (args->device_complete_events != nullptr) {
        args->device_complete_events[d] =
            NewEventHandle(std::move(results[d].done));
      }
    }
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
