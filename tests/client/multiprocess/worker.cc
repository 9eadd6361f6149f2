#include "worker.h"

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "base/strings.h"
#include "kiln/compile_options.h"
#include "kiln/key_value_store.h"
#include "kiln/pjrt.h"
#include "kiln/pjrt_computation_client.h"
#include "kiln/plugin.h"

namespace kiln::multiprocess {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  std::map<std::string, std::string> values;
  std::string Get(const std::string& name, const std::string& fallback) const {
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
  }
  int64_t Int(const std::string& name, int64_t fallback) const {
    auto it = values.find(name);
    return it == values.end() ? fallback : std::atoll(it->second.c_str());
  }
};

// What one op computes: the program, and each device's input and expected
// output as doubles (exact for the values used: small integers and
// halves), stored as `type`.
struct OpCase {
  std::string program;
  PJRT_Buffer_Type type = PJRT_Buffer_Type_F32;
  std::vector<int64_t> input_dims;
  int64_t output_elements = 0;
};

int64_t ElementBytes(PJRT_Buffer_Type type) {
  return type == PJRT_Buffer_Type_F64 ? 8 : 4;
}

std::string TypeName(PJRT_Buffer_Type type) {
  switch (type) {
    case PJRT_Buffer_Type_F64:
      return "f64";
    case PJRT_Buffer_Type_S32:
      return "i32";
    default:
      return "f32";
  }
}

std::string Tensor(const std::vector<int64_t>& dims, const std::string& t) {
  std::string text = "tensor<";
  for (int64_t d : dims) text += StrCat(d, "x");
  return text + t + ">";
}

// The input element j of global device g.
double InputValue(const std::string& op, int g, int64_t j) {
  if (op == "all_reduce_max_i32") {
    return static_cast<double>((g * 31 + j * 17) % 10007) - 5000;
  }
  if (op == "all_reduce_f64") return (g + 1) * 0.5 + static_cast<double>(j);
  return static_cast<double>((g * 7 + j) % 1000);
}

std::string Groups(int replicas) {
  std::vector<int> ids;
  for (int i = 0; i < replicas; ++i) ids.push_back(i);
  return StrCat("dense<[[", StrJoin(ids, ", "), "]]> : tensor<1x", replicas,
                "xi64>");
}

std::string Region(const std::string& t, const std::string& combine) {
  return StrCat("({\n    ^bb0(%a: tensor<", t, ">, %b: tensor<", t,
                ">):\n      %s = stablehlo.", combine, " %a, %b : tensor<", t,
                ">\n      stablehlo.return %s : tensor<", t, ">\n  })");
}

StatusOr<OpCase> MakeCase(const std::string& op, int replicas, int64_t bytes) {
  OpCase c;
  if (op == "all_reduce_max_i32") c.type = PJRT_Buffer_Type_S32;
  if (op == "all_reduce_f64") c.type = PJRT_Buffer_Type_F64;
  const std::string t = TypeName(c.type);
  const int64_t n = bytes / ElementBytes(c.type);
  if (n <= 0 || n % (2 * replicas) != 0) {
    return InvalidArgumentError("bytes=", bytes, " must hold a multiple of ",
                                2 * replicas, " elements");
  }
  c.input_dims = {n};
  std::string in = Tensor({n}, t), out = in, body;
  const std::string groups = Groups(replicas);
  if (op == "all_reduce" || op == "all_reduce_f64" ||
      op == "all_reduce_max_i32") {
    c.output_elements = n;
    body = StrCat("\"stablehlo.all_reduce\"(%x) ",
                  Region(t, op == "all_reduce_max_i32" ? "maximum" : "add"),
                  " {replica_groups = ", groups, "}");
  } else if (op == "all_gather") {
    c.output_elements = n * replicas;
    out = Tensor({n * replicas}, t);
    body = StrCat("\"stablehlo.all_gather\"(%x) {all_gather_dim = 0 : i64, ",
                  "replica_groups = ", groups, "}");
  } else if (op == "all_to_all") {
    // [2, n/2] split along 1, concatenated along 0: the blocks are strided.
    c.input_dims = {2, n / 2};
    in = Tensor(c.input_dims, t);
    out = Tensor({2 * replicas, n / (2 * replicas)}, t);
    c.output_elements = n;
    body = StrCat("\"stablehlo.all_to_all\"(%x) {split_dimension = 1 : i64, ",
                  "concat_dimension = 0 : i64, split_count = ", replicas,
                  " : i64, replica_groups = ", groups, "}");
  } else if (op == "reduce_scatter") {
    c.output_elements = n / replicas;
    out = Tensor({n / replicas}, t);
    body =
        StrCat("\"stablehlo.reduce_scatter\"(%x) ", Region(t, "add"),
               " {scatter_dimension = 0 : i64, replica_groups = ", groups, "}");
  } else if (op == "permute") {
    std::vector<std::string> pairs;
    for (int r = 0; r < replicas; ++r) {
      pairs.push_back(StrCat("[", r, ", ", (r + 1) % replicas, "]"));
    }
    c.output_elements = n;
    body = StrCat("\"stablehlo.collective_permute\"(%x) {source_target_pairs ",
                  "= dense<[", StrJoin(pairs, ", "), "]> : tensor<", replicas,
                  "x2xi64>}");
  } else if (op == "broadcast") {
    c.output_elements = n;
    body = StrCat("\"stablehlo.collective_broadcast\"(%x) {replica_groups = ",
                  groups, "}");
  } else {
    return InvalidArgumentError("unknown op ", op);
  }
  c.program =
      StrCat("func.func @main(%x: ", in, ") -> ", out, " {\n  %r = ", body,
             " : (", in, ") -> ", out, "\n  return %r : ", out, "\n}\n");
  return c;
}

