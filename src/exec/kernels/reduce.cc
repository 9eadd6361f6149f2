#include "exec/kernels/reduce.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "exec/kernels/element.h"
#include "exec/kernels/elementwise_ops.h"
#include "exec/kernels/region_call.h"
#include "exec/kernels/row_reduce.h"
#include "exec/kernels/row_reducer.h"
#include "exec/kernels/vectorize.h"
#include "exec/parallel.h"

namespace kiln::exec {
namespace {

// Broadcasts the init scalar over a result.
void FillWith(std::byte* target, const std::byte* value, int64_t count,
              int64_t element_bytes) {
  if (element_bytes == 4) {
    uint32_t bits;
    std::memcpy(&bits, value, 4);
    std::fill_n(reinterpret_cast<uint32_t*>(target), count, bits);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(target + i * element_bytes, value, element_bytes);
  }
}

// Strides of the result for each input dimension (0 for reduced ones).
std::vector<int64_t> ResultStridesPerInputDim(
    const ArrayShape& input, const std::vector<int64_t>& dimensions) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (std::find(dimensions.begin(), dimensions.end(), d) ==
        dimensions.end()) {
      kept.push_back(input.dims[d]);
    }
  }
  std::vector<int64_t> kept_strides = RowMajorStrides(kept);
  std::vector<int64_t> strides(input.rank(), 0);
  size_t next = 0;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (std::find(dimensions.begin(), dimensions.end(), d) ==
        dimensions.end()) {
      strides[d] = kept_strides[next++];
    }
  }
  return strides;
}

// y[i] = op(y[i], x[i]): a row combined into a row of results.
template <typename Op, typename T>
KILN_VECTORIZED void CombineRow(T* y, const T* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Op::Apply(y[i], x[i], 0);
}

template <typename Op, typename T>
void ReduceTyped(const T* in, T* out, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& out_strides) {
  int64_t count = NumElements(dims);
  if (count == 0) return;
  if (dims.empty()) {
    out[0] = Op::Apply(out[0], in[0], 0);
    return;
  }
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t inner = dims[rank - 1];
  int64_t inner_stride = out_strides[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  int64_t out_pos = 0;
  for (int64_t row = 0; row < count / inner; ++row) {
    const T* x = in + row * inner;
    if (inner_stride == 0) {
      out[out_pos] = ReduceRowInLanes<Op, T>(out[out_pos], x, inner);
    } else if (inner_stride == 1) {
      CombineRow<Op, T>(out + out_pos, x, inner);
    } else {
      T* y = out + out_pos;
      for (int64_t i = 0; i < inner; ++i) {
        y[i * inner_stride] = Op::Apply(y[i * inner_stride], x[i], 0);
      }
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < dims[d]) {
        out_pos += out_strides[d];
        break;
      }
      index[d] = 0;
      out_pos -= out_strides[d] * (dims[d] - 1);
    }
  }
}

template <typename T>
bool ReduceFast(Combiner combiner, const std::byte* in, std::byte* out,
                const std::vector<int64_t>& dims,
                const std::vector<int64_t>& out_strides) {
  auto* x = reinterpret_cast<const T*>(in);
  auto* y = reinterpret_cast<T*>(out);
  auto run = [&](auto op) {
    using Op = decltype(op);
    if constexpr (requires(T v) { Op::Apply(v, v, 0); }) {
      ReduceTyped<Op, T>(x, y, dims, out_strides);
      return true;
    }
    return false;
  };
  return WithCombinerOp(combiner, run);
}

// One step of JAX's argmax (kMax) or argmin reducer, the accumulator
// first as the generic path calls it: the accumulator's value stays if it
// compares past the element's or is a NaN, and its index stays if its
// value does, or if the values are equal and its index is the smaller.
template <bool kMax, typename V, typename I>
inline void ArgStep(V& value, I& index, V x, I x_index) {
  const bool keep = (kMax ? value > x : value < x) || value != value;
  const bool keep_index = keep || (value == x && index < x_index);
  value = keep ? value : x;
  index = keep_index ? index : x_index;
}

