// `kiln bench`: measures the seam's crossings through Kiln's client against
// any plugin: host-to-device and device-to-host transfers, compiling a tiny
// program, and the round trip of executing it (execute, then wait for the
// device), then prints the client's metrics report.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/strings.h"
#include "kiln/builder.h"
#include "kiln/pjrt_computation_client.h"
#include "tools/kiln/command.h"
#include "tools/kiln/plugin_choice.h"

namespace kiln::cli {
namespace {

using client::ComputationPtr;
using client::DataPtr;
using client::NamedValue;
using client::PjrtComputationClient;
using client::PjrtComputationClientOptions;
using client::Shape;
using client::TensorSource;
constexpr PJRT_Buffer_Type F32 = PJRT_Buffer_Type_F32;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// add two 4-element f32 vectors: the smallest useful program.
std::string TinyProgram() {
  client::ProgramBuilder b("add4");
  client::Value x = b.Parameter(Shape(F32, {4}));
  client::Value y = b.Parameter(Shape(F32, {4}));
  client::Value outputs[] = {x + y};
  return *b.Build(outputs);
}

Status BenchTransfers(PjrtComputationClient& client, const std::string& device,
                      int64_t bytes, int iterations) {
  std::vector<float> host(bytes / sizeof(float), 1.0f);
  TensorSource source{Shape(F32, {static_cast<int64_t>(host.size())}),
                      host.data(), device};
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    ASSIGN_OR_RETURN(std::vector<DataPtr> data,
                     client.TransferToDevice({&source, 1}));
    RETURN_IF_ERROR(client.TransferFromDevice(data).status());
  }
  double seconds = SecondsSince(start);
  double megabytes = 2.0 * iterations * source.shape.ByteSize() / 1e6;
  std::printf("transfer round trip of %s: %.1f us each, %.1f MB/s\n",
              client::FormatBytes(source.shape.ByteSize()).c_str(),
              seconds / iterations * 1e6, megabytes / seconds);
  return OkStatus();
}

Status BenchExecute(PjrtComputationClient& client, const std::string& device,
                    int iterations) {
  std::vector<client::CompileInstance> instances(1);
  instances[0].program = TinyProgram();
  instances[0].name = "add4";
  instances[0].compilation_device = device;
  auto start = std::chrono::steady_clock::now();
  auto compiled = client.Compile(instances);
  if (!compiled.ok() &&
      compiled.status().code() == StatusCode::kUnimplemented) {
    std::printf("compile and execute: skipped (%s)\n",
                compiled.status().ToString().c_str());
    return OkStatus();
  }
  RETURN_IF_ERROR(compiled.status());
  std::printf("compile of add4: %.3f ms\n", SecondsSince(start) * 1e3);
  start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(client.Compile(instances).status());
  std::printf("cached compile of add4: %.3f us\n", SecondsSince(start) * 1e6);

  const float a[4] = {1, 2, 3, 4};
  TensorSource sources[] = {{Shape(F32, {4}), a, device},
                            {Shape(F32, {4}), a, device}};
  ASSIGN_OR_RETURN(std::vector<DataPtr> arguments,
                   client.TransferToDevice(sources));
  const ComputationPtr& add = (*compiled)[0];
  std::string devices[] = {device};
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    RETURN_IF_ERROR(
        client.ExecuteComputation(*add, arguments, device).status());
    RETURN_IF_ERROR(client.WaitDeviceOps(devices));
  }
  std::printf("execute round trip of add4 (execute, wait): %.2f us each\n",
              SecondsSince(start) / iterations * 1e6);
  return OkStatus();
}

int RunBench(Arguments& args) {
  std::optional<std::string> plugin = args.TakeFlag("plugin");
  std::optional<std::string> device = args.TakeFlag("device");
  std::optional<std::string> devices = args.TakeFlag("devices");
  std::optional<std::string> iterations_flag = args.TakeFlag("iterations");
  std::optional<std::string> bytes_flag = args.TakeFlag("bytes");
  bool json = args.TakeSwitch("json");
  if (!args.RejectUnknownFlags("bench")) return 2;
  int64_t iterations = ParseInt64(iterations_flag.value_or("1000")).value_or(0);
  int64_t bytes = ParseInt64(bytes_flag.value_or("1048576")).value_or(0);
  if (iterations < 1 || iterations > 100000000 || bytes < 4 ||
      bytes > (int64_t{1} << 32)) {
    std::fprintf(stderr,
                 "kiln bench: --iterations takes 1 to 1e8, --bytes 4 to "
                 "2^32\n");
    return 2;
  }
  auto plugin_path = ChoosePlugin(plugin, device);
  if (!plugin_path.ok()) {
    std::fprintf(stderr, "kiln bench: %s\n",
                 plugin_path.status().ToString().c_str());
    return 1;
  }
  PjrtComputationClientOptions options;
  options.plugin_path = *plugin_path;
  if (devices) {
    auto count = ParseInt64(*devices);
    if (!count || *count < 1) {
      std::fprintf(stderr, "kiln bench: --devices takes a positive count\n");
      return 2;
    }
    options.create_options.push_back(
        {"cpu_device_count", NamedValue::Value(*count)});
  }
  auto client = PjrtComputationClient::Create(std::move(options));
  if (!client.ok()) {
    std::fprintf(stderr, "kiln bench: %s\n",
                 client.status().ToString().c_str());
    return 1;
  }
  std::string target = device ? *device : (*client)->GetDefaultDevice();
  std::printf("kiln bench: %s on %s, %lld iterations\n",
              (*client)->pjrt_client().plugin().path().c_str(), target.c_str(),
              static_cast<long long>(iterations));
  // Large transfers get fewer iterations: about 1 GB moved in all.
  int transfer_iterations = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(iterations, (1 << 30) / bytes)));
  Status status = BenchTransfers(**client, target, bytes, transfer_iterations);
  if (status.ok()) {
    status = BenchExecute(**client, target, static_cast<int>(iterations));
  }
  if (!status.ok()) {
    std::fprintf(stderr, "kiln bench: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("\n%s", json ? ((*client)->metrics().ReportJson() + "\n").c_str()
                           : (*client)->metrics().Report().c_str());
  return 0;
}

}  // namespace

KILN_REGISTER_COMMAND(bench, "bench",
                      "bench [--plugin PATH|--device NAME] [--devices N] "
                      "[--iterations N] [--bytes N] [--json]",
                      "time transfers, compile and execute through the client",
                      RunBench);

}  // namespace kiln::cli
