#include "exec/kernels/shape.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/elementwise_kernel.h"
#include "exec/kernels/vectorize.h"

namespace kiln::exec {
namespace {

// An element of kBytes bytes, copied as one value.
template <size_t kBytes>
struct Element {
  unsigned char bytes[kBytes];
};

template <size_t kBytes>
KILN_VECTORIZED void CopyRow(const std::byte* source, int64_t source_stride,
                             std::byte* target, int64_t target_stride,
                             int64_t count) {
  if (source_stride == 1 && target_stride == 1) {
    std::memcpy(target, source, count * kBytes);
    return;
  }
  if (target_stride == 1) {
    // Typed loops (a broadcast fills, a transpose gathers) rather than one
    // memcpy call per element.
    using T = std::conditional_t<
        kBytes == 1, uint8_t,
        std::conditional_t<
            kBytes == 2, uint16_t,
            std::conditional_t<
                kBytes == 4, uint32_t,
                std::conditional_t<kBytes == 8, uint64_t, Element<kBytes>>>>>;
    T* out = reinterpret_cast<T*>(target);
    if (source_stride == 0) {
      T value;
      std::memcpy(&value, source, kBytes);
      for (int64_t i = 0; i < count; ++i) out[i] = value;
      return;
    }
    const T* in = reinterpret_cast<const T*>(source);
    if (source_stride == -1) {
      // A reversed row (jnp.flip, lax.rev): a constant stride the
      // vectorizer turns into whole-vector loads and a lane permutation,
      // where a stride known only at run time is a gather (1 Mi f32 took
      // 3x the time of a copy).
      for (int64_t i = 0; i < count; ++i) out[i] = in[-i];
      return;
    }
    for (int64_t i = 0; i < count; ++i) out[i] = in[i * source_stride];
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(target + i * target_stride * static_cast<int64_t>(kBytes),
                source + i * source_stride * static_cast<int64_t>(kBytes),
                kBytes);
  }
}

using RowFn = void (*)(const std::byte*, int64_t, std::byte*, int64_t, int64_t);

// `rows` dense output rows of `columns` elements, element (r, c) from
// source[r * row_stride + c * column_stride], for a source read down its
// columns (a transpose: column_stride large, row_stride small). A row at a
// time touched a new source line per element and kept none of them for the
// next row (jnp.transpose of 1024x1024 f32: 6.5x XLA:CPU's time); this goes
// in tiles of 64 bytes square. A tile is read a source line at a time into
// a buffer and written an output line at a time from it, so that each line
// is touched once: written in place instead, the tile's output lines were
// revisited for every column, and at a power-of-two row length they all
// fall in one L1 set, more of them than it has ways (1024x1024 f32 in `kiln
// run` on 2 cores: 2.9 ms a row at a time, 1.4 tiled in place, 0.5 through
// the buffer; XLA:CPU about 0.4).
template <typename T>
void CopyTiles(const std::byte* source, int64_t row_stride,
               int64_t column_stride, std::byte* target, int64_t rows,
               int64_t columns) {
  constexpr int64_t kTile = 64 / sizeof(T);
  const T* in = reinterpret_cast<const T*>(source);
  T* out = reinterpret_cast<T*>(target);
  T tile[kTile][kTile];
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t height = std::min(kTile, rows - r0);
    for (int64_t c0 = 0; c0 < columns; c0 += kTile) {
      const int64_t width = std::min(kTile, columns - c0);
      for (int64_t c = 0; c < width; ++c) {
        const T* line = in + r0 * row_stride + (c0 + c) * column_stride;
        for (int64_t r = 0; r < height; ++r) tile[r][c] = line[r * row_stride];
      }
      for (int64_t r = 0; r < height; ++r) {
        T* to = out + (r0 + r) * columns + c0;
        if (width == kTile) {
          for (int64_t c = 0; c < kTile; ++c) to[c] = tile[r][c];
        } else {
          for (int64_t c = 0; c < width; ++c) to[c] = tile[r][c];
        }
      }
    }
  }
}

using TileFn = void (*)(const std::byte*, int64_t, int64_t, std::byte*,
                        int64_t, int64_t);

TileFn TileCopier(int64_t element_bytes) {
  switch (element_bytes) {
    case 1:
      return CopyTiles<uint8_t>;
    case 2:
      return CopyTiles<uint16_t>;
    case 4:
      return CopyTiles<uint32_t>;
    case 8:
      return CopyTiles<uint64_t>;
    default:
      return nullptr;
  }
}

RowFn RowCopier(int64_t element_bytes) {
  switch (element_bytes) {
    case 1:
      return CopyRow<1>;
    case 2:
      return CopyRow<2>;
    case 4:
      return CopyRow<4>;
    case 8:
      return CopyRow<8>;
    case 16:
      return CopyRow<16>;
    default:
      return nullptr;
  }
}

int64_t ReadIndex(ElementType type, const std::byte* data) {
  return LoadInt(type, data, 0);
}

}  // namespace

