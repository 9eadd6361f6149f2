// select_and_scatter and map: kernels that call regions per element.
#include <cstring>

#include "exec/kernels/element.h"
#include "exec/kernels/reduce.h"

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
