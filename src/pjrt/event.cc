// The PJRT_Event_* entry points.
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/error.h"
#include "pjrt/handles.h"

namespace kiln::pjrt {

PJRT_Error* PJRT_Event_Destroy(PJRT_Event_Destroy_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Event_Destroy_Args, event);
    if (args->event == nullptr) return OkStatus();
    ASSIGN_OR_RETURN(PJRT_Event * event,
                     CheckEvent(args->event, "PJRT_Event_Destroy_Args.event"));
    // The runtime event lives on while anything still waits on it or is
    // firing its callbacks; only the handle goes.
    event->tag = HandleTag{};
    delete event;
    return OkStatus();
  });
}

PJRT_Error* PJRT_Event_IsReady(PJRT_Event_IsReady_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Event_IsReady_Args, is_ready);
    ASSIGN_OR_RETURN(PJRT_Event * event,
                     CheckEvent(args->event, "PJRT_Event_IsReady_Args.event"));
    args->is_ready = event->event->IsReady();
    return OkStatus();
  });
}

PJRT_Error* PJRT_Event_Error(PJRT_Event_Error_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Event_Error_Args, event);
    ASSIGN_OR_RETURN(PJRT_Event * event,
                     CheckEvent(args->event, "PJRT_Event_Error_Args.event"));
    if (!event->event->IsReady()) {
      return FailedPreconditionError(
          "PJRT_Event_Error: the event is not ready yet (wait with "
          "PJRT_Event_Await or PJRT_Event_OnReady first)");
    }
    // The event's own error, as a fresh error object the caller owns.
    return event->event->status();
  });
}

PJRT_Error* PJRT_Event_Await(PJRT_Event_Await_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Event_Await_Args, event);
    ASSIGN_OR_RETURN(PJRT_Event * event,
                     CheckEvent(args->event, "PJRT_Event_Await_Args.event"));
    return event->event->Await();
  });
}

PJRT_Error* PJRT_Event_OnReady(PJRT_Event_OnReady_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Event_OnReady_Args, user_arg);
    ASSIGN_OR_RETURN(PJRT_Event * event,
                     CheckEvent(args->event, "PJRT_Event_OnReady_Args.event"));
    if (args->callback == nullptr) {
      return InvalidArgumentError("PJRT_Event_OnReady_Args.callback is null");
    }
    // The callback captures only the function and its argument, never the
    // handle: the caller may destroy the handle from inside the callback.
    PJRT_Event_OnReadyCallback callback = args->callback;
    void* user_arg = args->user_arg;
    event->event->OnReady([callback, user_arg](const Status& status) {
      callback(ToPjrtError(status), user_arg);
    });
    return OkStatus();
  });
}

PJRT_Error* PJRT_Event_Create(PJRT_Event_Create_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Event_Create_Args, event);
    PJRT_Event* event = NewEventHandle(runtime::Event::Create());
    event->settable = true;
    args->event = event;
    return OkStatus();
  });
}

PJRT_Error* PJRT_Event_Set(PJRT_Event_Set_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Event_Set_Args, error_message_size);
    ASSIGN_OR_RETURN(PJRT_Event * event,
                     CheckEvent(args->event, "PJRT_Event_Set_Args.event"));
    if (!event->settable) {
      return InvalidArgumentError(
          "PJRT_Event_Set: the event was made by Kiln to report its own work "
          "and can only be set by Kiln; set events made by PJRT_Event_Create");
    }
    ASSIGN_OR_RETURN(StatusCode code,
                     StatusCodeFromPjrt(RawEnumValue(args->error_code),
                                        "PJRT_Event_Set_Args.error_code"));
    if (code == StatusCode::kOk) return event->event->Set(OkStatus());
    if (args->error_message == nullptr && args->error_message_size > 0) {
      return InvalidArgumentError("PJRT_Event_Set_Args.error_message is null");
    }
    std::string message(
        args->error_message_size == 0 ? "" : args->error_message,
        args->error_message_size);
    return event->event->Set(Status(code, std::move(message)));
  });
}

}  // namespace kiln::pjrt
