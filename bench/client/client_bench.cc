// Costs of the client: recording a metric sample, writing the main job's
// training step with the builder, and the crossings of the seam through
// Kiln's plugin (transfer round trips; execute round trip and cached
// compile where the plugin compiles).
//
//   build/bin/client_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <memory>

#include "examples/mlp_model.h"
#include "kiln/builder.h"
#include "kiln/pjrt_computation_client.h"

namespace kiln::client {
namespace {

constexpr PJRT_Buffer_Type F32 = PJRT_Buffer_Type_F32;

// One client for every benchmark of the process (null if the plugin is
// missing).
PjrtComputationClient* SharedClient() {
  static PjrtComputationClient* client = [] {
    auto path = FindKilnPlugin();
    if (!path.ok()) return static_cast<PjrtComputationClient*>(nullptr);
    PjrtComputationClientOptions options;
    options.plugin_path = *path;
    auto created = PjrtComputationClient::Create(options);
    return created.ok() ? created->release() : nullptr;
  }();
  return client;
}

void BM_MetricSample(benchmark::State& state) {
  Metrics metrics;
  Metric& metric = metrics.GetMetric("m", MetricUnit::kNanoseconds);
  for (auto _ : state) {
    ScopedTimer timer(metric);
  }
}
BENCHMARK(BM_MetricSample);

void BM_BuildTrainStep(benchmark::State& state) {
  std::vector<int> donated;
  for (auto _ : state) {
    benchmark::DoNotOptimize(examples::BuildTrainStep(0.1, &donated));
  }
}
BENCHMARK(BM_BuildTrainStep);

void BM_TransferRoundTrip(benchmark::State& state) {
  PjrtComputationClient* client = SharedClient();
  if (client == nullptr) {
    state.SkipWithError("Kiln's plugin was not found");
    return;
  }
  std::vector<float> host(state.range(0) / sizeof(float), 1.0f);
  TensorSource source{Shape(F32, {static_cast<int64_t>(host.size())}),
                      host.data(), client->GetDefaultDevice()};
  for (auto _ : state) {
    auto data = client->TransferToDevice({&source, 1});
    auto back = client->TransferFromDevice(*data);
    benchmark::DoNotOptimize(back);
  }
  state.SetBytesProcessed(2 * state.iterations() * state.range(0));
}
BENCHMARK(BM_TransferRoundTrip)->Arg(16)->Arg(4096)->Arg(1 << 20);

// add two f32[4]: execute, then wait for the device.
void BM_ExecuteRoundTrip(benchmark::State& state) {
  PjrtComputationClient* client = SharedClient();
  if (client == nullptr) {
    state.SkipWithError("Kiln's plugin was not found");
    return;
  }
  ProgramBuilder b("add4");
  Value x = b.Parameter(Shape(F32, {4}));
  Value y = b.Parameter(Shape(F32, {4}));
  Value outputs[] = {x + y};
  std::vector<CompileInstance> instances(1);
  instances[0].program = *b.Build(outputs);
  auto computations = client->Compile(instances);
  if (!computations.ok()) {
    state.SkipWithError(computations.status().ToString().c_str());
    return;
  }
  const float a[4] = {1, 2, 3, 4};
  std::string device = client->GetDefaultDevice();
  TensorSource sources[] = {{Shape(F32, {4}), a, device},
                            {Shape(F32, {4}), a, device}};
  auto arguments = client->TransferToDevice(sources);
  std::string devices[] = {device};
  for (auto _ : state) {
    auto result =
        client->ExecuteComputation(*(*computations)[0], *arguments, device);
    benchmark::DoNotOptimize(result);
    (void)client->WaitDeviceOps(devices);
  }
  state.counters["cached_compile_us"] = [&] {
    auto start = MetricNowNanos();
    (void)client->Compile(instances);
    return (MetricNowNanos() - start) / 1e3;
  }();
}
BENCHMARK(BM_ExecuteRoundTrip)->UseRealTime();

}  // namespace
}  // namespace kiln::client

BENCHMARK_MAIN();