// A row of elements folded into a row of accumulators, element by element.
template <bool kMax, typename V, typename I>
KILN_VECTORIZED void ArgStepRow(V* values, I* indices, const V* x,
                                const I* x_indices, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    ArgStep<kMax>(values[i], indices[i], x[i], x_indices[i]);
  }
}

// JAX's argmax and argmin reducers, typed: the same steps in the same
// order as the generic path's calls of the body (row-major over the
// input), so the same results. Rows reduced whole (the reduced dimensions
// are the trailing ones) split over the cores.
class ArgReduceKernelBase : public Kernel {};

template <bool kMax, typename V, typename I>
class ArgReduceKernel : public ArgReduceKernelBase {
 public:
  explicit ArgReduceKernel(ReduceParams p) : p_(std::move(p)) {
    out_strides_ = ResultStridesPerInputDim(p_.inputs[0], p_.dimensions);
    const int64_t rank = p_.inputs[0].rank();
    const int64_t reduced = static_cast<int64_t>(p_.dimensions.size());
    rows_ = true;
    for (int64_t d = 0; d < rank; ++d) {
      const bool kept = std::find(p_.dimensions.begin(), p_.dimensions.end(),
                                  d) == p_.dimensions.end();
      if (kept) out_count_ *= p_.inputs[0].dims[d];
      rows_ = rows_ && kept == (d < rank - reduced);
    }
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const auto* x = reinterpret_cast<const V*>(ctx.slot(step.inputs[0]));
    const auto* xi = reinterpret_cast<const I*>(ctx.slot(step.inputs[1]));
    V init;
    I init_index;
    std::memcpy(&init, ctx.slot(step.inputs[2]), sizeof(V));
    std::memcpy(&init_index, ctx.slot(step.inputs[3]), sizeof(I));
    auto* values = reinterpret_cast<V*>(ctx.slot(step.outputs[0]));
    auto* indices = reinterpret_cast<I*>(ctx.slot(step.outputs[1]));
    std::fill_n(values, out_count_, init);
    std::fill_n(indices, out_count_, init_index);
    const std::vector<int64_t>& dims = p_.inputs[0].dims;
    const int64_t count = NumElements(dims);
    if (count == 0) return OkStatus();
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (rank == 0) {
      ArgStep<kMax>(values[0], indices[0], x[0], xi[0]);
      return OkStatus();
    }
    // Trailing dimensions reduced: each result folds one contiguous row.
    if (rows_ && out_count_ > 0) {
      const int64_t length = count / out_count_;
      auto rows = [&](int64_t first, int64_t last) {
        for (int64_t r = first; r < last; ++r) {
          V value = values[r];
          I index = indices[r];
          const V* row = x + r * length;
          const I* row_indices = xi + r * length;
          for (int64_t i = 0; i < length; ++i) {
            ArgStep<kMax>(value, index, row[i], row_indices[i]);
          }
          values[r] = value;
          indices[r] = index;
        }
      };
      constexpr int64_t kMinParallelElements = int64_t{1} << 17;
      if (count >= 2 * kMinParallelElements && out_count_ > 1) {
        ParallelFor(out_count_,
                    std::max<int64_t>(1, kMinParallelElements / length), rows);
      } else {
        rows(0, out_count_);
      }
      return OkStatus();
    }
    const int64_t inner = dims[rank - 1];
    const int64_t inner_stride = out_strides_[rank - 1];
    std::vector<int64_t> position(rank - 1, 0);
    int64_t out_pos = 0;
    for (int64_t row = 0; row < count / inner; ++row) {
      const V* row_values = x + row * inner;
      const I* row_indices = xi + row * inner;
      if (inner_stride == 1) {
        ArgStepRow<kMax>(values + out_pos, indices + out_pos, row_values,
                         row_indices, inner);
      } else {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = out_pos + i * inner_stride;
          ArgStep<kMax>(values[at], indices[at], row_values[i], row_indices[i]);
        }
      }
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (++position[d] < dims[d]) {
          out_pos += out_strides_[d];
          break;
        }
        position[d] = 0;
        out_pos -= out_strides_[d] * (dims[d] - 1);
      }
    }
    return OkStatus();
  }

 private:
  ReduceParams p_;
  std::vector<int64_t> out_strides_;
  int64_t out_count_ = 1;
  bool rows_ = false;  // the reduced dimensions are the trailing ones
};

