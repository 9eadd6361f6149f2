// Small helpers shared by the client's wrappers of PJRT handles.
#ifndef KILN_SRC_CLIENT_PJRT_UTIL_H_
#define KILN_SRC_CLIENT_PJRT_UTIL_H_

#include <string>

#include "base/status.h"

namespace kiln::client::internal {

// For queries a plugin may leave out: true when `status` is OK, false when
// it is UNIMPLEMENTED (an absent slot or a stub), the error otherwise.
inline StatusOr<bool> OptionalQuery(Status status) {
  if (status.ok()) return true;
  if (status.code() == StatusCode::kUnimplemented) return false;
  return status;
}

// A plugin-owned (pointer, size) string as a std::string; null is empty.
inline std::string CopyString(const char* data, size_t size) {
  return data == nullptr ? std::string() : std::string(data, size);
}

}  // namespace kiln::client::internal

#endif  // KILN_SRC_CLIENT_PJRT_UTIL_H_
