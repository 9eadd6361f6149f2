#include "exec/fusion.h"

#include <algorithm>
#include <cstddef>

namespace kiln::exec {
namespace {

constexpr int64_t kTileAlignment = 64;

int64_t AlignUp(int64_t bytes) {
  return (bytes + kTileAlignment - 1) / kTileAlignment * kTileAlignment;
}

class FusedKernel : public ElementwiseKernel {
 public:
  FusedKernel(int64_t count, std::vector<int> input_bytes,
              std::vector<int> output_bytes, std::vector<int> tile_bytes,
              std::vector<FusedNode> nodes)
      : ElementwiseKernel(count, std::move(input_bytes),
                          std::move(output_bytes)),
        nodes_(std::move(nodes)) {
    for (int bytes : tile_bytes) {
      tile_offsets_.push_back(scratch_bytes_);
      scratch_bytes_ += AlignUp(bytes * kFusionTileElements);
    }
    for (const FusedNode& node : nodes_) {
      cost_ += node.kernel->cost_per_element();
    }
  }

  int cost_per_element() const override { return cost_; }

  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t begin, int64_t n) const override {
    std::byte* scratch = Scratch();
    const std::byte* node_inputs[kMaxFusedNodeOperands];
    std::byte* node_outputs[kMaxFusedNodeOperands];
    for (int64_t offset = 0; offset < n; offset += kFusionTileElements) {
      int64_t tile = std::min(kFusionTileElements, n - offset);
      for (const FusedNode& node : nodes_) {
        if (node.once_per_range && offset > 0) continue;
        const ElementwiseKernel& kernel = *node.kernel;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          const FusedOperand& operand = node.inputs[i];
          int bytes = kernel.input_bytes(static_cast<int>(i));
          switch (operand.kind) {
            case FusedOperand::Kind::kInput:
              node_inputs[i] = inputs[operand.index] + offset * bytes;
              break;
            case FusedOperand::Kind::kOutput:
              node_inputs[i] = outputs[operand.index] + offset * bytes;
              break;
            case FusedOperand::Kind::kTile:
              node_inputs[i] = scratch + tile_offsets_[operand.index];
              break;
          }
        }
        for (size_t j = 0; j < node.outputs.size(); ++j) {
          const FusedOperand& operand = node.outputs[j];
          int bytes = kernel.output_bytes(static_cast<int>(j));
          node_outputs[j] = operand.kind == FusedOperand::Kind::kTile
                                ? scratch + tile_offsets_[operand.index]
                                : outputs[operand.index] + offset * bytes;
        }
        kernel.RunRange(node_inputs, node_outputs, begin + offset,
                        node.first_element_only ? 1 : tile);
      }
    }
  }

 private:
  // This thread's tile buffers. A thread runs one fused kernel range at a
  // time (RunRange never calls back into a fused kernel), so one buffer per
  // thread is enough; it grows to the largest fusion the thread has run.
  std::byte* Scratch() const {
    thread_local std::vector<std::max_align_t> buffer;
    size_t needed =
        (scratch_bytes_ + kTileAlignment) / sizeof(std::max_align_t) + 1;
    if (buffer.size() < needed) buffer.resize(needed);
    auto address = reinterpret_cast<uintptr_t>(buffer.data());
    address = (address + kTileAlignment - 1) / kTileAlignment * kTileAlignment;
    return reinterpret_cast<std::byte*>(address);
  }

  std::vector<FusedNode> nodes_;
  std::vector<int64_t> tile_offsets_;
  int64_t scratch_bytes_ = 0;
  int cost_ = 0;
};

}  // namespace

std::unique_ptr<ElementwiseKernel> MakeFusedKernel(
    int64_t count, std::vector<int> input_bytes, std::vector<int> output_bytes,
    std::vector<int> tile_bytes, std::vector<FusedNode> nodes) {
  return std::make_unique<FusedKernel>(count, std::move(input_bytes),
                                       std::move(output_bytes),
                                       std::move(tile_bytes), std::move(nodes));
}

}  // namespace kiln::exec
