// The model of Kiln's main job, shared by examples/train_mlp and the
// tests: a one-hidden-layer perceptron written with the program builder,
// its training step (forward, hand-written gradient, SGD update) as one
// StableHLO program, and a synthetic regression set.
#ifndef KILN_EXAMPLES_MLP_MODEL_H_
#define KILN_EXAMPLES_MLP_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::examples {

// The model and the data set.
inline constexpr int64_t kSamples = 256;
inline constexpr int64_t kInputs = 8;
inline constexpr int64_t kHidden = 32;

// The training step: (w1, b1, w2, b2, x, t) -> (w1', b1', w2', b2', loss)
// for y = tanh(x.w1 + b1).w2 + b2 and loss = mean((y - t)^2). The four
// parameters are donated to their updated outputs; `donated` receives
// their indices.
StatusOr<std::string> BuildTrainStep(double learning_rate,
                                     std::vector<int>* donated);

// Inputs uniform in [-1, 1] (x: [kSamples, kInputs]) and targets (t:
// [kSamples, 1]) from a fixed "teacher" network the model has to learn.
void MakeDataSet(std::vector<float>& x, std::vector<float>& t);

// w1, b1, w2, b2: weights scaled by 1/sqrt(fan-in), biases zero.
std::vector<std::vector<float>> InitialParameters();

}  // namespace kiln::examples

#endif  // KILN_EXAMPLES_MLP_MODEL_H_
