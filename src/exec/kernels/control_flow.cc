#include "exec/kernels/control_flow.h"

#include <cstring>

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/shape.h"

namespace kiln::exec {
namespace {

// Whether `condition` holds over the current values of its slots.
bool Holds(const LoopCondition& condition, const RunContext& ctx) {
  return Ordered(condition.direction,
                 LoadInt(condition.type, ctx.slot(condition.lhs), 0),
                 LoadInt(condition.type, ctx.slot(condition.rhs), 0));
}

// One copied loop value's copy after an iteration, at addresses that stay
// put for the whole loop.
struct ValueCopy {
  const std::byte* from;
  std::byte* to;
  int64_t bytes;
};

void CopyValue(const ValueCopy& copy) {
  switch (copy.bytes) {  // counters and scalars: one move
    case 4:
      std::memcpy(copy.to, copy.from, 4);
      break;
    case 8:
      std::memcpy(copy.to, copy.from, 8);
      break;
    default:
      std::memcpy(copy.to, copy.from, copy.bytes);
  }
}

class WhileKernel : public Kernel {
 public:
  WhileKernel(std::unique_ptr<Region> cond, std::unique_ptr<Region> body,
              std::vector<LoopValueSlots> values,
              std::vector<int64_t> value_bytes,
              std::optional<LoopCondition> condition)
      : cond_(std::move(cond)),
        body_(std::move(body)),
        values_(std::move(values)),
        condition_(condition) {
    for (size_t i = 0; i < values_.size(); ++i) {
      (values_[i].copied ? copied_ : moved_).push_back(i);
      if (values_[i].copied) copied_bytes_.push_back(value_bytes[i]);
    }
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    // The loop state lives in the body's params, some of which are the
    // while's outputs.
    for (size_t i = 0; i < values_.size(); ++i) {
      if (values_[i].in_output) {
        Bind(ctx, values_[i].body_param, ctx.slot(step.outputs[i]));
      }
    }
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      ctx.CopySlot(step.inputs[i], body_->params[i]);
    }
    // The cond reads the state in place (no step writes a region's
    // params); the copied values stay where they are.
    for (size_t i = 0; i < values_.size(); ++i) {
      Bind(ctx, values_[i].cond_param, ctx.slot(body_->params[i]));
    }
    // Only a moved value's slots are rebound in the loop, so where there is
    // none every address is known now: the copies are listed once (on the
    // stack for a few values), not looked up every iteration.
    constexpr size_t kInlineCopies = 8;
    ValueCopy inline_copies[kInlineCopies];
    std::vector<ValueCopy> heap_copies;
    ValueCopy* copies = inline_copies;
    size_t num_copies = 0;
    if (moved_.empty()) {
      if (copied_.size() > kInlineCopies) {
        heap_copies.resize(copied_.size());
        copies = heap_copies.data();
      }
      for (size_t k = 0; k < copied_.size(); ++k) {
        const size_t i = copied_[k];
        ValueCopy copy{ctx.slot(body_->results[i]), ctx.slot(body_->params[i]),
                       copied_bytes_[k]};
        if (copy.from != copy.to) copies[num_copies++] = copy;
      }
    }
    const SlotId cond_result = cond_->results[0];
    while (true) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      if (condition_) {
        if (!Holds(*condition_, ctx)) break;
      } else {
        RETURN_IF_ERROR(ctx.RunRegion(*cond_));
        if (*reinterpret_cast<const uint8_t*>(ctx.slot(cond_result)) == 0) {
          break;
        }
      }
      RETURN_IF_ERROR(ctx.RunRegion(*body_));
      if (moved_.empty()) {
        for (size_t k = 0; k < num_copies; ++k) CopyValue(copies[k]);
        continue;
      }
      for (size_t k = 0; k < copied_.size(); ++k) {
        const size_t i = copied_[k];
        ValueCopy copy{ctx.slot(body_->results[i]), ctx.slot(body_->params[i]),
                       copied_bytes_[k]};
        if (copy.from != copy.to) CopyValue(copy);
      }
      // The other results become the next state: each trades memory with
      // its param, whose old value is dead. Both are the loop's own for
      // the whole op, so any assignment of the two to the pair is sound.
      for (size_t i : moved_) {
        const LoopValueSlots& value = values_[i];
        std::byte* state = ctx.slot(body_->params[i]);
        std::byte* next = ctx.slot(body_->results[i]);
        Bind(ctx, value.body_param, next);
        Bind(ctx, value.body_result, state);
        Bind(ctx, value.cond_param, next);
      }
    }
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      ctx.CopySlot(body_->params[i], step.outputs[i]);
    }
    return OkStatus();
  }

 private:
  static void Bind(RunContext& ctx, const std::vector<SlotId>& slots,
                   std::byte* address) {
    for (SlotId id : slots) ctx.set_slot(id, address);
  }

  std::unique_ptr<Region> cond_;
  std::unique_ptr<Region> body_;
  std::vector<LoopValueSlots> values_;
  std::optional<LoopCondition> condition_;
  std::vector<size_t> copied_, moved_;  // value indices
  std::vector<int64_t> copied_bytes_;   // per copied value
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

