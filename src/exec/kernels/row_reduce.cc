#include "exec/kernels/row_reduce.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/elementwise_ops.h"
#include "exec/kernels/row_reducer.h"
#include "exec/parallel.h"

namespace kiln::exec {
namespace {

// A run's operand addresses: up to eight on the stack, more on the heap,
// so that a row reduction allocates nothing for its usual few operands
// (a loop body's reductions run once per iteration).
template <typename P>
class PointerList {
 public:
  explicit PointerList(size_t size) : size_(size) {
    if (size > kInline) heap_.resize(size);
  }
  P* data() { return size_ > kInline ? heap_.data() : inline_; }
  P& operator[](size_t i) { return data()[i]; }

 private:
  static constexpr size_t kInline = 8;
  P inline_[kInline] = {};
  std::vector<P> heap_;
  size_t size_;
};

// Rows are computed by a producer this many elements at a time (a
// multiple of the 16 lanes), into a per-thread buffer.
constexpr int64_t kProducerChunk = 2048;
// Work (elements) below which the rows are reduced on the calling thread.
constexpr int64_t kMinParallelElements = int64_t{1} << 17;

// What fusion asks of a row reduction, whatever its types.
class RowReduceKernelBase : public Kernel {
 public:
  explicit RowReduceKernelBase(RowReduceParams params, bool fused)
      : p_(params), fused_(fused) {}
  const RowReduceParams& params() const { return p_; }
  bool fused() const { return fused_; }

 protected:
  RowReduceParams p_;
  bool fused_;
};

template <typename Op, typename T>
class RowReduceKernel : public RowReduceKernelBase {
 public:
  RowReduceKernel(RowReduceParams params,
                  std::unique_ptr<ElementwiseKernel> producer,
                  int reduced_output, bool write_reduced)
      : RowReduceKernelBase(params, producer != nullptr),
        producer_(std::move(producer)),
        reduced_output_(reduced_output),
        write_reduced_(write_reduced) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    size_t num_inputs = step.inputs.size();
    T init;
    std::memcpy(&init, ctx.slot(step.inputs[num_inputs - 1]), sizeof(T));
    T* result = reinterpret_cast<T*>(ctx.slot(step.outputs.back()));
    PointerList<const std::byte*> inputs(num_inputs - 1);
    PointerList<std::byte*> outputs(step.outputs.size() - 1);
    for (size_t i = 0; i + 1 < num_inputs; ++i) {
      inputs[i] = ctx.slot(step.inputs[i]);
    }
    for (size_t j = 0; j + 1 < step.outputs.size(); ++j) {
      outputs[j] = ctx.slot(step.outputs[j]);
    }
    auto rows = [&](int64_t first, int64_t last) {
      if (producer_ == nullptr) {
        const T* x = reinterpret_cast<const T*>(inputs[0]);
        for (int64_t r = first; r < last; ++r) {
          result[r] = ReduceRowInLanes<Op, T>(init, x + r * p_.row_length,
                                              p_.row_length);
        }
        return;
      }
      ReduceProducedRows(inputs.data(), outputs.data(), init, result, first,
                         last);
    };
    int64_t elements = p_.rows * p_.row_length;
    int64_t cost = producer_ ? producer_->cost_per_element() + 1 : 1;
    if (elements * cost >= 2 * kMinParallelElements && p_.rows > 1) {
      int64_t min_rows = std::max<int64_t>(
          1, kMinParallelElements / cost / std::max<int64_t>(1, p_.row_length));
      ParallelFor(p_.rows, min_rows, rows);
    } else {
      rows(0, p_.rows);
    }
    return OkStatus();
  }

