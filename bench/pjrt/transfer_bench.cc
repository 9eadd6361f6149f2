// Round trips host -> buffer -> host through libpjrt_kiln.so (loaded with
// dlopen from ../lib next to this binary), and device-to-device copies.
//
//   build/bin/pjrt_transfer_bench
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pjrt_c_api.h"

namespace {

const PJRT_Api* Api() {
  static const PJRT_Api* api = [] {
    char self[PATH_MAX] = {};
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    std::string dir = n > 0 ? std::string(self, n) : std::string("./x");
    dir = dir.substr(0, dir.rfind('/'));
    std::string path = dir + "/../lib/libpjrt_kiln.so";
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "dlopen(%s): %s\n", path.c_str(), dlerror());
      std::exit(1);
    }
    auto get =
        reinterpret_cast<const PJRT_Api* (*)()>(dlsym(library, "GetPjrtApi"));
    return get();
  }();
  return api;
}

void Check(PJRT_Error* error) {
  if (error == nullptr) return;
  PJRT_Error_Message_Args message{PJRT_Error_Message_Args_STRUCT_SIZE, nullptr,
                                  error, nullptr, 0};
  Api()->PJRT_Error_Message(&message);
  std::fprintf(stderr, "PJRT error: %.*s\n",
               static_cast<int>(message.message_size), message.message);
  std::exit(1);
}

void AwaitAndDestroy(PJRT_Event* event) {
  PJRT_Event_Await_Args await{PJRT_Event_Await_Args_STRUCT_SIZE, nullptr,
                              event};
  Check(Api()->PJRT_Event_Await(&await));
  PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr,
                                  event};
  Check(Api()->PJRT_Event_Destroy(&destroy));
}

struct Client {
  PJRT_Client* client = nullptr;
  std::vector<PJRT_Device*> devices;
  Client() {
    PJRT_NamedValue option{};
    option.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    option.name = "cpu_device_count";
    option.name_size = 16;
    option.type = PJRT_NamedValue_kInt64;
    option.int64_value = 2;
    option.value_size = 1;
    PJRT_Client_Create_Args args{};
    args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
    args.create_options = &option;
    args.num_options = 1;
    Check(Api()->PJRT_Client_Create(&args));
    client = args.client;
    PJRT_Client_Devices_Args list{};
    list.struct_size = PJRT_Client_Devices_Args_STRUCT_SIZE;
    list.client = client;
    Check(Api()->PJRT_Client_Devices(&list));
    devices.assign(list.devices, list.devices + list.num_devices);
  }
  ~Client() {
    PJRT_Client_Destroy_Args args{PJRT_Client_Destroy_Args_STRUCT_SIZE, nullptr,
                                  client};
    Check(Api()->PJRT_Client_Destroy(&args));
  }
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

void Destroy(PJRT_Buffer* buffer) {
  PJRT_Buffer_Destroy_Args args{PJRT_Buffer_Destroy_Args_STRUCT_SIZE, nullptr,
                                buffer};
  Check(Api()->PJRT_Buffer_Destroy(&args));
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
