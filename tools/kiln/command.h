// The `kiln` command line: each subcommand lives in its own file and
// registers itself here with KILN_REGISTER_COMMAND.
#ifndef KILN_TOOLS_KILN_COMMAND_H_
#define KILN_TOOLS_KILN_COMMAND_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cli {

// The arguments after the subcommand name, with small helpers for flags.
class Arguments {
 public:
  explicit Arguments(std::vector<std::string> args) : args_(std::move(args)) {}

  // Removes `--name VALUE` or `--name=VALUE` and returns VALUE.
  std::optional<std::string> TakeFlag(std::string_view name);
  // Removes every `--name VALUE` / `--name=VALUE` and returns the values.
  std::vector<std::string> TakeRepeatedFlag(std::string_view name);
  // Removes `--name` and returns whether it was there.
  bool TakeSwitch(std::string_view name);
  // What is left: positional arguments (and unknown flags, which
  // `RejectUnknownFlags` reports).
  const std::vector<std::string>& rest() const { return args_; }
  // Prints an error for the first remaining `--flag` and returns false.
  bool RejectUnknownFlags(std::string_view command) const;

 private:
  std::vector<std::string> args_;
};

struct Command {
  const char* name;
  const char* usage;    // e.g. "info [--plugin PATH] [--devices N]"
  const char* summary;  // one line
  std::function<int(Arguments&)> run;  // returns the exit code
};

// Adds a command; called by KILN_REGISTER_COMMAND at static initialization.
bool RegisterCommand(Command command);
const std::vector<Command>& Commands();

}  // namespace kiln::cli

#define KILN_REGISTER_COMMAND(ident, name, usage, summary, fn) \
  static const bool kiln_command_registered_##ident =          \
      ::kiln::cli::RegisterCommand({name, usage, summary, fn})

#endif  // KILN_TOOLS_KILN_COMMAND_H_
