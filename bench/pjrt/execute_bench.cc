// Compiling and executing through libpjrt_kiln.so (loaded with dlopen from
// ../lib next to this binary), as a framework does:
//
//   BM_ExecuteTinyRoundTrip   Execute of f32[4] + f32[4] with the inputs
//                             already on the device, then await the
//                             output's ready event (jax's dispatch of a
//                             small jitted function)
//   BM_HostRoundTrip16Bytes   the peer in the same run: the same 16 bytes
//                             uploaded and read back (BufferFromHostBuffer
//                             + ToHostBuffer); the machine is noisy, so
//                             read the ratio of the two
//   BM_ExecuteQueuedRoundTrip a 16x16 matmul, large enough to run on the
//                             device's queue thread instead of the caller's
//   BM_Compile/<model>        PJRT_Client_Compile of each program of
//                             shared/corpus/models ($KILN_SHARED_DIR;
//                             ResNet-50's elided weights become splats)
//
//   build/bin/pjrt_execute_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_plugin.h"
#include "proto/xla_compile_options.pb.h"

namespace {

using kiln::bench::Api;
using kiln::bench::AwaitAndDestroy;
using kiln::bench::Check;
using kiln::bench::Destroy;
using kiln::bench::TakeMessage;

void Destroy(PJRT_LoadedExecutable* executable) {
  PJRT_LoadedExecutable_Destroy_Args args{
      PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE, nullptr, executable};
  Check(Api()->PJRT_LoadedExecutable_Destroy(&args));
}

// jax's options for a jit on device 0: 1 replica, 1 partition.
std::string CompileOptions() {
  xla::CompileOptionsProto proto;
  proto.set_profile_version(-1);
  auto* build = proto.mutable_executable_build_options();
  build->set_device_ordinal(-1);
  build->set_num_replicas(1);
  build->set_num_partitions(1);
  build->set_use_spmd_partitioning(true);
  auto* assignment = build->mutable_device_assignment();
  assignment->set_replica_count(1);
  assignment->set_computation_count(1);
  assignment->add_computation_devices()->add_replica_device_ids(0);
  return proto.SerializeAsString();
}

struct Client : kiln::bench::PluginClient {
  PJRT_Device* device = devices[0];

  // Compiles `code` (format "mlir"); on failure returns null and the
  // message in `error`.
  PJRT_LoadedExecutable* Compile(const std::string& code, std::string* error) {
    static const std::string options = CompileOptions();
    PJRT_Program program{};
    program.struct_size = PJRT_Program_STRUCT_SIZE;
    program.code = const_cast<char*>(code.data());
    program.code_size = code.size();
    program.format = "mlir";
    program.format_size = 4;
    PJRT_Client_Compile_Args args{};
    args.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
    args.client = client;
    args.program = &program;
    args.compile_options = options.data();
    args.compile_options_size = options.size();
    *error = TakeMessage(Api()->PJRT_Client_Compile(&args));
    return error->empty() ? args.executable : nullptr;
  }