class ReduceKernel : public Kernel {
 public:
  ReduceKernel(ReduceParams p, std::unique_ptr<Region> body)
      : p_(std::move(p)) {
    if (body) body_ = std::make_unique<ScalarRegion>(std::move(body));
    out_strides_ = ResultStridesPerInputDim(p_.inputs[0], p_.dimensions);
    for (int64_t d = 0; d < p_.inputs[0].rank(); ++d) {
      if (std::find(p_.dimensions.begin(), p_.dimensions.end(), d) ==
          p_.dimensions.end()) {
        out_count_ *= p_.inputs[0].dims[d];
      }
    }
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    size_t n = p_.inputs.size();
    for (size_t i = 0; i < n; ++i) {
      FillWith(ctx.slot(step.outputs[i]), ctx.slot(step.inputs[n + i]),
               out_count_, p_.inputs[i].element_bytes());
    }
    const std::vector<int64_t>& dims = p_.inputs[0].dims;
    if (!body_) {
      bool done = false;
      DispatchNative(p_.inputs[0].type, [&](auto tag) {
        using T = decltype(tag);
        done = ReduceFast<T>(p_.combiner, ctx.slot(step.inputs[0]),
                             ctx.slot(step.outputs[0]), dims, out_strides_);
      });
      if (done) return OkStatus();
      return InternalError("reduce: no fast path for this combiner and type");
    }
    // Generic: call the body per input element, in row-major order.
    std::vector<const std::byte*> args(2 * n);
    std::vector<std::byte> scratch(16 * n);
    std::vector<int64_t> element_bytes(n);
    for (size_t i = 0; i < n; ++i)
      element_bytes[i] = p_.inputs[i].element_bytes();
    int64_t count = NumElements(dims);
    std::vector<int64_t> index(dims.size(), 0);
    int64_t out_pos = 0;
    for (int64_t flat = 0; flat < count; ++flat) {
      for (size_t i = 0; i < n; ++i) {
        int64_t bytes = p_.inputs[i].element_bytes();
        args[i] = ctx.slot(step.outputs[i]) + out_pos * bytes;
        args[n + i] = ctx.slot(step.inputs[i]) + flat * bytes;
      }
      RETURN_IF_ERROR(body_->CallAndUpdate(
          ctx, args.data(), element_bytes.data(), scratch.data()));
      for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
        if (++index[d] < dims[d]) {
          out_pos += out_strides_[d];
          break;
        }
        index[d] = 0;
        out_pos -= out_strides_[d] * (dims[d] - 1);
      }
    }
    return OkStatus();
  }

 private:
  ReduceParams p_;
  std::unique_ptr<ScalarRegion> body_;
  std::vector<int64_t> out_strides_;
  int64_t out_count_ = 1;
};

// y[i] = op(previous[i], x[i]): one step of a scan over rows.
template <typename Op, typename T>
KILN_VECTORIZED void CombineInto(T* y, const T* previous, const T* x,
                                 int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Op::Apply(previous[i], x[i], 0);
}

// A prefix scan along a dimension of `length` elements between `outer`
// blocks and `inner` contiguous columns: y[o, i, j] = op(y[o, i - 1, j],
// x[o, i, j]) from op(init, x[o, 0, j]), for the columns [first, last) of
// outer * inner.
template <typename Op, typename T>
void ScanColumns(const T* x, T* y, T init, int64_t length, int64_t inner,
                 int64_t first, int64_t last) {
  while (first < last) {
    const int64_t o = first / inner, j0 = first % inner;
    const int64_t j1 = std::min(inner, j0 + (last - first));
    const int64_t base = o * length * inner;
    const T* xo = x + base;
    T* yo = y + base;
    if (j1 - j0 == 1) {
      T acc = Op::Apply(init, xo[j0], 0);
      yo[j0] = acc;
      for (int64_t i = 1; i < length; ++i) {
        acc = Op::Apply(acc, xo[i * inner + j0], 0);
        yo[i * inner + j0] = acc;
      }
    } else {
      for (int64_t j = j0; j < j1; ++j) yo[j] = Op::Apply(init, xo[j], 0);
      for (int64_t i = 1; i < length; ++i) {
        CombineInto<Op, T>(yo + i * inner + j0, yo + (i - 1) * inner + j0,
                           xo + i * inner + j0, j1 - j0);
      }
    }
    first += j1 - j0;
  }
}

