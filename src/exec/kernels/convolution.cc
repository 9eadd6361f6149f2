#include "exec/kernels/convolution.h"

#include <algorithm>

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

// The common case: two (or one) spatial dimensions and no input
// dilation, for float types. Loops over kernel taps outside and output
// columns inside, so the inner loop is a strided multiply-add with bounds
// computed once per row instead of per element.
template <typename T>
class Convolution2dKernel : public Kernel {
 public:
  explicit Convolution2dKernel(ConvolutionParams p) : p_(std::move(p)) {
    // View one spatial dimension as [1, W].
    if (p_.input_dims.size() == 3) {
      p_.input_dims.insert(p_.input_dims.begin() + 2, 1);
      p_.kernel_dims.insert(p_.kernel_dims.begin() + 2, 1);
      p_.output_dims.insert(p_.output_dims.begin() + 2, 1);
      p_.strides.insert(p_.strides.begin(), 1);
      p_.padding_low.insert(p_.padding_low.begin(), 0);
      p_.rhs_dilation.insert(p_.rhs_dilation.begin(), 1);
      p_.reversal.insert(p_.reversal.begin(), false);
    }
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const T* input = ctx.In<T>(step, 0);
    const T* kernel = ctx.In<T>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    const int64_t N = p_.output_dims[0], O = p_.output_dims[1];
    const int64_t OH = p_.output_dims[2], OW = p_.output_dims[3];
    const int64_t C = p_.input_dims[1], H = p_.input_dims[2], W = p_.input_dims[3];
    const int64_t KI = p_.kernel_dims[1], KH = p_.kernel_dims[2], KW = p_.kernel_dims[3];
    const int64_t sh = p_.strides[0], sw = p_.strides[1];
    const int64_t ph = p_.padding_low[0], pw = p_.padding_low[1];
    const int64_t dh = p_.rhs_dilation[0], dw = p_.rhs_dilation[1];
    const int64_t out_per_feature_group = O / p_.feature_group_count;
    const int64_t out_per_batch_group = O / p_.batch_group_count;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t o = 0; o < O; ++o) {
        int64_t feature_group = o / out_per_feature_group;
        int64_t in_batch = (o / out_per_batch_group) * N + n;
        T* plane = out + (n * O + o) * OH * OW;
        std::fill(plane, plane + OH * OW, T{});
        for (int64_t i = 0; i < KI; ++i) {
          int64_t c = feature_group * KI + i;
          if (c >= C) break;
          const T* image = input + (in_batch * C + c) * H * W;
          for (int64_t ky = 0; ky < KH; ++ky) {
            int64_t ky_src = p_.reversal[0] ? KH - 1 - ky : ky;
            for (int64_t kx = 0; kx < KW; ++kx) {
              int64_t kx_src = p_.reversal[1] ? KW - 1 - kx : kx;
              T weight = kernel[((o * KI + i) * KH + ky_src) * KW + kx_src];
              // Output columns whose input column x*sw + kx*dw - pw is
              // inside [0, W).
              int64_t offset_x = kx * dw - pw;
              int64_t x_begin = offset_x >= 0 ? 0 : (-offset_x + sw - 1) / sw;
              int64_t x_end = W - offset_x <= 0 ? 0 : (W - offset_x + sw - 1) / sw;
              x_end = std::min(x_end, OW);
              for (int64_t y = 0; y < OH; ++y) {
                int64_t iy = y * sh + ky * dh - ph;
                if (iy < 0 || iy >= H) continue;
                const T* row = image + iy * W + offset_x;
                T* target = plane + y * OW;
                for (int64_t x = x_begin; x < x_end; ++x) target[x] += weight * row[x * sw];
              }
            }
          }
        }
      }
      if (ctx.cancelled()) return ctx.CancelledStatus();
    }
    return OkStatus();
  }

 private:
  ConvolutionParams p_;
};

}  // namespace

std::unique_ptr<Kernel> MakeConvolutionKernel(ConvolutionParams params) {
  size_t spatial = params.input_dims.size() - 2;
  bool no_lhs_dilation = true;
  for (int64_t d : params.lhs_dilation) no_lhs_dilation &= d == 1;
  if ((spatial == 1 || spatial == 2) && no_lhs_dilation &&
      (params.type == ElementType::kF32 || params.type == ElementType::kF64)) {
    if (params.type == ElementType::kF32) {
      return std::make_unique<Convolution2dKernel<float>>(std::move(params));
    }
    return std::make_unique<Convolution2dKernel<double>>(std::move(params));
  }
  std::unique_ptr<Kernel> kernel;
  DispatchNative(params.type, [&](auto tag) {
    using T = decltype(tag);
    kernel = std::make_unique<ConvolutionKernel<T>>(std::move(params));
  });
  return kernel;
}

}  // namespace kiln::exec
