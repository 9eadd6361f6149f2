// The StableHLO corpus of ../shared, run exactly as `kiln check` runs it.
// Each test prints its counts; a failure is allowed only when it is listed
// below with its cause.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "support/test_support.h"
#include "tools/check/corpus.h"

namespace kiln::testing {
namespace {

// Cases whose expected values Kiln does not reproduce, with why. All are
// marked RUN-DISABLED upstream for the same reason: the expected values are
// XLA's own f32 / complex64 arithmetic (FMA contraction, operation order),
// a few ULP away from both the exact result and Kiln's.
const std::map<std::string, std::string>& KnownFailures() {
  static const auto* known = new std::map<std::string, std::string>{
      {"testdata/pow_complex64_20_30_complex64_20_30.mlir",
       "XLA's complex64 pow in f32 differs from Kiln's (computed in c128) by "
       "more than 3 ULP in cancelling real parts"},
      {"testdata/sin_complex64_20_20.mlir",
       "one element 4 ULP from XLA's complex64 sin"},
      {"testdata/cumprod_complex64_8_9.mlir",
       "XLA's complex64 products round differently (FMA) in 3 of 72 elements"},
      {"testdata/triangular_solve_float32_2_8_8_float32_2_10_8.mlir",
       "XLA's blocked f32 solve differs from the exact solution by more "
       "than 3 ULP in 25 of 160 elements (up to 40); Kiln's is exact"},
      {"testdata/dynamic/conv_general_dilated_1d_stride_2_odd_dynamic.mlir",
       "malformed program: window_strides has 2 entries for 1 spatial "
       "dimension"},
  };
  return *known;
}

std::string RelativeName(const std::string& path) {
  size_t at = path.find("stablehlo/");
  return at == std::string::npos ? path : path.substr(at + 10);
}

struct FolderRun {
  check::CorpusCounts counts;
  int unexpected = 0;
};

FolderRun RunFolder(const std::string& shared, const std::string& folder,
                    bool include_dynamic, bool fold) {
  FolderRun run;
  auto files =
      check::CollectCorpusFiles({shared + "/corpus/stablehlo/" + folder});
  EXPECT_TRUE(files.ok()) << files.status().ToString();
  if (!files.ok()) return run;
  std::vector<std::string> selected;
  for (const std::string& file : *files) {
    bool dynamic = file.find("/testdata/dynamic/") != std::string::npos;
    if (dynamic == include_dynamic || folder != "testdata")
      selected.push_back(file);
  }
  check::CorpusOptions options;
  options.fold_constants = fold;
  std::vector<check::CaseResult> results = check::RunCorpus(selected, options);
  run.counts = check::CountResults(results);
  for (const check::CaseResult& r : results) {
    if (r.outcome == check::CaseResult::Outcome::kFailed) {
      std::string name = RelativeName(r.name);
      auto known = KnownFailures().find(name);
      if (known != KnownFailures().end()) {
        std::printf("known failure %s: %s\n", name.c_str(),
                    known->second.c_str());
      } else {
        ++run.unexpected;
        ADD_FAILURE() << name << ": " << r.reason;
      }
    } else if (r.outcome == check::CaseResult::Outcome::kSkipped) {
      std::printf("skipped %s: %s\n", RelativeName(r.name).c_str(),
                  r.reason.c_str());
    }
  }
  std::printf("%s%s: %lld passed, %lld failed, %lld skipped\n", folder.c_str(),
              fold ? "" : " (no folding)",
              static_cast<long long>(run.counts.passed),
              static_cast<long long>(run.counts.failed),
              static_cast<long long>(run.counts.skipped));
  return run;
}

TEST(CorpusTest, Testdata) {
  KILN_REQUIRE_SHARED_DIR(shared);
  FolderRun run =
      RunFolder(shared, "testdata", /*include_dynamic=*/false, true);
  int64_t total = run.counts.passed + run.counts.failed;
  EXPECT_EQ(run.unexpected, 0);
  EXPECT_GE(run.counts.passed * 100, total * 99) << "under 99% passed";
}

TEST(CorpusTest, TestdataWithoutFolding) {
  KILN_REQUIRE_SHARED_DIR(shared);
  FolderRun run =
      RunFolder(shared, "testdata", /*include_dynamic=*/false, false);
  EXPECT_EQ(run.unexpected, 0);
}

TEST(CorpusTest, Interpret) {
  KILN_REQUIRE_SHARED_DIR(shared);
  FolderRun run = RunFolder(shared, "interpret", false, true);
  EXPECT_EQ(run.counts.failed, 0);
  // Every case runs, the run_parallel ones (send/recv too) included.
  EXPECT_EQ(run.counts.skipped, 0);
}

TEST(CorpusTest, InterpretWithoutFolding) {
  KILN_REQUIRE_SHARED_DIR(shared);
  FolderRun run = RunFolder(shared, "interpret", false, false);
  EXPECT_EQ(run.counts.failed, 0);
  // Every case runs, the run_parallel ones (send/recv too) included.
  EXPECT_EQ(run.counts.skipped, 0);
}

TEST(CorpusTest, Math) {
  KILN_REQUIRE_SHARED_DIR(shared);
  FolderRun run = RunFolder(shared, "math", false, true);
  EXPECT_EQ(run.counts.failed, 0);
}

TEST(CorpusTest, DynamicProgramsRunWithConcreteShapes) {
  KILN_REQUIRE_SHARED_DIR(shared);
  FolderRun run = RunFolder(shared, "testdata", /*include_dynamic=*/true, true);
  EXPECT_EQ(run.unexpected, 0);
}

}  // namespace
}  // namespace kiln::testing
