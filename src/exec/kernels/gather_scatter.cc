#include "exec/kernels/gather_scatter.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "base/containers.h"
#include "exec/kernels/element.h"
#include "exec/kernels/shape.h"
#include "exec/parallel.h"

namespace kiln::exec {
namespace {

// The "batch" index space of gather/scatter: the dimensions of the indices
// array other than index_vector_dim.
struct IndexSpace {
  std::vector<int64_t> indices_dims;  // which dims of the indices array
  std::vector<int64_t> sizes;
  std::vector<int64_t> indices_strides;
  int64_t vector_stride = 0;  // stride of index_vector_dim (0: implicit)
  ElementType type = ElementType::kI64;

  IndexSpace(const ArrayShape& indices, int64_t index_vector_dim) {
    type = indices.type;
    std::vector<int64_t> strides = indices.Strides();
    for (int64_t d = 0; d < indices.rank(); ++d) {
      if (d == index_vector_dim) {
        vector_stride = strides[d];
        continue;
      }
      indices_dims.push_back(d);
      sizes.push_back(indices.dims[d]);
      indices_strides.push_back(strides[d]);
    }
  }
  // Component k of the index vector at batch position `position`.
  int64_t Read(const std::byte* data, int64_t base, int64_t k) const {
    return LoadInt(type, data, base + k * vector_stride);
  }
};

// Odometer over the row-major positions [begin, end) of `sizes`: calls
// fn(index) for each.
template <typename Fn>
void ForEachIndexIn(const std::vector<int64_t>& sizes, int64_t begin,
                    int64_t end, Fn&& fn) {
  if (begin >= end) return;
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1, rest = begin; d >= 0;
       --d) {
    index[d] = rest % sizes[d];
    rest /= sizes[d];
  }
  for (int64_t position = begin;;) {
    fn(index);
    if (++position == end) return;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
}

// The batch positions [begin, end) of `space`, row-major, a run along the
// last dimension at a time: calls fn(position, base, other, run, index)
// for the run of `run` positions from `position`, with `base` the offset of
// its first index vector in the indices array (the next ones follow at
// space.indices_strides.back()), `other` its first offset along
// `other_strides` (the output's or the updates' batch strides) and `index`
// its first position in the batch space.
template <typename Fn>
void ForEachBatchRun(const IndexSpace& space,
                     const std::vector<int64_t>& other_strides, int64_t begin,
                     int64_t end, Fn&& fn) {
  if (begin >= end) return;
  const std::vector<int64_t>& sizes = space.sizes;
  if (sizes.empty()) {
    fn(int64_t{0}, int64_t{0}, int64_t{0}, int64_t{1}, sizes);
    return;
  }
  const size_t last = sizes.size() - 1;
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t d = static_cast<int64_t>(last), rest = begin; d >= 0; --d) {
    index[d] = rest % sizes[d];
    rest /= sizes[d];
  }
  for (int64_t position = begin; position < end;) {
    int64_t base = 0, other = 0;
    for (size_t j = 0; j < sizes.size(); ++j) {
      base += index[j] * space.indices_strides[j];
      other += index[j] * other_strides[j];
    }
    const int64_t run = std::min(sizes[last] - index[last], end - position);
    fn(position, base, other, run, index);
    position += run;
    // The next row: carry into the dimensions before the last.
    index[last] = 0;
    for (int64_t d = static_cast<int64_t>(last) - 1; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
}

// ForEachBatchRun a position at a time: fn(position, base, other, index),
// the offsets stepped along the last dimension, not recomputed.
template <typename Fn>
void ForEachBatchPosition(const IndexSpace& space,
                          const std::vector<int64_t>& other_strides,
                          int64_t begin, int64_t end, Fn&& fn) {
  const int64_t base_step =
      space.sizes.empty() ? 0 : space.indices_strides.back();
  const int64_t other_step = other_strides.empty() ? 0 : other_strides.back();
  std::vector<int64_t> at;
  ForEachBatchRun(space, other_strides, begin, end,
                  [&](int64_t position, int64_t base, int64_t other,
                      int64_t run, const std::vector<int64_t>& index) {
                    at = index;
                    for (int64_t i = 0; i < run; ++i) {
                      fn(position + i, base, other, at);
                      base += base_step;
                      other += other_step;
                      if (!at.empty()) ++at.back();
                    }
                  });
}

// The offsets of `n` updates of a scatter of single elements at one scalar
// index each (of type I, at idx[i * idx_step]): operand offset
// index * stride + add + i * add_step into `targets`, update offset
// value + i * value_step into `values`, leaving out the updates whose index
// is outside [0, size). Returns how many it wrote. Without a branch:
// indices out of range may be many and random.
template <typename I>
int64_t ScalarScatterOffsets(const I* idx, int64_t idx_step, int64_t size,
                             int64_t stride, int64_t add, int64_t add_step,
                             int64_t value, int64_t value_step, int64_t n,
                             int64_t* targets, int64_t* values) {
  int64_t written = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t start = static_cast<int64_t>(idx[i * idx_step]);
    const bool fits =
        static_cast<uint64_t>(start) < static_cast<uint64_t>(size);
    // An index out of range is written over by the next (a select, not a
    // branch), and never multiplied: i64 indices may be anything.
    targets[written] = (fits ? start : 0) * stride + add + i * add_step;
    values[written] = value + i * value_step;
    written += fits;
  }
  return written;
}

// Calls fn(I{}) with the index type of `type` where it is i32 or i64 (what
// JAX's indices are); false otherwise.
template <typename Fn>
bool DispatchIndexType(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::kI32:
      fn(int32_t{});
      return true;
    case ElementType::kI64:
      fn(int64_t{});
      return true;
    default:
      return false;
  }
}

// Odometer over `sizes`: calls fn(index) for every index, row-major.
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& sizes, Fn&& fn) {
  ForEachIndexIn(sizes, 0, NumElements(sizes), std::forward<Fn>(fn));
}

