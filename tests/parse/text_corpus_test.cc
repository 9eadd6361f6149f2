// Every .mlir file of ../shared/corpus: each valid part parses, and every
// part round-trips through the printer (pretty and generic, with and
// without locations) to structurally identical IR. Parts annotated with
// expected-error are counted separately: how many the parser alone rejects
// (the rest are verifier checks).
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "base/file.h"
#include "base/strings.h"
#include "base/thread_pool.h"
#include "ir/printer.h"
#include "parse/text/parser.h"
#include "support/test_support.h"

namespace kiln {
namespace {

// Files of the corpus that are not valid MLIR text on purpose.
bool IsExcluded(const std::string& path) {
  // "This file is not valid to parse since VHLO doesn't support unknown
  // operations" (its .bc twin is the test case).
  return EndsWith(path, "vhlo/invalid_vhlo_future.mlir");
}

bool ExpectsError(const parse::TextPart& part) {
  for (const auto& diagnostic : parse::ExtractExpectedDiagnostics(part)) {
    if (diagnostic.severity == parse::ExpectedDiagnostic::Severity::kError)
      return true;
  }
  return false;
}

struct CorpusFile {
  std::string path;
  std::string text;
};

std::vector<CorpusFile> LoadCorpus(const std::string& shared) {
  std::vector<CorpusFile> files;
  for (const std::string& path :
       testing::ListFiles(shared + "/corpus", ".mlir")) {
    if (IsExcluded(path)) continue;
    StatusOr<std::string> text = ReadFile(path);
    if (text.ok()) files.push_back({path, std::move(*text)});
  }
  return files;
}

// Runs `check(file, failures)` over every file on the default pool.
void ForEachFile(const std::vector<CorpusFile>& files,
                 const std::function<void(const CorpusFile&,
                                          std::vector<std::string>&)>& check,
                 std::vector<std::string>& failures) {
  std::mutex mutex;
  ThreadPool::Default().ParallelFor(
      static_cast<int64_t>(files.size()), 1, [&](int64_t begin, int64_t end) {
        std::vector<std::string> local;
        for (int64_t i = begin; i < end; ++i) check(files[i], local);
        std::lock_guard<std::mutex> lock(mutex);
        failures.insert(failures.end(), local.begin(), local.end());
      });
}

TEST(TextCorpus, EveryValidPartParses) {
  KILN_REQUIRE_SHARED_DIR(shared);
  std::vector<CorpusFile> files = LoadCorpus(shared);
  ASSERT_GT(files.size(), 2000u) << "corpus looks incomplete under " << shared;
  std::atomic<int> parts{0}, parsed{0}, error_parts{0}, rejected{0};
  std::vector<std::string> failures;
  ForEachFile(
      files,
      [&](const CorpusFile& file, std::vector<std::string>& out) {
        for (const parse::TextPart& part : parse::SplitInputFile(file.text)) {
          StatusOr<std::unique_ptr<ir::Module>> module =
              parse::ParseTextModule(part.text, file.path, part.first_line);
          if (ExpectsError(part)) {
            ++error_parts;
            if (!module.ok()) ++rejected;
            continue;
          }
          ++parts;
          if (module.ok()) {
            ++parsed;
          } else {
            out.push_back(module.status().ToString());
          }
        }
      },
      failures);
  std::printf(
      "[ corpus   ] %zu files: parsed %d/%d valid parts; %d/%d expected-error "
      "parts "
      "rejected by the parser alone\n",
      files.size(), parsed.load(), parts.load(), rejected.load(),
      error_parts.load());
  for (size_t i = 0; i < failures.size() && i < 20; ++i)
    ADD_FAILURE() << failures[i];
  EXPECT_EQ(parsed.load(), parts.load());
}

TEST(TextCorpus, RoundTripsThroughThePrinter) {
  KILN_REQUIRE_SHARED_DIR(shared);
  std::vector<CorpusFile> files = LoadCorpus(shared);
  struct Mode {
    const char* name;
    ir::PrintOptions options;
  };
  const Mode modes[] = {
      {"pretty", {false, true}},
      {"pretty --no-locations", {false, false}},
      {"generic", {true, true}},
      {"generic --no-locations", {true, false}},
  };
  std::atomic<int> modules{0}, round_trips{0};
  std::vector<std::string> failures;
  ForEachFile(
      files,
      [&](const CorpusFile& file, std::vector<std::string>& out) {
        for (const parse::TextPart& part : parse::SplitInputFile(file.text)) {
          StatusOr<std::unique_ptr<ir::Module>> module =
              parse::ParseTextModule(part.text, file.path, part.first_line);
          if (!module.ok()) continue;  // rejected parts are counted above
          ++modules;
          for (const Mode& mode : modes) {
            std::string printed = ir::PrintModule(**module, mode.options);
            std::string where =
                StrCat(file.path, ":", part.first_line, " (", mode.name, ")");
            StatusOr<std::unique_ptr<ir::Module>> again =
                parse::ParseTextModule(printed, "printed.mlir");
            if (!again.ok()) {
              out.push_back(StrCat(where, ": printed text does not parse: ",
                                   again.status().message()));
              continue;
            }
            std::string why;
            if (!ir::StructurallyEqual(**module, **again,
                                       mode.options.locations, &why)) {
              out.push_back(StrCat(where, ": differs after printing: ", why));
              continue;
            }
            ++round_trips;
          }
        }
      },
      failures);
  std::printf(
      "[ corpus   ] round-tripped %d/%d module prints (%d modules x 4 forms)\n",
      round_trips.load(), modules.load() * 4, modules.load());
  for (size_t i = 0; i < failures.size() && i < 20; ++i)
    ADD_FAILURE() << failures[i];
  EXPECT_EQ(round_trips.load(), modules.load() * 4);
}

}  // namespace
}  // namespace kiln
