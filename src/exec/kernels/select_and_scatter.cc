// select_and_scatter and map: kernels that call regions per element.
#include <algorithm>
#include <cstring>

#include "exec/kernels/element.h"
#include "exec/kernels/reduce.h"
#include "exec/parallel.h"

namespace kiln::exec {
namespace {

class SelectAndScatterKernel : public Kernel {
 public:
  SelectAndScatterKernel(SelectAndScatterParams p,
                         std::unique_ptr<Region> select,
                         std::unique_ptr<Region> scatter)
      : p_(std::move(p)),
        select_(std::move(select)),
        scatter_(std::move(scatter)) {
    strides_ = p_.operand.Strides();
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    if (p_.select_direction.has_value() &&
        p_.scatter_combiner != Combiner::kGeneric) {
      bool handled = false;
      DispatchNative(p_.operand.type, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (!kIsComplex<T> && !std::is_same_v<T, bool>) {
          switch (*p_.select_direction) {
            case CompareDirection::kGE:
              RunTyped<T>(ctx, step, [](T a, T b) { return a >= b; });
              break;
            case CompareDirection::kGT:
              RunTyped<T>(ctx, step, [](T a, T b) { return a > b; });
              break;
            case CompareDirection::kLE:
              RunTyped<T>(ctx, step, [](T a, T b) { return a <= b; });
              break;
            case CompareDirection::kLT:
              RunTyped<T>(ctx, step, [](T a, T b) { return a < b; });
              break;
            default:
              return;
          }
          handled = true;
        }
      });
      if (handled) return OkStatus();
    }
    const std::byte* operand = ctx.slot(step.inputs[0]);
    const std::byte* source = ctx.slot(step.inputs[1]);
    const std::byte* init = ctx.slot(step.inputs[2]);
    std::byte* out = ctx.slot(step.outputs[0]);
    int64_t bytes = p_.operand.element_bytes();
    int64_t count = p_.operand.num_elements();
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(out + i * bytes, init, bytes);
    int64_t rank = p_.operand.rank();
    int64_t source_count = NumElements(p_.source_dims);
    int64_t window_count = NumElements(p_.window_dimensions);
    std::vector<int64_t> position(rank, 0), window(rank, 0);
    std::vector<std::byte> staged(16);
    const std::byte* args[2];
    for (int64_t s = 0; s < source_count; ++s) {
      int64_t selected = -1;
      std::fill(window.begin(), window.end(), 0);
      for (int64_t w = 0; w < window_count; ++w) {
        int64_t offset = 0;
        bool inside = true;
        for (int64_t d = 0; d < rank; ++d) {
          int64_t index = position[d] * p_.window_strides[d] + window[d] -
                          p_.padding_low[d];
          if (index < 0 || index >= p_.operand.dims[d]) {
            inside = false;
            break;
          }
          offset += index * strides_[d];
        }
        if (inside) {
          if (selected < 0) {
            selected = offset;
          } else {
            args[0] = operand + selected * bytes;
            args[1] = operand + offset * bytes;
            RETURN_IF_ERROR(select_.Call(ctx, args));
            if (*reinterpret_cast<const uint8_t*>(select_.Result(ctx, 0)) ==
                0) {
              selected = offset;
            }
          }
        }
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++window[d] < p_.window_dimensions[d]) break;
          window[d] = 0;
        }
      }
      if (selected >= 0) {
        args[0] = out + selected * bytes;
        args[1] = source + s * bytes;
        RETURN_IF_ERROR(scatter_.Call(ctx, args));
        std::memcpy(staged.data(), scatter_.Result(ctx, 0), bytes);
        std::memcpy(out + selected * bytes, staged.data(), bytes);
      }
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++position[d] < p_.source_dims[d]) break;
        position[d] = 0;
      }
    }
    return OkStatus();
  }

 private:
  // The typed path: `keep(a, b)` is the select region (true keeps the
  // element selected so far, a), the scatter a known combiner. Each source
  // element walks the part of its window inside the operand in row-major
  // order, as the region path does, so the same element is selected; the
  // source elements are combined in their order. Slices along dimension 0
  // run on separate cores when its windows are single, unpadded elements
  // at stride one (a batch), since they then write disjoint results.
  template <typename T, typename Keep>
  void RunTyped(RunContext& ctx, const Step& step, Keep keep) const {
    const T* operand = reinterpret_cast<const T*>(ctx.slot(step.inputs[0]));
    const T* source = reinterpret_cast<const T*>(ctx.slot(step.inputs[1]));
    const T init = *reinterpret_cast<const T*>(ctx.slot(step.inputs[2]));
    T* out = reinterpret_cast<T*>(ctx.slot(step.outputs[0]));
    const int64_t rank = p_.operand.rank();
    const int64_t count = p_.operand.num_elements();
    std::fill(out, out + count, init);
    const int64_t source_count = NumElements(p_.source_dims);
    if (source_count == 0 || count == 0) return;
    const bool split = rank > 1 && p_.window_dimensions[0] == 1 &&
                       p_.window_strides[0] == 1 && p_.padding_low[0] == 0 &&
                       p_.source_dims[0] == p_.operand.dims[0];
    const int64_t slices = split ? p_.source_dims[0] : 1;
    const int64_t per_slice = source_count / slices;
    const int64_t window_count = NumElements(p_.window_dimensions);
    auto run = [&](int64_t first, int64_t last) {
      std::vector<int64_t> position(rank, 0), low(rank), begin(rank), end(rank),
          window(rank);
      int64_t rest = first * per_slice;
      for (int64_t d = rank - 1; d >= 0; --d) {
        position[d] = rest % p_.source_dims[d];
        rest /= p_.source_dims[d];
      }
      for (int64_t s = first * per_slice; s < last * per_slice; ++s) {
        bool empty = false;
        int64_t offset = 0;
        for (int64_t d = 0; d < rank; ++d) {
          low[d] = position[d] * p_.window_strides[d] - p_.padding_low[d];
          begin[d] = std::max<int64_t>(0, -low[d]);
          end[d] =
              std::min(p_.window_dimensions[d], p_.operand.dims[d] - low[d]);
          empty |= begin[d] >= end[d];
          window[d] = begin[d];
          offset += (low[d] + begin[d]) * strides_[d];
        }
        if (!empty) {
          int64_t selected = offset;
          T best = operand[offset];
          while (true) {
            int64_t d = rank - 1;
            for (; d >= 0; --d) {
              if (++window[d] < end[d]) {
                offset += strides_[d];
                break;
              }
              offset -= (window[d] - 1 - begin[d]) * strides_[d];
              window[d] = begin[d];
            }
            if (d < 0) break;
            T candidate = operand[offset];
            if (!keep(best, candidate)) {
              best = candidate;
              selected = offset;
            }
          }
          if (p_.scatter_combiner == Combiner::kAdd) {
            out[selected] = static_cast<T>(out[selected] + source[s]);
          } else {
            ApplyCombiner(p_.scatter_combiner, p_.operand.type,
                          reinterpret_cast<std::byte*>(out + selected),
                          reinterpret_cast<const std::byte*>(source + s), 1);
          }
        }
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++position[d] < p_.source_dims[d]) break;
          position[d] = 0;
        }
      }
    };
    ParallelFor(slices,
                std::max<int64_t>(
                    1, (int64_t{1} << 16) /
                           std::max<int64_t>(1, per_slice * window_count)),
                run);
  }

  SelectAndScatterParams p_;
  ScalarRegion select_;
  ScalarRegion scatter_;
  std::vector<int64_t> strides_;
};