class GatherKernel : public Kernel {
 public:
  explicit GatherKernel(GatherParams p)
      : p_(std::move(p)), space_(p_.indices, p_.dims.index_vector_dim) {
    operand_strides_ = p_.operand.Strides();
    std::vector<int64_t> out_strides = RowMajorStrides(p_.output_dims);
    int64_t rank = static_cast<int64_t>(p_.output_dims.size());
    for (int64_t d = 0; d < rank; ++d) {
      if (!Contains(p_.dims.offset_dims, d))
        batch_out_strides_.push_back(out_strides[d]);
    }
    // Window: operand dims neither collapsed nor batching, in order, placed
    // at the output's offset_dims.
    size_t next = 0;
    for (int64_t d = 0; d < p_.operand.rank(); ++d) {
      if (Contains(p_.dims.collapsed_slice_dims, d) ||
          Contains(p_.dims.operand_batching_dims, d)) {
        continue;
      }
      window_.dims.push_back(p_.slice_sizes[d]);
      window_.source_strides.push_back(operand_strides_[d]);
      window_.target_strides.push_back(
          next < p_.dims.offset_dims.size()
              ? out_strides[p_.dims.offset_dims[next]]
              : 0);
      ++next;
    }
    window_.Simplify();
    window_elements_ = window_.num_elements();
    // Filling a window is the same walk reading one element throughout.
    fill_ = window_;
    std::fill(fill_.source_strides.begin(), fill_.source_strides.end(), 0);
    // A window contiguous in both the operand and the output (a row, as
    // jnp.take of rows gathers) is one memcpy.
    contiguous_ = window_.dims.empty() ||
                  (window_.dims.size() == 1 && window_.source_strides[0] == 1 &&
                   window_.target_strides[0] == 1);
    // One strided window dimension and windows side by side in the output
    // (a column of each row gathered, as jnp.take along a later axis and
    // the row permutation of a vmapped solve do): the output is written a
    // row at a time, each row taking one element of every window.
    by_window_element_ =
        !contiguous_ && window_.dims.size() == 1 && space_.sizes.size() == 1 &&
        batch_out_strides_.size() == 1 && batch_out_strides_[0] == 1 &&
        p_.dims.operand_batching_dims.empty();
    // Positions of the batching dims within the batch space.
    for (int64_t indices_dim : p_.dims.start_indices_batching_dims) {
      auto it = std::find(space_.indices_dims.begin(),
                          space_.indices_dims.end(), indices_dim);
      batching_positions_.push_back(it - space_.indices_dims.begin());
    }
    // Windows of one element at one start index each (v[i] of an array of
    // indices, jnp.take_along_axis), with JAX's index types: RunScalars.
    scalars_ = !by_window_element_ && window_elements_ == 1 &&
               p_.dims.start_index_map.size() == 1 &&
               (space_.type == ElementType::kI32 ||
                space_.type == ElementType::kI64) &&
               DispatchElementBytes(p_.operand.element_bytes(), [](auto) {});
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const std::byte* operand = ctx.slot(step.inputs[0]);
    const std::byte* indices = ctx.slot(step.inputs[1]);
    std::byte* out = ctx.slot(step.outputs[0]);
    const auto* mask =
        p_.masked ? reinterpret_cast<const uint8_t*>(ctx.slot(step.inputs[2]))
                  : nullptr;
    const std::byte* fill = p_.masked ? ctx.slot(step.inputs[3]) : nullptr;
    const int64_t element_bytes = p_.operand.element_bytes();
    const int64_t window_bytes = window_elements_ * element_bytes;
    if (window_elements_ == 0) return OkStatus();
    // Windows are independent: the batch positions are split over the
    // cores, in chunks of at least ~64 KiB of output.
    const int64_t count = NumElements(space_.sizes);
    if (count == 0) return OkStatus();
    if (by_window_element_) {
      RunByWindowElement(operand, indices, mask, fill, out, count);
      return OkStatus();
    }
    if (scalars_) {
      RunScalars(operand, indices, mask, fill, out, count);
      return OkStatus();
    }
    const int64_t min_chunk = std::max<int64_t>(
        1, (int64_t{64} << 10) / std::max<int64_t>(1, window_bytes));
    ParallelFor(count, min_chunk, [&](int64_t begin, int64_t end) {
      StridedCopy copy = window_;
      ForEachBatchPosition(
          space_, batch_out_strides_, begin, end,
          [&](int64_t position, int64_t base, int64_t target,
              const std::vector<int64_t>& batch) {
            if (mask != nullptr && mask[position] == 0) {
              StridedCopy filling = fill_;
              filling.target_offset = target;
              filling.Run(fill, out, element_bytes);
              return;
            }
            int64_t source = StartOffset(indices, base);
            for (size_t i = 0; i < p_.dims.operand_batching_dims.size(); ++i) {
              source += batch[batching_positions_[i]] *
                        operand_strides_[p_.dims.operand_batching_dims[i]];
            }
            if (window_elements_ == 1) {
              CopyElement(out + target * element_bytes,
                          operand + source * element_bytes, element_bytes);
              return;
            }
            if (contiguous_) {
              std::memcpy(out + target * element_bytes,
                          operand + source * element_bytes, window_bytes);
              return;
            }
            copy.source_offset = source;
            copy.target_offset = target;
            copy.Run(operand, out, element_bytes);
          });
    });
    return OkStatus();
  }

