#include "examples/mlp_model.h"

#include <cmath>
#include <random>

#include "kiln/builder.h"

namespace kiln::examples {

using client::DotDimensions;
using client::ProgramBuilder;
using client::Shape;
using client::Value;

namespace {
constexpr PJRT_Buffer_Type F32 = PJRT_Buffer_Type_F32;
}  // namespace

// The gradient is written out by the chain rule.
StatusOr<std::string> BuildTrainStep(double learning_rate,
                                     std::vector<int>* donated) {
  ProgramBuilder b("train_step");
  Value w1 = b.Parameter(Shape(F32, {kInputs, kHidden}));
  Value b1 = b.Parameter(Shape(F32, {kHidden}));
  Value w2 = b.Parameter(Shape(F32, {kHidden, 1}));
  Value b2 = b.Parameter(Shape(F32, {1}));
  Value x = b.Parameter(Shape(F32, {kSamples, kInputs}));
  Value t = b.Parameter(Shape(F32, {kSamples, 1}));
  auto splat = [&b](std::vector<int64_t> dims, double value) {
    return b.ConstantSplat(Shape(F32, std::move(dims)), value);
  };

  // Forward.
  Value x_w1 = b.Dot(x, w1);
  Value b1_rows = b.Broadcast(b1, {kSamples, kHidden});
  Value h = b.Tanh(x_w1 + b1_rows);
  Value h_w2 = b.Dot(h, w2);
  Value b2_rows = b.Broadcast(b2, {kSamples, 1});
  Value y = h_w2 + b2_rows;
  Value diff = y - t;
  Value squared = diff * diff;
  Value loss = b.ReduceSum(squared, {0, 1}) / b.ConstantScalar(F32, kSamples);

  // Backward: d loss / d y = 2 (y - t) / N, then the chain rule.
  Value dy = diff * splat({kSamples, 1}, 2.0 / kSamples);
  Value dw2 = b.DotGeneral(h, dy, DotDimensions{{}, {}, {0}, {0}});
  Value db2 = b.ReduceSum(dy, {0});
  Value dh = b.DotGeneral(dy, w2, DotDimensions{{}, {}, {1}, {1}});
  Value one = splat({kSamples, kHidden}, 1.0);
  Value tanh_slope = one - h * h;
  Value dh_pre = dh * tanh_slope;
  Value dw1 = b.DotGeneral(x, dh_pre, DotDimensions{{}, {}, {0}, {0}});
  Value db1 = b.ReduceSum(dh_pre, {0});

  // SGD.
  Value w1_next = w1 - dw1 * splat({kInputs, kHidden}, learning_rate);
  Value b1_next = b1 - db1 * splat({kHidden}, learning_rate);
  Value w2_next = w2 - dw2 * splat({kHidden, 1}, learning_rate);
  Value b2_next = b2 - db2 * splat({1}, learning_rate);

  b.Donate(w1, 0);
  b.Donate(b1, 1);
  b.Donate(w2, 2);
  b.Donate(b2, 3);
  *donated = b.donated_parameters();
  Value outputs[] = {w1_next, b1_next, w2_next, b2_next, loss};
  return b.Build(outputs);
}

void MakeDataSet(std::vector<float>& x, std::vector<float>& t) {
  std::mt19937 random(1234);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  x.resize(kSamples * kInputs);
  for (float& value : x) value = uniform(random);
  std::vector<float> teacher_in(kInputs * 4), teacher_out(4);
  for (float& value : teacher_in) value = uniform(random) * 1.5f;
  for (float& value : teacher_out) value = uniform(random);
  t.resize(kSamples);
  for (int64_t n = 0; n < kSamples; ++n) {
    float target = 0;
    for (int j = 0; j < 4; ++j) {
      float sum = 0;
      for (int64_t i = 0; i < kInputs; ++i) {
        sum += x[n * kInputs + i] * teacher_in[i * 4 + j];
      }
      target += std::tanh(sum) * teacher_out[j];
    }
    t[n] = target;
  }
}

std::vector<std::vector<float>> InitialParameters() {
  std::mt19937 random(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> parameters = {
      std::vector<float>(kInputs * kHidden), std::vector<float>(kHidden, 0.0f),
      std::vector<float>(kHidden), std::vector<float>(1, 0.0f)};
  for (float& value : parameters[0]) {
    value = normal(random) / std::sqrt(float{kInputs});
  }
  for (float& value : parameters[2]) {
    value = normal(random) / std::sqrt(float{kHidden});
  }
  return parameters;
}

}  // namespace kiln::examples
