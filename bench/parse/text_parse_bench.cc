// Text front end throughput (bytes/s) on the largest corpus programs and
// on models/jax_resnet_50.mlir:
//   build/bench/parse/kiln_parse_bench   (or build/bin/kiln_parse_bench)
// Files come from $KILN_SHARED_DIR/corpus (default ../shared); a missing
// file skips its benchmark.
#include <benchmark/benchmark.h>

#include <string>

#include "base/file.h"
#include "ir/printer.h"
#include "parse/text/parser.h"

#ifndef KILN_DEFAULT_SHARED_DIR
#define KILN_DEFAULT_SHARED_DIR "../shared"
#endif

namespace kiln {
namespace {

const char* const kFiles[] = {
    "models/jax_resnet_50.mlir",
    "models/searchless_chess_9m.mlir",
    "stablehlo/testdata/convert_element_type_complex128_100_100.mlir",
    "stablehlo/testdata/round_float64_100_100.mlir",
    "stablehlo/syntax/ops_stablehlo_roundtrip.mlir",
};

std::string CorpusPath(const char* relative) {
  return GetEnv("KILN_SHARED_DIR", KILN_DEFAULT_SHARED_DIR) + "/corpus/" +
         relative;
}

void BM_ParseText(benchmark::State& state, const char* relative) {
  StatusOr<std::string> text = ReadFile(CorpusPath(relative));
  if (!text.ok()) {
    state.SkipWithError(std::string(text.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    auto module = parse::ParseTextModule(*text, relative);
    if (!module.ok()) {
      state.SkipWithError(std::string(module.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(module);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text->size()));
}

void BM_PrintText(benchmark::State& state, const char* relative) {
  StatusOr<std::string> text = ReadFile(CorpusPath(relative));
  if (!text.ok()) {
    state.SkipWithError(std::string(text.status().message()).c_str());
    return;
  }
  auto module = parse::ParseTextModule(*text, relative);
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string printed = ir::PrintModule(**module);
    bytes = printed.size();
    benchmark::DoNotOptimize(printed);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes));
}

int RegisterAll() {
  for (const char* file : kFiles) {
    benchmark::RegisterBenchmark((std::string("ParseText/") + file).c_str(),
                                 BM_ParseText, file)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("PrintText/") + file).c_str(),
                                 BM_PrintText, file)
        ->Unit(benchmark::kMillisecond);
  }
  return 0;
}
const int kRegistered = RegisterAll();

}  // namespace
}  // namespace kiln
