// `kiln run FILE [--inputs a.npy ...] [--outputs DIR]`: runs a program's
// entry function (@main) on Kiln's compiler and executor, with NumPy
// inputs or random ones, and writes the results as .npy files or prints
// them. `--repeat N` runs it N more times and prints compile and execute
// times; `--profile trace.json` writes a Chrome trace (Perfetto) of the
// last run, step by step; `--no-fusion` compiles every op on its own. With
// --plugin PATH or --device NAME it runs through a PJRT plugin and Kiln's
// client instead (run_through_client.cc).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/file.h"
#include "compile/compiler.h"
#include "compile/custom_call.h"
#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/profile.h"
#include "parse/parse.h"
#include "tools/check/check_targets.h"
#include "tools/check/inputs.h"
#include "tools/kiln/command.h"
#include "tools/kiln/npy.h"
#include "tools/kiln/run_through_client.h"

namespace kiln::cli {
namespace {

// "[[1, 2], [3, 4]]" for a row-major array (long arrays are elided).
std::string FormatArray(const exec::ValueSpec& spec, const std::byte* data) {
  if (spec.is_token) return "!stablehlo.token";
  const exec::ArrayShape& shape = spec.shape;
  std::string out = shape.ToString() + " ";
  int64_t count = shape.num_elements();
  std::vector<int64_t> strides = shape.Strides();
  constexpr int64_t kMaxShown = 256;
  for (int64_t i = 0; i < count && i < kMaxShown; ++i) {
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (i % (strides[d] * shape.dims[d]) == 0) out += "[";
    }
    ir::ElementType type = shape.type;
    if (ir::IsComplex(type)) {
      exec::c128 v = exec::LoadComplex(type, data, i);
      StrAppend(out, "(", v.real(), ", ", v.imag(), ")");
    } else if (ir::IsFloat(type)) {
      char text[40];
      std::snprintf(text, sizeof(text), "%.8g",
                    exec::LoadDouble(type, data, i));
      out += text;
    } else if (ir::IsBool(type)) {
      out += exec::LoadInt(type, data, i) ? "true" : "false";
    } else if (type == ir::ElementType::kUI64) {
      StrAppend(out, static_cast<uint64_t>(exec::LoadInt(type, data, i)));
    } else {
      StrAppend(out, exec::LoadInt(type, data, i));
    }
    int closed = 0;
    for (int64_t d = shape.rank() - 1; d >= 0; --d) {
      if ((i + 1) % (strides[d] * shape.dims[d]) == 0) {
        out += "]";
        ++closed;
      } else {
        break;
      }
    }
    if (i + 1 < count) out += closed > 0 ? ", " : ", ";
  }
  if (count > kMaxShown) StrAppend(out, "... (", count, " elements)");
  return out;
}

// Hands each output the buffer it had in the previous run (allocated and
// zeroed the first time).
class ReusedOutputs : public exec::OutputAllocator {
 public:
  StatusOr<void*> Allocate(int index, const exec::ValueSpec& spec) override {
    if (index >= static_cast<int>(buffers_.size())) buffers_.resize(index + 1);
    exec::AlignedBuffer& buffer = buffers_[index];
    const int64_t bytes = spec.is_token ? 0 : spec.shape.byte_size();
    if (buffer.data() == nullptr ||
        buffer.size() < static_cast<size_t>(bytes)) {
      ASSIGN_OR_RETURN(buffer, exec::AllocateAligned(bytes));
      std::memset(buffer.data(), 0, bytes);
    }
    return static_cast<void*>(buffer.data());
  }

