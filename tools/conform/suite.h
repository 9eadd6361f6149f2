// A conformance suite for any PJRT plugin: checks run through Kiln's client
// (include/kiln/) and, where the client has no wrapper, the raw C API. Each
// check prints one line, `PASS|FAIL|UNSUPPORTED <name>: <detail>`, and the
// suite ends with a summary line (docs/conform.md).
#ifndef KILN_TOOLS_CONFORM_SUITE_H_
#define KILN_TOOLS_CONFORM_SUITE_H_

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kiln/pjrt.h"
#include "kiln/plugin.h"

namespace kiln::conform {

// How a check's errors are judged.
enum class CheckKind {
  // What every plugin must do: any error is a FAIL, UNIMPLEMENTED included.
  kRequired,
  // A feature a plugin may leave out: UNIMPLEMENTED (from the plugin, an
  // absent slot, or a configuration that cannot exercise the check, such as
  // one device for a copy between devices) is UNSUPPORTED.
  kOptional,
  // Bad input the C API leaves undefined (null or foreign handles, struct
  // sizes): rejecting it with an error is a PASS; accepting it, crashing or
  // hanging is UNSUPPORTED, never a FAIL.
  kRobustness,
};

std::string_view CheckKindName(CheckKind kind);

// What a check runs against: the plugin, a fresh client of it made with the
// suite's create options, and those options (to make a second client).
struct CheckContext {
  std::shared_ptr<const client::Plugin> plugin;
  std::shared_ptr<client::Client> client;
  std::vector<client::NamedValue> create_options;
};

// A check: OK (with a detail for the PASS line) or the error that makes it
// FAIL or UNSUPPORTED according to its kind.
using CheckFunction =
    std::function<StatusOr<std::string>(CheckContext& context)>;

struct Check {
  std::string name;  // "buffer.semantics.immutable_zero_copy"
  CheckKind kind;
  std::string summary;  // one line, for --list
  CheckFunction run;
};

// Every check, in the order the suite runs them.
const std::vector<Check>& AllChecks();

// The checks whose names contain a match of the ECMAScript `filter` (all of
// them for an empty filter). A bad expression is INVALID_ARGUMENT.
StatusOr<std::vector<const Check*>> SelectChecks(const std::string& filter);

enum class Outcome { kPass, kFail, kUnsupported };
std::string_view OutcomeName(Outcome outcome);

struct SuiteOptions {
  std::string plugin_path;
  std::vector<client::NamedValue> create_options;
  std::string filter;
  // Each check in a child process of its own (a crash or a hang is then
  // that check's result, not the suite's end). Off: all in this process.
  bool isolate = true;
  // Per check, in a child process.
  int timeout_seconds = 120;
};

struct SuiteSummary {
  int passed = 0;
  int failed = 0;
  int unsupported = 0;
  // Checks not run because the plugin could not be loaded or no client made.
  int not_run = 0;
};

// Runs the selected checks, printing one line per check and the summary to
// `out`. Errors are only those of the options (a bad filter, no check
// selected); every plugin problem is a FAIL line.
StatusOr<SuiteSummary> RunSuite(const SuiteOptions& options, FILE* out);

}  // namespace kiln::conform

#endif  // KILN_TOOLS_CONFORM_SUITE_H_
