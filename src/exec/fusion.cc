#include "exec/fusion.h"

#include "exec/kernels/arithmetic_chain.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace kiln::exec {
namespace {

constexpr int64_t kTileAlignment = 64;
constexpr int64_t kCacheLine = 64;

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

  // Nodes run in order over each tile, each writing its outputs for the
  // tile before the next node runs: the node that writes the output must
  // be the last to read the input, and may do so itself only where its
  // own kernel reads before it writes.
  bool CanWriteOver(int output, int input) const override {
    if (input_bytes(input) == 0 || input_bytes(input) != output_bytes(output)) {
      return false;
    }
    const FusedOperand out = {FusedOperand::Kind::kOutput, output};
    const FusedOperand in = {FusedOperand::Kind::kInput, input};
    bool written = false;
    for (const FusedNode& node : nodes_) {
      std::vector<int> reads;
      int writes = -1;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (node.inputs[i].kind == in.kind &&
            node.inputs[i].index == in.index) {
          reads.push_back(static_cast<int>(i));
        }
      }
      for (size_t j = 0; j < node.outputs.size(); ++j) {
        if (node.outputs[j].kind == out.kind &&
            node.outputs[j].index == out.index) {
          writes = static_cast<int>(j);
        }
      }
      if (!reads.empty() && (written || node.once_per_range)) return false;
      if (writes < 0) continue;
      if (written) return false;
      written = true;
      for (int read : reads) {
        if (!node.kernel->CanWriteOver(writes, read)) return false;
      }
    }
    return written;
  }

  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t begin, int64_t n) const override {
    std::byte* scratch = Scratch();
    const std::byte* node_inputs[kMaxFusedNodeOperands];
    std::byte* node_outputs[kMaxFusedNodeOperands];
    for (int64_t offset = 0; offset < n; offset += kFusionTileElements) {
      int64_t tile = std::min(kFusionTileElements, n - offset);
      int64_t next = offset + tile;
      int64_t next_tile = std::min(kFusionTileElements, n - next);
      int64_t parts = static_cast<int64_t>(nodes_.size());
      for (int64_t part = 0; part < parts; ++part) {
        const FusedNode& node = nodes_[part];
        // Part `part` of the next tile of every array the kernel streams
        // is asked for before each node runs. Nodes alternate between
        // memory and registers: the first reads its inputs from memory, an
        // erfc after it computes for a microsecond without a load, and the
        // CPU's own prefetcher, which follows the loads, stops with them;
        // so each tile began with its inputs on their way from DRAM. Asked
        // for while this tile computes, the next arrives in time; in
        // parts, so that the requests do not fill the CPU's queue of
        // misses at once. Outputs are asked for as writes. On gelu over
        // 16 Mi f32 (2 cores) the run went from 9.8 to 7.6 ms. (The loops
        // stay in this function: GCC deletes a call to a helper made only
        // of prefetches, which it judges to have no effect.)
        if (next < n) {
          int64_t from = next_tile * part / parts;
          int64_t to = next_tile * (part + 1) / parts;
          for (int i = 0; i < num_inputs(); ++i) {
            int64_t bytes = input_bytes(i);  // 0: read whole, not a stream
            const std::byte* base = inputs[i] + next * bytes;
            for (int64_t b = from * bytes; b < to * bytes; b += kCacheLine) {
              __builtin_prefetch(base + b, /*rw=*/0, /*locality=*/3);
            }
          }
          for (int j = 0; j < num_outputs(); ++j) {
            int64_t bytes = output_bytes(j);
            std::byte* base = outputs[j] + next * bytes;
            for (int64_t b = from * bytes; b < to * bytes; b += kCacheLine) {
              __builtin_prefetch(base + b, /*rw=*/1, /*locality=*/3);
            }
          }
        }
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

bool ReadsTile(const FusedNode& node, int tile) {
  for (const FusedOperand& operand : node.inputs) {
    if (operand.kind == FusedOperand::Kind::kTile && operand.index == tile) {
      return true;
    }
  }
  return false;
}

bool WritesTile(const FusedNode& node, int tile) {
  for (const FusedOperand& operand : node.outputs) {
    if (operand.kind == FusedOperand::Kind::kTile && operand.index == tile) {
      return true;
    }
  }
  return false;
}

// Whether a node from `from` on reads the value tile `tile` holds before a
// node writes the tile again.
bool ReadLater(const std::vector<FusedNode>& nodes, size_t from, int tile) {
  for (size_t m = from; m < nodes.size(); ++m) {
    if (ReadsTile(nodes[m], tile)) return true;
    if (WritesTile(nodes[m], tile)) return false;
  }
  return false;
}

bool IsLink(const FusedNode& node) {
  return !node.once_per_range && node.inputs.size() == 2 &&
         node.outputs.size() == 1 && node.kernel->arithmetic().has_value();
}

bool SameOperand(const FusedOperand& a, const FusedOperand& b) {
  return a.kind == b.kind && a.index == b.index;
}

// A chain under construction.
class ChainBuilder {
 public:
  // Starts with `node`, r being its input `r_input`.
  ChainBuilder(const FusedNode& node, int r_input) {
    inputs_.push_back(node.inputs[r_input]);
    input_bytes_.push_back(sizeof(float));
    Add(node, r_input);
  }
  // Adds `node`, r being its input `r_input`; false (and nothing added)
  // when the chain would take too many inputs.
  bool Add(const FusedNode& node, int r_input) {
    const ElementwiseKernel& kernel = *node.kernel;
    const int v_input = 1 - r_input;
    ChainLink link;
    link.op = kernel.arithmetic()->op;
    link.r_on_left = r_input == 0;
    const bool self = SameOperand(node.inputs[0], node.inputs[1]) &&
                      !kernel.reads_whole(0) && !kernel.reads_whole(1);
    // The first link's r is input 0 of the chain; a later link's r is the
    // link before's result, so its own r operand is not read.
    if (self && links_.empty()) {
      link.input = 0;
    } else if (self) {
      link.input = -1;
    } else {
      const FusedOperand& v = node.inputs[v_input];
      int bytes = kernel.input_bytes(v_input);
      link.input = -1;
      for (size_t i = 0; i < inputs_.size(); ++i) {
        if (SameOperand(inputs_[i], v) && input_bytes_[i] == bytes) {
          link.input = static_cast<int>(i);
        }
      }
      if (link.input < 0) {
        if (inputs_.size() >= static_cast<size_t>(kMaxFusedNodeOperands)) {
          return false;
        }
        link.input = static_cast<int>(inputs_.size());
        inputs_.push_back(v);
        input_bytes_.push_back(bytes);
      }
    }
    links_.push_back(link);
    cost_ += kernel.cost_per_element();
    return true;
  }
  size_t size() const { return links_.size(); }

  // The chain as one node writing `output`, or null when it cannot be.
  std::unique_ptr<FusedNode> Finish(int64_t count, FusedOperand output) {
    auto kernel = MakeArithmeticChainKernel(count, input_bytes_,
                                            std::move(links_), cost_);
    if (kernel == nullptr) return nullptr;
    auto node = std::make_unique<FusedNode>();
    node->kernel = std::move(kernel);
    node->inputs = std::move(inputs_);
    node->outputs = {output};
    return node;
  }

 private:
  std::vector<FusedOperand> inputs_;
  std::vector<int> input_bytes_;
  std::vector<ChainLink> links_;
  int cost_ = 0;
};

// Replaces runs of arithmetic nodes, each reading the one before's result
// and the only one to, by arithmetic chains.
std::vector<FusedNode> FormArithmeticChains(std::vector<FusedNode> nodes) {
  std::vector<FusedNode> out;
  size_t j = 0;
  while (j < nodes.size()) {
    if (!IsLink(nodes[j])) {
      out.push_back(std::move(nodes[j++]));
      continue;
    }
    // r is the input read element by element (input 0 when both are).
    const int first_r = nodes[j].kernel->reads_whole(0) ? 1 : 0;
    ChainBuilder chain(nodes[j], first_r);
    size_t end = j + 1;
    while (end < nodes.size() && IsLink(nodes[end])) {
      const FusedOperand& previous = nodes[end - 1].outputs[0];
      if (previous.kind != FusedOperand::Kind::kTile ||
          ReadLater(nodes, end + 1, previous.index)) {
        break;
      }
      const FusedNode& node = nodes[end];
      int r_input = -1;
      for (int i = 0; i < 2; ++i) {
        if (SameOperand(node.inputs[i], previous) &&
            !node.kernel->reads_whole(i)) {
          r_input = i;
          break;
        }
      }
      if (r_input < 0 || !chain.Add(node, r_input)) break;
      ++end;
    }
    std::unique_ptr<FusedNode> fused;
    if (chain.size() >= 2) {
      fused = chain.Finish(nodes[j].kernel->count(), nodes[end - 1].outputs[0]);
    }
    if (fused == nullptr) {
      out.push_back(std::move(nodes[j++]));
      continue;
    }
    out.push_back(std::move(*fused));
    j = end;
  }
  return out;
}

}  // namespace

std::unique_ptr<ElementwiseKernel> MakeFusedKernel(
    int64_t count, std::vector<int> input_bytes, std::vector<int> output_bytes,
    std::vector<int> tile_bytes, std::vector<FusedNode> nodes) {
  return std::make_unique<FusedKernel>(
      count, std::move(input_bytes), std::move(output_bytes),
      std::move(tile_bytes), FormArithmeticChains(std::move(nodes)));
}

}  // namespace kiln::exec
