// libFuzzer target for the command line's .npy reader (`kiln run --input`):
// any bytes parse or give an error; what parses writes back to a file that
// parses to the same array.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tools/kiln/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto array = kiln::cli::ParseNpy(bytes);
  if (!array.ok()) {
    if (array.status().message().empty()) __builtin_trap();
    return 0;
  }
  auto again = kiln::cli::ParseNpy(kiln::cli::WriteNpy(*array));
  if (!again.ok() || again->data != array->data ||
      !(again->shape == array->shape)) {
    __builtin_trap();
  }
  return 0;
}
