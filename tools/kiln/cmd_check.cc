// `kiln check [--json] PATH...`: compiles and runs every self-checking
// program under the paths (MLIR text, each `// -----` part a program, or
// MLIR bytecode, .mlirbc in folders) and reports the failures and the
// counts.
#include <cstdio>
#include <string>

#include "base/strings.h"
#include "tools/check/corpus.h"
#include "tools/kiln/command.h"

namespace kiln::cli {
namespace {

const char* OutcomeName(check::CaseResult::Outcome outcome) {
  switch (outcome) {
    case check::CaseResult::Outcome::kPassed:
      return "passed";
    case check::CaseResult::Outcome::kFailed:
      return "failed";
    case check::CaseResult::Outcome::kSkipped:
      return "skipped";
  }
  return "?";
}

int RunCheck(Arguments& args) {
  bool json = args.TakeSwitch("json");
  check::CorpusOptions options;
  options.fold_constants = !args.TakeSwitch("no-fold");
  options.use_onednn = !args.TakeSwitch("no-onednn");
  if (auto threads = args.TakeFlag("threads")) {
    options.threads = static_cast<int>(ParseInt64(*threads).value_or(0));
  }
  if (auto timeout = args.TakeFlag("timeout")) {
    options.timeout_seconds =
        ParseDouble(*timeout).value_or(options.timeout_seconds);
  }
  if (auto size = args.TakeFlag("dynamic-size")) {
    options.dynamic_size = ParseInt64(*size).value_or(options.dynamic_size);
  }
  if (!args.RejectUnknownFlags("check")) return 2;
  if (args.rest().empty()) {
    std::fprintf(stderr, "kiln check: give at least one file or folder\n");
    return 2;
  }
  auto files = check::CollectCorpusFiles(args.rest());
  if (!files.ok()) {
    std::fprintf(stderr, "kiln check: %s\n", files.status().ToString().c_str());
    return 2;
  }
  std::vector<check::CaseResult> results = check::RunCorpus(*files, options);
  check::CorpusCounts counts = check::CountResults(results);
  if (json) {
    std::printf(
        "{\"passed\": %lld, \"failed\": %lld, \"skipped\": %lld, \"cases\": [",
        static_cast<long long>(counts.passed),
        static_cast<long long>(counts.failed),
        static_cast<long long>(counts.skipped));
    for (size_t i = 0; i < results.size(); ++i) {
      const check::CaseResult& r = results[i];
      std::printf(
          "%s\n  {\"name\": %s, \"outcome\": \"%s\", \"reason\": %s, "
          "\"seconds\": %.4f}",
          i == 0 ? "" : ",", JsonString(r.name).c_str(), OutcomeName(r.outcome),
          JsonString(r.reason).c_str(), r.seconds);
    }
    std::printf("\n]}\n");
  } else {
    for (const check::CaseResult& r : results) {
      if (r.outcome == check::CaseResult::Outcome::kPassed) continue;
      std::printf(
          "%s %s: %s\n",
          r.outcome == check::CaseResult::Outcome::kFailed ? "FAIL" : "SKIP",
          r.name.c_str(), r.reason.c_str());
    }
    std::printf("%lld passed, %lld failed",
                static_cast<long long>(counts.passed),
                static_cast<long long>(counts.failed));
    if (counts.skipped > 0) {
      std::printf(", %lld skipped", static_cast<long long>(counts.skipped));
    }
    std::printf("\n");
  }
  return counts.failed == 0 ? 0 : 1;
}

}  // namespace

KILN_REGISTER_COMMAND(check, "check",
                      "check [--json] [--threads N] [--timeout SECONDS] "
                      "[--dynamic-size N] [--no-fold] [--no-onednn] PATH...",
                      "compile and run self-checking StableHLO programs",
                      RunCheck);

}  // namespace kiln::cli
