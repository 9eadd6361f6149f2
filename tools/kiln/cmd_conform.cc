// `kiln conform PLUGIN`: runs the conformance suite (tools/conform/) against
// any PJRT plugin and prints one line per check and a summary; exits 1 when
// a check fails (docs/conform.md).
#include <cstdio>
#include <string>

#include "base/strings.h"
#include "tools/conform/suite.h"
#include "tools/kiln/command.h"
#include "tools/kiln/plugin_choice.h"

namespace kiln::cli {
namespace {

using client::NamedValue;

// NAME=VALUE: an integer, true/false, a number with a point, else a string.
StatusOr<NamedValue> ParseCreateOption(const std::string& text) {
  size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    return InvalidArgumentError("--option takes NAME=VALUE, not '", text, "'");
  }
  std::string name = text.substr(0, equals);
  std::string value = text.substr(equals + 1);
  if (std::optional<int64_t> number = ParseInt64(value)) {
    return NamedValue{name, NamedValue::Value(*number)};
  }
  if (value == "true" || value == "false") {
    return NamedValue{name, NamedValue::Value(value == "true")};
  }
  if (value.find('.') != std::string::npos) {
    if (std::optional<double> real = ParseDouble(value)) {
      return NamedValue{name, NamedValue::Value(static_cast<float>(*real))};
    }
  }
  return NamedValue{name, NamedValue::Value(value)};
}

int RunConform(Arguments& args) {
  bool list = args.TakeSwitch("list");
  std::string filter = args.TakeFlag("filter").value_or("");
  std::vector<std::string> option_texts = args.TakeRepeatedFlag("option");
  bool in_process = args.TakeSwitch("no-isolate");
  std::optional<std::string> timeout_flag = args.TakeFlag("timeout");
  if (!args.RejectUnknownFlags("conform")) return 2;
  if (args.rest().size() > 1) {
    std::fprintf(stderr, "kiln conform: one plugin, not '%s' too\n",
                 args.rest()[1].c_str());
    return 2;
  }

  if (list) {
    auto checks = conform::SelectChecks(filter);
    if (!checks.ok()) {
      std::fprintf(stderr, "kiln conform: %s\n",
                   checks.status().ToString().c_str());
      return 2;
    }
    for (const conform::Check* check : *checks) {
      std::printf("%-52s %-10s %s\n", check->name.c_str(),
                  std::string(conform::CheckKindName(check->kind)).c_str(),
                  check->summary.c_str());
    }
    return 0;
  }

  conform::SuiteOptions options;
  options.filter = filter;
  options.isolate = !in_process;
  if (timeout_flag) {
    std::optional<int64_t> seconds = ParseInt64(*timeout_flag);
    if (!seconds || *seconds < 1) {
      std::fprintf(stderr, "kiln conform: --timeout takes seconds, not '%s'\n",
                   timeout_flag->c_str());
      return 2;
    }
    options.timeout_seconds = static_cast<int>(*seconds);
  }
  for (const std::string& text : option_texts) {
    auto option = ParseCreateOption(text);
    if (!option.ok()) {
      std::fprintf(stderr, "kiln conform: %s\n",
                   option.status().ToString().c_str());
      return 2;
    }
    options.create_options.push_back(*option);
  }
  std::optional<std::string> plugin;
  if (!args.rest().empty()) plugin = args.rest()[0];
  auto path = ChoosePlugin(plugin, std::nullopt);
  if (!path.ok()) {
    std::fprintf(stderr, "kiln conform: %s\n",
                 path.status().ToString().c_str());
    return 1;
  }
  options.plugin_path = *path;

  auto summary = conform::RunSuite(options, stdout);
  if (!summary.ok()) {
    std::fprintf(stderr, "kiln conform: %s\n",
                 summary.status().ToString().c_str());
    return 2;
  }
  return summary->failed > 0 ? 1 : 0;
}

}  // namespace

KILN_REGISTER_COMMAND(conform, "conform",
                      "conform [PLUGIN] [--filter REGEX] [--list] "
                      "[--option NAME=VALUE ...] [--no-isolate] [--timeout S]",
                      "run the conformance suite against a PJRT plugin",
                      RunConform);

}  // namespace kiln::cli
