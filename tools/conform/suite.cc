// The suite's runner: selects checks, runs each (in a child process of its
// own by default) and prints their lines and the summary.
#include "tools/conform/suite.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>

#include "base/strings.h"
#include "tools/conform/checks.h"

namespace kiln::conform {
namespace {

struct CheckOutcome {
  Outcome outcome = Outcome::kFail;
  std::string detail;
  // The plugin did not load or no client could be made: later checks
  // would fail the same way, so the suite stops.
  bool setup_failed = false;
};

// One line: newlines become spaces, and very long details are cut.
std::string OneLine(std::string_view text) {
  constexpr size_t kMaxDetail = 400;
  std::string line;
  for (char c : text) {
    line += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  }
  if (line.size() > kMaxDetail) line = line.substr(0, kMaxDetail) + "...";
  return line;
}

// A mismatch (UNKNOWN, see checks.h) is shown by its message alone; a
// plugin's error with its code.
std::string Describe(const Status& status) {
  if (status.code() == StatusCode::kUnknown)
    return std::string(status.message());
  return status.ToString();
}

CheckOutcome Judge(const Check& check, const StatusOr<std::string>& result) {
  if (result.ok()) return {Outcome::kPass, *result};
  const Status& status = result.status();
  if (check.kind != CheckKind::kRequired &&
      status.code() == StatusCode::kUnimplemented) {
    // The line's first word says UNSUPPORTED; the code would repeat it.
    return {Outcome::kUnsupported, std::string(status.message())};
  }
  return {Outcome::kFail, Describe(status)};
}

CheckOutcome RunInProcess(const Check& check, const SuiteOptions& options) {
  auto plugin = client::Plugin::Load(options.plugin_path);
  if (!plugin.ok()) {
    return {Outcome::kFail,
            StrCat("loading ", options.plugin_path, ": ",
                   plugin.status().ToString()),
            true};
  }
  auto created = client::Client::Create(*plugin, options.create_options);
  if (!created.ok()) {
    return {Outcome::kFail,
            StrCat("PJRT_Client_Create: ", created.status().ToString()), true};
  }
  if ((*created)->addressable_devices().empty()) {
    return {Outcome::kFail, "the client has no addressable devices", true};
  }
  CheckContext context{*plugin, *created, options.create_options};
  return Judge(check, check.run(context));
}

// The record a child writes to its parent: outcome, setup flag, detail.
std::string Encode(const CheckOutcome& outcome) {
  return StrCat(static_cast<int>(outcome.outcome), outcome.setup_failed ? 1 : 0,
                outcome.detail);
}

bool Decode(const std::string& record, CheckOutcome* outcome) {
  if (record.size() < 2 || record[0] < '0' || record[0] > '2') return false;
  outcome->outcome = static_cast<Outcome>(record[0] - '0');
  outcome->setup_failed = record[1] == '1';
  outcome->detail = record.substr(2);
  return true;
}

void WriteAll(int fd, const std::string& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<size_t>(n);
  }
}

std::string ReadAll(int fd) {
  std::string bytes;
  char chunk[4096];
  while (true) {
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(chunk, static_cast<size_t>(n));
  }
  return bytes;
}

CheckOutcome RunIsolated(const Check& check, const SuiteOptions& options) {
  int fds[2];
  if (pipe(fds) != 0) {
    return {Outcome::kFail, StrCat("pipe: ", std::strerror(errno)), true};
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {Outcome::kFail, StrCat("fork: ", std::strerror(errno)), true};
  }
  if (pid == 0) {
    close(fds[0]);
    // A hang ends the child with SIGALRM, which the parent reports.
    signal(SIGALRM, SIG_DFL);
    alarm(static_cast<unsigned>(options.timeout_seconds));
    CheckOutcome outcome = RunInProcess(check, options);
    WriteAll(fds[1], Encode(outcome));
    close(fds[1]);
    std::fflush(nullptr);
    _exit(0);
  }
  close(fds[1]);
  std::string record = ReadAll(fds[0]);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  CheckOutcome outcome;
  if (Decode(record, &outcome)) return outcome;
  // Robustness checks feed the plugin what the C API leaves undefined: a
  // crash there is the plugin's right, not a failure.
  Outcome failure = check.kind == CheckKind::kRobustness ? Outcome::kUnsupported
                                                         : Outcome::kFail;
  if (WIFSIGNALED(status)) {
    int signal_number = WTERMSIG(status);
    if (signal_number == SIGALRM) {
      return {failure,
              StrCat("did not finish within ", options.timeout_seconds, " s")};
    }
    return {failure, StrCat("crashed with signal ", signal_number, " (",
                            strsignal(signal_number), ")")};
  }
  return {failure, StrCat("the check's process exited with status ",
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                          " without a result")};
}

}  // namespace

std::string_view CheckKindName(CheckKind kind) {
  switch (kind) {
    case CheckKind::kRequired:
      return "required";
    case CheckKind::kOptional:
      return "optional";
    case CheckKind::kRobustness:
      return "robustness";
  }
  return "?";
}

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "PASS";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kUnsupported:
      return "UNSUPPORTED";
  }
  return "?";
}

const std::vector<Check>& AllChecks() {
  static const std::vector<Check> checks = [] {
    std::vector<Check> all;
    AddPlatformChecks(all);
    AddBufferChecks(all);
    AddExecuteChecks(all);
    AddErrorChecks(all);
    return all;
  }();
  return checks;
}

StatusOr<std::vector<const Check*>> SelectChecks(const std::string& filter) {
  std::vector<const Check*> selected;
  std::regex pattern;
  if (!filter.empty()) {
    try {
      pattern = std::regex(filter, std::regex::ECMAScript);
    } catch (const std::regex_error& error) {
      return InvalidArgumentError(
          "--filter '", filter,
          "' is not a regular expression: ", error.what());
    }
  }
  for (const Check& check : AllChecks()) {
    if (filter.empty() || std::regex_search(check.name, pattern)) {
      selected.push_back(&check);
    }
  }
  return selected;
}

StatusOr<SuiteSummary> RunSuite(const SuiteOptions& options, FILE* out) {
  ASSIGN_OR_RETURN(std::vector<const Check*> checks,
                   SelectChecks(options.filter));
  if (checks.empty()) {
    return InvalidArgumentError("no check matches --filter '", options.filter,
                                "' (--list shows them)");
  }
  SuiteSummary summary;
  for (size_t i = 0; i < checks.size(); ++i) {
    const Check& check = *checks[i];
    CheckOutcome outcome = options.isolate ? RunIsolated(check, options)
                                           : RunInProcess(check, options);
    std::fprintf(out, "%s %s: %s\n",
                 std::string(OutcomeName(outcome.outcome)).c_str(),
                 check.name.c_str(), OneLine(outcome.detail).c_str());
    std::fflush(out);
    switch (outcome.outcome) {
      case Outcome::kPass:
        ++summary.passed;
        break;
      case Outcome::kFail:
        ++summary.failed;
        break;
      case Outcome::kUnsupported:
        ++summary.unsupported;
        break;
    }
    if (outcome.setup_failed) {
      summary.not_run = static_cast<int>(checks.size() - i - 1);
      break;
    }
  }
  std::fprintf(out, "summary: %zu checks: %d PASS, %d FAIL, %d UNSUPPORTED",
               checks.size(), summary.passed, summary.failed,
               summary.unsupported);
  if (summary.not_run > 0) {
    std::fprintf(out, ", %d not run (the plugin or its client did not load)",
                 summary.not_run);
  }
  std::fprintf(out, "\n");
  return summary;
}

}  // namespace kiln::conform
