// Running self-checking StableHLO programs (the corpus of ../shared): each
// `// -----` part of a file is a case, compiled with the check targets and
// run; a case passes when it compiles, runs and every check holds.
// Shared by `kiln check` and the corpus tests.
#ifndef KILN_TOOLS_CHECK_CORPUS_H_
#define KILN_TOOLS_CHECK_CORPUS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::check {

struct CaseResult {
  enum class Outcome { kPassed, kFailed, kSkipped };
  std::string name;  // "file.mlir" or "file.mlir:LINE" for a part
  Outcome outcome = Outcome::kPassed;
  std::string reason;  // why it failed or was skipped
  double seconds = 0;
};

struct CorpusOptions {
  // Worker threads (0: one per core).
  int threads = 0;
  // A case running longer than this is cancelled and fails.
  double timeout_seconds = 120;
  // The size given to every dynamic dimension (and to the scalar integer
  // arguments that carry dimension variables) of a program whose entry has
  // dynamic shapes.
  int64_t dynamic_size = 3;
  // Fold constant steps while compiling (off: everything runs at run time,
  // which exercises the buffer planner and the run-time paths).
  bool fold_constants = true;
  // CompileOptions::use_onednn.
  bool use_onednn = true;
};

// Every .mlir file under `paths` (files or folders), sorted.
StatusOr<std::vector<std::string>> CollectCorpusFiles(
    const std::vector<std::string>& paths);

// Runs every case of `files`, in parallel; results are in file order.
std::vector<CaseResult> RunCorpus(const std::vector<std::string>& files,
                                  const CorpusOptions& options = {});

// Runs the cases of one file (sequentially).
std::vector<CaseResult> RunCorpusFile(const std::string& path,
                                      const CorpusOptions& options = {});

struct CorpusCounts {
  int64_t passed = 0, failed = 0, skipped = 0;
};
CorpusCounts CountResults(const std::vector<CaseResult>& results);

}  // namespace kiln::check

#endif  // KILN_TOOLS_CHECK_CORPUS_H_
