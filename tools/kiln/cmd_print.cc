// `kiln print [--generic] [--no-locations] [--stop-after STEP
// [--replicas N] [--partitions N]] FILE`: parses a program (text or
// bytecode; `-` reads standard input) and prints it as MLIR text; with
// --stop-after, compiles it through the pipeline's steps up to STEP
// (compile/pipeline.h) and prints the first device position's program as
// it stands there (after `lower` and `plan`, its plan).
#include <cstdio>
#include <string>

#include "base/file.h"
#include "base/strings.h"
#include "compile/pipeline.h"
#include "ir/printer.h"
#include "parse/parse.h"
#include "tools/kiln/command.h"

namespace kiln::cli {
namespace {

void PrintUsage() {
  std::fprintf(stderr,
               "usage: kiln print [--generic] [--no-locations] [--stop-after "
               "STEP [--replicas N] [--partitions N]] FILE\n  STEP: %s\n",
               StrJoin(compile::kPipelineSteps, ", ").c_str());
}

bool ParseCount(const std::optional<std::string>& text, int* count) {
  if (!text) return true;
  std::optional<int64_t> value = ParseInt64(*text);
  if (!value || *value < 1 || *value > 4096) return false;
  *count = static_cast<int>(*value);
  return true;
}

int RunPrint(Arguments& args) {
  ir::PrintOptions options;
  options.generic = args.TakeSwitch("generic");
  options.locations = !args.TakeSwitch("no-locations");
  std::optional<std::string> stop_after = args.TakeFlag("stop-after");
  compile::PipelineOptions pipeline;
  bool counts_ok =
      ParseCount(args.TakeFlag("replicas"), &pipeline.num_replicas) &&
      ParseCount(args.TakeFlag("partitions"), &pipeline.num_partitions);
  if (!args.RejectUnknownFlags("print")) return 2;
  if (args.rest().size() != 1 || !counts_ok) {
    PrintUsage();
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
  std::string text;
  if (stop_after) {
    pipeline.stop_after = *stop_after;
    pipeline.print_options = options;
    pipeline.num_devices = pipeline.num_replicas * pipeline.num_partitions;
    StatusOr<compile::CompiledProgram> compiled =
        compile::RunPipeline(**module, pipeline);
    if (!compiled.ok()) {
      std::fprintf(stderr, "%s\n", compiled.status().ToString().c_str());
      return 1;
    }
    text = compiled->stopped_at;
  } else {
    text = ir::PrintModule(**module, options);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

KILN_REGISTER_COMMAND(
    print, "print",
    "print [--generic] [--no-locations] [--stop-after STEP [--replicas N] "
    "[--partitions N]] FILE",
    "print a StableHLO program as MLIR text (FILE '-' reads stdin), or as "
    "it stands after a compile step",
    RunPrint);

}  // namespace kiln::cli
