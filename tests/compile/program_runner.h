// Runs StableHLO programs given as text, for the compile/exec tests.
#ifndef KILN_TESTS_COMPILE_PROGRAM_RUNNER_H_
#define KILN_TESTS_COMPILE_PROGRAM_RUNNER_H_

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "compile/compiler.h"
#include "exec/executor.h"
#include "ir/operation.h"
#include "parse/parse.h"

namespace kiln::testing {

// A host array: shape and row-major bytes.
struct HostArray {
  exec::ArrayShape shape;
  std::string bytes;

  template <typename T>
  static HostArray Of(ir::ElementType type, std::vector<int64_t> dims,
                      const std::vector<T>& values) {
    HostArray array{{type, std::move(dims)},
                    std::string(values.size() * sizeof(T), '\0')};
    if (!values.empty())
      std::memcpy(array.bytes.data(), values.data(), array.bytes.size());
    return array;
  }
  template <typename T>
  std::vector<T> As() const {
    std::vector<T> values(bytes.size() / sizeof(T));
    if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }
};

// Parses and compiles `text`; runs a plan on host arrays; or both.

inline StatusOr<std::unique_ptr<exec::Plan>> CompileText(
    const std::string& text, const compile::CompileOptions& options = {}) {
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                   parse::ParseModule(text, "test.mlir"));
  return compile::Compile(*module, options);
}

inline StatusOr<std::vector<HostArray>> RunPlan(
    const exec::Plan& plan, const std::vector<HostArray>& inputs,
    const exec::RunOptions& options) {
  std::vector<const void*> pointers;
  for (const HostArray& input : inputs) pointers.push_back(input.bytes.data());
  exec::OwningOutputAllocator allocator;
  ASSIGN_OR_RETURN(std::vector<void*> outputs,
                   exec::Execute(plan, pointers, allocator, options));
  std::vector<HostArray> results;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const exec::ValueSpec& spec = plan.outputs()[i];
    results.push_back(
        {spec.shape,
         std::string(static_cast<const char*>(outputs[i]), spec.byte_size())});
  }
  return results;
}

inline StatusOr<std::vector<HostArray>> RunPlan(
    const exec::Plan& plan, const std::vector<HostArray>& inputs,
    const std::atomic<bool>* cancel = nullptr) {
  exec::RunOptions options;
  options.cancel = cancel;
  return RunPlan(plan, inputs, options);
}

inline StatusOr<std::vector<HostArray>> RunText(
    const std::string& text, const std::vector<HostArray>& inputs = {}) {
  ASSIGN_OR_RETURN(std::unique_ptr<exec::Plan> plan, CompileText(text));
  return RunPlan(*plan, inputs);
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_COMPILE_PROGRAM_RUNNER_H_