class ReduceWindowKernel : public Kernel {
 public:
  ReduceWindowKernel(ReduceWindowParams p, std::unique_ptr<Region> body)
      : p_(std::move(p)) {
    if (body) body_ = std::make_unique<ScalarRegion>(std::move(body));
    in_strides_ = p_.inputs[0].Strides();
    for (const ArrayShape& input : p_.inputs) {
      element_bytes_.push_back(input.element_bytes());
    }
    scan_dimension_ = ScanDimension();
    if (scan_dimension_ >= 0) {
      const std::vector<int64_t>& dims = p_.inputs[0].dims;
      scan_length_ = dims[scan_dimension_];
      for (int64_t k = 0; k < scan_dimension_; ++k) scan_outer_ *= dims[k];
      for (size_t k = scan_dimension_ + 1; k < dims.size(); ++k) {
        scan_inner_ *= dims[k];
      }
    }
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    size_t n = p_.inputs.size();
    const ArrayShape& input = p_.inputs[0];
    int64_t rank = input.rank();
    int64_t out_count = NumElements(p_.output_dims);
    if (scan_dimension_ >= 0 && body_) return RunRegionScan(ctx, step);
    if (scan_dimension_ >= 0 && n == 1 && RunScan(ctx, step)) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      return OkStatus();
    }
    // Pooling starts each result row from the init value itself.
    if (!body_ && Undilated()) return RunUndilated(ctx, step);
    for (size_t i = 0; i < n; ++i) {
      FillWith(ctx.slot(step.outputs[i]), ctx.slot(step.inputs[n + i]),
               out_count, p_.inputs[i].element_bytes());
    }
    std::vector<const std::byte*> args(2 * n);
    std::vector<std::byte> scratch(16 * n);
    std::vector<int64_t> out_index(rank, 0), window(rank, 0);
    for (int64_t o = 0; o < out_count; ++o) {
      // Walk the window of output element o.
      int64_t window_count = NumElements(p_.window_dimensions);
      std::fill(window.begin(), window.end(), 0);
      for (int64_t w = 0; w < window_count; ++w) {
        int64_t offset = 0;
        bool inside = true;
        for (int64_t d = 0; d < rank && inside; ++d) {
          // Position in the padded, base-dilated input.
          int64_t position = out_index[d] * p_.window_strides[d] +
                             window[d] * p_.window_dilations[d] -
                             p_.padding_low[d];
          if (position < 0 || position % p_.base_dilations[d] != 0) {
            inside = false;
            break;
          }
          int64_t source = position / p_.base_dilations[d];
          if (source >= input.dims[d]) {
            inside = false;
            break;
          }
          offset += source * in_strides_[d];
        }
        if (inside) {
          if (!body_) {
            int64_t bytes = input.element_bytes();
            ApplyCombiner(p_.combiner, input.type,
                          ctx.slot(step.outputs[0]) + o * bytes,
                          ctx.slot(step.inputs[0]) + offset * bytes, 1);
          } else {
            for (size_t i = 0; i < n; ++i) {
              int64_t bytes = p_.inputs[i].element_bytes();
              args[i] = ctx.slot(step.outputs[i]) + o * bytes;
              args[n + i] = ctx.slot(step.inputs[i]) + offset * bytes;
            }
            RETURN_IF_ERROR(body_->CallAndUpdate(
                ctx, args.data(), element_bytes_.data(), scratch.data()));
          }
        }
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++window[d] < p_.window_dimensions[d]) break;
          window[d] = 0;
        }
      }
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++out_index[d] < p_.output_dims[d]) break;
        out_index[d] = 0;
      }
      if (ctx.cancelled()) return ctx.CancelledStatus();
    }
    return OkStatus();
  }

 private:
  // The dimension d of a prefix scan (jnp.cumsum, lax.cummax, ... as JAX
  // writes them for CPUs): the window spans all of d with d's size - 1
  // elements of low padding, at stride one, and is one element at stride
  // one without padding in every other dimension; no dilation. Result i
  // along d combines elements 0 to i in order from the init value (the
  // padding takes no part), which a scan computes in the same order. -1
  // for any other window.
  int64_t ScanDimension() const {
    const ArrayShape& input = p_.inputs[0];
    int64_t found = -1;
    for (int64_t d = 0; d < input.rank(); ++d) {
      const int64_t size = input.dims[d];
      if (p_.base_dilations[d] != 1 || p_.window_dilations[d] != 1 ||
          p_.window_strides[d] != 1 || p_.output_dims[d] != size) {
        return -1;
      }
      if (p_.window_dimensions[d] == 1 && p_.padding_low[d] == 0) continue;
      if (found >= 0 || size < 2 || p_.window_dimensions[d] != size ||
          p_.padding_low[d] != size - 1) {
        return -1;
      }
      found = d;
    }
    return found;
  }

  // The scan along scan_dimension_, typed, its columns split over the
  // cores. False where the combiner and type have no typed form.
  bool RunScan(RunContext& ctx, const Step& step) const {
    const ArrayShape& input = p_.inputs[0];
    const int64_t length = scan_length_, inner = scan_inner_;
    bool done = false;
    DispatchNative(input.type, [&](auto tag) {
      using T = decltype(tag);
      if (ir::BitWidth(input.type) != static_cast<int>(sizeof(T) * 8)) return;
      WithCombinerOp(p_.combiner, [&](auto op) {
        using Op = decltype(op);
        if constexpr (requires(T v) { Op::Apply(v, v, 0); }) {
          const auto* x = reinterpret_cast<const T*>(ctx.slot(step.inputs[0]));
          auto* y = reinterpret_cast<T*>(ctx.slot(step.outputs[0]));
          T init;
          std::memcpy(&init, ctx.slot(step.inputs[1]), sizeof(T));
          ParallelFor(
              scan_outer_ * inner,
              std::max<int64_t>(1, (int64_t{1} << 16) / length),
              [&](int64_t first, int64_t last) {
                ScanColumns<Op, T>(x, y, init, length, inner, first, last);
              });
          done = true;
        }
        return done;
      });
    });
    return done;
  }

  // The scan along scan_dimension_ with the body as the combiner
  // (lax.cumlogsumexp, a variadic cumulative reduction): result i starts
  // as result i - 1 (the inits for i = 0) and combines element i, one
  // body call per element instead of one per element of each window. The
  // general loop starts result i from the inits and combines elements 0
  // to i in the same order, so the bits are the same.
  Status RunRegionScan(RunContext& ctx, const Step& step) const {
    const size_t n = p_.inputs.size();
    const int64_t length = scan_length_, inner = scan_inner_;
    std::vector<const std::byte*> args(2 * n);
    std::vector<std::byte> scratch(16 * n);
    for (int64_t o = 0; o < scan_outer_; ++o) {
      for (int64_t c = 0; c < inner; ++c) {
        for (int64_t k = 0; k < length; ++k) {
          const int64_t at = (o * length + k) * inner + c;
          for (size_t i = 0; i < n; ++i) {
            const int64_t bytes = element_bytes_[i];
            std::byte* result = ctx.slot(step.outputs[i]) + at * bytes;
            const std::byte* previous =
                k == 0 ? ctx.slot(step.inputs[n + i]) : result - inner * bytes;
            std::memcpy(result, previous, bytes);
            args[i] = result;
            args[n + i] = ctx.slot(step.inputs[i]) + at * bytes;
          }
          RETURN_IF_ERROR(body_->CallAndUpdate(ctx, args.data(),
                                               element_bytes_.data(),
                                               scratch.data()));
        }
        if (ctx.cancelled()) return ctx.CancelledStatus();
      }
    }
    return OkStatus();
  }

  bool Undilated() const {
    for (size_t d = 0; d < p_.window_dimensions.size(); ++d) {
      if (p_.base_dilations[d] != 1 || p_.window_dilations[d] != 1) {
        return false;
      }
    }
    return true;
  }

  // A known combiner without dilation (pooling): in each dimension the
  // window of an output element covers an interval of the input, and the
  // trailing dimensions whose window is one element at stride one with no
  // padding (an NHWC pool's channels) are combined as whole contiguous
  // rows. Each result element combines the same input elements in the
  // same row-major window order as the general loop, so the bits agree.
  // Output positions split over the cores (ResNet-50's max pool at batch
  // 8 took 19 ms on 16 cores, 15% of the model, on one thread).
  Status RunUndilated(RunContext& ctx, const Step& step) const {
    const ArrayShape& input = p_.inputs[0];
    const int64_t rank = input.rank();
    const int64_t bytes = input.element_bytes();
    int64_t outer_rank = rank;
    int64_t inner = 1;
    while (outer_rank > 0) {
      int64_t d = outer_rank - 1;
      if (p_.window_dimensions[d] != 1 || p_.window_strides[d] != 1 ||
          p_.padding_low[d] != 0 || p_.output_dims[d] != input.dims[d]) {
        break;
      }
      inner *= input.dims[d];
      --outer_rank;
    }
    const std::byte* in = ctx.slot(step.inputs[0]);
    std::byte* out = ctx.slot(step.outputs[0]);
    int64_t outer_count = 1;
    for (int64_t d = 0; d < outer_rank; ++d) outer_count *= p_.output_dims[d];
    if (inner == 0 || outer_count == 0) return OkStatus();
    int64_t window_count = 1;
    for (int64_t d = 0; d < outer_rank; ++d) {
      window_count *= p_.window_dimensions[d];
    }
    const std::byte* init = ctx.slot(step.inputs[1]);
    if (outer_rank == 0) {
      // Every window is one element: the result is init combined with it.
      FillWith(out, init, inner, bytes);
      ApplyCombiner(p_.combiner, input.type, out, in, inner);
      return OkStatus();
    }
    // The last outer dimension (a pool's width) is walked as rows: for each
    // window offset along it, the output positions whose window holds that
    // offset inside the input are an interval, combined in one call over
    // rows of `inner` (an NHWC pool's channels). The order each result
    // combines its window in stays row-major.
    const int64_t last = outer_rank - 1;
    const int64_t width = p_.output_dims[last];
    const int64_t stride = p_.window_strides[last];
    const int64_t pad = p_.padding_low[last];
    const int64_t input_width = input.dims[last];
    const int64_t row_count = outer_count / width;
    auto rows = [&](int64_t first, int64_t end_row) {
      std::vector<int64_t> index(last), low(last), begin(last), end(last),
          window(last);
      int64_t rest = first;
      for (int64_t d = last - 1; d >= 0; --d) {
        index[d] = rest % p_.output_dims[d];
        rest /= p_.output_dims[d];
      }
      for (int64_t o = first; o < end_row; ++o) {
        // The window's interval of input positions in each dimension.
        bool empty = false;
        for (int64_t d = 0; d < last; ++d) {
          low[d] = index[d] * p_.window_strides[d] - p_.padding_low[d];
          begin[d] = std::max<int64_t>(0, -low[d]);
          end[d] = std::min(p_.window_dimensions[d], input.dims[d] - low[d]);
          empty |= begin[d] >= end[d];
          window[d] = begin[d];
        }
        std::byte* target = out + o * width * inner * bytes;
        FillWith(target, init, width * inner, bytes);
        while (!empty) {
          int64_t offset = 0;
          for (int64_t d = 0; d < last; ++d) {
            offset += (low[d] + window[d]) * in_strides_[d];
          }
          for (int64_t j = 0; j < p_.window_dimensions[last]; ++j) {
            // Output positions w with 0 <= w * stride - pad + j < width.
            int64_t lowest = pad - j;
            int64_t highest = input_width - 1 + pad - j;
            if (highest < 0) continue;
            int64_t w_begin = lowest <= 0 ? 0 : (lowest + stride - 1) / stride;
            int64_t w_end = std::min(width, highest / stride + 1);
            if (w_begin >= w_end) continue;
            int64_t source =
                offset + (w_begin * stride - pad + j) * in_strides_[last];
            ApplyCombinerRows(p_.combiner, input.type,
                              target + w_begin * inner * bytes,
                              in + source * bytes, w_end - w_begin, inner,
                              stride * in_strides_[last]);
          }
          // The next window position over the dimensions before the last,
          // row-major.
          int64_t d = last - 1;
          for (; d >= 0; --d) {
            if (++window[d] < end[d]) break;
            window[d] = begin[d];
          }
          if (d < 0) break;
        }
        for (int64_t d = last - 1; d >= 0; --d) {
          if (++index[d] < p_.output_dims[d]) break;
          index[d] = 0;
        }
      }
    };
    // About 2^16 combined elements a share at least.
    const int64_t per_row = std::max<int64_t>(1, window_count * width * inner);
    ParallelFor(row_count, std::max<int64_t>(1, (int64_t{1} << 16) / per_row),
                rows);
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

  ReduceWindowParams p_;
  std::unique_ptr<ScalarRegion> body_;
  std::vector<int64_t> in_strides_;
  std::vector<int64_t> element_bytes_;  // per input
  int64_t scan_dimension_ = -1;         // ScanDimension()
  // For a scan: the dimensions before scan_dimension_, its length and the
  // dimensions after it, each product read as one.
  int64_t scan_outer_ = 1, scan_length_ = 0, scan_inner_ = 1;
};

}  // namespace