 private:
  std::vector<exec::AlignedBuffer> buffers_;
};

int RunRun(Arguments& args) {
  std::vector<std::string> inputs = args.TakeRepeatedFlag("inputs");
  std::optional<std::string> outputs_dir = args.TakeFlag("outputs");
  std::optional<std::string> entry = args.TakeFlag("entry");
  int64_t seed = ParseInt64(args.TakeFlag("seed").value_or("1")).value_or(1);
  bool with_checks = args.TakeSwitch("checks");
  std::optional<std::string> plugin = args.TakeFlag("plugin");
  std::optional<std::string> device = args.TakeFlag("device");
  bool print_metrics = args.TakeSwitch("metrics");
  int64_t repeat =
      ParseInt64(args.TakeFlag("repeat").value_or("0")).value_or(-1);
  std::optional<std::string> profile_path = args.TakeFlag("profile");
  bool no_fusion = args.TakeSwitch("no-fusion");
  if (repeat < 0) {
    std::fprintf(stderr, "kiln run: --repeat takes a count\n");
    return 2;
  }
  if (!args.RejectUnknownFlags("run")) return 2;
  // `--inputs a.npy b.npy` leaves b.npy among the positional arguments.
  std::vector<std::string> rest = args.rest();
  if (rest.empty()) {
    std::fprintf(stderr, "kiln run: give a program file\n");
    return 2;
  }
  std::string path = rest[0];
  for (size_t i = 1; i < rest.size(); ++i) inputs.push_back(rest[i]);

  auto text = ReadFile(path);
  if (!text.ok()) {
    std::fprintf(stderr, "kiln run: %s\n", text.status().ToString().c_str());
    return 1;
  }
  auto module = parse::ParseFile(*text, path);
  if (!module.ok()) {
    std::fprintf(stderr, "kiln run: %s\n", module.status().ToString().c_str());
    return 1;
  }
  compile::CustomCallRegistry registry(&compile::CustomCallRegistry::Builtin());
  if (with_checks) check::RegisterCheckTargets(registry);
  compile::CompileOptions options;
  options.custom_calls = &registry;
  if (entry) options.entry = *entry;
  options.fuse_elementwise = !no_fusion;

  // Inputs: from .npy files (their shapes refine dynamic ones), else random.
  std::vector<NpyArray> arrays;
  for (const std::string& input : inputs) {
    auto bytes = ReadFile(input);
    if (!bytes.ok()) {
      std::fprintf(stderr, "kiln run: %s\n", bytes.status().ToString().c_str());
      return 1;
    }
    auto array = ParseNpy(*bytes);
    if (!array.ok()) {
      std::fprintf(stderr, "kiln run: %s: %s\n", input.c_str(),
                   array.status().ToString().c_str());
      return 1;
    }
    arrays.push_back(std::move(array).value());
  }
  if ((plugin || device) && arrays.empty()) {
    // Random inputs of the shapes Kiln's own compiler reads off the program.
    auto plan = compile::Compile(**module, options);
    if (!plan.ok()) {
      std::fprintf(stderr, "kiln run: %s\n", plan.status().ToString().c_str());
      return 1;
    }
    auto random = check::RandomArguments(**plan, static_cast<uint64_t>(seed));
    if (!random.ok()) {
      std::fprintf(stderr, "kiln run: %s\n",
                   random.status().ToString().c_str());
      return 1;
    }
    for (size_t i = 0; i < random->size(); ++i) {
      const exec::ValueSpec& spec = (*plan)->arguments()[i];
      arrays.push_back(NpyArray{
          spec.shape,
          std::string(reinterpret_cast<const char*>((*random)[i].data()),
                      spec.byte_size())});
    }
  }
  if (plugin || device) {
    return RunThroughClient({path, *text, std::move(arrays), plugin, device,
                             outputs_dir, print_metrics});
  }
  const ir::Operation* func = options.entry.empty()
                                  ? (*module)->EntryFunction()
                                  : (*module)->LookupFunction(options.entry);
  if (func == nullptr) {
    std::fprintf(stderr, "kiln run: %s has no entry function\n", path.c_str());
    return 1;
  }
  if (!arrays.empty()) {
    for (size_t i = 0; i < arrays.size(); ++i) {
      options.argument_types.push_back(
          ir::TensorOf(arrays[i].shape.dims, arrays[i].shape.type));
      // Scalar integers may carry dimension sizes.
      if (arrays[i].shape.dims.empty() && ir::IsInteger(arrays[i].shape.type)) {
        options.argument_values[static_cast<int>(i)] = arrays[i].data;
      }
    }
  } else {
    check::ConcreteArguments concrete = check::ConcretizeArguments(*func, 3);
    options.argument_types = concrete.types;
    options.argument_values = concrete.values;
  }
  auto compile_start = std::chrono::steady_clock::now();
  auto plan = compile::Compile(**module, options);
  double compile_ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - compile_start)
                          .count();
  if (!plan.ok()) {
    std::fprintf(stderr, "kiln run: %s\n", plan.status().ToString().c_str());
    return 1;
  }
  std::vector<exec::AlignedBuffer> buffers;
  if (!arrays.empty()) {
    if (arrays.size() != (*plan)->arguments().size()) {
      std::fprintf(stderr,
                   "kiln run: the program takes %zu arguments; %zu given\n",
                   (*plan)->arguments().size(), arrays.size());
      return 1;
    }
    for (const NpyArray& array : arrays) {
      auto buffer = exec::AllocateAligned(array.data.size());
      if (!buffer.ok()) return 1;
      std::memcpy(buffer->data(), array.data.data(), array.data.size());
      buffers.push_back(std::move(buffer).value());
    }
  } else {
    auto random = check::RandomArguments(**plan, static_cast<uint64_t>(seed));
    if (!random.ok()) return 1;
    buffers = std::move(random).value();
    for (const auto& [index, bytes] : options.argument_values) {
      std::memcpy(buffers[index].data(), bytes.data(), bytes.size());
    }
  }
  std::vector<const void*> pointers;
  for (const auto& buffer : buffers) pointers.push_back(buffer.data());
  exec::OwningOutputAllocator allocator;
  exec::Profile profile;
  exec::RunOptions run_options;
  // The last run is profiled (after the others have warmed caches).
  if (profile_path && repeat == 0) run_options.profile = &profile;
  auto results = exec::Execute(**plan, pointers, allocator, run_options);
  if (!results.ok()) {
    std::fprintf(stderr, "kiln run: %s\n", results.status().ToString().c_str());
    return 1;
  }
  if (repeat > 0) {
    std::vector<double> times_ms;
    // The repeated runs write into the same output buffers, touched once
    // before the first: as a device reuses freed blocks, so that the times
    // are the program's and not the kernel's page faults on fresh memory
    // (a 6 MiB output took 8 ms to fault in, the program 0.1 ms).
    ReusedOutputs repeat_allocator;
    for (int64_t i = 0; i < repeat; ++i) {
      if (profile_path && i + 1 == repeat) run_options.profile = &profile;
      auto start = std::chrono::steady_clock::now();
      auto again =
          exec::Execute(**plan, pointers, repeat_allocator, run_options);
      times_ms.push_back(std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count());
      if (!again.ok()) {
        std::fprintf(stderr, "kiln run: %s\n",
                     again.status().ToString().c_str());
        return 1;
      }
    }
    std::vector<double> sorted = times_ms;
    std::sort(sorted.begin(), sorted.end());
    double sum = 0;
    for (double t : sorted) sum += t;
    std::fprintf(stderr,
                 "compile %.3f ms; execute over %lld runs: min %.3f ms, "
                 "median %.3f ms, mean %.3f ms, max %.3f ms; %lld steps, "
                 "arena %lld bytes (live peak %lld)\n",
                 compile_ms, static_cast<long long>(repeat), sorted.front(),
                 sorted[sorted.size() / 2], sum / sorted.size(), sorted.back(),
                 static_cast<long long>((*plan)->num_steps()),
                 static_cast<long long>((*plan)->arena_bytes()),
                 static_cast<long long>((*plan)->live_peak_bytes()));
  }
  if (profile_path) {
    Status written =
        WriteFile(*profile_path, exec::ChromeTraceJson(profile.events()));
    if (!written.ok()) {
      std::fprintf(stderr, "kiln run: %s\n", written.ToString().c_str());
      return 1;
    }
  }
  for (size_t i = 0; i < results->size(); ++i) {
    const exec::ValueSpec& spec = (*plan)->outputs()[i];
    const auto* data = static_cast<const std::byte*>((*results)[i]);
    if (outputs_dir) {
      NpyArray array{
          spec.shape,
          std::string(reinterpret_cast<const char*>(data), spec.byte_size())};
      std::string file = StrCat(*outputs_dir, "/output", i, ".npy");
      Status written = WriteFile(file, WriteNpy(array));
      if (!written.ok()) {
        std::fprintf(stderr, "kiln run: %s\n", written.ToString().c_str());
        return 1;
      }
      std::printf("%s\n", file.c_str());
    } else {
      std::printf("%s\n", FormatArray(spec, data).c_str());
    }
  }
  return 0;
}

}  // namespace

KILN_REGISTER_COMMAND(run, "run",
                      "run FILE [--inputs a.npy ...] [--outputs DIR] "
                      "[--entry NAME] [--seed N] [--checks] [--repeat N] "
                      "[--profile trace.json] [--no-fusion] "
                      "[--plugin PATH|--device NAME [--metrics]]",
                      "run a program's entry function with .npy or random "
                      "inputs and print or save the results",
                      RunRun);

}  // namespace kiln::cli
