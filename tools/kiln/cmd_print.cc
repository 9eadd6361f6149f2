// `kiln print [--generic] [--no-locations] FILE`: parses a program (text or
// bytecode; `-` reads standard input) and prints it as MLIR text.
#include <cstdio>
#include <string>

#include "base/file.h"
#include "ir/printer.h"
#include "parse/parse.h"
#include "tools/kiln/command.h"

namespace kiln::cli {
namespace {

int RunPrint(Arguments& args) {
  ir::PrintOptions options;
  options.generic = args.TakeSwitch("generic");
  options.locations = !args.TakeSwitch("no-locations");
  if (!args.RejectUnknownFlags("print")) return 2;
  if (args.rest().size() != 1) {
    std::fprintf(stderr,
                 "usage: kiln print [--generic] [--no-locations] FILE\n");
    return 2;
  }
  const std::string& path = args.rest()[0];
  StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) {
    std::fprintf(stderr, "%s\n", bytes.status().ToString().c_str());
    return 1;
  }
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseFile(*bytes, path == "-" ? "<stdin>" : path);
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(module.status().message()).c_str());
    return 1;
  }
  std::string text = ir::PrintModule(**module, options);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

KILN_REGISTER_COMMAND(
    print, "print", "print [--generic] [--no-locations] FILE",
    "print a StableHLO program as MLIR text (FILE '-' reads stdin)", RunPrint);

}  // namespace kiln::cli