 private:
  // The operand offset of the window whose index vector starts at `base`
  // in the indices, each start clamped so the slice lies inside the
  // operand (without the operand batching dims' part).
  int64_t StartOffset(const std::byte* indices, int64_t base) const {
    int64_t source = 0;
    for (size_t k = 0; k < p_.dims.start_index_map.size(); ++k) {
      int64_t d = p_.dims.start_index_map[k];
      int64_t start = space_.Read(indices, base, static_cast<int64_t>(k));
      start =
          std::clamp<int64_t>(start, 0, p_.operand.dims[d] - p_.slice_sizes[d]);
      source += start * operand_strides_[d];
    }
    return source;
  }

  // scalars_: a typed loop along each run of the batch space's last
  // dimension: the index read as its type, clamped, the element moved as
  // an integer of its size (or the fill value where the mask is false).
  void RunScalars(const std::byte* operand, const std::byte* indices,
                  const uint8_t* mask, const std::byte* fill, std::byte* out,
                  int64_t count) const {
    const int64_t d = p_.dims.start_index_map[0];
    const int64_t limit = p_.operand.dims[d] - p_.slice_sizes[d];
    const int64_t stride = operand_strides_[d];
    const int64_t index_step =
        space_.sizes.empty() ? 0 : space_.indices_strides.back();
    const int64_t out_step =
        batch_out_strides_.empty() ? 0 : batch_out_strides_.back();
    // The operand offset a batching dimension adds, and what it adds along
    // a run when it is the batch space's last dimension.
    int64_t batching_step = 0;
    for (size_t i = 0; i < p_.dims.operand_batching_dims.size(); ++i) {
      if (batching_positions_[i] + 1 ==
          static_cast<int64_t>(space_.sizes.size())) {
        batching_step += operand_strides_[p_.dims.operand_batching_dims[i]];
      }
    }
    const int64_t element_bytes = p_.operand.element_bytes();
    DispatchIndexType(space_.type, [&](auto index_tag) {
      using I = decltype(index_tag);
      DispatchElementBytes(element_bytes, [&](auto element_tag) {
        using T = decltype(element_tag);
        const T* from = reinterpret_cast<const T*>(operand);
        T* to = reinterpret_cast<T*>(out);
        T fill_value{};
        if (fill != nullptr) std::memcpy(&fill_value, fill, sizeof(T));
        ParallelFor(
            count, (int64_t{64} << 10) / sizeof(T),
            [&](int64_t begin, int64_t end) {
              ForEachBatchRun(
                  space_, batch_out_strides_, begin, end,
                  [&](int64_t position, int64_t base, int64_t target,
                      int64_t run, const std::vector<int64_t>& batch) {
                    int64_t source = 0;
                    for (size_t i = 0; i < p_.dims.operand_batching_dims.size();
                         ++i) {
                      source +=
                          batch[batching_positions_[i]] *
                          operand_strides_[p_.dims.operand_batching_dims[i]];
                    }
                    const I* at = reinterpret_cast<const I*>(indices) + base;
                    T* o = to + target;
                    for (int64_t i = 0; i < run; ++i) {
                      const int64_t start = std::clamp<int64_t>(
                          static_cast<int64_t>(at[i * index_step]), 0, limit);
                      T value =
                          from[source + i * batching_step + start * stride];
                      if (mask != nullptr && mask[position + i] == 0) {
                        value = fill_value;
                      }
                      o[i * out_step] = value;
                    }
                  });
            });
      });
    });
  }

