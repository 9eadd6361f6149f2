#include "tools/check/corpus.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "base/file.h"
#include "base/thread_pool.h"
#include "compile/compiler.h"
#include "compile/custom_call.h"
#include "exec/executor.h"
#include "parse/parse.h"
#include "parse/text/parser.h"
#include "tools/check/check_targets.h"
#include "tools/check/inputs.h"

namespace kiln::check {
namespace {

using Clock = std::chrono::steady_clock;

// The functions to run: @main, the only public function, or else every
// public function without arguments that no other function calls (a file
// of several test functions).
std::vector<const ir::Operation*> FindEntries(const ir::Module& module) {
  if (const ir::Operation* entry = module.EntryFunction()) return {entry};
  std::set<std::string> called;
  for (ir::Operation* func : module.Functions()) {
    func->Walk([&](ir::Operation& op) {
      for (const char* name : {"callee", "decomposition"}) {
        ir::Attribute ref = op.GetAttr(name);
        if (ref.is(ir::AttrKind::kSymbolRef)) called.insert(ref.symbol_root());
      }
      ir::Attribute programs = op.GetAttr("programs");
      if (programs.is(ir::AttrKind::kArray)) {
        for (const ir::Attribute& row : programs.array()) {
          if (!row.is(ir::AttrKind::kArray)) continue;
          for (const ir::Attribute& ref : row.array()) {
            if (ref.is(ir::AttrKind::kSymbolRef))
              called.insert(ref.symbol_root());
          }
        }
      }
    });
  }
  std::vector<const ir::Operation*> entries;
  for (ir::Operation* func : module.Functions()) {
    if (!ir::func::IsPublic(*func) ||
        called.count(std::string(ir::func::Name(*func))) ||
        ir::func::Body(*func).num_arguments() > 0) {
      continue;
    }
    entries.push_back(func);
  }
  return entries;
}

// Cancels runs that pass their deadline.
class Watchdog {
 public:
  Watchdog() : thread_([this] { Loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void Watch(std::atomic<bool>* flag, Clock::time_point deadline) {
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.emplace_back(flag, deadline);
  }
  void Forget(std::atomic<bool>* flag) {
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.erase(
        std::remove_if(watched_.begin(), watched_.end(),
                       [&](const auto& w) { return w.first == flag; }),
        watched_.end());
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::milliseconds(100));
      Clock::time_point now = Clock::now();
      for (auto& [flag, deadline] : watched_) {
        if (now >= deadline) flag->store(true);
      }
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<std::pair<std::atomic<bool>*, Clock::time_point>> watched_;
  std::thread thread_;
};

struct Case {
  std::string path;
  std::string name;
  std::string text;
  int first_line = 1;
  std::string load_error;  // the file could not be read
};

// Compiles `entry` with the check targets and runs it on random inputs
// (specialized on concrete shapes when its types are dynamic).
Status RunEntry(const ir::Module& module, const ir::Operation& entry,
                const CorpusOptions& options, Watchdog& watchdog,
                Clock::time_point deadline) {
  compile::CustomCallRegistry registry(&compile::CustomCallRegistry::Builtin());
  RegisterCheckTargets(registry);
  compile::CompileOptions compile_options;
  compile_options.entry = std::string(ir::func::Name(entry));
  compile_options.custom_calls = &registry;
  compile_options.fold_constants = options.fold_constants;
  compile_options.use_onednn = options.use_onednn;
  ConcreteArguments concrete = ConcretizeArguments(entry, options.dynamic_size);
  compile_options.argument_types = concrete.types;
  compile_options.argument_values = concrete.values;
  auto plan = compile::Compile(module, compile_options);
  if (!plan.ok()) return plan.status().WithContext("compile");
  ASSIGN_OR_RETURN(std::vector<exec::AlignedBuffer> arguments,
                   RandomArguments(**plan, 1234));
  for (const auto& [index, bytes] : concrete.values) {
    if (index < static_cast<int>(arguments.size()) &&
        arguments[index].size() >= bytes.size()) {
      std::memcpy(arguments[index].data(), bytes.data(), bytes.size());
    }
  }
  std::vector<const void*> pointers;
  for (const auto& buffer : arguments) pointers.push_back(buffer.data());
  std::atomic<bool> cancel{false};
  watchdog.Watch(&cancel, deadline);
  exec::OwningOutputAllocator allocator;
  exec::RunOptions run_options;
  run_options.cancel = &cancel;
  auto outputs = exec::Execute(**plan, pointers, allocator, run_options);
  watchdog.Forget(&cancel);
  return outputs.status();
}

// Runs one case; a failed check or error is a failed case.
CaseResult RunCase(const Case& c, const CorpusOptions& options,
                   Watchdog& watchdog) {
  CaseResult result;
  result.name = c.name;
  auto start = Clock::now();
  auto finish = [&](CaseResult::Outcome outcome, std::string reason) {
    result.outcome = outcome;
    result.reason = std::move(reason);
    result.seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    return result;
  };
  // A bytecode file is one case; text cases are parts of their file.
  auto module = parse::IsBytecode(c.text)
                    ? parse::ParseModule(c.text, c.path)
                    : parse::ParseTextModule(c.text, c.path, c.first_line);
  if (!module.ok()) {
    return finish(CaseResult::Outcome::kFailed,
                  StrCat("parse: ", module.status().message()));
  }
  std::vector<const ir::Operation*> entries = FindEntries(**module);
  if (entries.empty()) {
    if ((*module)->Functions().empty()) {
      return finish(CaseResult::Outcome::kPassed, "");  // nothing to run
    }
    return finish(CaseResult::Outcome::kFailed, "no entry function to run");
  }
  for (const ir::Operation* entry : entries) {
    Status status = RunEntry(
        **module, *entry, options, watchdog,
        start + std::chrono::milliseconds(
                    static_cast<int64_t>(options.timeout_seconds * 1000)));
    if (!status.ok()) {
      std::string reason(status.message());
      if (status.code() == StatusCode::kCancelled) {
        reason = StrCat("timed out after ", options.timeout_seconds, " s");
      }
      if (entries.size() > 1) {
        reason = StrCat("@", ir::func::Name(*entry), ": ", reason);
      }
      return finish(CaseResult::Outcome::kFailed, std::move(reason));
    }
  }
  return finish(CaseResult::Outcome::kPassed, "");
}

std::vector<Case> LoadCases(const std::string& path, std::string& text,
                            std::string& error) {
  std::vector<Case> cases;
  auto contents = ReadFile(path);
  if (!contents.ok()) {
    error = contents.status().ToString();
    return cases;
  }
  text = std::move(contents).value();
  if (parse::IsBytecode(text)) {
    Case c;
    c.path = path;
    c.name = path;
    c.text = text;
    c.first_line = 1;
    cases.push_back(std::move(c));
    return cases;
  }
  std::vector<parse::TextPart> parts = parse::SplitInputFile(text);
  for (const parse::TextPart& part : parts) {
    Case c;
    c.path = path;
    c.name = parts.size() == 1 ? path : StrCat(path, ":", part.first_line);
    c.text = std::string(part.text);
    c.first_line = part.first_line;
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace

StatusOr<std::vector<std::string>> CollectCorpusFiles(
    const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      std::vector<std::string> found;
      for (auto it = std::filesystem::recursive_directory_iterator(path, error);
           !error && it != std::filesystem::recursive_directory_iterator();
           it.increment(error)) {
        // MLIR text, and MLIR bytecode written as .mlirbc.
        if (it->is_regular_file() && (it->path().extension() == ".mlir" ||
                                      it->path().extension() == ".mlirbc")) {
          found.push_back(it->path().string());
        }
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::is_regular_file(path, error)) {
      files.push_back(path);
    } else {
      return NotFoundError("no such file or folder: ", path);
    }
  }
  return files;
}

std::vector<CaseResult> RunCorpus(const std::vector<std::string>& files,
                                  const CorpusOptions& options) {
  std::vector<Case> cases;
  for (const std::string& file : files) {
    std::string text, error;
    std::vector<Case> file_cases = LoadCases(file, text, error);
    if (!error.empty()) {
      cases.push_back(Case{file, file, "", 1, error});
      continue;
    }
    for (Case& c : file_cases) cases.push_back(std::move(c));
  }
  std::vector<CaseResult> results(cases.size());
  Watchdog watchdog;
  std::atomic<size_t> next{0};
  int threads = options.threads > 0 ? options.threads : AvailableCores();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < cases.size(); i = next++) {
        if (!cases[i].load_error.empty()) {
          results[i] = {cases[i].name, CaseResult::Outcome::kFailed,
                        cases[i].load_error, 0};
        } else {
          results[i] = RunCase(cases[i], options, watchdog);
        }
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  return results;
}

std::vector<CaseResult> RunCorpusFile(const std::string& path,
                                      const CorpusOptions& options) {
  CorpusOptions one = options;
  one.threads = 1;
  return RunCorpus({path}, one);
}

CorpusCounts CountResults(const std::vector<CaseResult>& results) {
  CorpusCounts counts;
  for (const CaseResult& r : results) {
    switch (r.outcome) {
      case CaseResult::Outcome::kPassed:
        ++counts.passed;
        break;
      case CaseResult::Outcome::kFailed:
        ++counts.failed;
        break;
      case CaseResult::Outcome::kSkipped:
        ++counts.skipped;
        break;
    }
  }
  return counts;
}

}  // namespace kiln::check
