// Small helpers shared by the client's wrappers of PJRT handles.
#ifndef KILN_SRC_CLIENT_PJRT_UTIL_H_
#define KILN_SRC_CLIENT_PJRT_UTIL_H_

#include <cstring>
#include <string>
#include <string_view>

#include "base/status.h"
#include "pjrt_c_api.h"

namespace kiln::client::internal {

// For queries a plugin may leave out: true when `status` is OK, false when
// it is UNIMPLEMENTED (an absent slot or a stub), the error otherwise.
inline StatusOr<bool> OptionalQuery(Status status) {
  if (status.ok()) return true;
  if (status.code() == StatusCode::kUnimplemented) return false;
  return status;
}

// The number a plugin stored in an enum field, read without assuming it is
// one of the enum's values (loading an out-of-range enum is undefined).
template <typename Enum>
int RawEnumValue(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int));
  int raw;
  std::memcpy(&raw, &field, sizeof(raw));
  return raw;
}

// The element type a plugin reported, checked against the PJRT types.
inline StatusOr<PJRT_Buffer_Type> CheckedBufferType(
    const PJRT_Buffer_Type& field, std::string_view what) {
  int raw = RawEnumValue(field);
  if (raw <= PJRT_Buffer_Type_INVALID || raw > PJRT_Buffer_Type_U1) {
    return InternalError(what, " reported element type ", raw,
                         ", which is not a PJRT_Buffer_Type");
  }
  return static_cast<PJRT_Buffer_Type>(raw);
}

// A plugin-owned (pointer, size) string as a std::string; null is empty.
inline std::string CopyString(const char* data, size_t size) {
  return data == nullptr ? std::string() : std::string(data, size);
}

}  // namespace kiln::client::internal

#endif  // KILN_SRC_CLIENT_PJRT_UTIL_H_