  // by_window_element_: output row e (the windows' element e, side by
  // side) from element e of every window; with a mask, the windows it
  // leaves out are then filled in each row.
  void RunByWindowElement(const std::byte* operand, const std::byte* indices,
                          const uint8_t* mask, const std::byte* fill,
                          std::byte* out, int64_t count) const {
    thread_local std::vector<int64_t> starts, filled;
    starts.resize(count);
    filled.clear();
    for (int64_t b = 0; b < count; ++b) {
      starts[b] = StartOffset(indices, b * space_.indices_strides[0]);
      if (mask != nullptr && mask[b] == 0) filled.push_back(b);
    }
    const int64_t* start = starts.data();
    const std::vector<int64_t>& fill_at = filled;
    const int64_t element_bytes = p_.operand.element_bytes();
    const int64_t source_stride = window_.source_strides[0];
    const int64_t target_stride = window_.target_strides[0];
    ParallelFor(
        window_.dims[0], std::max<int64_t>(1, 8192 / count),
        [&](int64_t e0, int64_t e1) {
          for (int64_t e = e0; e < e1; ++e) {
            const std::byte* row = operand + e * source_stride * element_bytes;
            std::byte* target = out + e * target_stride * element_bytes;
            GatherRow(row, start, target, count, element_bytes);
            for (int64_t b : fill_at) {
              std::memcpy(target + b * element_bytes, fill, element_bytes);
            }
          }
        });
  }

