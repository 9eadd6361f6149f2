#include "exec/kernels/elementwise_kernel.h"

#include <algorithm>

#include "exec/executor.h"
#include "exec/parallel.h"

namespace kiln::exec {
namespace {

// Work (elements times cost) below which a kernel runs on the calling
// thread: about 20 microseconds of adds, more than a thread hop costs.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;
// Each thread's share starts on a multiple of this many elements, so that
// shares begin on cache lines for every element size.
constexpr int64_t kChunkGranule = 64;

}  // namespace

void RunElementwise(const ElementwiseKernel& kernel,
                    const std::byte* const* inputs, std::byte* const* outputs) {
  int64_t count = kernel.count();
  if (count <= 0) return;
  int64_t work = count * kernel.cost_per_element();
  if (work < 2 * kMinParallelWork || ParallelThreads() <= 1) {
    kernel.RunRange(inputs, outputs, 0, count);
    return;
  }
  int num_inputs = kernel.num_inputs();
  int num_outputs = kernel.num_outputs();
  int64_t granules = (count + kChunkGranule - 1) / kChunkGranule;
  int64_t min_granules = std::max<int64_t>(
      1, kMinParallelWork / kernel.cost_per_element() / kChunkGranule);
  ParallelFor(granules, min_granules, [&](int64_t first, int64_t last) {
    int64_t begin = first * kChunkGranule;
    int64_t end = std::min(count, last * kChunkGranule);
    // Small operand lists live on the stack; the rest on the heap.
    constexpr int kInline = 16;
    const std::byte* in_inline[kInline];
    std::byte* out_inline[kInline];
    std::vector<const std::byte*> in_heap;
    std::vector<std::byte*> out_heap;
    const std::byte** in = in_inline;
    std::byte** out = out_inline;
    if (num_inputs > kInline) {
      in_heap.resize(num_inputs);
      in = in_heap.data();
    }
    if (num_outputs > kInline) {
      out_heap.resize(num_outputs);
      out = out_heap.data();
    }
    for (int i = 0; i < num_inputs; ++i) {
      in[i] = inputs[i] + begin * kernel.input_bytes(i);
    }
    for (int j = 0; j < num_outputs; ++j) {
      out[j] = outputs[j] + begin * kernel.output_bytes(j);
    }
    kernel.RunRange(in, out, begin, end - begin);
  });
}

Status ElementwiseKernel::Run(RunContext& ctx, const Step& step) const {
  // A few elements (a loop's counter, a scalar) with a few operands: run
  // directly, without the larger operand lists or the check for threads
  // (far too little work to split), which cost more than the work.
  constexpr int64_t kSmall = 64;
  constexpr size_t kFewOperands = 4;
  if (count_ < kSmall && step.inputs.size() <= kFewOperands &&
      step.outputs.size() <= kFewOperands) {
    const std::byte* in[kFewOperands];
    std::byte* out[kFewOperands];
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      in[i] = ctx.slot(step.inputs[i]);
    }
    for (size_t j = 0; j < step.outputs.size(); ++j) {
      out[j] = ctx.slot(step.outputs[j]);
    }
    if (count_ > 0) RunRange(in, out, 0, count_);
    return OkStatus();
  }
  constexpr int kInline = 16;
  const std::byte* in_inline[kInline];
  std::byte* out_inline[kInline];
  std::vector<const std::byte*> in_heap;
  std::vector<std::byte*> out_heap;
  const std::byte** in = in_inline;
  std::byte** out = out_inline;
  if (step.inputs.size() > kInline) {
    in_heap.resize(step.inputs.size());
    in = in_heap.data();
  }
  if (step.outputs.size() > kInline) {
    out_heap.resize(step.outputs.size());
    out = out_heap.data();
  }
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    in[i] = ctx.slot(step.inputs[i]);
  }
  for (size_t j = 0; j < step.outputs.size(); ++j) {
    out[j] = ctx.slot(step.outputs[j]);
  }
  RunElementwise(*this, in, out);
  return OkStatus();
}

namespace {

class ElementwiseSequence : public Kernel {
 public:
  explicit ElementwiseSequence(std::vector<Step> members)
      : members_(std::move(members)) {}

  Status Run(RunContext& ctx, const Step&) const override {
    const std::byte* in[kMaxSequencedOperands];
    std::byte* out[kMaxSequencedOperands];
    for (const Step& member : members_) {
      const auto& kernel = static_cast<const ElementwiseKernel&>(*member.kernel);
      for (size_t i = 0; i < member.inputs.size(); ++i) {
        in[i] = ctx.slot(member.inputs[i]);
      }
      for (size_t j = 0; j < member.outputs.size(); ++j) {
        out[j] = ctx.slot(member.outputs[j]);
      }
      if (kernel.count() > 0) kernel.RunRange(in, out, 0, kernel.count());
    }
    return OkStatus();
  }

 private:
  std::vector<Step> members_;
};

}  // namespace

std::unique_ptr<Kernel> MakeElementwiseSequence(std::vector<Step> members) {
  return std::make_unique<ElementwiseSequence>(std::move(members));
}

}  // namespace kiln::exec
