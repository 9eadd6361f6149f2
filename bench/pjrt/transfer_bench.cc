// Round trips host -> buffer -> host through libpjrt_kiln.so (loaded with
// dlopen from ../lib next to this binary), and device-to-device copies.
//
//   build/bin/pjrt_transfer_bench
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_plugin.h"

namespace {

using kiln::bench::Api;
using kiln::bench::AwaitAndDestroy;
using kiln::bench::Check;
using kiln::bench::Destroy;

// The benchmarks' client: two devices, for the copies between them.
struct Client : kiln::bench::PluginClient {
  Client() : PluginClient(2) {}
};

// Returns the buffer; `done` gets the done_with_host_buffer event, which for
// zero-copy uploads fires only once the buffer is gone.
PJRT_Buffer* Upload(Client& c, const std::vector<float>& values,
                    PJRT_HostBufferSemantics semantics, PJRT_Event** done) {
  int64_t dims[1] = {static_cast<int64_t>(values.size())};
  PJRT_Client_BufferFromHostBuffer_Args args{};
  args.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
  args.client = c.client;
  args.data = values.data();
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims;
  args.num_dims = 1;
  args.host_buffer_semantics = semantics;
  args.device = c.devices[0];
  Check(Api()->PJRT_Client_BufferFromHostBuffer(&args));
  *done = args.done_with_host_buffer;
  return args.buffer;
}

void Download(PJRT_Buffer* buffer, std::vector<float>& out) {
  PJRT_Buffer_ToHostBuffer_Args args{};
  args.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE;
  args.src = buffer;
  args.dst = out.data();
  args.dst_size = out.size() * sizeof(float);
  Check(Api()->PJRT_Buffer_ToHostBuffer(&args));
  AwaitAndDestroy(args.event);
}

void BM_RoundTrip(benchmark::State& state) {
  Client c;
  std::vector<float> values(state.range(0), 1.5f), out(state.range(0));
  const auto semantics = static_cast<PJRT_HostBufferSemantics>(state.range(1));
  for (auto _ : state) {
    PJRT_Event* done = nullptr;
    PJRT_Buffer* buffer = Upload(c, values, semantics, &done);
    Download(buffer, out);
    Destroy(buffer);
    AwaitAndDestroy(done);
  }
  state.SetBytesProcessed(state.iterations() * 2 * values.size() *
                          sizeof(float));
}
BENCHMARK(BM_RoundTrip)
    ->ArgNames({"elements", "semantics"})
    ->ArgsProduct({{1, 1 << 10, 1 << 20}, {0, 1, 2}})
    ->UseRealTime();  // the copies run on device threads

void BM_CopyToDevice(benchmark::State& state) {
  Client c;
  std::vector<float> values(state.range(0), 2.5f);
  PJRT_Event* done = nullptr;
  PJRT_Buffer* source = Upload(
      c, values, PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, &done);
  AwaitAndDestroy(done);
  for (auto _ : state) {
    PJRT_Buffer_CopyToDevice_Args args{};
    args.struct_size = PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE;
    args.buffer = source;
    args.dst_device = c.devices[1];
    Check(Api()->PJRT_Buffer_CopyToDevice(&args));
    PJRT_Buffer_ReadyEvent_Args ready{};
    ready.struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE;
    ready.buffer = args.dst_buffer;
    Check(Api()->PJRT_Buffer_ReadyEvent(&ready));
    AwaitAndDestroy(ready.event);
    Destroy(args.dst_buffer);
  }
  Destroy(source);
  state.SetBytesProcessed(state.iterations() * values.size() * sizeof(float));
}
BENCHMARK(BM_CopyToDevice)->Arg(1)->Arg(1 << 10)->Arg(1 << 20)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