// The copy of slice `position` along `dimension` of an array of `dims` to
// or from a contiguous slice.
StridedCopy SliceCopy(const std::vector<int64_t>& dims, int64_t dimension,
                      int64_t position, bool into_array) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  StridedCopy copy;
  std::vector<int64_t> slice_strides;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (d == dimension) continue;
    copy.dims.push_back(dims[d]);
    slice_strides.push_back(strides[d]);
  }
  std::vector<int64_t> contiguous = RowMajorStrides(copy.dims);
  if (into_array) {
    copy.source_strides = contiguous;
    copy.target_strides = slice_strides;
    copy.target_offset = position * strides[dimension];
  } else {
    copy.source_strides = slice_strides;
    copy.source_offset = position * strides[dimension];
    copy.target_strides = contiguous;
  }
  copy.Simplify();
  return copy;
}

class ScanKernel : public Kernel {
 public:
  ScanKernel(std::vector<ArrayShape> inputs, std::vector<ArrayShape> outputs,
             int64_t num_carries, int64_t dimension, bool reverse,
             std::unique_ptr<Region> body)
      : inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        num_carries_(num_carries),
        dimension_(dimension),
        reverse_(reverse),
        body_(std::move(body)) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    size_t n = inputs_.size();
    size_t m = static_cast<size_t>(num_carries_);
    size_t k = outputs_.size();
    for (size_t c = 0; c < m; ++c)
      ctx.CopySlot(step.inputs[n + c], body_->params[n + c]);
    int64_t length = n > 0 ? inputs_[0].dims[dimension_] : 0;
    for (int64_t s = 0; s < length; ++s) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      int64_t position = reverse_ ? length - 1 - s : s;
      for (size_t i = 0; i < n; ++i) {
        SliceCopy(inputs_[i].dims, dimension_, position, false)
            .Run(ctx.slot(step.inputs[i]), ctx.slot(body_->params[i]),
                 inputs_[i].element_bytes());
      }
      RETURN_IF_ERROR(ctx.RunRegion(*body_));
      for (size_t o = 0; o < k; ++o) {
        SliceCopy(outputs_[o].dims, dimension_, position, true)
            .Run(ctx.slot(body_->results[o]), ctx.slot(step.outputs[o]),
                 outputs_[o].element_bytes());
      }
      for (size_t c = 0; c < m; ++c) {
        ctx.CopySlot(body_->results[k + c], body_->params[n + c]);
      }
    }
    for (size_t c = 0; c < m; ++c) {
      ctx.CopySlot(body_->params[n + c], step.outputs[k + c]);
    }
    return OkStatus();
  }

 private:
  std::vector<ArrayShape> inputs_, outputs_;
  int64_t num_carries_, dimension_;
  bool reverse_;
  std::unique_ptr<Region> body_;
};

}  // namespace

std::unique_ptr<Kernel> MakeScanKernel(std::vector<ArrayShape> inputs,
                                       std::vector<ArrayShape> outputs,
                                       int64_t num_carries, int64_t dimension,
                                       bool reverse,
                                       std::unique_ptr<Region> body) {
  return std::make_unique<ScanKernel>(std::move(inputs), std::move(outputs),
                                      num_carries, dimension, reverse,
                                      std::move(body));
}

std::unique_ptr<Kernel> MakeWhileKernel(
    std::unique_ptr<Region> cond, std::unique_ptr<Region> body,
    std::vector<LoopValueSlots> values, std::vector<int64_t> value_bytes,
    std::optional<LoopCondition> condition) {
  return std::make_unique<WhileKernel>(std::move(cond), std::move(body),
                                       std::move(values),
                                       std::move(value_bytes), condition);
}

std::unique_ptr<Kernel> MakeCaseKernel(
    std::vector<std::unique_ptr<Region>> branches, bool is_if) {
  return std::make_unique<CaseKernel>(std::move(branches), is_if);
}

}  // namespace kiln::exec
