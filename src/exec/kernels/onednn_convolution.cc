// stablehlo.convolution through oneDNN's convolution forward.
#include <algorithm>

#include "exec/kernels/onednn.h"
#include "exec/kernels/onednn_primitive.h"

namespace kiln::exec {

OneDnnKernel MakeOneDnnConvolutionKernel(const OneDnnConvolutionParams& p) {
  OneDnnKernel none;
  const size_t rank = p.input_dims.size();
  if (rank < 3 || rank > 5 || p.kernel_dims.size() != rank ||
      p.output_dims.size() != rank) {
    return none;
  }
  const size_t spatial = rank - 2;
  const int64_t groups = p.feature_group_count;
  if (groups < 1 || p.kernel_dims[0] % groups != 0) return none;
  bool dilated_input = false;
  for (int64_t d : p.lhs_dilation) dilated_input |= d != 1;
  dnnl::memory::dims padding_low, padding_high;
  for (size_t d = 0; d < spatial; ++d) {
    int64_t low = p.padding_low[d], high = p.padding_high[d];
    if (dilated_input) {
      // A deconvolution spreads each input element over the window
      // (output y = x * stride - low' + tap * dilation), which is the
      // correlation of the dilated input with the reversed kernel when
      // low' = (window - 1) * dilation - low (and the same at the high
      // end).
      if (p.window_strides[d] != 1) return none;
      int64_t span = (p.kernel_dims[2 + d] - 1) * p.rhs_dilation[d];
      low = span - low;
      high = span - high;
    }
    if (low < 0 || high < 0) return none;
    padding_low.push_back(low);
    padding_high.push_back(high);
  }
  auto is_float = [](ElementType type) {
    return type == ElementType::kF32 || type == ElementType::kBF16 ||
           type == ElementType::kF16;
  };
  const bool floats = is_float(p.input_type) && p.input_type == p.kernel_type &&
                      is_float(p.result_type);
  // As for the matmul (onednn.cc): int8 sums are exact in s32 up to 2^16
  // products per output, with VNNI.
  int64_t products = p.kernel_dims[1];
  for (size_t d = 2; d < rank; ++d) products *= p.kernel_dims[d];
  static const bool has_vnni = CpuHasVnni();
  const bool int8 =
      (p.input_type == ElementType::kI8 || p.input_type == ElementType::kUI8) &&
      p.kernel_type == ElementType::kI8 && p.result_type == ElementType::kI32 &&
      has_vnni && products <= (int64_t{1} << 16);
  if (!floats && !int8) return none;
  if (p.bias && (dilated_input || p.result_type != ElementType::kF32)) {
    return none;
  }

  // Grouped weights are [G, O / G, I, spatial...]: output feature o is in
  // group o / (O / G), as StableHLO's feature_group_count splits them.
  std::vector<int64_t> kernel_dims = p.kernel_dims;
  std::vector<int64_t> kernel_strides = p.kernel_strides;
  if (groups > 1) {
    kernel_dims[0] /= groups;
    kernel_dims.insert(kernel_dims.begin(), groups);
    kernel_strides.insert(kernel_strides.begin(),
                          kernel_strides[0] * kernel_dims[1]);
  }
  auto input = onednn::StridedDesc(p.input_dims, p.input_strides, p.input_type);
  auto kernel = onednn::StridedDesc(kernel_dims, kernel_strides, p.kernel_type);
  auto output =
      onednn::StridedDesc(p.output_dims, p.output_strides, p.result_type);
  if (!input || !kernel || !output) return none;

  dnnl::memory::dims strides(p.window_strides.begin(), p.window_strides.end());
  if (dilated_input)
    strides.assign(p.lhs_dilation.begin(), p.lhs_dilation.end());
  dnnl::memory::dims dilates;  // oneDNN counts the holes: 0 is none
  for (int64_t d : p.rhs_dilation) dilates.push_back(d - 1);
  try {
    auto layout = [&](const dnnl::memory::desc& user,
                      const std::vector<int64_t>& dims, ElementType type,
                      bool is_weights) {
      if (p.layouts == OneDnnLayouts::kProgram ||
          (p.layouts == OneDnnLayouts::kBlockedWeights && !is_weights)) {
        return user;
      }
      return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()),
                                *onednn::DataType(type),
                                dnnl::memory::format_tag::any);
    };
    auto src = layout(*input, p.input_dims, p.input_type, false);
    auto weights = layout(*kernel, kernel_dims, p.kernel_type, true);
    auto dst = layout(*output, p.output_dims, p.result_type, false);
    const dnnl::memory::desc bias({p.output_dims[1]},
                                  dnnl::memory::data_type::f32,
                                  dnnl::memory::format_tag::a);
    auto make = [&](const auto& pd, dnnl::primitive primitive) {
      std::vector<onednn::PrimitiveArg> args(3);
      args[0] = {DNNL_ARG_SRC,  false,        0, *input,
                 pd.src_desc(), std::nullopt, 0};
      args[1] = {DNNL_ARG_WEIGHTS,  false,        1, *kernel,
                 pd.weights_desc(), std::nullopt, 0};
      args[2] = {DNNL_ARG_DST,  true,         0, *output,
                 pd.dst_desc(), std::nullopt, 0};
      if (p.bias) {
        args.push_back({DNNL_ARG_BIAS, false, 2, bias, bias, std::nullopt, 0});
      }
      return onednn::MakePrimitiveKernel(pd, std::move(primitive),
                                         std::move(args));
    };
    if (dilated_input) {
      dnnl::deconvolution_forward::desc desc(
          dnnl::prop_kind::forward_inference,
          dnnl::algorithm::deconvolution_direct, src, weights, dst, strides,
          dilates, padding_low, padding_high);
      dnnl::deconvolution_forward::primitive_desc pd(
          desc, onednn::UserScratchpad(), onednn::Engine(),
          /*allow_empty=*/true);
      if (!pd || !onednn::IsOptimized(pd)) return none;
      return make(pd, dnnl::deconvolution_forward(pd));
    }
    auto desc =
        p.bias ? dnnl::convolution_forward::desc(
                     dnnl::prop_kind::forward_inference,
                     dnnl::algorithm::convolution_direct, src, weights, bias,
                     dst, strides, dilates, padding_low, padding_high)
               : dnnl::convolution_forward::desc(
                     dnnl::prop_kind::forward_inference,
                     dnnl::algorithm::convolution_direct, src, weights, dst,
                     strides, dilates, padding_low, padding_high);
    dnnl::convolution_forward::primitive_desc pd(desc, onednn::UserScratchpad(),
                                                 onednn::Engine(),
                                                 /*allow_empty=*/true);
    if (!pd || !onednn::IsOptimized(pd)) return none;
    return make(pd, dnnl::convolution_forward(pd));
  } catch (const dnnl::error&) {
    return none;
  }
}

}  // namespace kiln::exec
