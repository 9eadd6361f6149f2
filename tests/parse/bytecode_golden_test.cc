// The golden pairs of ../shared/corpus/stablehlo/vhlo: each X.mlir.bc is
// the portable artifact serialized from X.mlir, so the module decoded from
// one must equal the module parsed from the other (locations aside; the
// artifacts were written with debug info stripped), and print the same
// generic text. The artifact from a future version must be rejected.

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "base/file.h"
#include "parse/bytecode/reader.h"
#include "support/test_support.h"

#ifdef KILN_HAVE_PARSE_TEXT
#include "parse/parse.h"
#include "parse/text/parser.h"
#if __has_include("ir/printer.h")
#include "ir/printer.h"
#define KILN_HAVE_IR_PRINTER 1
#endif
#endif

namespace kiln::parse::bytecode {
namespace {

#ifdef KILN_HAVE_PARSE_TEXT

// The first line where two texts differ, for messages.
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t line_start = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] != b[i]) {
      size_t a_end = a.find('\n', i);
      size_t b_end = b.find('\n', i);
      return StrCat("text:     ", a.substr(line_start, a_end - line_start),
                    "\nbytecode: ", b.substr(line_start, b_end - line_start));
    }
    if (a[i] == '\n') line_start = i + 1;
  }
  return a.size() == b.size() ? "" : "one text is a prefix of the other";
}

// Compares one pair; returns an empty string when they match.
std::string ComparePair(const std::string& bc_path) {
  std::string mlir_path = bc_path.substr(0, bc_path.size() - 3);
  StatusOr<std::string> bytes = ReadFile(bc_path);
  StatusOr<std::string> text = ReadFile(mlir_path);
  if (!bytes.ok() || !text.ok()) return "cannot read the pair";
  // Through the facade, as `kiln parse` reads files.
  StatusOr<std::unique_ptr<ir::Module>> decoded = ParseModule(*bytes, bc_path);
  if (!decoded.ok()) return StrCat("decode: ", decoded.status().ToString());
  StatusOr<std::unique_ptr<ir::Module>> parsed =
      ParseTextModule(*text, mlir_path);
  if (!parsed.ok()) return StrCat("parse: ", parsed.status().ToString());
  std::string why;
  if (!ir::StructurallyEqual(**parsed, **decoded, /*compare_locations=*/false,
                             &why)) {
    return StrCat("modules differ: ", why);
  }
#ifdef KILN_HAVE_IR_PRINTER
  ir::PrintOptions options;
  options.generic = true;
  options.locations = false;
  std::string printed_text = ir::PrintModule(**parsed, options);
  std::string printed_bytecode = ir::PrintModule(**decoded, options);
  if (printed_text != printed_bytecode) {
    return StrCat("generic prints differ:\n",
                  FirstDifference(printed_text, printed_bytecode));
  }
#endif
  return "";
}

bool IsFutureArtifact(const std::string& path) {
  return path.find("invalid_vhlo_future") != std::string::npos;
}

// The 33 golden pairs: each artifact decodes and matches its text. The
// artifact from a future version has no valid text twin and is checked
// apart (below), so it never counts as a matching pair.
TEST(BytecodeGoldenTest, ArtifactsDecodeToTheModulesOfTheirText) {
  KILN_REQUIRE_SHARED_DIR(shared);
  std::vector<std::string> files =
      kiln::testing::ListFiles(shared + "/corpus/stablehlo/vhlo", ".mlir.bc");
  int pairs = 0, matched = 0;
  for (const std::string& path : files) {
    if (IsFutureArtifact(path)) continue;
    SCOPED_TRACE(path);
    ++pairs;
    std::string difference = ComparePair(path);
    EXPECT_EQ(difference, "");
    matched += difference.empty();
  }
  std::printf("vhlo golden pairs: %d/%d decode and match their text\n", matched,
              pairs);
  EXPECT_EQ(pairs, 33);
  EXPECT_EQ(matched, pairs);
  // The folder's other artifact is the future one, tested below.
  EXPECT_EQ(files.size(), static_cast<size_t>(pairs) + 1);
}

// invalid_vhlo_future.mlir.bc declares a producer version newer than the
// reader supports; read through the facade (as `kiln parse` reads files),
// decoding must fail and say which version it saw.
TEST(BytecodeGoldenTest, FacadeRejectsTheArtifactFromAFutureVersion) {
  KILN_REQUIRE_SHARED_DIR(shared);
  std::string path =
      shared + "/corpus/stablehlo/vhlo/invalid_vhlo_future.mlir.bc";
  StatusOr<std::string> bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  StatusOr<std::unique_ptr<ir::Module>> module = ParseModule(*bytes, path);
  ASSERT_FALSE(module.ok()) << "the future artifact was accepted";
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  std::string message(module.status().message());
  EXPECT_NE(message.find("StableHLO_v2.0.0"), std::string::npos) << message;
  std::printf("invalid_vhlo_future.mlir.bc rejected: %s\n", message.c_str());
}

TEST(BytecodeGoldenTest, JaxModelArtifactEqualsItsText) {
  KILN_REQUIRE_SHARED_DIR(shared);
  EXPECT_EQ(ComparePair(shared + "/corpus/models/searchless_chess_9m.mlir.bc"),
            "");
}

#else

TEST(BytecodeGoldenTest, NeedsTheTextParser) {
  GTEST_SKIP() << "the golden comparison needs the text parser (parse/text)";
}

#endif

}  // namespace
}  // namespace kiln::parse::bytecode
