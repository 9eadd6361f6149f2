// The FFI layout table (ffi_abi_layout.inc) computed from jaxlib's own
// xla/ffi/api/c_api.h, for ffi_abi_test.cc to compare with Kiln's header.
// Built only when CMake found jaxlib's headers.
#include <cstddef>
#include <string>
#include <vector>

#include "xla/ffi/api/c_api.h"

namespace kiln::testing {

std::vector<std::string> JaxlibFfiLayout() {
  std::vector<std::string> lines;
#define KILN_FFI_STRUCT(s)                                                  \
  lines.push_back(std::string(#s) + " " + std::to_string(sizeof(s)) + " " + \
                  std::to_string(alignof(s)));
#define KILN_FFI_FIELD(s, f) \
  lines.push_back(std::string(#s "." #f " ") + std::to_string(offsetof(s, f)));
#include "ffi_abi_layout.inc"
#undef KILN_FFI_STRUCT
#undef KILN_FFI_FIELD
  return lines;
}

}  // namespace kiln::testing