int64_t StridedCopy::num_elements() const { return NumElements(dims); }

void StridedCopy::Simplify() {
  std::vector<int64_t> d, s, t;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!d.empty() && s.back() == source_strides[i] * dims[i] &&
        t.back() == target_strides[i] * dims[i]) {
      // Dimension i continues the previous one in both layouts.
      d.back() *= dims[i];
      s.back() = source_strides[i];
      t.back() = target_strides[i];
      continue;
    }
    d.push_back(dims[i]);
    s.push_back(source_strides[i]);
    t.push_back(target_strides[i]);
  }
  if (NumElements(dims) == 0) {
    d = {0};
    s = {1};
    t = {1};
  }
  dims = std::move(d);
  source_strides = std::move(s);
  target_strides = std::move(t);
}

void StridedCopy::Run(const std::byte* source, std::byte* target,
                      int64_t element_bytes) const {
  if (num_elements() == 0) return;
  RowFn row = RowCopier(element_bytes);
  const std::byte* src = source + source_offset * element_bytes;
  std::byte* dst = target + target_offset * element_bytes;
  if (dims.empty()) {
    std::memcpy(dst, src, element_bytes);
    return;
  }
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t inner = dims[rank - 1];
  int64_t inner_source = source_strides[rank - 1];
  int64_t inner_target = target_strides[rank - 1];
  // The outer dimensions' position: on the stack for up to 8 of them, so
  // that a small copy (a loop's slice of one row) allocates nothing.
  int64_t inline_index[8] = {};
  std::vector<int64_t> heap_index;
  int64_t* index = inline_index;
  if (rank - 1 > 8) {
    heap_index.assign(rank - 1, 0);
    index = heap_index.data();
  }
  int64_t source_pos = 0, target_pos = 0;
  while (true) {
    row(src + source_pos * element_bytes, inner_source,
        dst + target_pos * element_bytes, inner_target, inner);
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < dims[d]) {
        source_pos += source_strides[d];
        target_pos += target_strides[d];
        break;
      }
      index[d] = 0;
      source_pos -= source_strides[d] * (dims[d] - 1);
      target_pos -= target_strides[d] * (dims[d] - 1);
    }
    if (d < 0) return;
  }
}

namespace {

class StridedCopyKernel : public Kernel {
 public:
  StridedCopyKernel(StridedCopy copy, int64_t element_bytes)
      : copy_(std::move(copy)), element_bytes_(element_bytes) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    copy_.Run(ctx.slot(step.inputs[0]), ctx.slot(step.outputs[0]),
              element_bytes_);
    return OkStatus();
  }

 private:
  StridedCopy copy_;
  int64_t element_bytes_;
};

