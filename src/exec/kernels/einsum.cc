#include "exec/kernels/einsum.h"

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/elementwise_ops.h"

namespace kiln::exec {
namespace {

template <typename T>
class EinsumKernel : public Kernel {
 public:
  EinsumKernel(std::vector<EinsumOperand> operands, std::vector<int> result_labels,
               std::vector<int64_t> label_sizes)
      : operands_(std::move(operands)), result_labels_(std::move(result_labels)),
        label_sizes_(std::move(label_sizes)) {
    result_dims_.reserve(result_labels_.size());
    for (int label : result_labels_) result_dims_.push_back(label_sizes_[label]);
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    T* out = ctx.Out<T>(step, 0);
    int64_t out_count = NumElements(result_dims_);
    for (int64_t i = 0; i < out_count; ++i) out[i] = T{};
    // Odometer over every label; each assignment adds one product.
    std::vector<int64_t> index(label_sizes_.size(), 0);
    int64_t total = NumElements(label_sizes_);
    std::vector<std::vector<int64_t>> strides;
    for (const EinsumOperand& operand : operands_) strides.push_back(RowMajorStrides(operand.dims));
    std::vector<int64_t> out_strides = RowMajorStrides(result_dims_);
    for (int64_t flat = 0; flat < total; ++flat) {
      T product = T(1);
      for (size_t k = 0; k < operands_.size(); ++k) {
        int64_t offset = 0;
        for (size_t d = 0; d < operands_[k].labels.size(); ++d) {
          offset += index[operands_[k].labels[d]] * strides[k][d];
        }
        T value = ctx.In<T>(step, static_cast<int>(k))[offset];
        if constexpr (kIsInt<T>) {
          product = ops::WrapMul(product, value);
        } else if constexpr (std::is_same_v<T, bool>) {
          product = product && value;
        } else {
          product = product * value;
        }
      }
      int64_t target = 0;
      for (size_t d = 0; d < result_labels_.size(); ++d) {
        target += index[result_labels_[d]] * out_strides[d];
      }
      if constexpr (kIsInt<T>) {
        out[target] = ops::WrapAdd(out[target], product);
      } else if constexpr (std::is_same_v<T, bool>) {
        out[target] = out[target] || product;
      } else {
        out[target] += product;
      }
      for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
        if (++index[d] < label_sizes_[d]) break;
        index[d] = 0;
      }
    }
    return OkStatus();
  }

 private:
  std::vector<EinsumOperand> operands_;
  std::vector<int> result_labels_;
  std::vector<int64_t> label_sizes_;
  std::vector<int64_t> result_dims_;
};

}  // namespace

std::unique_ptr<Kernel> MakeEinsumKernel(ElementType type,
                                         std::vector<EinsumOperand> operands,
                                         std::vector<int> result_labels,
                                         std::vector<int64_t> label_sizes) {
  std::unique_ptr<Kernel> kernel;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    kernel = std::make_unique<EinsumKernel<T>>(std::move(operands), std::move(result_labels),
                                               std::move(label_sizes));
  });
  return kernel;
}

}  // namespace kiln::exec
