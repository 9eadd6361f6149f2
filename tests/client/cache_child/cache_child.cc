// A separate process for the persistent compile cache test: compiles the
// @sum program with an on-disk cache, runs it once on the default device,
// and prints the cache counters and the result on one line.
//   cache_child PLUGIN CACHE_DIR
#include <cstdio>

#include "../sum_program.h"
#include "base/strings.h"
#include "kiln/pjrt_computation_client.h"

using namespace kiln;
using namespace kiln::client;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cache_child PLUGIN CACHE_DIR\n");
    return 2;
  }
  PjrtComputationClientOptions options;
  options.plugin_path = argv[1];
  options.persistent_cache_path = argv[2];
  auto client = PjrtComputationClient::Create(options);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 1;
  }
  std::vector<CompileInstance> instances(1);
  instances[0].program = testing::SumProgram({2, 3}, 2);
  auto computations = (*client)->Compile(std::move(instances));
  if (!computations.ok()) {
    std::fprintf(stderr, "%s\n", computations.status().ToString().c_str());
    return 1;
  }
  std::string device = (*client)->GetDefaultDevice();
  std::vector<float> x = testing::ChildX(), w = testing::ChildW();
  TensorSource sources[] = {
      {Shape(PJRT_Buffer_Type_F32, {2, 3}), x.data(), device},
      {Shape(PJRT_Buffer_Type_F32, {2, 3}), w.data(), device}};
  auto inputs = (*client)->TransferToDevice(sources);
  if (!inputs.ok()) return 1;
  auto outputs =
      (*client)->ExecuteComputation(*(*computations)[0], *inputs, device);
  if (!outputs.ok()) {
    std::fprintf(stderr, "%s\n", outputs.status().ToString().c_str());
    return 1;
  }
  auto values = (*client)->TransferFromDevice(*outputs);
  if (!values.ok()) return 1;
  const Metrics& metrics = (*client)->metrics();
  namespace names = metric_names;
  std::printf(
      "hit=%lld miss=%lld refused=%lld uncached=%lld y=[%s]\n",
      static_cast<long long>(metrics.CounterValue(names::kPersistentCacheHit)),
      static_cast<long long>(metrics.CounterValue(names::kPersistentCacheMiss)),
      static_cast<long long>(
          metrics.CounterValue(names::kPersistentCacheRefused)),
      static_cast<long long>(metrics.CounterValue(names::kUncachedCompile)),
      StrJoin((*values)[0].ToVector<float>(), ",").c_str());
  return 0;
}