// A strided copy whose output is dense and row-major (transpose,
// broadcast, slice, reverse into a fresh array): a view its consumers can
// read through, computed for any range of output elements.
class StridedViewKernel : public ElementwiseKernel {
 public:
  StridedViewKernel(StridedCopy copy, int64_t element_bytes)
      : ElementwiseKernel(copy.num_elements(), {0},
                          {static_cast<int>(element_bytes)}),
        copy_(std::move(copy)),
        element_bytes_(element_bytes),
        row_(RowCopier(element_bytes)) {
    // Tiles where the output's rows run along the source's lines and its
    // columns each start a new line (transposes of the last two dimensions,
    // .T). Elsewhere rows: where the source's contiguous dimension is an
    // outer one (a [2, 1, 0] permutation), or its columns share lines (a
    // channels-last image made channels-first, 16 channels of f32), a row
    // at a time was the faster.
    const size_t rank = copy_.dims.size();
    if (rank >= 2) {
      const int64_t row_stride = copy_.source_strides[rank - 2];
      const int64_t column_stride = copy_.source_strides[rank - 1];
      if (row_stride == 1 && std::llabs(column_stride) * element_bytes > 64 &&
          copy_.dims[rank - 2] >= 2) {
        tiles_ = TileCopier(element_bytes);
      }
    }
  }

  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t begin, int64_t n) const override {
    if (n <= 0) return;
    const std::byte* source = inputs[0] + copy_.source_offset * element_bytes_;
    std::byte* target = outputs[0];
    int64_t rank = static_cast<int64_t>(copy_.dims.size());
    if (rank == 0) {
      std::memcpy(target, source, element_bytes_);
      return;
    }
    // The multi-index of element `begin` and its source position.
    int64_t index[kMaxRank];
    int64_t source_pos = 0;
    int64_t rest = begin;
    for (int64_t d = rank - 1; d >= 0; --d) {
      index[d] = rest % copy_.dims[d];
      rest /= copy_.dims[d];
      source_pos += index[d] * copy_.source_strides[d];
    }
    int64_t inner = copy_.dims[rank - 1];
    int64_t inner_stride = copy_.source_strides[rank - 1];
    while (n > 0) {
      // Whole rows from a row's start, within one plane of the last two
      // dimensions: in tiles (above), the last of them then stepped past
      // as a row is.
      const int64_t rows =
          tiles_ == nullptr || index[rank - 1] != 0
              ? 0
              : std::min(n / inner, copy_.dims[rank - 2] - index[rank - 2]);
      if (rows >= 2) {
        const int64_t row_stride = copy_.source_strides[rank - 2];
        tiles_(source + source_pos * element_bytes_, row_stride, inner_stride,
               target, rows, inner);
        target += rows * inner * element_bytes_;
        n -= rows * inner;
        if (n == 0) return;
        index[rank - 2] += rows - 1;
        source_pos += (rows - 1) * row_stride;
      } else {
        int64_t run = std::min(n, inner - index[rank - 1]);
        row_(source + source_pos * element_bytes_, inner_stride, target, 1,
             run);
        target += run * element_bytes_;
        n -= run;
        if (n == 0) return;
      }
      // Next row: the innermost index wraps, the outer ones carry.
      source_pos -= index[rank - 1] * inner_stride;
      index[rank - 1] = 0;
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (++index[d] < copy_.dims[d]) {
          source_pos += copy_.source_strides[d];
          break;
        }
        source_pos -= copy_.source_strides[d] * (copy_.dims[d] - 1);
        index[d] = 0;
      }
    }
  }
  int cost_per_element() const override { return 2; }
  // A transpose copied in squares (above) whose source does not fit a
  // core's first-level cache: fused, 1024 x 1024 f32 `a.T + b` took 3x
  // XLA:CPU's time, the transpose alone 0.8x.
  bool runs_well_in_tiles() const override {
    constexpr int64_t kFirstLevelCacheBytes = 32 * 1024;
    return tiles_ == nullptr ||
           copy_.num_elements() * element_bytes_ <= kFirstLevelCacheBytes;
  }
  bool range_invariant() const override {
    for (int64_t stride : copy_.source_strides) {
      if (stride != 0) return false;
    }
    return true;
  }
  int64_t repeated_element() const override {
    return range_invariant() ? copy_.source_offset : -1;
  }

  static constexpr int64_t kMaxRank = 16;

 private:
  StridedCopy copy_;
  int64_t element_bytes_;
  RowFn row_;
  TileFn tiles_ = nullptr;  // set where whole rows go in tiles
};

