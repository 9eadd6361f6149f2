// XLA's FFI on Kiln: the XLA_FFI_Api table handlers call back into, the
// process's registries of handlers and user types, and the user data of an
// execution (PJRT_ExecuteContext).
//
// A handler is registered by target name for a platform ("kiln"; "Host" and
// "cpu" registrations made through Kiln's own table are accepted too, since
// Kiln's devices are CPU devices) through the PJRT FFI extension
// (pjrt/ffi.cc) or XLA_FFI_Handler_Register. A custom call whose target has
// a handler lowers to an FFI call step (exec/kernels/ffi_call.h).
#ifndef KILN_EXEC_FFI_H_
#define KILN_EXEC_FFI_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "xla_ffi_c_api.h"

namespace kiln::exec {

class FfiUserData;

// Kiln's XLA_FFI_Api (FFI API 0.3).
const XLA_FFI_Api* FfiApi();

// A registered handler.
struct FfiHandler {
  XLA_FFI_Handler_Bundle bundle{};
  XLA_FFI_Handler_Traits traits = 0;
  std::string platform;
};

// Registers `bundle` as target `name` on `platform`. Registering a target
// again with the same execute handler is a no-op; with another one, an
// ALREADY_EXISTS error. The handler's metadata (its FFI version) is read
// first: a handler built for another major version is refused.
Status RegisterFfiHandler(std::string_view name, std::string_view platform,
                          const XLA_FFI_Handler_Bundle& bundle,
                          XLA_FFI_Handler_Traits traits);

// The handler of target `name`, if one is registered.
std::optional<FfiHandler> FindFfiHandler(std::string_view name);

// Registers user type `name`: `type_id` 0 asks for a new id (returned);
// another value must be the id the name has, or a fresh one to take.
// `deleter` (optional) destroys state of that type.
StatusOr<int64_t> RegisterFfiType(std::string_view name, int64_t type_id,
                                  void (*deleter)(void*));

// How to destroy a value of a registered type (null when none was given).
void (*FfiTypeDeleter(int64_t type_id))(void*);

// User data of executions: objects by type id, handed to handlers through
// XLA_FFI_ExecutionContext_Get, each destroyed with its deleter when the
// map is.
class FfiUserData {
 public:
  FfiUserData() = default;
  FfiUserData(const FfiUserData&) = delete;
  FfiUserData& operator=(const FfiUserData&) = delete;
  ~FfiUserData();

  // ALREADY_EXISTS when `type_id` has data.
  Status Add(int64_t type_id, void* data, void (*deleter)(void*));
  // Null when absent.
  void* Find(int64_t type_id) const;

 private:
  struct Entry {
    void* data;
    void (*deleter)(void*);
  };
  mutable std::mutex mutex_;
  std::map<int64_t, Entry> entries_;
};

// The Status a handler's error stands for (null: OK); destroys `error`.
Status TakeFfiError(XLA_FFI_Error* error);

// An error for a handler to return (for Kiln's own callers of the table).
XLA_FFI_Error* MakeFfiError(const Status& status);

}  // namespace kiln::exec

// The per-call context behind an XLA_FFI_ExecutionContext handle.
struct XLA_FFI_ExecutionContext {
  const kiln::exec::FfiUserData* user_data = nullptr;
  // The call site's state (set at the instantiate stage) and its type.
  void** state = nullptr;
  int64_t* state_type_id = nullptr;
  int32_t device_ordinal = 0;
  int64_t run_id = 0;
};

#endif  // KILN_EXEC_FFI_H_