  PJRT_Buffer* Upload(const std::vector<float>& values,
                      const std::vector<int64_t>& dims) {
    PJRT_Client_BufferFromHostBuffer_Args args{};
    args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
    args.client = client;
    args.data = values.data();
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims.data();
    args.num_dims = dims.size();
    args.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    args.device = device;
    Check(Api()->PJRT_Client_BufferFromHostBuffer(&args));
    AwaitAndDestroy(args.done_with_host_buffer);
    return args.buffer;
  }
};

// One Execute of a one-output program, as jax dispatches it (completion
// events requested), then the output's ready event awaited.
void ExecuteAndAwait(PJRT_LoadedExecutable* executable,
                     const std::vector<PJRT_Buffer*>& arguments) {
  PJRT_ExecuteOptions options{};
  options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  PJRT_Buffer* const* argument_list = arguments.data();
  PJRT_Buffer* output = nullptr;
  PJRT_Buffer** output_list = &output;
  PJRT_Event* complete = nullptr;
  PJRT_LoadedExecutable_Execute_Args args{};
  args.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
  args.executable = executable;
  args.options = &options;
  args.argument_lists = &argument_list;
  args.num_devices = 1;
  args.num_args = arguments.size();
  args.output_lists = &output_list;
  args.device_complete_events = &complete;
  Check(Api()->PJRT_LoadedExecutable_Execute(&args));
  PJRT_Buffer_ReadyEvent_Args ready{};
  ready.struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE;
  ready.buffer = output;
  Check(Api()->PJRT_Buffer_ReadyEvent(&ready));
  AwaitAndDestroy(ready.event);
  AwaitAndDestroy(complete);
  Destroy(output);
}

constexpr char kTinyAdd[] = R"mlir(
func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";

constexpr char kMatmul16[] = R"mlir(
func.func public @main(%arg0: tensor<16x16xf32>, %arg1: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
)mlir";

void RunProgram(benchmark::State& state, const char* code,
                const std::vector<int64_t>& dims) {
  Client c;
  std::string error;
  PJRT_LoadedExecutable* executable = c.Compile(code, &error);
  if (executable == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  std::vector<float> values(elements, 1.25f);
  std::vector<PJRT_Buffer*> arguments = {c.Upload(values, dims),
                                         c.Upload(values, dims)};
  for (auto _ : state) ExecuteAndAwait(executable, arguments);
  for (PJRT_Buffer* buffer : arguments) Destroy(buffer);
  Destroy(executable);
}

void BM_ExecuteTinyRoundTrip(benchmark::State& state) {
  RunProgram(state, kTinyAdd, {4});
}
BENCHMARK(BM_ExecuteTinyRoundTrip)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_ExecuteQueuedRoundTrip(benchmark::State& state) {
  RunProgram(state, kMatmul16, {16, 16});
}
BENCHMARK(BM_ExecuteQueuedRoundTrip)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_HostRoundTrip16Bytes(benchmark::State& state) {
  Client c;
  std::vector<float> values = {1, 2, 3, 4}, out(4);
  for (auto _ : state) {
    PJRT_Buffer* buffer = c.Upload(values, {4});
    PJRT_Buffer_ToHostBuffer_Args args{};
    args.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
    args.src = buffer;
    args.dst = out.data();
    args.dst_size = out.size() * sizeof(float);
    Check(Api()->PJRT_Buffer_ToHostBuffer(&args));
    AwaitAndDestroy(args.event);
    Destroy(buffer);
  }
}
BENCHMARK(BM_HostRoundTrip16Bytes)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

std::string SharedDir() {
  const char* env = std::getenv("KILN_SHARED_DIR");
  if (env != nullptr && *env != '\0') return env;
  return KILN_DEFAULT_SHARED_DIR;
}

// jax_resnet_50.mlir ships without its weights (`dense_resource<__elided__>`
// constants, whose blob is absent): each becomes a splat constant of its
// own type, so the program compiles. Splats may fold faster than real
// weights would.
std::string FillElidedWeights(std::string code) {
  const std::string elided = "dense_resource<__elided__>";
  const std::string splat = "dense<1.000000e-02>";
  for (size_t at = code.find(elided); at != std::string::npos;
       at = code.find(elided, at + splat.size())) {
    code.replace(at, elided.size(), splat);
  }
  return code;
}

void BM_Compile(benchmark::State& state, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    state.SkipWithError(("cannot read " + path).c_str());
    return;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string code = FillElidedWeights(text.str());
  Client c;
  for (auto _ : state) {
    std::string error;
    PJRT_LoadedExecutable* executable = c.Compile(code, &error);
    if (executable == nullptr) {
      state.SkipWithError(error.c_str());
      break;
    }
    state.PauseTiming();
    Destroy(executable);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * code.size());
}

}  // namespace

int main(int argc, char** argv) {
  for (const char* model :
       {"searchless_chess_9m.mlir", "searchless_chess_9m.mlir.bc",
        "jax_resnet_50.mlir"}) {
    std::string path = SharedDir() + "/corpus/models/" + model;
    benchmark::RegisterBenchmark(
        (std::string("BM_Compile/") + model).c_str(),
        [path](benchmark::State& state) { BM_Compile(state, path); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
