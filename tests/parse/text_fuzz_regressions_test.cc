// Replays every input under tests/parse/fuzz_regressions/ (inputs the text
// fuzzer once crashed on, kept as found): each must parse or fail with a
// positioned error, and what parses must print and parse back unchanged.
#include <gtest/gtest.h>

#include <cstdio>

#include "base/file.h"
#include "ir/printer.h"
#include "parse/text/parser.h"
#include "support/test_support.h"

namespace kiln {
namespace {

TEST(TextFuzzRegressions, EveryCrashInputNowParsesOrFailsCleanly) {
  std::string dir =
      std::string(KILN_SOURCE_DIR) + "/tests/parse/fuzz_regressions";
  std::vector<std::string> files = testing::ListFiles(dir, ".mlir");
  ASSERT_FALSE(files.empty()) << "no regression inputs under " << dir;
  int rejected = 0, round_tripped = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    StatusOr<std::string> text = ReadFile(path);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    StatusOr<std::unique_ptr<ir::Module>> module =
        parse::ParseTextModule(*text, "fuzz.mlir");
    if (!module.ok()) {
      EXPECT_EQ(module.status().message().substr(0, 10), "fuzz.mlir:")
          << module.status().ToString();
      std::printf("%s: %s\n", path.substr(path.rfind('/') + 1).c_str(),
                  module.status().ToString().c_str());
      ++rejected;
      continue;
    }
    for (bool generic : {false, true}) {
      ir::PrintOptions options;
      options.generic = generic;
      std::string printed = ir::PrintModule(**module, options);
      StatusOr<std::unique_ptr<ir::Module>> again =
          parse::ParseTextModule(printed, "printed.mlir");
      ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << printed;
      std::string why;
      EXPECT_TRUE(ir::StructurallyEqual(**module, **again, true, &why)) << why;
    }
    ++round_tripped;
  }
  std::printf("text fuzz regressions: %zu inputs, %d round-trip, %d rejected\n",
              files.size(), round_tripped, rejected);
}

}  // namespace
}  // namespace kiln
