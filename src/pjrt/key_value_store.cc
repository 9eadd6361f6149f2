#include "pjrt/key_value_store.h"

#include <algorithm>
#include <climits>
#include <string>

#include "base/strings.h"
#include "pjrt/error.h"

namespace kiln::pjrt {
namespace {

// Given to the callbacks to report their failures: a Kiln error read back
// after the call.
PJRT_Error* MakeCallbackError(PJRT_Error_Code code, const char* message,
                              size_t message_size) {
  StatusOr<StatusCode> read =
      StatusCodeFromPjrt(static_cast<int>(code), "a key-value callback");
  StatusCode status_code = read.ok() ? *read : StatusCode::kUnknown;
  if (status_code == StatusCode::kOk) status_code = StatusCode::kUnknown;
  return NewError(Status(status_code, std::string(message, message_size)));
}

// The status of what a callback returned, freeing Kiln's errors.
Status TakeCallbackError(PJRT_Error* error) {
  if (error == nullptr) return OkStatus();
  Status status = StatusOfError(error);
  if (IsKilnError(error)) delete static_cast<Error*>(error);
  return status;
}

class CallbackStore : public runtime::KeyValueStore {
 public:
  CallbackStore(PJRT_KeyValueGetCallback get, void* get_arg,
                PJRT_KeyValuePutCallback put, void* put_arg)
      : get_(get), get_arg_(get_arg), put_(put), put_arg_(put_arg) {}

  Status Put(std::string_view key, std::string_view value) override {
    PJRT_CallbackError callback_error = &MakeCallbackError;
    PJRT_KeyValuePutCallback_Args args{};
    args.struct_size = PJRT_KeyValuePutCallback_Args_STRUCT_SIZE;
    args.key = key.data();
    args.key_size = key.size();
    args.value = value.data();
    args.value_size = value.size();
    args.callback_error = &callback_error;
    args.user_arg = put_arg_;
    Status status = TakeCallbackError(put_(&args));
    if (!status.ok()) {
      return status.WithContext(StrCat("key-value put of \"", key, "\""));
    }
    return OkStatus();
  }

  StatusOr<std::string> Get(std::string_view key,
                            std::chrono::milliseconds timeout) override {
    PJRT_CallbackError callback_error = &MakeCallbackError;
    PJRT_KeyValueGetCallback_Args args{};
    args.struct_size = PJRT_KeyValueGetCallback_Args_STRUCT_SIZE;
    args.key = key.data();
    args.key_size = key.size();
    args.timeout_in_ms =
        static_cast<int>(std::clamp<int64_t>(timeout.count(), 1, INT_MAX));
    args.callback_error = &callback_error;
    args.user_arg = get_arg_;
    Status status = TakeCallbackError(get_(&args));
    if (!status.ok()) {
      return status.WithContext(StrCat("key-value get of \"", key, "\""));
    }
    std::string value(args.value == nullptr ? "" : args.value,
                      args.value == nullptr ? 0 : args.value_size);
    if (args.value != nullptr && args.value_deleter_callback != nullptr) {
      args.value_deleter_callback(args.value);
    }
    return value;
  }

 private:
  PJRT_KeyValueGetCallback get_;
  void* get_arg_;
  PJRT_KeyValuePutCallback put_;
  void* put_arg_;
};

}  // namespace

StatusOr<std::shared_ptr<runtime::KeyValueStore>> CallbackKeyValueStore(
    const PJRT_Client_Create_Args& args) {
  if (args.kv_get_callback == nullptr || args.kv_put_callback == nullptr) {
    return InvalidArgumentError(
        "PJRT_Client_Create: a client of several processes (num_nodes > 1) "
        "needs kv_get_callback and kv_put_callback, the key-value store the "
        "processes share");
  }
  return std::make_shared<CallbackStore>(
      args.kv_get_callback, args.kv_get_user_arg, args.kv_put_callback,
      args.kv_put_user_arg);
}

}  // namespace kiln::pjrt
