// libFuzzer target for the reader of xla.CompileOptionsProto
// (PJRT_Client_Compile's and PJRT_Executable_DeserializeAndLoad's
// options): any bytes give a compile spec or an error naming what is wrong,
// for a client of 4 devices. Seeds: tests/fuzz/seeds/compile_options (what
// JAX and torch_xla send, written by scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pjrt/compile_options.h"
#include "runtime/client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kiln::runtime::Client* client = [] {
    kiln::runtime::ClientOptions options;
    options.device_count = 4;
    return kiln::runtime::Client::Create(options).value().release();
  }();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto spec = kiln::pjrt::ParseCompileOptions(bytes, *client);
  if (!spec.ok() && spec.status().message().empty()) __builtin_trap();
  return 0;
}
