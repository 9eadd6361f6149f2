// kiln: Kiln's command line. `kiln help` lists the subcommands.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tools/kiln/command.h"

namespace kiln::cli {

std::optional<std::string> Arguments::TakeFlag(std::string_view name) {
  std::string flag = "--" + std::string(name);
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i] == flag && i + 1 < args_.size()) {
      std::string value = args_[i + 1];
      args_.erase(args_.begin() + i, args_.begin() + i + 2);
      return value;
    }
    if (args_[i].rfind(flag + "=", 0) == 0) {
      std::string value = args_[i].substr(flag.size() + 1);
      args_.erase(args_.begin() + i);
      return value;
    }
  }
  return std::nullopt;
}

std::vector<std::string> Arguments::TakeRepeatedFlag(std::string_view name) {
  std::vector<std::string> values;
  while (auto value = TakeFlag(name)) values.push_back(*value);
  return values;
}

bool Arguments::TakeSwitch(std::string_view name) {
  std::string flag = "--" + std::string(name);
  auto it = std::find(args_.begin(), args_.end(), flag);
  if (it == args_.end()) return false;
  args_.erase(it);
  return true;
}

bool Arguments::RejectUnknownFlags(std::string_view command) const {
  for (const std::string& arg : args_) {
    if (arg.size() > 2 && arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "kiln %.*s: unknown flag %s\n",
                   static_cast<int>(command.size()), command.data(), arg.c_str());
      return false;
    }
  }
  return true;
}

std::vector<Command>& MutableCommands() {
  static std::vector<Command> commands;
  return commands;
}

bool RegisterCommand(Command command) {
  MutableCommands().push_back(std::move(command));
  return true;
}

const std::vector<Command>& Commands() { return MutableCommands(); }

namespace {

void PrintUsage(FILE* out) {
  std::fprintf(out, "usage: kiln <command> [arguments]\n\ncommands:\n");
  std::vector<Command> sorted = Commands();
  std::sort(sorted.begin(), sorted.end(), [](const Command& a, const Command& b) {
    return std::strcmp(a.name, b.name) < 0;
  });
  for (const Command& command : sorted) {
    std::fprintf(out, "  %-48s %s\n", command.usage, command.summary);
  }
}

}  // namespace
}  // namespace kiln::cli

int main(int argc, char** argv) {
  using kiln::cli::Commands;
  if (argc < 2 || std::strcmp(argv[1], "help") == 0 ||
      std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    kiln::cli::PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const auto& command : Commands()) {
    if (std::strcmp(command.name, argv[1]) == 0) {
      kiln::cli::Arguments args(std::vector<std::string>(argv + 2, argv + argc));
      return command.run(args);
    }
  }
  std::fprintf(stderr, "kiln: unknown command '%s'\n\n", argv[1]);
  kiln::cli::PrintUsage(stderr);
  return 2;
}
