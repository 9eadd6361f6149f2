// libFuzzer target for everything after parsing: the verifier, the
// compiler's lowering and buffer planning, and the kernels. Any program
// must verify, compile and run, or give an error: never crash, read or
// write out of bounds, or leak. Programs that compile are run on
// zero-filled arguments when they are small (at most 1 MiB of arguments,
// outputs and scratch) and have no loops (a `while` may run forever; the
// corpus tests cover loops). The corpus's check targets are registered, so
// its self-checking programs are good seeds, e.g.
//   compile_fuzzer -max_total_time=600 -max_len=16384 -timeout=10
//     -dict=tests/fuzz/text_parser.dict <work dir> <corpus testdata parts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "compile/compiler.h"
#include "compile/custom_call.h"
#include "exec/executor.h"
#include "parse/text/parser.h"
#include "tools/check/check_targets.h"

namespace {

constexpr int64_t kMaxRunBytes = 1 << 20;

bool HasLoop(kiln::ir::Module& module) {
  bool loop = false;
  module.op().Walk([&](kiln::ir::Operation& op) {
    loop |= op.name() == "stablehlo.while";
  });
  return loop;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kiln::compile::CustomCallRegistry* registry = [] {
    auto* r = new kiln::compile::CustomCallRegistry(
        &kiln::compile::CustomCallRegistry::Builtin());
    kiln::check::RegisterCheckTargets(*r);
    return r;
  }();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = kiln::parse::ParseTextModule(text, "fuzz.mlir");
  if (!module.ok()) return 0;
  kiln::compile::CompileOptions options;
  options.custom_calls = registry;
  auto plan = kiln::compile::Compile(**module, options);
  if (!plan.ok()) {
    if (plan.status().message().empty()) __builtin_trap();
    return 0;
  }
  int64_t bytes = (*plan)->arena_bytes();
  for (const auto& spec : (*plan)->arguments()) bytes += spec.byte_size();
  for (const auto& spec : (*plan)->outputs()) bytes += spec.byte_size();
  if (bytes > kMaxRunBytes || HasLoop(**module)) return 0;
  std::vector<kiln::exec::AlignedBuffer> arguments;
  std::vector<const void*> pointers;
  for (const auto& spec : (*plan)->arguments()) {
    auto buffer = kiln::exec::AllocateAligned(spec.byte_size());
    if (!buffer.ok()) return 0;
    if (buffer->size() > 0) std::memset(buffer->data(), 0, buffer->size());
    pointers.push_back(buffer->data());
    arguments.push_back(std::move(buffer).value());
  }
  kiln::exec::OwningOutputAllocator allocator;
  auto outputs = kiln::exec::Execute(**plan, pointers, allocator);
  if (!outputs.ok() && outputs.status().message().empty()) __builtin_trap();
  return 0;
}
