// Plain StableHLO bytecode against its text: every NAME.mlirbc (and
// NAME.vN.mlirbc, the same module written at container version N) in
// tests/parse/testdata/stablehlo_bytecode is a module that JAX's MLIR wrote
// with module.operation.write_bytecode(), and NAME.mlir is JAX's printed
// text of it (stablehlo_bytecode_gen.py --small). Reading one must give the
// module parsing the other gives. KILN_STABLEHLO_BYTECODE_DIR names a folder
// of more such programs (the generator's full set) to check the same way.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/file.h"
#include "support/test_support.h"

#ifdef KILN_HAVE_PARSE_TEXT
#include "ir/printer.h"
#include "parse/parse.h"
#include "parse/text/parser.h"
#endif

namespace kiln::parse {
namespace {

#ifdef KILN_HAVE_PARSE_TEXT

// The text twin of a bytecode file: NAME.mlir for NAME.mlirbc and
// NAME.vN.mlirbc.
std::string TextTwin(const std::string& bytecode_path) {
  std::string base = bytecode_path.substr(0, bytecode_path.size() - 7);
  size_t dot = base.rfind('.');
  size_t slash = base.rfind('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash) &&
      base.size() > dot + 2 && base[dot + 1] == 'v' &&
      base.find_first_not_of("0123456789", dot + 2) == std::string::npos) {
    base = base.substr(0, dot);
  }
  return base + ".mlir";
}

// Compares one file with its twin; an empty string when they match.
std::string CompareWithText(const std::string& bytecode_path) {
  std::string text_path = TextTwin(bytecode_path);
  StatusOr<std::string> bytes = ReadFile(bytecode_path);
  StatusOr<std::string> text = ReadFile(text_path);
  if (!bytes.ok() || !text.ok()) return "cannot read the pair";
  StatusOr<std::unique_ptr<ir::Module>> decoded =
      ParseModule(*bytes, bytecode_path);
  if (!decoded.ok()) return StrCat("decode: ", decoded.status().ToString());
  StatusOr<std::unique_ptr<ir::Module>> parsed =
      ParseTextModule(*text, text_path);
  // Kiln's text parser lacks the pretty form of some ops of other dialects
  // (sdy.mesh); the generator writes the generic text too.
  std::string generic_path =
      text_path.substr(0, text_path.size() - 5) + ".generic.mlir";
  if (!parsed.ok()) {
    StatusOr<std::string> generic = ReadFile(generic_path);
    if (generic.ok()) parsed = ParseTextModule(*generic, generic_path);
  }
  if (!parsed.ok()) return StrCat("parse: ", parsed.status().ToString());
  std::string why;
  if (!ir::StructurallyEqual(**parsed, **decoded, /*compare_locations=*/false,
                             &why)) {
    return StrCat("modules differ: ", why);
  }
  // And as `kiln print --no-locations` shows them. (The generic form may
  // differ where equal values are stored differently: a splat dense tensor
  // in bytecode, the same tensor written out in full in the pretty text.)
  ir::PrintOptions options;
  options.locations = false;
  if (ir::PrintModule(**parsed, options) !=
      ir::PrintModule(**decoded, options)) {
    return "prints differ";
  }
  return "";
}

// Checks every bytecode file of `dir`; returns how many there were.
int CheckFolder(const std::string& dir, const char* label) {
  int files = 0, matched = 0;
  for (const std::string& path : kiln::testing::ListFiles(dir, ".mlirbc")) {
    if (path.size() > 12 && path.substr(path.size() - 12) == ".vhlo.mlirbc") {
      continue;  // portable artifacts: the VHLO tests' job
    }
    SCOPED_TRACE(path);
    ++files;
    std::string difference = CompareWithText(path);
    EXPECT_EQ(difference, "");
    matched += difference.empty();
  }
  std::printf("%s: %d/%d plain bytecode files read as their text\n", label,
              matched, files);
  return files;
}

TEST(StablehloBytecodeTest, SmallProgramsReadAsTheirText) {
  std::string dir =
      std::string(KILN_SOURCE_DIR) + "/tests/parse/testdata/stablehlo_bytecode";
  if (kiln::testing::ListFiles(dir, ".mlirbc").empty()) {
    GTEST_SKIP() << "no inputs under " << dir
                 << " (tests/parse/stablehlo_bytecode_gen.py --small writes "
                    "them)";
  }
  EXPECT_GT(CheckFolder(dir, "stablehlo bytecode (small set)"), 0);
}

TEST(StablehloBytecodeTest, GeneratedProgramsReadAsTheirText) {
  const char* dir = std::getenv("KILN_STABLEHLO_BYTECODE_DIR");
  if (dir == nullptr || *dir == '\0') {
    GTEST_SKIP() << "KILN_STABLEHLO_BYTECODE_DIR is not set (a folder "
                    "tests/parse/stablehlo_bytecode_gen.py wrote)";
  }
  if (kiln::testing::ListFiles(dir, ".mlirbc").empty()) {
    GTEST_SKIP() << "no .mlirbc files under " << dir;
  }
  EXPECT_GT(CheckFolder(dir, "stablehlo bytecode (generated)"), 0);
}

#else

TEST(StablehloBytecodeTest, NeedsTheTextParser) {
  GTEST_SKIP() << "the comparison needs the text parser (parse/text)";
}

#endif  // KILN_HAVE_PARSE_TEXT

}  // namespace
}  // namespace kiln::parse
