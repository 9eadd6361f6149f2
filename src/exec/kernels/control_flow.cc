#include "exec/kernels/control_flow.h"

#include "exec/executor.h"
#include "exec/kernels/element.h"

namespace kiln::exec {
namespace {

class WhileKernel : public Kernel {
 public:
  WhileKernel(std::unique_ptr<Region> cond, std::unique_ptr<Region> body)
      : cond_(std::move(cond)), body_(std::move(body)) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    // The loop state lives in the body's params.
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      ctx.CopySlot(step.inputs[i], body_->params[i]);
    }
    while (true) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      for (size_t i = 0; i < body_->params.size(); ++i) {
        ctx.CopySlot(body_->params[i], cond_->params[i]);
      }
      RETURN_IF_ERROR(ctx.RunRegion(*cond_));
      bool go_on =
          *reinterpret_cast<const uint8_t*>(ctx.slot(cond_->results[0])) != 0;
      if (!go_on) break;
      RETURN_IF_ERROR(ctx.RunRegion(*body_));
      for (size_t i = 0; i < body_->params.size(); ++i) {
        ctx.CopySlot(body_->results[i], body_->params[i]);
      }
    }
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      ctx.CopySlot(body_->params[i], step.outputs[i]);
    }
    return OkStatus();
  }

 private:
  std::unique_ptr<Region> cond_;
  std::unique_ptr<Region> body_;
};

class CaseKernel : public Kernel {
 public:
  CaseKernel(std::vector<std::unique_ptr<Region>> branches, bool is_if)
      : branches_(std::move(branches)), is_if_(is_if) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    int64_t index;
    ElementType type = ctx.slot_info(step.inputs[0]).shape.type;
    int64_t value = LoadInt(type, ctx.slot(step.inputs[0]), 0);
    if (is_if_) {
      index = value != 0 ? 0 : 1;
    } else {
      int64_t count = static_cast<int64_t>(branches_.size());
      // Out-of-range indices run the last branch (spec: case).
      index = value < 0 || value >= count ? count - 1 : value;
    }
    const Region& branch = *branches_[index];
    RETURN_IF_ERROR(ctx.RunRegion(branch));
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      ctx.CopySlot(branch.results[i], step.outputs[i]);
    }
    return OkStatus();
  }

 private:
  std::vector<std::unique_ptr<Region>> branches_;
  bool is_if_;
};

}  // namespace

std::unique_ptr<Kernel> MakeWhileKernel(std::unique_ptr<Region> cond,
                                        std::unique_ptr<Region> body) {
  return std::make_unique<WhileKernel>(std::move(cond), std::move(body));
}

std::unique_ptr<Kernel> MakeCaseKernel(
    std::vector<std::unique_ptr<Region>> branches, bool is_if) {
  return std::make_unique<CaseKernel>(std::move(branches), is_if);
}

}  // namespace kiln::exec
