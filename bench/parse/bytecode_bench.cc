// Decode throughput of the bytecode reader on the largest corpus
// artifacts, in bytes of bytecode per second.
//
//   bytecode_bench [--benchmark_filter=...]   ($KILN_SHARED_DIR: ../shared)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/file.h"
#include "parse/bytecode/reader.h"

#ifndef KILN_DEFAULT_SHARED_DIR
#define KILN_DEFAULT_SHARED_DIR "../shared"
#endif

namespace {

void DecodeArtifact(benchmark::State& state, const std::string& relative_path) {
  std::string path = kiln::GetEnv("KILN_SHARED_DIR", KILN_DEFAULT_SHARED_DIR) +
                     "/" + relative_path;
  kiln::StatusOr<std::string> bytes = kiln::ReadFile(path);
  if (!bytes.ok()) {
    state.SkipWithError(bytes.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    auto module = kiln::parse::bytecode::ReadBytecodeModule(*bytes, path);
    if (!module.ok()) {
      state.SkipWithError(module.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(module);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes->size()));
}

// The largest artifacts: the JAX model (49 KB; its weights are arguments)
// and the newest and oldest VHLO test files (every op and attribute).
BENCHMARK_CAPTURE(DecodeArtifact, searchless_chess_9m,
                  std::string("corpus/models/searchless_chess_9m.mlir.bc"));
BENCHMARK_CAPTURE(
    DecodeArtifact, vhlo_1_20_0,
    std::string(
        "corpus/stablehlo/vhlo/stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"));
BENCHMARK_CAPTURE(
    DecodeArtifact, vhlo_0_9_0,
    std::string(
        "corpus/stablehlo/vhlo/stablehlo_legalize_to_vhlo.0_9_0.mlir.bc"));

}  // namespace

BENCHMARK_MAIN();