// Output element j of replica r, computed from the inputs directly.
double Expected(const std::string& op, int r, int replicas, int64_t n,
                int64_t j) {
  auto x = [&](int g, int64_t i) { return InputValue(op, g, i); };
  if (op == "all_reduce" || op == "all_reduce_f64") {
    double sum = 0;
    for (int g = 0; g < replicas; ++g) sum += x(g, j);
    return sum;
  }
  if (op == "all_reduce_max_i32") {
    double best = x(0, j);
    for (int g = 1; g < replicas; ++g) best = std::max(best, x(g, j));
    return best;
  }
  if (op == "all_gather") return x(static_cast<int>(j / n), j % n);
  if (op == "all_to_all") {
    // Output [2R, b] with b = n / (2R): row k*2 + a holds x_k[a][r*b + i].
    const int64_t b = n / (2 * replicas);
    const int64_t row = j / b, i = j % b;
    const int k = static_cast<int>(row / 2);
    const int64_t a = row % 2;
    return x(k, a * (n / 2) + r * b + i);
  }
  if (op == "reduce_scatter") {
    double sum = 0;
    for (int g = 0; g < replicas; ++g) sum += x(g, r * (n / replicas) + j);
    return sum;
  }
  if (op == "permute") return x((r - 1 + replicas) % replicas, j);
  return x(0, j);  // broadcast
}

std::vector<char> Encode(PJRT_Buffer_Type type,
                         const std::vector<double>& values) {
  std::vector<char> bytes(values.size() * ElementBytes(type));
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == PJRT_Buffer_Type_F64) {
      reinterpret_cast<double*>(bytes.data())[i] = values[i];
    } else if (type == PJRT_Buffer_Type_S32) {
      reinterpret_cast<int32_t*>(bytes.data())[i] =
          static_cast<int32_t>(values[i]);
    } else {
      reinterpret_cast<float*>(bytes.data())[i] = static_cast<float>(values[i]);
    }
  }
  return bytes;
}

double Decode(PJRT_Buffer_Type type, const std::vector<char>& bytes,
              int64_t i) {
  if (type == PJRT_Buffer_Type_F64) {
    return reinterpret_cast<const double*>(bytes.data())[i];
  }
  if (type == PJRT_Buffer_Type_S32) {
    return reinterpret_cast<const int32_t*>(bytes.data())[i];
  }
  return reinterpret_cast<const float*>(bytes.data())[i];
}

bool IsPeerFailure(const Status& status) {
  return status.code() == StatusCode::kUnavailable ||
         status.code() == StatusCode::kDeadlineExceeded;
}

int Fail(const std::string& what, const Status& status) {
  std::fprintf(stderr, "worker: %s: %s\n", what.c_str(),
               status.ToString().c_str());
  return 2;
}

