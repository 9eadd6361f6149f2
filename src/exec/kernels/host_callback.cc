#include "exec/kernels/host_callback.h"

#include <atomic>
#include <cstring>
#include <string>

#include "exec/executor.h"

namespace kiln::exec {
namespace {

std::atomic<HostCallbackTrampoline> g_trampoline{nullptr};

// Room for the host's message; longer ones are cut.
constexpr int64_t kErrorSize = 4096;

class HostCallbackKernel : public Kernel {
 public:
  HostCallbackKernel(uint64_t callback_id, std::vector<bool> input_is_token,
                     std::vector<bool> output_is_token,
                     const std::vector<std::vector<int64_t>>& input_dims)
      : callback_id_(callback_id),
        input_is_token_(std::move(input_is_token)),
        output_is_token_(std::move(output_is_token)) {
    for (const std::vector<int64_t>& dims : input_dims) {
      ranks_.push_back(static_cast<int64_t>(dims.size()));
      dims_.insert(dims_.end(), dims.begin(), dims.end());
    }
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    HostCallbackTrampoline trampoline =
        g_trampoline.load(std::memory_order_acquire);
    if (trampoline == nullptr) {
      return FailedPreconditionError(
          "host callback ", callback_id_,
          ": no host callback trampoline is registered (Kiln's Python "
          "package registers one through the client option "
          "kiln_host_callback_trampoline)");
    }
    std::vector<const void*> args;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      if (!input_is_token_[i]) args.push_back(ctx.In<void>(step, i));
    }
    std::vector<void*> results;
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      if (!output_is_token_[i]) results.push_back(ctx.Out<void>(step, i));
    }
    std::string error(kErrorSize, '\0');
    int code = trampoline(callback_id_, static_cast<int64_t>(args.size()),
                          args.data(), static_cast<int64_t>(results.size()),
                          results.data(), error.data(), kErrorSize,
                          ranks_.data(), dims_.data());
    if (code == 0) return OkStatus();
    error.resize(std::strlen(error.c_str()));
    return InternalError("host callback ", callback_id_,
                         " failed: ", error.empty() ? "(no message)" : error);
  }

 private:
  uint64_t callback_id_;
  std::vector<bool> input_is_token_;
  std::vector<bool> output_is_token_;
  std::vector<int64_t> ranks_;  // per non-token input
  std::vector<int64_t> dims_;   // theirs, concatenated
};

}  // namespace

void SetHostCallbackTrampoline(HostCallbackTrampoline trampoline) {
  g_trampoline.store(trampoline, std::memory_order_release);
}

std::unique_ptr<Kernel> MakeHostCallbackKernel(
    uint64_t callback_id, std::vector<bool> input_is_token,
    std::vector<bool> output_is_token,
    std::vector<std::vector<int64_t>> input_dims) {
  return std::make_unique<HostCallbackKernel>(
      callback_id, std::move(input_is_token), std::move(output_is_token),
      input_dims);
}

}  // namespace kiln::exec
