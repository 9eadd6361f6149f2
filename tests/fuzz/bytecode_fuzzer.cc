// libFuzzer target for the bytecode reader: any input must decode or give
// an error, never crash, hang or allocate without bound. What decodes is
// also verified, and printed when valid, since that is what Kiln does with
// an artifact next. Seed it with the corpus artifacts:
//   bytecode_fuzzer -max_total_time=600 <work dir>
//   ../shared/corpus/stablehlo/vhlo
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "parse/bytecode/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto module = kiln::parse::bytecode::ReadBytecodeModule(bytes, "fuzz");
  if (!module.ok()) {
    // Errors must say something.
    if (module.status().message().empty()) __builtin_trap();
    return 0;
  }
  if (kiln::ir::VerifyModule(**module).ok()) {
    kiln::ir::PrintOptions options;
    options.generic = true;
    std::string text = kiln::ir::PrintModule(**module, options);
    if (text.empty()) __builtin_trap();
  }
  return 0;
}