class MapKernel : public Kernel {
 public:
  MapKernel(std::vector<ArrayShape> inputs, ArrayShape output,
            std::unique_ptr<Region> body)
      : inputs_(std::move(inputs)),
        output_(std::move(output)),
        body_(std::move(body)) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    int64_t count = output_.num_elements();
    int64_t out_bytes = output_.element_bytes();
    std::vector<const std::byte*> args(inputs_.size());
    std::byte* out = ctx.slot(step.outputs[0]);
    for (int64_t i = 0; i < count; ++i) {
      for (size_t k = 0; k < inputs_.size(); ++k) {
        args[k] = ctx.slot(step.inputs[k]) + i * inputs_[k].element_bytes();
      }
      RETURN_IF_ERROR(body_.Call(ctx, args.data()));
      std::memmove(out + i * out_bytes, body_.Result(ctx, 0), out_bytes);
    }
    return OkStatus();
  }

 private:
  std::vector<ArrayShape> inputs_;
  ArrayShape output_;
  ScalarRegion body_;
};

}  // namespace

std::unique_ptr<Kernel> MakeSelectAndScatterKernel(
    SelectAndScatterParams params, std::unique_ptr<Region> select,
    std::unique_ptr<Region> scatter) {
  return std::make_unique<SelectAndScatterKernel>(
      std::move(params), std::move(select), std::move(scatter));
}

std::unique_ptr<Kernel> MakeMapKernel(std::vector<ArrayShape> inputs,
                                      ArrayShape output,
                                      std::unique_ptr<Region> body) {
  return std::make_unique<MapKernel>(std::move(inputs), std::move(output),
                                     std::move(body));
}

}  // namespace kiln::exec
