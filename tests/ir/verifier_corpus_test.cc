// The verifier against the shared corpus: every valid program (and every
// part of a `// -----` file without `expected-error`) must verify, and the
// parts annotated with `expected-error` must be rejected by parse + verify
// (at least 90% of them). Both tests print their counts.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/strings.h"
#include "ir/verifier.h"
#include "parse/parse.h"
#include "parse/text/parser.h"
#include "support/test_support.h"

namespace kiln::ir {
namespace {

// A file of the corpus that is not a program by design: its bytecode twin
// claims a future version, and the text holds VHLO ops.
bool IsDeliberatelyInvalid(const std::string& path) {
  return path.find("invalid_vhlo_future") != std::string::npos;
}

bool ExpectsError(const parse::TextPart& part) {
  for (const auto& diagnostic : parse::ExtractExpectedDiagnostics(part)) {
    if (diagnostic.severity == parse::ExpectedDiagnostic::Severity::kError) {
      return true;
    }
  }
  return false;
}

// The lines of a part's expected errors.
std::vector<int> ExpectedLines(const parse::TextPart& part) {
  std::vector<int> lines;
  for (const auto& diagnostic : parse::ExtractExpectedDiagnostics(part)) {
    if (diagnostic.severity == parse::ExpectedDiagnostic::Severity::kError) {
      lines.push_back(diagnostic.line);
    }
  }
  return lines;
}

// The line of a "file:line:col: ..." message, or 0.
int MessageLine(std::string_view message, std::string_view file) {
  if (!StartsWith(message, file) || message.size() <= file.size() + 1 ||
      message[file.size()] != ':') {
    return 0;
  }
  std::string_view rest = message.substr(file.size() + 1);
  std::optional<int64_t> line = ParseInt64(rest.substr(0, rest.find(':')));
  return line ? static_cast<int>(*line) : 0;
}

TEST(VerifierCorpusTest, EveryValidProgramVerifies) {
  KILN_REQUIRE_SHARED_DIR(shared);
  int verified = 0;
  int parsed = 0;
  int not_parsed = 0;
  std::vector<std::string> failures;
  auto check = [&](StatusOr<std::unique_ptr<Module>> module,
                   const std::string& where) {
    if (!module.ok()) {
      ++not_parsed;  // the parser's own corpus test reports these
      return;
    }
    ++parsed;
    Status status = VerifyModule(**module);
    if (status.ok()) {
      ++verified;
    } else {
      failures.push_back(StrCat(where, ": ", status.message()));
    }
  };
  for (const std::string& path :
       testing::ListFiles(shared + "/corpus", ".mlir")) {
    if (IsDeliberatelyInvalid(path)) continue;
    StatusOr<std::string> text = ReadFile(path);
    ASSERT_OK(text);
    for (const parse::TextPart& part : parse::SplitInputFile(*text)) {
      if (ExpectsError(part)) continue;
      check(parse::ParseTextModule(part.text, path, part.first_line),
            StrCat(path, ":", part.first_line));
    }
  }
  for (const std::string& path :
       testing::ListFiles(shared + "/corpus", ".mlir.bc")) {
    if (IsDeliberatelyInvalid(path)) continue;
    StatusOr<std::string> bytes = ReadFile(path);
    ASSERT_OK(bytes);
    check(parse::ParseModule(*bytes, path), path);
  }
  std::printf("valid programs verified %d/%d (%d parts not parsed)\n", verified,
              parsed, not_parsed);
  for (size_t i = 0; i < failures.size() && i < 20; ++i) {
    ADD_FAILURE() << failures[i];
  }
  EXPECT_EQ(verified, parsed);
  EXPECT_GT(parsed, 3000);  // the corpus is there and was read
}

TEST(VerifierCorpusTest, RejectsTheExpectedErrors) {
  KILN_REQUIRE_SHARED_DIR(shared);
  int cases = 0;
  int rejected_by_parser = 0;
  int rejected_by_verifier = 0;
  int at_annotated_line = 0;
  std::vector<std::string> accepted;
  for (const std::string& path :
       testing::ListFiles(shared + "/corpus", ".mlir")) {
    StatusOr<std::string> text = ReadFile(path);
    ASSERT_OK(text);
    for (const parse::TextPart& part : parse::SplitInputFile(*text)) {
      if (!ExpectsError(part)) continue;
      ++cases;
      StatusOr<std::unique_ptr<Module>> module =
          parse::ParseTextModule(part.text, path, part.first_line);
      if (!module.ok()) {
        ++rejected_by_parser;
        continue;
      }
      Status status = VerifyModule(**module);
      if (status.ok()) {
        accepted.push_back(StrCat(path, ":", part.first_line));
        continue;
      }
      ++rejected_by_verifier;
      int line = MessageLine(status.message(), path);
      for (int expected : ExpectedLines(part)) {
        if (expected == line) {
          ++at_annotated_line;
          break;
        }
      }
    }
  }
  int rejected = rejected_by_parser + rejected_by_verifier;
  double percent = cases == 0 ? 0 : 100.0 * rejected / cases;
  std::printf(
      "rejected %d/%d (%.1f%%): %d by the parser, %d by the verifier (%d of "
      "them at an annotated line)\n",
      rejected, cases, percent, rejected_by_parser, rejected_by_verifier,
      at_annotated_line);
  for (const std::string& where : accepted) {
    std::printf("  accepted: %s\n", where.c_str());
  }
  EXPECT_GT(cases, 600);  // the syntax corpus is there and was read
  EXPECT_GE(percent, 90.0);
}

}  // namespace
}  // namespace kiln::ir