bool IsArgReduceKernel(const Kernel& kernel) {
  return dynamic_cast<const ArgReduceKernelBase*>(&kernel) != nullptr;
}

std::unique_ptr<Kernel> MakeArgReduceKernel(ReduceParams params, bool max) {
  if (params.inputs.size() != 2) return nullptr;
  const ElementType value_type = params.inputs[0].type;
  const ElementType index_type = params.inputs[1].type;
  if (index_type != ElementType::kI32 && index_type != ElementType::kI64) {
    return nullptr;
  }
  std::unique_ptr<Kernel> kernel;
  DispatchNative(value_type, [&](auto value_tag) {
    using V = decltype(value_tag);
    // Whole-byte integers, floats and i1 (a byte holding 0 or 1: JAX's
    // argmax of a mask, as jnp.select and piecewise compute); not
    // sub-byte or complex values.
    if constexpr (kIsInt<V> || kIsFloat<V> || std::is_same_v<V, bool>) {
      if (!std::is_same_v<V, bool> &&
          ir::BitWidth(value_type) != static_cast<int>(sizeof(V) * 8)) {
        return;
      }
      DispatchNative(index_type, [&](auto index_tag) {
        using I = decltype(index_tag);
        if constexpr (std::is_same_v<I, int32_t> ||
                      std::is_same_v<I, int64_t>) {
          if (max) {
            kernel = std::make_unique<ArgReduceKernel<true, V, I>>(params);
          } else {
            kernel = std::make_unique<ArgReduceKernel<false, V, I>>(params);
          }
        }
      });
    }
  });
  return kernel;
}

std::unique_ptr<Kernel> MakeReduceKernel(ReduceParams params,
                                         std::unique_ptr<Region> body) {
  if (std::optional<RowReduceParams> rows =
          AsRowReduce(params, body != nullptr)) {
    if (auto kernel = MakeRowReduceKernel(*rows)) return kernel;
  }
  return std::make_unique<ReduceKernel>(std::move(params), std::move(body));
}

std::unique_ptr<Kernel> MakeReduceWindowKernel(ReduceWindowParams params,
                                               std::unique_ptr<Region> body) {
  return std::make_unique<ReduceWindowKernel>(std::move(params),
                                              std::move(body));
}

}  // namespace kiln::exec
