// What the fuzz targets that drive the plugin's C API share: zeroed
// argument structs and the check that every error says something.
#ifndef KILN_TESTS_FUZZ_PJRT_FUZZ_UTIL_H_
#define KILN_TESTS_FUZZ_PJRT_FUZZ_UTIL_H_

#include <cstddef>
#include <cstring>

#include "pjrt_c_api.h"

// The table libpjrt_kiln.so exports (pjrt/api.cc), linked in directly.
extern "C" const PJRT_Api* KilnPjrtApi(void);

namespace kiln::fuzz {

// Zeroed args with `struct_size` set.
template <typename T>
T Args(size_t size) {
  T args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = size;
  return args;
}
#define KILN_FUZZ_ARGS(T) ::kiln::fuzz::Args<T>(T##_STRUCT_SIZE)

// Reads and destroys `error` (null: OK); traps on an error whose message is
// empty, since every error must say what went wrong.
inline void Check(const PJRT_Api* api, PJRT_Error* error) {
  if (error == nullptr) return;
  auto message = KILN_FUZZ_ARGS(PJRT_Error_Message_Args);
  message.error = error;
  api->PJRT_Error_Message(&message);
  if (message.message_size == 0) __builtin_trap();
  auto code = KILN_FUZZ_ARGS(PJRT_Error_GetCode_Args);
  code.error = error;
  api->PJRT_Error_GetCode(&code);
  auto destroy = KILN_FUZZ_ARGS(PJRT_Error_Destroy_Args);
  destroy.error = error;
  api->PJRT_Error_Destroy(&destroy);
}

// Whether `error` is null; checks and destroys it otherwise.
inline bool Ok(const PJRT_Api* api, PJRT_Error* error) {
  const bool ok = error == nullptr;
  Check(api, error);
  return ok;
}

}  // namespace kiln::fuzz

#endif  // KILN_TESTS_FUZZ_PJRT_FUZZ_UTIL_H_
