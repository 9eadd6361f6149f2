// libFuzzer target for the HLO reader: any bytes as a serialized
// HloModuleProto. What reads must verify (the reader verifies what it
// builds) and print; nothing may crash, hang or trip a sanitizer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/printer.h"
#include "parse/hlo/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto module = kiln::parse::hlo::ReadHloFile(bytes, "fuzz.hlo.pb");
  if (module.ok()) {
    std::string text = kiln::ir::PrintModule(**module);
    (void)text;
  }
  return 0;
}
