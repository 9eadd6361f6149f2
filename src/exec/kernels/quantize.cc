#include "exec/kernels/quantize.h"

#include <algorithm>
#include <cmath>

#include "exec/executor.h"
#include "exec/kernels/element.h"

namespace kiln::exec {
namespace {

// For per-axis parameters: the parameter index of flat element i is
// (i / inner) % axis_size.
struct AxisWalk {
  int64_t inner = 1;
  int64_t axis_size = 1;
  AxisWalk(const ArrayShape& shape, int64_t axis) {
    if (axis < 0) return;
    axis_size = shape.dims[axis];
    for (int64_t d = axis + 1; d < shape.rank(); ++d) inner *= shape.dims[d];
  }
  int64_t Param(int64_t i, bool per_axis) const {
    return per_axis ? (i / inner) % axis_size : 0;
  }
};

class DequantizeKernel : public Kernel {
 public:
  DequantizeKernel(const ArrayShape& shape, QuantizationParams params)
      : shape_(shape),
        params_(std::move(params)),
        walk_(shape_, params_.axis) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const std::byte* in = ctx.slot(step.inputs[0]);
    std::byte* out = ctx.slot(step.outputs[0]);
    int64_t count = shape_.num_elements();
    bool per_axis = params_.axis >= 0;
    bool wide = params_.expressed_type == ElementType::kF64;
    for (int64_t i = 0; i < count; ++i) {
      int64_t p = walk_.Param(i, per_axis);
      int64_t q = LoadInt(params_.storage_type, in, i);
      double value;
      if (wide) {
        value =
            static_cast<double>(q - params_.zero_points[p]) * params_.scales[p];
      } else {
        value = static_cast<float>(q - params_.zero_points[p]) *
                static_cast<float>(params_.scales[p]);
      }
      StoreDouble(params_.expressed_type, out, i, value);
    }
    return OkStatus();
  }

 private:
  ArrayShape shape_;
  QuantizationParams params_;
  AxisWalk walk_;
};

class QuantizeKernel : public Kernel {
 public:
  QuantizeKernel(const ArrayShape& shape, QuantizationParams params)
      : shape_(shape),
        params_(std::move(params)),
        walk_(shape_, params_.axis) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const std::byte* in = ctx.slot(step.inputs[0]);
    std::byte* out = ctx.slot(step.outputs[0]);
    int64_t count = shape_.num_elements();
    bool per_axis = params_.axis >= 0;
    bool wide = params_.expressed_type == ElementType::kF64;
    for (int64_t i = 0; i < count; ++i) {
      int64_t p = walk_.Param(i, per_axis);
      double x = LoadDouble(shape_.type, in, i);
      double scaled;
      if (wide) {
        scaled =
            x / params_.scales[p] + static_cast<double>(params_.zero_points[p]);
      } else {
        scaled = static_cast<float>(x) / static_cast<float>(params_.scales[p]) +
                 static_cast<float>(params_.zero_points[p]);
      }
      double rounded = std::nearbyint(scaled);  // ties to even
      double clamped =
          std::clamp(rounded, static_cast<double>(params_.storage_min),
                     static_cast<double>(params_.storage_max));
      // NaN quantizes as 0 (then clamped), as the reference interpreter's
      // float-to-integer conversion gives.
      if (std::isnan(scaled)) {
        clamped = std::clamp(0.0, static_cast<double>(params_.storage_min),
                             static_cast<double>(params_.storage_max));
      }
      StoreInt(params_.storage_type, out, i, static_cast<int64_t>(clamped));
    }
    return OkStatus();
  }

 private:
  ArrayShape shape_;
  QuantizationParams params_;
  AxisWalk walk_;
};

}  // namespace

std::unique_ptr<Kernel> MakeDequantizeKernel(const ArrayShape& shape,
                                             QuantizationParams params) {
  return std::make_unique<DequantizeKernel>(shape, std::move(params));
}

std::unique_ptr<Kernel> MakeQuantizeKernel(const ArrayShape& shape,
                                           QuantizationParams params) {
  return std::make_unique<QuantizeKernel>(shape, std::move(params));
}

}  // namespace kiln::exec
