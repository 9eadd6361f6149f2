#include "exec/kernels/convolution.h"

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/elementwise_ops.h"

namespace kiln::exec {
namespace {

template <typename T>
class ConvolutionKernel : public Kernel {
 public:
  explicit ConvolutionKernel(ConvolutionParams p) : p_(std::move(p)) {
    spatial_ = static_cast<int64_t>(p_.input_dims.size()) - 2;
    in_strides_ = RowMajorStrides(p_.input_dims);
    kernel_strides_ = RowMajorStrides(p_.kernel_dims);
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* input = ctx.In<T>(step, 0);
    const T* kernel = ctx.In<T>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    int64_t out_batch = p_.output_dims[0];
    int64_t out_features = p_.output_dims[1];
    int64_t in_features = p_.input_dims[1];
    int64_t kernel_in = p_.kernel_dims[1];
    int64_t out_per_feature_group = out_features / p_.feature_group_count;
    int64_t out_per_batch_group = out_features / p_.batch_group_count;
    std::vector<int64_t> out_spatial(p_.output_dims.begin() + 2,
                                     p_.output_dims.end());
    std::vector<int64_t> window(p_.kernel_dims.begin() + 2,
                                p_.kernel_dims.end());
    int64_t out_spatial_count = NumElements(out_spatial);
    int64_t window_count = NumElements(window);
    std::vector<int64_t> position(spatial_), offset(spatial_);
    int64_t out_index = 0;
    for (int64_t n = 0; n < out_batch; ++n) {
      for (int64_t o = 0; o < out_features; ++o) {
        int64_t feature_group = o / out_per_feature_group;
        int64_t batch_group = o / out_per_batch_group;
        // Input batch: groups of the batch are stacked (spec:
        // batch_group_count).
        int64_t in_batch = batch_group * out_batch + n;
        std::fill(position.begin(), position.end(), 0);
        for (int64_t s = 0; s < out_spatial_count; ++s, ++out_index) {
          T sum{};
          for (int64_t i = 0; i < kernel_in; ++i) {
            int64_t in_feature = feature_group * kernel_in + i;
            if (in_feature >= in_features) break;
            std::fill(offset.begin(), offset.end(), 0);
            for (int64_t w = 0; w < window_count; ++w) {
              int64_t in_pos =
                  in_batch * in_strides_[0] + in_feature * in_strides_[1];
              int64_t k_pos = o * kernel_strides_[0] + i * kernel_strides_[1];
              bool inside = true;
              for (int64_t d = 0; d < spatial_; ++d) {
                // Position in the padded, dilated input.
                int64_t dilated = position[d] * p_.strides[d] +
                                  offset[d] * p_.rhs_dilation[d] -
                                  p_.padding_low[d];
                if (dilated < 0 || dilated % p_.lhs_dilation[d] != 0) {
                  inside = false;
                  break;
                }
                int64_t source = dilated / p_.lhs_dilation[d];
                if (source >= p_.input_dims[2 + d]) {
                  inside = false;
                  break;
                }
                in_pos += source * in_strides_[2 + d];
                int64_t k =
                    p_.reversal[d] ? window[d] - 1 - offset[d] : offset[d];
                k_pos += k * kernel_strides_[2 + d];
              }
              if (inside) {
                if constexpr (kIsInt<T>) {
                  sum = ops::WrapAdd(
                      sum, ops::WrapMul(input[in_pos], kernel[k_pos]));
                } else if constexpr (std::is_same_v<T, bool>) {
                  sum = sum || (input[in_pos] && kernel[k_pos]);
                } else {
                  sum += input[in_pos] * kernel[k_pos];
                }
              }
              for (int64_t d = spatial_ - 1; d >= 0; --d) {
                if (++offset[d] < window[d]) break;
                offset[d] = 0;
              }
            }
          }
          out[out_index] = sum;
          for (int64_t d = spatial_ - 1; d >= 0; --d) {
            if (++position[d] < out_spatial[d]) break;
            position[d] = 0;
          }
        }
        if (ctx.cancelled()) return ctx.CancelledStatus();
      }
    }
    return OkStatus();
  }

 private:
  ConvolutionParams p_;
  int64_t spatial_ = 0;
  std::vector<int64_t> in_strides_, kernel_strides_;
};

}  // namespace

std::unique_ptr<Kernel> MakeConvolutionKernel(ConvolutionParams params) {
  std::unique_ptr<Kernel> kernel;
  DispatchNative(params.type, [&](auto tag) {
    using T = decltype(tag);
    kernel = std::make_unique<ConvolutionKernel<T>>(std::move(params));
  });
  return kernel;
}

}  // namespace kiln::exec