int RunKiln(const Flags& flags) {
  const int process = static_cast<int>(flags.Int("process", 0));
  const int processes = static_cast<int>(flags.Int("processes", 1));
  const int devices = static_cast<int>(flags.Int("devices", 1));
  const int64_t bytes = flags.Int("bytes", 1024);
  const int64_t iterations = flags.Int("iterations", 1);
  const bool forever = flags.Int("forever", 0) != 0;
  const std::string op = flags.Get("op", "all_reduce");
  const std::string store_dir = flags.Get("store", "");
  const int replicas = processes * devices;

  auto store = client::FileKeyValueStore::Open(store_dir);
  if (!store.ok()) return Fail("store", store.status());
  auto plugin = client::Plugin::Load(flags.Get("plugin", ""));
  if (!plugin.ok()) return Fail("plugin", plugin.status());
  std::vector<client::NamedValue> options = {
      {"cpu_device_count", int64_t{devices}},
      {"num_nodes", int64_t{processes}},
      {"node_id", int64_t{process}},
      {"collective_timeout_seconds",
       static_cast<float>(flags.Int("timeout_s", 60))}};
  auto client = client::Client::Create(*plugin, options, *store);
  if (!client.ok()) return Fail("client", client.status());
  if (static_cast<int>((*client)->devices().size()) != replicas ||
      static_cast<int>((*client)->addressable_devices().size()) != devices ||
      (*client)->process_index() != process) {
    std::fprintf(stderr,
                 "worker: the client has %zu devices (%zu here) and "
                 "process index %d\n",
                 (*client)->devices().size(),
                 (*client)->addressable_devices().size(),
                 (*client)->process_index());
    return 1;
  }

  auto c = MakeCase(op, replicas, bytes);
  if (!c.ok()) return Fail("case", c.status());
  client::CompileOptions compile;
  compile.num_replicas = replicas;
  for (int g = 0; g < replicas; ++g) compile.device_ids.push_back(g);
  auto serialized = client::SerializeCompileOptions(compile);
  if (!serialized.ok()) return Fail("options", serialized.status());
  auto executable = (*client)->Compile(c->program, "mlir", *serialized);
  if (!executable.ok()) return Fail("compile", executable.status());

  const int64_t n = bytes / ElementBytes(c->type);
  const auto& local = (*executable)->addressable_devices();
  std::vector<int> replica_of;
  std::vector<std::unique_ptr<client::Buffer>> inputs;
  for (client::Device* device : local) {
    const int g = static_cast<int>(device->id());
    replica_of.push_back(g);
    std::vector<double> values(n);
    for (int64_t j = 0; j < n; ++j) values[j] = InputValue(op, g, j);
    std::vector<char> data = Encode(c->type, values);
    auto buffer = (*client)->BufferFromHost(
        data.data(), client::Shape(c->type, c->input_dims), device);
    if (!buffer.ok()) return Fail("buffer", buffer.status());
    inputs.push_back(std::move(*buffer));
  }
  std::vector<std::vector<client::Buffer*>> arguments;
  for (auto& buffer : inputs) arguments.push_back({buffer.get()});

  bool ready_written = false;
  double seconds = 0;
  for (int64_t it = 0; forever || it < iterations; ++it) {
    const auto start = Clock::now();
    auto result = (*executable)->Execute(arguments, client::ExecuteOptions{});
    Status status = result.status();
    if (result.ok()) {
      for (auto& done : result->device_complete) {
        Status one = done.Await();
        if (status.ok() && !one.ok()) status = one;
      }
    }
    if (!status.ok()) {
      std::fprintf(stderr, "worker %d: %s\n", process,
                   status.ToString().c_str());
      if (forever) return IsPeerFailure(status) ? 3 : 4;
      return 2;
    }
    if (it > 0 || iterations == 1) {
      seconds += std::chrono::duration<double>(Clock::now() - start).count();
    }
    if (forever && !ready_written) {
      std::ofstream(StrCat(store_dir, "/ready.", process)) << "ready";
      ready_written = true;
    }
    if (forever || it + 1 < iterations) continue;
    // Check the last run's outputs.
    for (size_t d = 0; d < local.size(); ++d) {
      std::vector<char> out(c->output_elements * ElementBytes(c->type));
      Status read = result->outputs[d][0]->ToHost(out.data(), out.size());
      if (!read.ok()) return Fail("read", read);
      for (int64_t j = 0; j < c->output_elements; ++j) {
        const double want = Expected(op, replica_of[d], replicas, n, j);
        const double got = Decode(c->type, out, j);
        if (got != want) {
          std::fprintf(stderr,
                       "worker %d: %s output of device %d element %lld is "
                       "%.17g, expected %.17g\n",
                       process, op.c_str(), replica_of[d],
                       static_cast<long long>(j), got, want);
          return 1;
        }
      }
    }
  }
  const int64_t timed = iterations > 1 ? iterations - 1 : 1;
  std::printf("seconds=%.9f\n", seconds / timed);
  return 0;
}

