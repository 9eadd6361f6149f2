// `kiln parse FILE...`: parses StableHLO programs (text or bytecode) and
// reports every error. Text files with `// -----` markers are checked part
// by part; parts annotated with `expected-error` must be rejected.
#include <cstdio>
#include <string>

#include "base/file.h"
#include "base/strings.h"
#include "ir/verifier.h"
#include "parse/parse.h"
#include "parse/text/parser.h"
#include "tools/kiln/command.h"

namespace kiln::cli {
namespace {

struct Counts {
  int parts = 0;
  int parsed = 0;
  int failed = 0;
  int expected_rejections = 0;
  int unrejected = 0;  // expected-error parts the parser accepted
};

// Parses and verifies one part: a part is valid when it does both.
Status CheckPart(std::string_view text, const std::string& path,
                 int first_line) {
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseTextModule(text, path, first_line);
  if (!module.ok()) return module.status();
  return ir::VerifyModule(**module);
}

void CheckFile(const std::string& path, Counts& counts) {
  StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) {
    std::fprintf(stderr, "%s\n", bytes.status().ToString().c_str());
    ++counts.failed;
    return;
  }
  if (parse::IsBytecode(*bytes) || parse::IsHloModulePath(path)) {
    ++counts.parts;
    StatusOr<std::unique_ptr<ir::Module>> module =
        parse::ParseFile(*bytes, path);
    if (module.ok()) {
      if (Status verified = ir::VerifyModule(**module); !verified.ok()) {
        module = StatusOr<std::unique_ptr<ir::Module>>(verified);
      }
    }
    if (module.ok()) {
      ++counts.parsed;
    } else {
      ++counts.failed;
      std::fprintf(stderr, "%s\n",
                   std::string(module.status().message()).c_str());
    }
    return;
  }
  for (const parse::TextPart& part : parse::SplitInputFile(*bytes)) {
    ++counts.parts;
    std::vector<parse::ExpectedDiagnostic> expected =
        parse::ExtractExpectedDiagnostics(part);
    bool expects_error = false;
    for (const auto& diagnostic : expected) {
      if (diagnostic.severity == parse::ExpectedDiagnostic::Severity::kError) {
        expects_error = true;
      }
    }
    Status status = CheckPart(part.text, path, part.first_line);
    if (expects_error) {
      if (status.ok()) {
        ++counts.unrejected;
        std::fprintf(
            stderr,
            "%s:%d: note: part expects an error that neither the parser nor "
            "the verifier reports\n",
            path.c_str(), part.first_line);
      } else {
        ++counts.expected_rejections;
      }
    } else if (status.ok()) {
      ++counts.parsed;
    } else {
      ++counts.failed;
      std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
    }
  }
}

int RunParse(Arguments& args) {
  if (!args.RejectUnknownFlags("parse")) return 2;
  if (args.rest().empty()) {
    std::fprintf(stderr, "usage: kiln parse FILE...\n");
    return 2;
  }
  Counts counts;
  for (const std::string& path : args.rest()) CheckFile(path, counts);
  std::printf("parsed %d/%d parts", counts.parsed,
              counts.parts - counts.expected_rejections - counts.unrejected);
  if (counts.expected_rejections + counts.unrejected > 0) {
    std::printf(
        "; expected errors: %d rejected, %d accepted by parse and verify",
        counts.expected_rejections, counts.unrejected);
  }
  std::printf("\n");
  return counts.failed == 0 ? 0 : 1;
}

}  // namespace

KILN_REGISTER_COMMAND(
    parse, "parse", "parse FILE...",
    "parse StableHLO programs (text or bytecode) and report errors", RunParse);

}  // namespace kiln::cli
