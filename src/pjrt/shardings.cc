// The Shardings extension: what each partition of a partitioned program holds
// of its parameters and outputs. JAX reads the output shardings of every
// multi-device executable it compiles without being told them.
#include "base/status.h"
#include "pjrt/args.h"
#include "pjrt/error.h"
#include "pjrt/extensions.h"
#include "pjrt/handles.h"

namespace kiln::pjrt {
namespace {

PJRT_Error* ParameterShardings(
    PJRT_Shardings_PJRT_Executable_ParameterShardings_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args,
                         PJRT_Shardings_PJRT_Executable_ParameterShardings_Args,
                         sharding_sizes);
    ASSIGN_OR_RETURN(
        PJRT_Executable * executable,
        CheckExecutable(args->executable,
                        "PJRT_Shardings_PJRT_Executable_ParameterShardings_"
                        "Args.executable"));
    const ExecutableState& state = *executable->state;
    args->num_parameters = state.parameter_shardings.size();
    args->shardings = state.parameter_shardings.empty()
                          ? nullptr
                          : state.parameter_shardings.data();
    args->sharding_sizes = state.parameter_shardings.empty()
                               ? nullptr
                               : state.parameter_sharding_sizes.data();
    return OkStatus();
  });
}

PJRT_Error* OutputShardings(
    PJRT_Shardings_PJRT_Executable_OutputShardings_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args,
                         PJRT_Shardings_PJRT_Executable_OutputShardings_Args,
                         sharding_sizes);
    ASSIGN_OR_RETURN(
        PJRT_Executable * executable,
        CheckExecutable(
            args->executable,
            "PJRT_Shardings_PJRT_Executable_OutputShardings_Args.executable"));
    const ExecutableState& state = *executable->state;
    args->num_outputs = state.output_shardings.size();
    args->shardings = state.output_shardings.empty()
                          ? nullptr
                          : state.output_shardings.data();
    args->sharding_sizes = state.output_shardings.empty()
                               ? nullptr
                               : state.output_sharding_sizes.data();
    return OkStatus();
  });
}

}  // namespace

PJRT_Extension_Base* ExtensionChain() {
  static PJRT_Shardings_Extension shardings = [] {
    PJRT_Shardings_Extension extension{};
    extension.base.struct_size = PJRT_Shardings_Extension_STRUCT_SIZE;
    extension.base.type = PJRT_Extension_Type_Shardings;
    extension.base.next = FfiExtension();
    extension.PJRT_Shardings_PJRT_Executable_ParameterShardings =
        &ParameterShardings;
    extension.PJRT_Shardings_PJRT_Executable_OutputShardings = &OutputShardings;
    return extension;
  }();
  return &shardings.base;
}

}  // namespace kiln::pjrt
