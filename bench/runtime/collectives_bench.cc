// In-process collectives through the runtime, beside the machine's memcpy
// bandwidth measured in the same run:
//
//   BM_AllReduce/<devices>/<MiB>  one launch of an f32 sum all_reduce over
//                                 every device, inputs already on the
//                                 devices; bytes_per_second counts one
//                                 participant's input per launch (NCCL's
//                                 "algorithm bandwidth")
//   BM_AllReducePlan/<devices>/<MiB>
//                                 the same all_reduce as plans run by
//                                 exec::Execute on one thread per
//                                 participant, into outputs allocated and
//                                 touched once: the collective without the
//                                 runtime's fresh output buffers (whose
//                                 first touch costs page faults)
//   BM_Memcpy/<MiB>               std::memcpy of the same bytes between two
//                                 buffers touched before
//
//   build/bin/collectives_bench --benchmark_filter='AllReduce/8/64|Memcpy/64'
//
// An all_reduce over N participants reads N inputs and writes N outputs:
// N times the bytes of one memcpy, spread over the participants' threads.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <thread>

#include "compile/compiler.h"
#include "exec/collectives.h"
#include "exec/executor.h"
#include "parse/parse.h"
#include "runtime/client.h"
#include "runtime/device.h"
#include "runtime/executable.h"
#include "runtime/transfer.h"

namespace {

using namespace kiln;
using namespace kiln::runtime;

void Check(const Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    std::abort();
  }
}

template <typename T>
T Take(StatusOr<T> value) {
  Check(value.status());
  return std::move(value).value();
}

std::string AllReduceProgram(int devices, int64_t elements) {
  std::string ids;
  for (int i = 0; i < devices; ++i) ids += (i ? ", " : "") + std::to_string(i);
  std::string type = "tensor<" + std::to_string(elements) + "xf32>";
  return "func.func @main(%x: " + type + ") -> " + type +
         " {\n"
         "  %r = \"stablehlo.all_reduce\"(%x) ({\n"
         "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
         "      %s = stablehlo.add %a, %b : tensor<f32>\n"
         "      stablehlo.return %s : tensor<f32>\n"
         "  }) {replica_groups = dense<[[" +
         ids + "]]> : tensor<1x" + std::to_string(devices) + "xi64>} : (" +
         type + ") -> " + type +
         "\n"
         "  return %r : " +
         type + "\n}\n";
}

void BM_AllReduce(benchmark::State& state) {
  const int devices = static_cast<int>(state.range(0));
  const int64_t bytes = state.range(1) << 20;
  const int64_t elements = bytes / 4;
  ClientOptions options;
  options.device_count = devices;
  auto client = Take(Client::Create(options));
  CompileSpec spec;
  spec.num_replicas = devices;
  auto executable = Take(
      Executable::Compile(*client, AllReduceProgram(devices, elements), spec));
  std::vector<float> host(elements, 1.0f);
  const Shape shape =
      Take(Shape::Make(DType::kF32, std::vector<int64_t>{elements}));
  std::vector<std::shared_ptr<Buffer>> inputs;
  for (int p = 0; p < devices; ++p) {
    Device* device = executable->addressable_devices()[p];
    inputs.push_back(
        Take(TransferFromHost(host.data(), shape, std::nullopt,
                              HostBufferSemantics::kImmutableOnlyDuringCall,
                              device->default_memory_space()))
            .buffer);
    Check(inputs.back()->ready_event()->Await());
  }
  for (auto _ : state) {
    std::vector<ExecuteRequest> requests(devices);
    for (int p = 0; p < devices; ++p) {
      requests[p].position = p;
      requests[p].arguments = {inputs[p]};
    }
    auto results = Take(executable->ExecuteLaunch(std::move(requests)));
    for (const ExecuteResult& result : results) Check(result.done->Await());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_AllReduce)
    ->Args({2, 64})
    ->Args({8, 1})
    ->Args({8, 64})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Hands out one buffer allocated (and touched) once.
class FixedOutput : public exec::OutputAllocator {
 public:
  explicit FixedOutput(int64_t bytes)
      : buffer_(Take(exec::AllocateAligned(bytes))) {
    std::memset(buffer_.data(), 0, bytes);
  }
  StatusOr<void*> Allocate(int, const exec::ValueSpec&) override {
    return static_cast<void*>(buffer_.data());
  }

 private:
  exec::AlignedBuffer buffer_;
};

void BM_AllReducePlan(benchmark::State& state) {
  const int devices = static_cast<int>(state.range(0));
  const int64_t bytes = state.range(1) << 20;
  const int64_t elements = bytes / 4;
  auto module = Take(parse::ParseModule(AllReduceProgram(devices, elements),
                                        "all_reduce.mlir"));
  compile::CompileOptions options;
  options.position.num_replicas = devices;
  auto plan = Take(compile::Compile(*module, options));
  std::vector<std::vector<float>> inputs(devices,
                                         std::vector<float>(elements, 1.0f));
  std::vector<std::unique_ptr<FixedOutput>> outputs;
  for (int p = 0; p < devices; ++p) {
    outputs.push_back(std::make_unique<FixedOutput>(bytes));
  }
  for (auto _ : state) {
    exec::Communicator communicator(devices, std::chrono::seconds(60));
    std::vector<std::thread> threads;
    for (int p = 0; p < devices; ++p) {
      threads.emplace_back([&, p] {
        const void* argument = inputs[p].data();
        exec::RunOptions run;
        run.communicator = &communicator;
        run.participant = p;
        Check(exec::Execute(*plan, {&argument, 1}, *outputs[p], run).status());
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_AllReducePlan)
    ->Args({8, 64})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Memcpy(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20;
  std::vector<char> source(bytes, 1), target(bytes, 0);
  for (auto _ : state) {
    std::memcpy(target.data(), source.data(), bytes);
    benchmark::DoNotOptimize(target.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_Memcpy)->Arg(1)->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
