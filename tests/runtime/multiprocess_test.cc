// Clients of a job of several processes, simulated in one process: two (or
// more) runtime clients with different process indices share an in-memory
// key-value store and are created at once on their own threads. Checks the
// exchanged topology, the placement rules, and collectives between the
// "processes" over Gloo on loopback against values computed here.
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/client.h"
#include "runtime/device.h"
#include "runtime/executable.h"
#include "runtime/transfer.h"
#include "support/test_support.h"

namespace kiln::runtime {
namespace {

class MemoryStore : public KeyValueStore {
 public:
  Status Put(std::string_view key, std::string_view value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    values_[std::string(key)] = std::string(value);
    changed_.notify_all();
    return OkStatus();
  }
  StatusOr<std::string> Get(std::string_view key,
                            std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::string name(key);
    if (!changed_.wait_for(lock, timeout,
                           [&] { return values_.count(name) > 0; })) {
      return DeadlineExceededError("no key ", name);
    }
    return values_[name];
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
};

// Creates `processes` clients of `devices` devices each at once (each
// waits for the others' keys).
std::vector<StatusOr<std::unique_ptr<Client>>> CreateJob(
    int processes, std::function<int(int)> devices_of,
    double timeout_seconds = 20) {
  auto store = std::make_shared<MemoryStore>();
  std::vector<StatusOr<std::unique_ptr<Client>>> clients;
  for (int p = 0; p < processes; ++p) {
    clients.emplace_back(InternalError("not created"));
  }
  std::vector<std::thread> threads;
  for (int p = 0; p < processes; ++p) {
    threads.emplace_back([&, p] {
      ClientOptions options;
      options.device_count = devices_of(p);
      options.process_index = p;
      options.process_count = processes;
      options.store = store;
      options.collective_timeout_seconds = timeout_seconds;
      clients[p] = Client::Create(options);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return clients;
}

TEST(MultiprocessTest, ClientsListEveryProcessesDevices) {
  auto clients = CreateJob(2, [](int) { return 3; });
  for (int p = 0; p < 2; ++p) {
    ASSERT_TRUE(clients[p].ok()) << clients[p].status().ToString();
    const Client& client = **clients[p];
    EXPECT_EQ(client.process_index(), p);
    EXPECT_EQ(client.process_count(), 2);
    ASSERT_EQ(client.devices().size(), 6u);
    ASSERT_EQ(client.addressable_devices().size(), 3u);
    EXPECT_EQ(client.addressable_memory_spaces().size(), 3u * 3);
    for (int id = 0; id < 6; ++id) {
      const Device* device = client.devices()[id];
      EXPECT_EQ(device->id(), id);
      EXPECT_EQ(device->process_index(), id / 3);
      EXPECT_EQ(device->local_hardware_id(), id % 3);
      EXPECT_EQ(device->addressable(), id / 3 == p);
      EXPECT_EQ(device->description().process_index, id / 3);
    }
    ASSERT_OK_AND_ASSIGN(Device * local, client.LookupAddressableDevice(1));
    EXPECT_EQ(local->id(), p * 3 + 1);
    EXPECT_EQ(client.topology().Serialize(),
              "kiln-topology v1; processes=2; cpu_devices=3");
    EXPECT_NE(client.process_collectives(), nullptr);
  }
  ASSERT_OK_AND_ASSIGN(
      Topology back,
      Topology::Deserialize("kiln-topology v1; processes=2; cpu_devices=3"));
  EXPECT_EQ(back.devices().size(), 6u);
  EXPECT_EQ(back.devices()[4].process_index, 1);
}

TEST(MultiprocessTest, DifferentDeviceCountsAreRefused) {
  auto clients = CreateJob(2, [](int p) { return p + 1; });
  for (int p = 0; p < 2; ++p) {
    ASSERT_FALSE(clients[p].ok());
    EXPECT_EQ(clients[p].status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(clients[p].status().message().find("same number of devices"),
              std::string::npos)
        << clients[p].status().ToString();
  }
}

TEST(MultiprocessTest, NeedsAStoreAndAnIndexInRange) {
  ClientOptions options;
  options.process_count = 2;
  options.process_index = 1;
  auto client = Client::Create(options);
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  options.store = std::make_shared<MemoryStore>();
  options.process_index = 2;
  client = Client::Create(options);
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
}

TEST(MultiprocessTest, MissingPeerTimesOut) {
  ClientOptions options;
  options.process_count = 2;
  options.store = std::make_shared<MemoryStore>();
  options.collective_timeout_seconds = 0.2;
  auto client = Client::Create(options);
  EXPECT_EQ(client.status().code(), StatusCode::kDeadlineExceeded)
      << client.status().ToString();
}

constexpr char kAllReduce[] = R"(
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<64xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
})";

std::shared_ptr<Buffer> Upload(const std::vector<float>& values,
                               Device* device) {
  const std::vector<int64_t> dims = {static_cast<int64_t>(values.size())};
  auto shape = Shape::Make(DType::kF32, dims);
  EXPECT_TRUE(shape.ok());
  auto transfer =
      TransferFromHost(values.data(), *shape, std::nullopt,
                       HostBufferSemantics::kImmutableOnlyDuringCall,
                       device->default_memory_space());
  EXPECT_TRUE(transfer.ok()) << transfer.status().ToString();
  return transfer->buffer;
}

// Runs `program` (4 replicas; one f32[64] argument and result) in
// `launches` launches on a job of two processes of two devices each; device
// d's argument in launch l is value(d, l, j) at j. Returns each process's
// outputs (per local device) of the last launch.
std::vector<std::vector<std::vector<float>>> RunOnTwoProcesses(
    const char* program, int launches,
    const std::function<float(int, int, int)>& value) {
  auto clients = CreateJob(2, [](int) { return 2; });
  for (auto& client : clients) EXPECT_TRUE(client.ok());
  if (!clients[0].ok() || !clients[1].ok()) return {};
  std::vector<std::thread> threads;
  std::vector<Status> statuses(2);
  std::vector<std::vector<std::vector<float>>> outputs(2);
  for (int p = 0; p < 2; ++p) {
    threads.emplace_back([&, p] {
      statuses[p] = [&]() -> Status {
        const Client& client = **clients[p];
        CompileSpec spec;
        spec.num_replicas = 4;
        ASSIGN_OR_RETURN(auto executable,
                         Executable::Compile(client, program, spec));
        if (executable->addressable_devices().size() != 2 ||
            executable->devices().size() != 4) {
          return InternalError("wrong devices");
        }
        for (int launch = 0; launch < launches; ++launch) {
          std::vector<ExecuteRequest> requests;
          for (int local = 0; local < 2; ++local) {
            ExecuteRequest request;
            request.position = local;
            Device* device = executable->addressable_devices()[local];
            std::vector<float> values(64);
            for (int j = 0; j < 64; ++j) {
              values[j] = value(device->id(), launch, j);
            }
            request.arguments.push_back(Upload(values, device));
            requests.push_back(std::move(request));
          }
          ASSIGN_OR_RETURN(auto results,
                           executable->ExecuteLaunch(std::move(requests)));
          outputs[p].clear();
          for (auto& result : results) {
            RETURN_IF_ERROR(result.done->Await());
            std::vector<float> out(64);
            ASSIGN_OR_RETURN(auto done,
                             TransferToHost(result.outputs[0], out.data(),
                                            out.size() * 4, std::nullopt));
            RETURN_IF_ERROR(done->Await());
            outputs[p].push_back(out);
          }
        }
        return OkStatus();
      }();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int p = 0; p < 2; ++p) {
    EXPECT_TRUE(statuses[p].ok()) << statuses[p].ToString();
    EXPECT_EQ(outputs[p].size(), 2u);
  }
  return outputs;
}

TEST(MultiprocessTest, AllReduceAcrossProcessesAndDevices) {
  // Two processes of two devices: each group of four has two members here
  // and two elsewhere.
  auto outputs =
      RunOnTwoProcesses(kAllReduce, 3, [](int id, int launch, int j) {
        return static_cast<float>(id * 100 + j + launch);
      });
  ASSERT_EQ(outputs.size(), 2u);
  for (int p = 0; p < 2; ++p) {
    for (const auto& out : outputs[p]) {
      for (int j = 0; j < 64; ++j) {
        // sum over devices 0..3 of (id * 100 + j + 2), the last launch.
        EXPECT_EQ(out[j], 600.0f + 4 * (j + 2)) << j;
      }
    }
  }
}

constexpr char kAllReduceBf16[] = R"(
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %b = stablehlo.convert %x : (tensor<64xf32>) -> tensor<64xbf16>
  %r = "stablehlo.all_reduce"(%b) ({
    ^bb0(%a: tensor<bf16>, %c: tensor<bf16>):
      %s = stablehlo.add %a, %c : tensor<bf16>
      stablehlo.return %s : tensor<bf16>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<64xbf16>) -> tensor<64xbf16>
  %f = stablehlo.convert %r : (tensor<64xbf16>) -> tensor<64xf32>
  return %f : tensor<64xf32>
})";

TEST(MultiprocessTest, Bf16AllReduceAcrossProcesses) {
  // Gloo has no bf16: the values cross as f32 and the sums round once.
  // Inputs (id + 1) / 2 + j/4: exact in bf16, as are the sums 4 j / 4 + 5.
  auto outputs = RunOnTwoProcesses(kAllReduceBf16, 1, [](int id, int, int j) {
    return 0.5f * (id + 1) + 0.25f * static_cast<float>(j % 32);
  });
  ASSERT_EQ(outputs.size(), 2u);
  for (int p = 0; p < 2; ++p) {
    for (const auto& out : outputs[p]) {
      for (int j = 0; j < 64; ++j) {
        EXPECT_EQ(out[j], 5.0f + static_cast<float>(j % 32)) << j;
      }
    }
  }
}

constexpr char kNegate[] = R"(
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %r = stablehlo.negate %x : tensor<64xf32>
  return %r : tensor<64xf32>
})";

TEST(MultiprocessTest, BuffersAndRunsStayOnThisProcess) {
  auto clients = CreateJob(2, [](int) { return 1; });
  for (auto& client : clients) ASSERT_TRUE(client.ok());
  const Client& client = **clients[0];
  CompileSpec spec;
  spec.num_replicas = 2;
  ASSERT_OK_AND_ASSIGN(auto executable,
                       Executable::Compile(client, kNegate, spec));
  EXPECT_EQ(executable->addressable_devices().size(), 1u);
  EXPECT_EQ(executable->addressable_positions(), (std::vector<int>{0}));
  ExecuteRequest request;
  request.device = client.devices()[1];
  Status status = executable->CheckRequest(request);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("belongs to process 1"), std::string::npos)
      << status.ToString();
}

}  // namespace
}  // namespace kiln::runtime
