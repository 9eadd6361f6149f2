// libFuzzer target for the MLIR text parser and the printer: any input
// must parse or give an error (never crash, hang or allocate without
// bound), and whatever parses must print, in every form, to text that
// parses back to the same IR. Seed it with the corpus (split parts work
// best) and the dictionary next to this file, e.g.
//   text_parser_fuzzer -max_total_time=600 -max_len=16384
//     -dict=tests/fuzz/text_parser.dict <work dir> <seeds>
// Inputs it fails on go to tests/parse/fuzz_regressions/ (replayed by
// kiln_parse_tests); docs/architecture.md has the last run's figures.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ir/printer.h"
#include "parse/text/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = kiln::parse::ParseTextModule(text, "fuzz.mlir");
  if (!module.ok()) {
    if (module.status().message().empty()) __builtin_trap();
    return 0;
  }
  for (bool generic : {false, true}) {
    kiln::ir::PrintOptions options;
    options.generic = generic;
    std::string printed = kiln::ir::PrintModule(**module, options);
    auto again = kiln::parse::ParseTextModule(printed, "printed.mlir");
    if (!again.ok()) __builtin_trap();
    if (!kiln::ir::StructurallyEqual(**module, **again,
                                     /*compare_locations=*/true)) {
      __builtin_trap();
    }
  }
  return 0;
}