// Whether `copy` writes a dense row-major array from its first element.
bool WritesDenseRowMajor(const StridedCopy& copy) {
  if (copy.target_offset != 0) return false;
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(copy.dims.size()) - 1; d >= 0; --d) {
    if (copy.dims[d] != 1 && copy.target_strides[d] != expected) return false;
    expected *= copy.dims[d];
  }
  return true;
}

void Fill(std::byte* target, const std::byte* value, int64_t count,
          int64_t element_bytes) {
  if (count == 0) return;
  std::memcpy(target, value, element_bytes);
  // Doubling copies.
  int64_t filled = 1;
  while (filled < count) {
    int64_t chunk = std::min(filled, count - filled);
    std::memcpy(target + filled * element_bytes, target, chunk * element_bytes);
    filled += chunk;
  }
}

class PadKernel : public Kernel {
 public:
  PadKernel(StridedCopy copy, int64_t count, int64_t element_bytes)
      : copy_(std::move(copy)), count_(count), element_bytes_(element_bytes) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    std::byte* out = ctx.slot(step.outputs[0]);
    Fill(out, ctx.slot(step.inputs[1]), count_, element_bytes_);
    copy_.Run(ctx.slot(step.inputs[0]), out, element_bytes_);
    return OkStatus();
  }

 private:
  StridedCopy copy_;
  int64_t count_;
  int64_t element_bytes_;
};

class ConcatenateKernel : public Kernel {
 public:
  ConcatenateKernel(std::vector<StridedCopy> copies, int64_t element_bytes)
      : copies_(std::move(copies)), element_bytes_(element_bytes) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    std::byte* out = ctx.slot(step.outputs[0]);
    for (size_t i = 0; i < copies_.size(); ++i) {
      copies_[i].Run(ctx.slot(step.inputs[i]), out, element_bytes_);
    }
    return OkStatus();
  }

 private:
  std::vector<StridedCopy> copies_;
  int64_t element_bytes_;
};

// The strided copy of a window of `window` elements from (or into) an
// array of `strides`, at offset 0: the dynamic slices add the offset of
// their start indices to the array's address each run, so a run (each
// iteration of a loop that indexes an array) allocates nothing.
StridedCopy WindowCopy(const std::vector<int64_t>& window,
                       const std::vector<int64_t>& strides, bool into_array) {
  StridedCopy copy;
  copy.dims = window;
  copy.source_strides = into_array ? RowMajorStrides(window) : strides;
  copy.target_strides = into_array ? strides : RowMajorStrides(window);
  copy.Simplify();
  return copy;
}

// The offset, in elements, of a dynamic slice's window: start indices read
// as `index_type` (inputs `first`.. or, with `index_vector`, all from input
// `first`), each clamped to [0, dim - size] (spec: dynamic_slice).
int64_t WindowOffset(RunContext& ctx, const Step& step, size_t first,
                     bool index_vector, ElementType index_type,
                     const ArrayShape& operand,
                     const std::vector<int64_t>& window,
                     const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    int64_t start =
        index_vector ? LoadInt(index_type, ctx.slot(step.inputs[first]), d)
                     : ReadIndex(index_type, ctx.slot(step.inputs[first + d]));
    start = std::clamp<int64_t>(start, 0, operand.dims[d] - window[d]);
    offset += start * strides[d];
  }
  return offset;
}

