// train_mlp: Kiln's main job. Builds a small multilayer perceptron with the
// program builder (forward pass, hand-written gradient, SGD update, all in
// one StableHLO program), then trains it on a synthetic regression set
// through ComputationClient and a PJRT plugin. The parameters stay on the
// device between steps and are donated to each step; the loss is read back
// now and then; the metrics report at the end shows one compile, one
// execute per step, and the transfers.
//
//   train_mlp [--plugin PATH] [--device NAME] [--steps N]
//             [--learning-rate X] [--print-every N] [--json] [--check]
//
// Without --plugin the client is the process-wide one of $PJRT_DEVICE, or
// Kiln's plugin when that is unset. Exit codes: 0 trained; 1 error; 2 bad
// usage; 3 the plugin cannot compile at all (its PJRT_Client_Compile
// answers UNIMPLEMENTED), which scripts/main.sh reports and works around.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/strings.h"
#include "kiln/builder.h"
#include "kiln/pjrt_computation_client.h"

namespace {

using namespace kiln;
using namespace kiln::client;

constexpr PJRT_Buffer_Type F32 = PJRT_Buffer_Type_F32;

// The model and the data set.
constexpr int64_t kSamples = 256;
constexpr int64_t kInputs = 8;
constexpr int64_t kHidden = 32;

struct Flags {
  std::string plugin;
  std::string device;
  int steps = 300;
  double learning_rate = 0.1;
  int print_every = 25;
  bool json = false;
  bool check = false;
};

int Usage(const char* problem) {
  std::fprintf(stderr,
               "train_mlp: %s\nusage: train_mlp [--plugin PATH] [--device "
               "NAME] [--steps N] [--learning-rate X] [--print-every N] "
               "[--json] [--check]\n",
               problem);
  return 2;
}

// The training step: (w1, b1, w2, b2, x, t) -> (w1', b1', w2', b2', loss)
// for y = tanh(x.w1 + b1).w2 + b2 and loss = mean((y - t)^2), with the
// gradient written out by the chain rule and one SGD update. The four
// parameters are donated to their updated outputs.
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

// The synthetic set: inputs uniform in [-1, 1], targets from a fixed
// "teacher" network the student has to learn.
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

// Initial parameters, scaled by 1/sqrt(fan-in).
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

// Whether the plugin compiles at all (the identity program).
bool PluginCompiles(ComputationClient& client, const std::string& device) {
  ProgramBuilder b("probe");
  Value p = b.Parameter(Shape(F32, {}));
  Value outputs[] = {p};
  std::vector<CompileInstance> instances(1);
  instances[0].program = *b.Build(outputs);
  instances[0].compilation_device = device;
  auto compiled = client.Compile(std::move(instances));
  return compiled.ok() ||
         compiled.status().code() != StatusCode::kUnimplemented;
}

StatusOr<float> ReadLoss(ComputationClient& client, const DataPtr& loss) {
  std::vector<DataPtr> handles = {loss};
  ASSIGN_OR_RETURN(std::vector<Literal> values,
                   client.TransferFromDevice(handles));
  return values[0].ToVector<float>()[0];
}

int Train(const Flags& flags) {
  // The client: the given plugin, else $PJRT_DEVICE's, else Kiln's.
  std::unique_ptr<PjrtComputationClient> owned;
  ComputationClient* client = nullptr;
  if (flags.plugin.empty() && !GetEnv("PJRT_DEVICE").empty()) {
    auto global = ComputationClient::Create();
    if (!global.ok()) {
      std::fprintf(stderr, "train_mlp: %s\n",
                   global.status().ToString().c_str());
      return 1;
    }
    client = *global;
  } else {
    PjrtComputationClientOptions options;
    options.plugin_path = flags.plugin;
    if (options.plugin_path.empty()) {
      auto found = FindKilnPlugin();
      if (!found.ok()) {
        std::fprintf(stderr, "train_mlp: %s\n",
                     found.status().ToString().c_str());
        return 1;
      }
      options.plugin_path = *found;
    }
    options.persistent_cache_path = GetEnv("KILN_PERSISTENT_CACHE_PATH");
    auto created = PjrtComputationClient::Create(std::move(options));
    if (!created.ok()) {
      std::fprintf(stderr, "train_mlp: %s\n",
                   created.status().ToString().c_str());
      return 1;
    }
    owned = std::move(*created);
    client = owned.get();
  }
  std::string device =
      flags.device.empty() ? client->GetDefaultDevice() : flags.device;
  std::printf(
      "train_mlp: %lld samples, %lld inputs, %lld hidden units, on %s "
      "(%s)\n",
      static_cast<long long>(kSamples), static_cast<long long>(kInputs),
      static_cast<long long>(kHidden), device.c_str(),
      client->GetPlatformName().c_str());

  if (!PluginCompiles(*client, device)) {
    std::fprintf(stderr,
                 "train_mlp: the plugin's PJRT_Client_Compile is "
                 "UNIMPLEMENTED: it cannot run programs yet\n");
    return 3;
  }
  // The probe is not part of the job: its crossings are left out.
  client->metrics().Clear();

  std::vector<int> donated;
  auto program = BuildTrainStep(flags.learning_rate, &donated);
  if (!program.ok()) {
    std::fprintf(stderr, "train_mlp: building the step: %s\n",
                 program.status().ToString().c_str());
    return 1;
  }
  std::vector<float> x, t;
  MakeDataSet(x, t);
  std::vector<std::vector<float>> initial = InitialParameters();
  std::vector<TensorSource> sources = {
      {Shape(F32, {kInputs, kHidden}), initial[0].data(), device},
      {Shape(F32, {kHidden}), initial[1].data(), device},
      {Shape(F32, {kHidden, 1}), initial[2].data(), device},
      {Shape(F32, {1}), initial[3].data(), device},
      {Shape(F32, {kSamples, kInputs}), x.data(), device},
      {Shape(F32, {kSamples, 1}), t.data(), device}};
  // Crossing 1: parameters and data go down once.
  auto on_device = client->TransferToDevice(sources);
  if (!on_device.ok()) {
    std::fprintf(stderr, "train_mlp: %s\n",
                 on_device.status().ToString().c_str());
    return 1;
  }
  std::vector<DataPtr> parameters(on_device->begin(), on_device->begin() + 4);
  DataPtr inputs = (*on_device)[4];
  DataPtr targets = (*on_device)[5];

  // Crossing 2: the program goes down once.
  std::vector<CompileInstance> instances(1);
  instances[0].program = *program;
  instances[0].name = "train_step";
  instances[0].compilation_device = device;
  instances[0].donated_parameters = donated;
  auto computations = client->Compile(std::move(instances));
  if (!computations.ok()) {
    std::fprintf(stderr, "train_mlp: %s\n",
                 computations.status().ToString().c_str());
    return 1;
  }
  const Computation& step = *(*computations)[0];

  float first_loss = NAN;
  float last_loss = NAN;
  for (int i = 1; i <= flags.steps; ++i) {
    // Crossing 3, every step: returns at once; outputs are ready later.
    std::vector<DataPtr> arguments = parameters;
    arguments.push_back(inputs);
    arguments.push_back(targets);
    auto outputs = client->ExecuteComputation(step, arguments, device);
    if (!outputs.ok()) {
      std::fprintf(stderr, "train_mlp: step %d: %s\n", i,
                   outputs.status().ToString().c_str());
      return 1;
    }
    parameters.assign(outputs->begin(), outputs->begin() + 4);
    if (i == 1 || i % flags.print_every == 0 || i == flags.steps) {
      // Crossing 4, now and then: the loss comes back (this waits).
      auto loss = ReadLoss(*client, (*outputs)[4]);
      if (!loss.ok()) {
        std::fprintf(stderr, "train_mlp: step %d: %s\n", i,
                     loss.status().ToString().c_str());
        return 1;
      }
      if (i == 1) first_loss = *loss;
      last_loss = *loss;
      std::printf("step %4d  loss %.6f\n", i, *loss);
    }
  }
  Status waited = client->WaitDeviceOps({});
  if (!waited.ok()) {
    std::fprintf(stderr, "train_mlp: %s\n", waited.ToString().c_str());
    return 1;
  }
  std::printf("loss %.6f -> %.6f over %d steps\n\n", first_loss, last_loss,
              flags.steps);
  std::printf("%s", client->metrics().Report().c_str());
  if (flags.json) std::printf("%s\n", client->metrics().ReportJson().c_str());
  if (flags.check && !(last_loss < 0.5f * first_loss)) {
    std::fprintf(stderr,
                 "train_mlp: the loss did not fall by half (%.6f -> %.6f)\n",
                 first_loss, last_loss);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) return nullptr;
      return argv[++i];
    };
    if (arg == "--plugin" || arg == "--device" || arg == "--steps" ||
        arg == "--learning-rate" || arg == "--print-every") {
      const char* text = value(arg.c_str());
      if (text == nullptr) return Usage(("missing value after " + arg).c_str());
      if (arg == "--plugin") {
        flags.plugin = text;
      } else if (arg == "--device") {
        flags.device = text;
      } else if (arg == "--learning-rate") {
        auto rate = ParseDouble(text);
        if (!rate || !(*rate > 0)) return Usage("bad --learning-rate");
        flags.learning_rate = *rate;
      } else {
        auto count = ParseInt64(text);
        if (!count || *count < 1 || *count > 1000000) {
          return Usage(("bad " + arg).c_str());
        }
        (arg == "--steps" ? flags.steps : flags.print_every) =
            static_cast<int>(*count);
      }
    } else if (arg == "--json") {
      flags.json = true;
    } else if (arg == "--check") {
      flags.check = true;
    } else {
      return Usage(("unknown argument " + arg).c_str());
    }
  }
  return Train(flags);
}