  static void GatherRow(const std::byte* row, const int64_t* start,
                        std::byte* target, int64_t count,
                        int64_t element_bytes) {
    const bool typed = DispatchElementBytes(element_bytes, [&](auto tag) {
      using U = decltype(tag);
      const auto* from = reinterpret_cast<const U*>(row);
      auto* to = reinterpret_cast<U*>(target);
      for (int64_t b = 0; b < count; ++b) to[b] = from[start[b]];
    });
    if (!typed) {
      for (int64_t b = 0; b < count; ++b) {
        std::memcpy(target + b * element_bytes, row + start[b] * element_bytes,
                    element_bytes);
      }
    }
  }

  GatherParams p_;
  IndexSpace space_;
  StridedCopy fill_;                    // window_ reading one element
  std::vector<int64_t> operand_strides_;
  std::vector<int64_t> batch_out_strides_;
  std::vector<int64_t> batching_positions_;
  StridedCopy window_;
  int64_t window_elements_ = 0;
  bool contiguous_ = false;
  bool by_window_element_ = false;
  bool scalars_ = false;
};

class ScatterKernel : public Kernel {
 public:
  ScatterKernel(ScatterParams p, std::unique_ptr<Region> body)
      : p_(std::move(p)), space_(p_.indices, p_.dims.index_vector_dim) {
    if (body) body_ = std::make_unique<ScalarRegion>(std::move(body));
    const ArrayShape& operand = p_.operands[0];
    operand_strides_ = operand.Strides();
    std::vector<int64_t> update_strides = RowMajorStrides(p_.update_dims);
    int64_t rank = static_cast<int64_t>(p_.update_dims.size());
    for (int64_t d = 0; d < rank; ++d) {
      if (!Contains(p_.dims.update_window_dims, d)) {
        scatter_update_strides_.push_back(update_strides[d]);
      }
    }
    window_sizes_.assign(operand.rank(), 1);
    size_t next = 0;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (Contains(p_.dims.inserted_window_dims, d) ||
          Contains(p_.dims.input_batching_dims, d)) {
        continue;
      }
      if (next >= p_.dims.update_window_dims.size()) break;
      int64_t update_dim = p_.dims.update_window_dims[next++];
      window_dims_.push_back(p_.update_dims[update_dim]);
      window_operand_strides_.push_back(operand_strides_[d]);
      window_update_strides_.push_back(update_strides[update_dim]);
      window_sizes_[d] = p_.update_dims[update_dim];
    }
    for (int64_t indices_dim : p_.dims.scatter_indices_batching_dims) {
      auto it = std::find(space_.indices_dims.begin(),
                          space_.indices_dims.end(), indices_dim);
      batching_positions_.push_back(it - space_.indices_dims.begin());
    }
    // Windows of one element (x.at[i].add(u), segment_sum) with a combiner
    // the kernels know: typed, in blocks.
    single_elements_ =
        !body_ && p_.operands.size() == 1 &&
        NumElements(window_dims_) == 1 &&
        HasFastCombiner(p_.combiner, operand.type);
    // A window whose last dimension is contiguous in the operand and the
    // updates (an embedding's rows) is combined a row at a time.
    if (!window_dims_.empty() && window_operand_strides_.back() == 1 &&
        window_update_strides_.back() == 1) {
      row_length_ = window_dims_.back();
      row_outer_dims_.assign(window_dims_.begin(), window_dims_.end() - 1);
    }
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    size_t n = p_.operands.size();
    const std::byte* indices = ctx.slot(step.inputs[n]);
    // The operands, copied unless updated in place.
    for (size_t i = 0; i < n; ++i) {
      std::byte* result = ctx.slot(step.outputs[i]);
      const std::byte* operand = ctx.slot(step.inputs[i]);
      if (operand != result && p_.operands[i].byte_size() > 0) {
        std::memcpy(result, operand, p_.operands[i].byte_size());
      }
    }
    const int64_t count = NumElements(space_.sizes);
    if (single_elements_) {
      // Nothing allocated: a loop's `.at[i].set` runs this every iteration.
      RunSingleElements(indices, ctx.slot(step.outputs[0]),
                        ctx.slot(step.inputs[n + 1]), count);
      return OkStatus();
    }
    std::vector<std::byte*> results(n);
    std::vector<const std::byte*> updates(n);
    for (size_t i = 0; i < n; ++i) {
      results[i] = ctx.slot(step.outputs[i]);
      updates[i] = ctx.slot(step.inputs[n + 1 + i]);
    }
    const ArrayShape& operand = p_.operands[0];
    std::vector<int64_t> start(operand.rank());
    std::vector<const std::byte*> args(2 * n);
    std::vector<std::byte> scratch(n * 16);
    std::vector<int64_t> element_bytes(n);
    for (size_t i = 0; i < n; ++i) {
      element_bytes[i] = p_.operands[i].element_bytes();
    }
    Status status;
    ForEachBatchPosition(space_, scatter_update_strides_, 0, count,
                         [&](int64_t, int64_t base, int64_t update_base,
                             const std::vector<int64_t>& batch) {
      if (!status.ok()) return;
      std::fill(start.begin(), start.end(), 0);
      for (size_t k = 0; k < p_.dims.scatter_dims_to_operand_dims.size(); ++k) {
        start[p_.dims.scatter_dims_to_operand_dims[k]] =
            space_.Read(indices, base, static_cast<int64_t>(k));
      }
      for (size_t i = 0; i < p_.dims.input_batching_dims.size(); ++i) {
        start[p_.dims.input_batching_dims[i]] = batch[batching_positions_[i]];
      }
      int64_t operand_base = 0;
      for (int64_t d = 0; d < operand.rank(); ++d) {
        // The whole window must fit; otherwise the update is skipped.
        if (start[d] < 0 || start[d] > operand.dims[d] - window_sizes_[d])
          return;
        operand_base += start[d] * operand_strides_[d];
      }
      if (!body_ && row_length_ > 0) {
        // Each element combines its updates in the order of the updates,
        // as below; a row's elements are independent of each other.
        const int64_t bytes = operand.element_bytes();
        ForEachIndex(row_outer_dims_, [&](const std::vector<int64_t>& w) {
          int64_t o = operand_base, u = update_base;
          for (size_t d = 0; d < w.size(); ++d) {
            o += w[d] * window_operand_strides_[d];
            u += w[d] * window_update_strides_[d];
          }
          ApplyCombiner(p_.combiner, operand.type, results[0] + o * bytes,
                        updates[0] + u * bytes, row_length_);
        });
        return;
      }
      ForEachIndex(window_dims_, [&](const std::vector<int64_t>& w) {
        if (!status.ok()) return;
        int64_t o = operand_base, u = update_base;
        for (size_t d = 0; d < w.size(); ++d) {
          o += w[d] * window_operand_strides_[d];
          u += w[d] * window_update_strides_[d];
        }
        if (!body_) {
          int64_t bytes = operand.element_bytes();
          ApplyCombiner(p_.combiner, operand.type, results[0] + o * bytes,
                        updates[0] + u * bytes, 1);
          return;
        }
        for (size_t i = 0; i < n; ++i) {
          int64_t bytes = p_.operands[i].element_bytes();
          args[i] = results[i] + o * bytes;
          args[n + i] = updates[i] + u * bytes;
        }
        status = body_->CallAndUpdate(ctx, args.data(), element_bytes.data(),
                                      scratch.data());
      });
    });
    return status;
  }

  int UpdatedInput(int output) const override {
    return output < static_cast<int>(p_.operands.size()) ? output : -1;
  }

 private:
  // single_elements_: the updates, one element each, applied in order in
  // blocks: the operand offsets of a block's updates (-1 where the index is
  // out of bounds, which skips it), then one typed ApplyCombinerAt.
  void RunSingleElements(const std::byte* indices, std::byte* result,
                         const std::byte* updates, int64_t count) const {
    constexpr int64_t kBlock = 4096;
    thread_local std::vector<int64_t> block;
    block.resize(2 * kBlock);
    int64_t* const targets = block.data();
    int64_t* const values = targets + kBlock;
    const ArrayShape& operand = p_.operands[0];
    int64_t filled = 0;
    auto flush = [&] {
      ApplyCombinerAt(p_.combiner, operand.type, result, updates, targets,
                      values, filled);
      filled = 0;
    };
    // The operand offset of the update whose index vector starts at `base`,
    // or -1 where its window does not fit (which skips it), read component
    // by component; one index of JAX's types takes ScalarScatterOffsets.
    auto offset_of = [&](int64_t base) -> int64_t {
      int64_t offset = 0;
      for (size_t k = 0; k < p_.dims.scatter_dims_to_operand_dims.size(); ++k) {
        const int64_t d = p_.dims.scatter_dims_to_operand_dims[k];
        const int64_t start =
            space_.Read(indices, base, static_cast<int64_t>(k));
        if (start < 0 || start >= operand.dims[d]) return -1;
        offset += start * operand_strides_[d];
      }
      return offset;
    };
    const bool one_index = p_.dims.scatter_dims_to_operand_dims.size() == 1;
    const int64_t first_dim =
        one_index ? p_.dims.scatter_dims_to_operand_dims[0] : int64_t{0};
    const int64_t first_size = one_index ? operand.dims[first_dim] : 0;
    const int64_t first_stride = one_index ? operand_strides_[first_dim] : 0;
    const int64_t base_step =
        space_.sizes.empty() ? 0 : space_.indices_strides.back();
    const int64_t update_step =
        scatter_update_strides_.empty() ? 0 : scatter_update_strides_.back();
    auto walk = [&](auto index_tag) {
      ForEachBatchRun(
          space_, scatter_update_strides_, 0, count,
          [&](int64_t, int64_t base, int64_t update_offset, int64_t run,
              const std::vector<int64_t>& batch) {
            // Input batching dims: the batch position's own index, in
            // range by construction; along the run when it is the last.
            int64_t batching = 0, batching_step = 0;
            for (size_t i = 0; i < p_.dims.input_batching_dims.size(); ++i) {
              const int64_t stride =
                  operand_strides_[p_.dims.input_batching_dims[i]];
              batching += batch[batching_positions_[i]] * stride;
              if (batching_positions_[i] + 1 ==
                  static_cast<int64_t>(space_.sizes.size())) {
                batching_step += stride;
              }
            }
            // A block's worth at a time.
            for (int64_t i = 0; i < run;) {
              const int64_t take = std::min(run - i, kBlock - filled);
              using I = decltype(index_tag);
              if constexpr (!std::is_same_v<I, std::nullptr_t>) {
                filled += ScalarScatterOffsets(
                    reinterpret_cast<const I*>(indices) + base + i * base_step,
                    base_step, first_size, first_stride,
                    batching + i * batching_step, batching_step,
                    update_offset + i * update_step, update_step, take,
                    targets + filled, values + filled);
                i += take;
              } else {
                int64_t n = filled;
                for (const int64_t stop = i + take; i < stop; ++i) {
                  const int64_t offset = offset_of(base + i * base_step);
                  targets[n] = offset + batching + i * batching_step;
                  values[n] = update_offset + i * update_step;
                  n += offset >= 0;  // an update out of range is dropped
                }
                filled = n;
              }
              if (filled == kBlock) flush();
            }
          });
    };
    if (!one_index || !DispatchIndexType(space_.type, walk)) {
      walk(nullptr);
    }
    flush();
  }

  ScatterParams p_;
  IndexSpace space_;
  std::unique_ptr<ScalarRegion> body_;
  std::vector<int64_t> operand_strides_;
  std::vector<int64_t> scatter_update_strides_;
  std::vector<int64_t> window_dims_;
  std::vector<int64_t> window_operand_strides_;
  std::vector<int64_t> window_update_strides_;
  std::vector<int64_t> window_sizes_;
  std::vector<int64_t> batching_positions_;
  // One operand, a known combiner, windows of one element: RunSingleElements.
  bool single_elements_ = false;
  // With a contiguous last window dimension: its length, and the window
  // dimensions before it.
  int64_t row_length_ = 0;
  std::vector<int64_t> row_outer_dims_;
};

}  // namespace

std::unique_ptr<Kernel> MakeGatherKernel(GatherParams params) {
  return std::make_unique<GatherKernel>(std::move(params));
}

std::unique_ptr<Kernel> MakeScatterKernel(ScatterParams params,
                                          std::unique_ptr<Region> body) {
  return std::make_unique<ScatterKernel>(std::move(params), std::move(body));
}

}  // namespace kiln::exec
