#include "exec/kernels/copy.h"

#include <cstring>

#include "exec/executor.h"

namespace kiln::exec {
namespace {

class CopyKernel : public Kernel {
 public:
  explicit CopyKernel(int64_t bytes) : bytes_(bytes) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const std::byte* from = ctx.slot(step.inputs[0]);
    std::byte* to = ctx.slot(step.outputs[0]);
    if (from != to && bytes_ > 0) std::memmove(to, from, bytes_);
    return OkStatus();
  }

 private:
  int64_t bytes_;
};

class MultiCopyKernel : public Kernel {
 public:
  Status Run(RunContext& ctx, const Step& step) const override {
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      ctx.CopySlot(step.inputs[i], step.outputs[i]);
    }
    return OkStatus();
  }
};

class NoOpKernel : public Kernel {
 public:
  Status Run(RunContext&, const Step&) const override { return OkStatus(); }
};

}  // namespace

std::unique_ptr<Kernel> MakeCopyKernel(int64_t bytes) {
  return std::make_unique<CopyKernel>(bytes);
}
std::unique_ptr<Kernel> MakeMultiCopyKernel() {
  return std::make_unique<MultiCopyKernel>();
}
std::unique_ptr<Kernel> MakeNoOpKernel() {
  return std::make_unique<NoOpKernel>();
}

}  // namespace kiln::exec