 private:
  void ReduceProducedRows(const std::byte* const* inputs,
                          std::byte* const* outputs, T init, T* result,
                          int64_t first, int64_t last) const {
    // Raw storage (a vector<bool> would pack bits); 16-byte aligned.
    thread_local std::vector<std::max_align_t> storage;
    size_t needed =
        (kProducerChunk * sizeof(T) + sizeof(std::max_align_t) - 1) /
        sizeof(std::max_align_t);
    if (storage.size() < needed) storage.resize(needed);
    T* chunk_buffer = reinterpret_cast<T*>(storage.data());
    const ElementwiseKernel& producer = *producer_;
    int num_in = producer.num_inputs();
    int num_out = producer.num_outputs();
    PointerList<const std::byte*> in(num_in);
    PointerList<std::byte*> out(num_out);
    auto point_at = [&](int64_t begin) {
      for (int i = 0; i < num_in; ++i) {
        in[i] = inputs[i] + begin * producer.input_bytes(i);
      }
      for (int j = 0, k = 0; j < num_out; ++j) {
        if (j == reduced_output_ && !write_reduced_) {
          out[j] = reinterpret_cast<std::byte*>(chunk_buffer);
        } else {
          out[j] = outputs[k++] + begin * producer.output_bytes(j);
        }
      }
    };
    // Short rows are produced several at a time, a producer call costing
    // about as much as a short row.
    int64_t rows_per_chunk =
        kProducerChunk / std::max<int64_t>(1, p_.row_length);
    if (rows_per_chunk >= 2) {
      for (int64_t r = first; r < last; r += rows_per_chunk) {
        int64_t count = std::min(rows_per_chunk, last - r);
        int64_t begin = r * p_.row_length;
        point_at(begin);
        producer.RunRange(in.data(), out.data(), begin, count * p_.row_length);
        const T* values = reinterpret_cast<const T*>(out[reduced_output_]);
        for (int64_t i = 0; i < count; ++i) {
          result[r + i] = ReduceRowInLanes<Op, T>(
              init, values + i * p_.row_length, p_.row_length);
        }
      }
      return;
    }
    for (int64_t r = first; r < last; ++r) {
      RowReducer<Op, T> reducer(init, p_.row_length);
      for (int64_t offset = 0; offset < p_.row_length;
           offset += kProducerChunk) {
        int64_t n = std::min(kProducerChunk, p_.row_length - offset);
        int64_t begin = r * p_.row_length + offset;
        point_at(begin);
        producer.RunRange(in.data(), out.data(), begin, n);
        reducer.Feed(reinterpret_cast<const T*>(out[reduced_output_]), n);
      }
      result[r] = reducer.Finish();
    }
  }

  std::unique_ptr<ElementwiseKernel> producer_;
  int reduced_output_;
  bool write_reduced_;  // the operand is an output too
};

// Calls fn(Op{}, T{}) for the combiner and native type, if it applies.
template <typename Fn>
bool DispatchRowReduce(const RowReduceParams& p, Fn&& fn) {
  bool done = false;
  DispatchNative(p.type, [&](auto tag) {
    using T = decltype(tag);
    WithCombinerOp(p.combiner, [&](auto op) {
      using Op = decltype(op);
      if constexpr (requires(T v) { Op::Apply(v, v, 0); }) {
        fn(op, tag);
        done = true;
      }
      return done;
    });
  });
  return done;
}

std::unique_ptr<Kernel> MakeRowKernel(
    const RowReduceParams& params, std::unique_ptr<ElementwiseKernel> producer,
    int reduced_output, bool write_reduced) {
  std::unique_ptr<Kernel> kernel;
  DispatchRowReduce(params, [&](auto op, auto tag) {
    using Op = decltype(op);
    using T = decltype(tag);
    kernel = std::make_unique<RowReduceKernel<Op, T>>(
        params, std::move(producer), reduced_output, write_reduced);
  });
  return kernel;
}

}  // namespace

std::optional<RowReduceParams> AsRowReduce(const ReduceParams& params,
                                           bool has_body) {
  if (has_body || params.inputs.size() != 1) return std::nullopt;
  const ArrayShape& shape = params.inputs[0];
  if (!HasFastCombiner(params.combiner, shape.type)) return std::nullopt;
  std::vector<int64_t> dims = params.dimensions;
  std::sort(dims.begin(), dims.end());
  int64_t rank = shape.rank();
  int64_t k = static_cast<int64_t>(dims.size());
  for (int64_t i = 0; i < k; ++i) {
    if (dims[i] != rank - k + i) return std::nullopt;
  }
  RowReduceParams rows;
  rows.type = shape.type;
  rows.combiner = params.combiner;
  rows.rows = 1;
  rows.row_length = 1;
  for (int64_t d = 0; d < rank; ++d) {
    (d < rank - k ? rows.rows : rows.row_length) *= shape.dims[d];
  }
  bool supported = DispatchRowReduce(rows, [](auto, auto) {});
  if (!supported) return std::nullopt;
  return rows;
}

std::unique_ptr<Kernel> MakeRowReduceKernel(const RowReduceParams& params) {
  return MakeRowKernel(params, nullptr, -1, false);
}

const RowReduceParams* RowReduceParamsOf(const Kernel& kernel) {
  const auto* rows = dynamic_cast<const RowReduceKernelBase*>(&kernel);
  return rows != nullptr && !rows->fused() ? &rows->params() : nullptr;
}

std::unique_ptr<Kernel> MakeFusedRowReduceKernel(
    const RowReduceParams& params, std::unique_ptr<ElementwiseKernel> producer,
    int reduced_output, bool write_reduced) {
  return MakeRowKernel(params, std::move(producer), reduced_output,
                       write_reduced);
}

}  // namespace kiln::exec
