// The FFI extension (PJRT_Extension_Type_FFI) and execute contexts: how a
// framework registers XLA FFI handlers and user types with Kiln and hands
// user data to an execution. JAX reaches it through Kiln's Python package,
// which registers a custom-call handler for the platform `kiln`
// (python/jax_plugins/kiln/ffi.py).
#include "exec/ffi.h"
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/error.h"
#include "pjrt/extensions.h"
#include "pjrt/handles.h"

namespace kiln::pjrt {
namespace {

PJRT_Error* TypeIdRegister(PJRT_FFI_TypeID_Register_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_FFI_TypeID_Register_Args, type_id);
    if (args->type_name == nullptr && args->type_name_size > 0) {
      return InvalidArgumentError(
          "PJRT_FFI_TypeID_Register_Args.type_name is null");
    }
    ASSIGN_OR_RETURN(
        args->type_id,
        exec::RegisterFfiType(
            std::string_view(args->type_name == nullptr ? "" : args->type_name,
                             args->type_name_size),
            args->type_id, nullptr));
    return OkStatus();
  });
}

PJRT_Error* UserDataAdd(PJRT_FFI_UserData_Add_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_FFI_UserData_Add_Args, user_data);
    ASSIGN_OR_RETURN(PJRT_ExecuteContext * context,
                     CheckExecuteContext(args->context,
                                         "PJRT_FFI_UserData_Add_Args.context"));
    return context->user_data->Add(
        args->user_data.type_id, args->user_data.data, args->user_data.deleter);
  });
}

PJRT_Error* RegisterHandler(PJRT_FFI_Register_Handler_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_FFI_Register_Handler_Args, traits);
    std::string_view name(
        args->target_name == nullptr ? "" : args->target_name,
        args->target_name == nullptr ? 0 : args->target_name_size);
    std::string_view platform(
        args->platform_name == nullptr ? "" : args->platform_name,
        args->platform_name == nullptr ? 0 : args->platform_name_size);
    if (args->api_version != 1) {
      return UnimplementedError(
          "PJRT_FFI_Register_Handler: target \"", name, "\" with api_version ",
          args->api_version,
          ": Kiln runs typed FFI handlers (api_version 1) only");
    }
    if (args->handler == nullptr) {
      return InvalidArgumentError("PJRT_FFI_Register_Handler: target \"", name,
                                  "\" has a null handler");
    }
    XLA_FFI_Handler_Bundle bundle{};
    bundle.execute = reinterpret_cast<XLA_FFI_Handler*>(args->handler);
    return exec::RegisterFfiHandler(
        name, platform, bundle,
        static_cast<XLA_FFI_Handler_Traits>(args->traits));
  });
}

}  // namespace

PJRT_Error* PJRT_ExecuteContext_Create(PJRT_ExecuteContext_Create_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_ExecuteContext_Create_Args, context);
    args->context = new PJRT_ExecuteContext();
    return OkStatus();
  });
}

PJRT_Error* PJRT_ExecuteContext_Destroy(
    PJRT_ExecuteContext_Destroy_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_ExecuteContext_Destroy_Args, context);
    ASSIGN_OR_RETURN(
        PJRT_ExecuteContext * context,
        CheckExecuteContext(args->context,
                            "PJRT_ExecuteContext_Destroy_Args.context"));
    delete context;
    return OkStatus();
  });
}

PJRT_Extension_Base* FfiExtension() {
  static PJRT_FFI_Extension ffi = [] {
    PJRT_FFI_Extension extension{};
    extension.base.struct_size = PJRT_FFI_Extension_STRUCT_SIZE;
    extension.base.type = PJRT_Extension_Type_FFI;
    extension.base.next = ProfilerExtension();
    extension.type_id_register = &TypeIdRegister;
    extension.user_data_add = &UserDataAdd;
    extension.register_handler = &RegisterHandler;
    return extension;
  }();
  return &ffi.base;
}

}  // namespace kiln::pjrt
