// Kernels that compute element i of every output from element i of their
// inputs: the elementwise ops, converts, and the views (transpose,
// broadcast, slice, reverse, iota) whose output is written in row-major
// order. They can run over any range of their elements, which is what
// lets the compiler fuse chains of them into one pass over cache-sized
// tiles (exec/fusion.h) and lets a large one split its range over the
// cores.
#ifndef KILN_EXEC_KERNELS_ELEMENTWISE_KERNEL_H_
#define KILN_EXEC_KERNELS_ELEMENTWISE_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "exec/plan.h"

namespace kiln::exec {

// The f32 arithmetic an arithmetic chain (kernels/arithmetic_chain.h)
// evaluates in registers.
enum class ArithmeticOp : uint8_t { kAdd, kSubtract, kMultiply, kDivide };
struct ArithmeticForm {
  ArithmeticOp op;
  int scalar_input;  // the input read as one element (WithScalarInput), or -1
};

class ElementwiseKernel : public Kernel {
 public:
  // `count` elements per output. `input_bytes[i]` is the element size of
  // input i when it is read element by element, or 0 when the kernel reads
  // it whole (a scalar operand, or the source of a view, which the kernel
  // indexes itself). `output_bytes[j]` is the element size of output j.
  ElementwiseKernel(int64_t count, std::vector<int> input_bytes,
                    std::vector<int> output_bytes)
      : count_(count),
        input_bytes_(std::move(input_bytes)),
        output_bytes_(std::move(output_bytes)) {}

  int64_t count() const { return count_; }
  int num_inputs() const { return static_cast<int>(input_bytes_.size()); }
  int num_outputs() const { return static_cast<int>(output_bytes_.size()); }
  int input_bytes(int i) const { return input_bytes_[i]; }
  int output_bytes(int j) const { return output_bytes_[j]; }
  bool reads_whole(int i) const { return input_bytes_[i] == 0; }

  // Computes elements [begin, begin + n) of every output. `inputs[i]` is
  // the address of element `begin` of input i when it is read element by
  // element, else the input's base address; `outputs[j]` is the address of
  // element `begin` of output j. Must not fail: elementwise ops have a
  // result for every input.
  virtual void RunRange(const std::byte* const* inputs,
                        std::byte* const* outputs, int64_t begin,
                        int64_t n) const = 0;

  // Whether output `output` may be written into the memory of input
  // `input` (element i of each at the same address), the input being dead
  // after this step: every element of the input is read before the same
  // element of the output is written, and never after. So it is for a
  // kernel with one output whose loop reads element i of its inputs and
  // then writes element i, when the input is read element by element at
  // the output's element size; a kernel that makes more than one pass
  // over its range, or writes an output before reading all its inputs at
  // that element, says otherwise.
  virtual bool CanWriteOver(int output, int input) const {
    return num_outputs() == 1 && input_bytes(input) != 0 &&
           input_bytes(input) == output_bytes(output);
  }

  // Whether every output element is the same whatever the range (a
  // broadcast of a scalar): a fused kernel computes it once per range.
  virtual bool range_invariant() const { return false; }

  // Whether the kernel runs as fast over a fused kernel's tiles (a couple
  // of thousand consecutive output elements) as over its whole range. A
  // large transpose of the last two dimensions does not: alone, it copies
  // squares that use every line it reads; over a tile of two output rows
  // it reads each source line for two elements, from L2 at best.
  virtual bool runs_well_in_tiles() const { return true; }
  // For a range-invariant kernel that repeats one element of input 0 (a
  // broadcast of a scalar): that element's index; else -1.
  virtual int64_t repeated_element() const { return -1; }

  // The same function with input `input` a single element that serves
  // every element of the range (read whole: its input_bytes is 0). A fused
  // kernel reads a broadcast scalar so, from one element instead of a tile
  // of copies. Null where the kernel has no such form.
  virtual std::unique_ptr<ElementwiseKernel> WithScalarInput(int input) const {
    return nullptr;
  }

  // Set for an f32 add, subtract, multiply or divide: what it computes.
  virtual std::optional<ArithmeticForm> arithmetic() const {
    return std::nullopt;
  }

  // Relative cost of one element against a plain add (1): how soon a range
  // is worth splitting over threads.
  virtual int cost_per_element() const { return 1; }

  // All elements, split over the machine's cores when there are enough.
  Status Run(RunContext& ctx, const Step& step) const final;

 private:
  int64_t count_;
  std::vector<int> input_bytes_;
  std::vector<int> output_bytes_;
};

// Runs `kernel` over [0, count) with `inputs` and `outputs` at their base
// addresses, splitting the range over threads when it is large enough.
void RunElementwise(const ElementwiseKernel& kernel,
                    const std::byte* const* inputs, std::byte* const* outputs);

// Steps of elementwise kernels over so few elements that none is worth a
// thread or a fused tile loop (a loop's counter and index arithmetic, a
// learning rate's schedule), run back to back as one step: each member's
// whole range in the members' order, as the region would have run them,
// without the region's per-step work (the kernel call, the operand lists,
// the check for threads). Each member's inputs and outputs are at most
// kMaxSequencedOperands each.
inline constexpr int kMaxSequencedOperands = 8;
std::unique_ptr<Kernel> MakeElementwiseSequence(std::vector<Step> members);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_ELEMENTWISE_KERNEL_H_
