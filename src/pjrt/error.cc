// The PJRT_Error_* entry points and Kiln's error objects.
#include "pjrt/error.h"

#include "base/logging.h"
#include "pjrt/args.h"
#include "pjrt/entry_points.h"

namespace kiln::pjrt {
namespace {

void DestroyError(PJRT_Error* error) { delete static_cast<Error*>(error); }

void ErrorMessage(const PJRT_Error* error, const char** message, size_t* size) {
  std::string_view text = static_cast<const Error*>(error)->status.message();
  *message = text.data();
  *size = text.size();
}

PJRT_Error_Code ErrorCode(const PJRT_Error* error) {
  return static_cast<PJRT_Error_Code>(
      static_cast<const Error*>(error)->status.code());
}

void ErrorForEachPayload(const PJRT_Error* error,
                         PJRT_Error_PayloadVisitor visitor, void* user_arg) {
  for (const auto& [key, value] :
       static_cast<const Error*>(error)->status.payloads()) {
    visitor(key.data(), key.size(), value.data(), value.size(), user_arg);
  }
}

const PJRT_Error_FunctionTable kErrorFunctions = {
    PJRT_Error_FunctionTable_STRUCT_SIZE,
    PJRT_Error_STRUCT_SIZE,
    nullptr,
    &DestroyError,
    &ErrorMessage,
    &ErrorCode,
    &ErrorForEachPayload,
};

// The table of an error made elsewhere, when it has the entry `has`.
template <typename Member>
const PJRT_Error_FunctionTable* ForeignTable(const PJRT_Error* error,
                                             Member member) {
  const PJRT_Error_FunctionTable* table = error->vtable;
  if (table == nullptr || table->*member == nullptr) return nullptr;
  return table;
}

}  // namespace

PJRT_Error* NewError(Status status) {
  KILN_CHECK(!status.ok());
  Error* error = new Error();
  error->vtable = &kErrorFunctions;
  error->status = std::move(status);
  return error;
}

PJRT_Error* ToPjrtError(Status status) {
  if (status.ok()) return nullptr;
  return NewError(std::move(status));
}

bool IsKilnError(const PJRT_Error* error) {
  return error != nullptr && error->vtable == &kErrorFunctions;
}

Status StatusOfError(const PJRT_Error* error) {
  if (error == nullptr) return OkStatus();
  if (IsKilnError(error)) return static_cast<const Error*>(error)->status;
  const PJRT_Error_FunctionTable* table = error->vtable;
  if (table == nullptr || table->get_code == nullptr ||
      table->message == nullptr) {
    return UnknownError("an error without a usable function table");
  }
  const char* message = nullptr;
  size_t size = 0;
  table->message(error, &message, &size);
  int code = table->get_code(error);
  Status status(code > 0 && code <= 16 ? static_cast<StatusCode>(code)
                                       : StatusCode::kUnknown,
                std::string(message == nullptr ? "" : message,
                            message == nullptr ? 0 : size));
  return status;
}

StatusOr<StatusCode> StatusCodeFromPjrt(int code, std::string_view what) {
  if (code < 0 || code > 16) {
    return InvalidArgumentError(what, " is ", code,
                                ", which is not a PJRT_Error_Code (0..16)");
  }
  return static_cast<StatusCode>(code);
}

void PJRT_Error_Destroy(PJRT_Error_Destroy_Args* args) {
  // Nothing can be reported from here: a bad call is logged and ignored.
  Status check =
      CheckStruct(args, PJRT_STRUCT_SIZE(PJRT_Error_Destroy_Args, error));
  if (!check.ok()) {
    KILN_LOG(ERROR) << "PJRT_Error_Destroy: " << check.message();
    return;
  }
  PJRT_Error* error = args->error;
  if (error == nullptr) return;
  if (IsKilnError(error)) {
    DestroyError(error);
  } else if (ForeignTable(error, &PJRT_Error_FunctionTable::destroy)) {
    error->vtable->destroy(error);
  } else {
    KILN_LOG(ERROR) << "PJRT_Error_Destroy: the error has no function table "
                       "to destroy it with; leaking it";
  }
}

void PJRT_Error_Message(PJRT_Error_Message_Args* args) {
  Status check = CheckStruct(
      args, PJRT_STRUCT_SIZE(PJRT_Error_Message_Args, message_size));
  if (!check.ok()) {
    KILN_LOG(ERROR) << "PJRT_Error_Message: " << check.message();
    return;
  }
  const PJRT_Error* error = args->error;
  args->message = "";
  args->message_size = 0;
  if (error == nullptr) return;
  if (IsKilnError(error)) {
    ErrorMessage(error, &args->message, &args->message_size);
  } else if (ForeignTable(error, &PJRT_Error_FunctionTable::message)) {
    error->vtable->message(error, &args->message, &args->message_size);
  }
}

PJRT_Error* PJRT_Error_GetCode(PJRT_Error_GetCode_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Error_GetCode_Args, code);
    if (args->error == nullptr) {
      return InvalidArgumentError("PJRT_Error_GetCode_Args.error is null");
    }
    if (IsKilnError(args->error)) {
      args->code = ErrorCode(args->error);
    } else if (ForeignTable(args->error, &PJRT_Error_FunctionTable::get_code)) {
      args->code = args->error->vtable->get_code(args->error);
    } else {
      return InvalidArgumentError(
          "PJRT_Error_GetCode_Args.error has no function table");
    }
    return OkStatus();
  });
}

PJRT_Error* PJRT_Error_ForEachPayload(PJRT_Error_ForEachPayload_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Error_ForEachPayload_Args, user_arg);
    if (args->error == nullptr) return OkStatus();  // no error, no payloads
    if (args->visitor == nullptr) {
      return InvalidArgumentError(
          "PJRT_Error_ForEachPayload_Args.visitor is null");
    }
    if (IsKilnError(args->error)) {
      ErrorForEachPayload(args->error, args->visitor, args->user_arg);
    } else if (ForeignTable(args->error,
                            &PJRT_Error_FunctionTable::for_each_payload)) {
      args->error->vtable->for_each_payload(args->error, args->visitor,
                                            args->user_arg);
    }
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
