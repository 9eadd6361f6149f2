// train_mlp: Kiln's main job. Builds a small multilayer perceptron with the
// program builder (mlp_model.cc: forward pass, hand-written gradient, SGD
// update, all in one StableHLO program), then trains it on a synthetic
// regression set through ComputationClient and a PJRT plugin. The parameters
// stay on the device between steps and are donated to each step; the loss is
// read back now and then; the metrics report at the end shows one compile, one
// execute per step, and the transfers.
//
//   train_mlp [--plugin PATH] [--device NAME] [--steps N]
//             [--learning-rate X] [--print-every N] [--json] [--check]
//   train_mlp --print-program     (prints the training step's StableHLO)
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
#include "examples/mlp_model.h"
#include "kiln/builder.h"
#include "kiln/pjrt_computation_client.h"

namespace {

using namespace kiln;
using namespace kiln::client;

constexpr PJRT_Buffer_Type F32 = PJRT_Buffer_Type_F32;

using examples::BuildTrainStep;
using examples::InitialParameters;
using examples::kHidden;
using examples::kInputs;
using examples::kSamples;
using examples::MakeDataSet;

struct Flags {
  std::string plugin;
  std::string device;
  int steps = 300;
  double learning_rate = 0.1;
  int print_every = 25;
  bool json = false;
  bool check = false;
  bool print_program = false;
};

int Usage(const char* problem) {
  std::fprintf(stderr,
               "train_mlp: %s\nusage: train_mlp [--plugin PATH] [--device "
               "NAME] [--steps N] [--learning-rate X] [--print-every N] "
               "[--json] [--check] | --print-program\n",
               problem);
  return 2;
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
    } else if (arg == "--print-program") {
      flags.print_program = true;
    } else {
      return Usage(("unknown argument " + arg).c_str());
    }
  }
  if (flags.print_program) {
    std::vector<int> donated;
    auto program = BuildTrainStep(flags.learning_rate, &donated);
    if (!program.ok()) {
      std::fprintf(stderr, "train_mlp: %s\n",
                   program.status().ToString().c_str());
      return 1;
    }
    std::printf("%s", program->c_str());
    return 0;
  }
  return Train(flags);
}
