#include "exec/kernels/batch_norm.h"

#include <cmath>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/element.h"

namespace kiln::exec {
namespace {

class BatchNormKernel : public Kernel {
 public:
  BatchNormKernel(BatchNormKind kind, ArrayShape operand, int64_t feature_index,
                  double epsilon)
      : kind_(kind), operand_(std::move(operand)), epsilon_(epsilon) {
    features_ = operand_.dims[feature_index];
    for (int64_t d = feature_index + 1; d < operand_.rank(); ++d)
      inner_ *= operand_.dims[d];
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    ElementType type = operand_.type;
    int64_t count = operand_.num_elements();
    int64_t per_feature = features_ == 0 ? 0 : count / features_;
    auto feature = [&](int64_t i) { return (i / inner_) % features_; };
    auto load = [&](int input, int64_t i) {
      return LoadDouble(type, ctx.slot(step.inputs[input]), i);
    };
    auto store = [&](int output, int64_t i, double v) {
      StoreDouble(type, ctx.slot(step.outputs[output]), i, v);
    };
    std::vector<double> mean(features_, 0.0), variance(features_, 0.0);
    if (kind_ == BatchNormKind::kTraining) {
      for (int64_t i = 0; i < count; ++i) mean[feature(i)] += load(0, i);
      for (double& m : mean) m = per_feature ? m / per_feature : 0.0;
      for (int64_t i = 0; i < count; ++i) {
        double centered = load(0, i) - mean[feature(i)];
        variance[feature(i)] += centered * centered;
      }
      for (double& v : variance) v = per_feature ? v / per_feature : 0.0;
    } else {
      int mean_input = kind_ == BatchNormKind::kInference ? 3 : 2;
      for (int64_t f = 0; f < features_; ++f) {
        mean[f] = load(mean_input, f);
        variance[f] = load(mean_input + 1, f);
      }
    }
    if (kind_ != BatchNormKind::kGrad) {
      for (int64_t i = 0; i < count; ++i) {
        int64_t f = feature(i);
        double normalized =
            (load(0, i) - mean[f]) / std::sqrt(variance[f] + epsilon_);
        store(0, i, load(1, f) * normalized + load(2, f));
      }
      if (kind_ == BatchNormKind::kTraining) {
        for (int64_t f = 0; f < features_; ++f) {
          store(1, f, mean[f]);
          store(2, f, variance[f]);
        }
      }
      return OkStatus();
    }
    // Gradients (spec: batch_norm_grad, after XLA's batchnorm expander).
    std::vector<double> sum_grad(features_, 0.0),
        sum_grad_centered(features_, 0.0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t f = feature(i);
      double grad = load(4, i);
      sum_grad[f] += grad;
      sum_grad_centered[f] += grad * (load(0, i) - mean[f]);
    }
    for (int64_t i = 0; i < count; ++i) {
      int64_t f = feature(i);
      double stddev = std::sqrt(variance[f] + epsilon_);
      double centered = load(0, i) - mean[f];
      double n = static_cast<double>(per_feature);
      double i1 = load(4, i) * n;
      double i5 = sum_grad_centered[f] * centered / (variance[f] + epsilon_);
      store(0, i, load(1, f) / stddev / n * (i1 - sum_grad[f] - i5));
    }
    for (int64_t f = 0; f < features_; ++f) {
      double stddev = std::sqrt(variance[f] + epsilon_);
      store(1, f, sum_grad_centered[f] / stddev);
      store(2, f, sum_grad[f]);
    }
    return OkStatus();
  }

 private:
  BatchNormKind kind_;
  ArrayShape operand_;
  double epsilon_;
  int64_t features_ = 1;
  int64_t inner_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> MakeBatchNormKernel(BatchNormKind kind,
                                            ArrayShape operand,
                                            int64_t feature_index,
                                            double epsilon) {
  return std::make_unique<BatchNormKernel>(kind, std::move(operand),
                                           feature_index, epsilon);
}

}  // namespace kiln::exec