// The same job through the ComputationClient seam (PyTorch/XLA's way):
// compiled over every device of the job, run with ExecuteReplicated on
// this process's devices.
int RunReplicated(const Flags& flags) {
  const int process = static_cast<int>(flags.Int("process", 0));
  const int processes = static_cast<int>(flags.Int("processes", 1));
  const int devices = static_cast<int>(flags.Int("devices", 1));
  const int64_t bytes = flags.Int("bytes", 1024);
  const std::string op = flags.Get("op", "all_reduce");
  const int replicas = processes * devices;
  auto store = client::FileKeyValueStore::Open(flags.Get("store", ""));
  if (!store.ok()) return Fail("store", store.status());
  client::PjrtComputationClientOptions options;
  options.plugin_path = flags.Get("plugin", "");
  options.create_options = {{"cpu_device_count", int64_t{devices}},
                            {"num_nodes", int64_t{processes}},
                            {"node_id", int64_t{process}},
                            {"collective_timeout_seconds",
                             static_cast<float>(flags.Int("timeout_s", 60))}};
  options.key_value_store = *store;
  auto computation_client =
      client::PjrtComputationClient::Create(std::move(options));
  if (!computation_client.ok()) {
    return Fail("client", computation_client.status());
  }
  client::PjrtComputationClient& cc = **computation_client;
  auto c = MakeCase(op, replicas, bytes);
  if (!c.ok()) return Fail("case", c.status());
  client::CompileInstance instance;
  instance.program = c->program;
  instance.devices = cc.GetAllDevices();
  std::vector<client::CompileInstance> instances;
  instances.push_back(std::move(instance));
  auto computations = cc.Compile(std::move(instances));
  if (!computations.ok()) return Fail("compile", computations.status());
  const std::vector<std::string> local = cc.GetLocalDevices();
  const int64_t n = bytes / ElementBytes(c->type);
  std::vector<std::vector<char>> host(local.size());
  std::vector<std::vector<client::DataPtr>> arguments;
  std::vector<int> replica_of;
  for (size_t d = 0; d < local.size(); ++d) {
    auto device = cc.LookupDevice(local[d]);
    if (!device.ok()) return Fail("device", device.status());
    const int g = (*device)->id();
    replica_of.push_back(g);
    std::vector<double> values(n);
    for (int64_t j = 0; j < n; ++j) values[j] = InputValue(op, g, j);
    host[d] = Encode(c->type, values);
    client::TensorSource source;
    source.shape = client::Shape(c->type, c->input_dims);
    source.data = host[d].data();
    source.device = local[d];
    auto data = cc.TransferToDevice(std::span(&source, 1));
    if (!data.ok()) return Fail("transfer", data.status());
    arguments.push_back(std::move(*data));
  }
  auto outputs = cc.ExecuteReplicated(*computations->front(), arguments, local);
  if (!outputs.ok()) return Fail("execute", outputs.status());
  for (size_t d = 0; d < local.size(); ++d) {
    auto literals = cc.TransferFromDevice((*outputs)[d]);
    if (!literals.ok()) return Fail("read", literals.status());
    std::vector<char> out(literals->front().bytes.begin(),
                          literals->front().bytes.end());
    for (int64_t j = 0; j < c->output_elements; ++j) {
      const double want = Expected(op, replica_of[d], replicas, n, j);
      if (Decode(c->type, out, j) != want) {
        std::fprintf(stderr,
                     "worker %d: element %lld of device %d is %.17g, "
                     "expected %.17g\n",
                     process, static_cast<long long>(j), replica_of[d],
                     Decode(c->type, out, j), want);
        return 1;
      }
    }
  }
  std::printf("seconds=0\n");
  return 0;
}

// gloo::allreduce of `bytes` of f32 among the processes, one rank each:
// what Gloo itself achieves on this machine.
int RunGloo(const Flags& flags) {
  const int process = static_cast<int>(flags.Int("process", 0));
  const int processes = static_cast<int>(flags.Int("processes", 1));
  const int64_t n = flags.Int("bytes", 1024) / 4;
  const int64_t iterations = flags.Int("iterations", 1);
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    // Gloo's file store needs its directory to exist.
    const std::string directory = flags.Get("store", "");
    mkdir(directory.c_str(), 0700);
    mkdir((directory + "/gloo").c_str(), 0700);
    gloo::rendezvous::FileStore store(directory + "/gloo");
    auto context =
        std::make_shared<gloo::rendezvous::Context>(process, processes);
    context->connectFullMesh(store, device);
    std::vector<float> data(n, 1.0f);
    double seconds = 0;
    for (int64_t it = 0; it < iterations; ++it) {
      const auto start = Clock::now();
      gloo::AllreduceOptions options(context);
      options.setOutput(data.data(), data.size());
      options.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(
              &gloo::sum<float>));
      gloo::allreduce(options);
      if (it > 0 || iterations == 1) {
        seconds += std::chrono::duration<double>(Clock::now() - start).count();
      }
    }
    const int64_t timed = iterations > 1 ? iterations - 1 : 1;
    std::printf("seconds=%.9f\n", seconds / timed);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "worker %d: gloo: %s\n", process, error.what());
    return 2;
  }
  return 0;
}

}  // namespace

int RunWorker(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    if (eq == std::string::npos) continue;
    flags.values[arg.substr(0, eq)] = arg.substr(eq + 1);
  }
  return flags.Get("mode", "kiln") == "gloo" ? RunGloo(flags) : RunKiln(flags);
}

}  // namespace kiln::multiprocess