class DynamicSliceKernel : public Kernel {
 public:
  DynamicSliceKernel(ArrayShape operand, std::vector<int64_t> sizes,
                     ElementType index_type, bool index_vector)
      : operand_(std::move(operand)),
        sizes_(std::move(sizes)),
        index_type_(index_type),
        index_vector_(index_vector),
        strides_(operand_.Strides()),
        copy_(WindowCopy(sizes_, strides_, /*into_array=*/false)) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const int64_t bytes = operand_.element_bytes();
    int64_t offset = WindowOffset(ctx, step, 1, index_vector_, index_type_,
                                  operand_, sizes_, strides_);
    copy_.Run(ctx.slot(step.inputs[0]) + offset * bytes,
              ctx.slot(step.outputs[0]), bytes);
    return OkStatus();
  }

 private:
  ArrayShape operand_;
  std::vector<int64_t> sizes_;
  ElementType index_type_;
  bool index_vector_;
  std::vector<int64_t> strides_;
  StridedCopy copy_;
};

class DynamicUpdateSliceKernel : public Kernel {
 public:
  DynamicUpdateSliceKernel(ArrayShape operand, std::vector<int64_t> update_dims,
                           ElementType index_type)
      : operand_(std::move(operand)),
        update_dims_(std::move(update_dims)),
        index_type_(index_type),
        strides_(operand_.Strides()),
        copy_(WindowCopy(update_dims_, strides_, /*into_array=*/true)) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    std::byte* out = ctx.slot(step.outputs[0]);
    const std::byte* in = ctx.slot(step.inputs[0]);
    if (in != out && operand_.byte_size() > 0) {
      std::memcpy(out, in, operand_.byte_size());
    }
    const int64_t bytes = operand_.element_bytes();
    int64_t offset = WindowOffset(ctx, step, 2, false, index_type_, operand_,
                                  update_dims_, strides_);
    copy_.Run(ctx.slot(step.inputs[1]), out + offset * bytes, bytes);
    return OkStatus();
  }
  int UpdatedInput(int output) const override { return output == 0 ? 0 : -1; }

 private:
  ArrayShape operand_;
  std::vector<int64_t> update_dims_;
  ElementType index_type_;
  std::vector<int64_t> strides_;
  StridedCopy copy_;
};

}  // namespace

std::unique_ptr<Kernel> MakeStridedCopyKernel(StridedCopy copy,
                                              int64_t element_bytes) {
  copy.Simplify();
  if (WritesDenseRowMajor(copy) && RowCopier(element_bytes) != nullptr &&
      static_cast<int64_t>(copy.dims.size()) <= StridedViewKernel::kMaxRank) {
    return std::make_unique<StridedViewKernel>(std::move(copy), element_bytes);
  }
  return std::make_unique<StridedCopyKernel>(std::move(copy), element_bytes);
}

std::unique_ptr<Kernel> MakePadKernel(StridedCopy copy, int64_t count,
                                      int64_t element_bytes) {
  copy.Simplify();
  return std::make_unique<PadKernel>(std::move(copy), count, element_bytes);
}

std::unique_ptr<Kernel> MakeConcatenateKernel(std::vector<StridedCopy> copies,
                                              int64_t element_bytes) {
  for (StridedCopy& copy : copies) copy.Simplify();
  return std::make_unique<ConcatenateKernel>(std::move(copies), element_bytes);
}

std::unique_ptr<Kernel> MakeDynamicSliceKernel(ArrayShape operand,
                                               std::vector<int64_t> sizes,
                                               ElementType index_type,
                                               bool index_vector) {
  return std::make_unique<DynamicSliceKernel>(
      std::move(operand), std::move(sizes), index_type, index_vector);
}

std::unique_ptr<Kernel> MakeDynamicUpdateSliceKernel(
    ArrayShape operand, std::vector<int64_t> update_dims,
    ElementType index_type) {
  return std::make_unique<DynamicUpdateSliceKernel>(
      std::move(operand), std::move(update_dims), index_type);
}

}  // namespace kiln::exec
