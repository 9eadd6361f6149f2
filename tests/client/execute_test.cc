// The execute path of PjrtComputationClient, run against two plugins: the
// test plugin (which "compiles" @sum modules) and Kiln's own. Against
// Kiln's plugin the suite skips itself, with the reason, while its
// PJRT_Client_Compile answers UNIMPLEMENTED (detected at run time).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "client_test_util.h"
#include "kiln/compile_options.h"
#include "kiln/pjrt_computation_client.h"
#include "sum_program.h"

namespace kiln::client {
namespace {

namespace names = metric_names;
using testing::SumExpected;
using testing::SumProgram;
constexpr PJRT_Buffer_Type F32 = PJRT_Buffer_Type_F32;

class ExecuteTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    PjrtComputationClientOptions options;
    if (GetParam() == "kiln") {
      KILN_REQUIRE_KILN_PLUGIN(path);
      plugin_path_ = path;
      options.create_options.push_back(
          {"cpu_device_count", NamedValue::Value(int64_t{2})});
    } else {
      plugin_path_ = testing::TestPluginPath("kiln_test_plugin_v0_40");
    }
    options.plugin_path = plugin_path_;
    auto client = PjrtComputationClient::Create(options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);
    ASSERT_GE(client_->GetLocalDevices().size(), 2u);
    device0_ = client_->GetLocalDevices()[0];
    device1_ = client_->GetLocalDevices()[1];
    // Compiling the smallest @sum program through the plugin directly tells
    // whether this plugin build compiles at all.
    CompileOptions probe_options;
    auto probe = client_->pjrt_client().Compile(
        SumProgram({1}, 1), "mlir", *SerializeCompileOptions(probe_options));
    if (!probe.ok() && probe.status().code() == StatusCode::kUnimplemented) {
      GTEST_SKIP() << "PJRT_Client_Compile is UNIMPLEMENTED in this plugin "
                      "build";
    }
  }

  StatusOr<ComputationPtr> CompileOne(const std::string& program,
                                      std::vector<int> donated = {},
                                      std::vector<std::string> devices = {}) {
    std::vector<CompileInstance> instances(1);
    instances[0].program = program;
    instances[0].name = "sum";
    instances[0].donated_parameters = std::move(donated);
    instances[0].devices = std::move(devices);
    ASSIGN_OR_RETURN(std::vector<ComputationPtr> computations,
                     client_->Compile(std::move(instances)));
    return computations[0];
  }

  StatusOr<DataPtr> Put(const std::vector<float>& values,
                        std::vector<int64_t> dims, const std::string& device) {
    TensorSource source{Shape(F32, std::move(dims)), values.data(), device};
    ASSIGN_OR_RETURN(std::vector<DataPtr> data,
                     client_->TransferToDevice({&source, 1}));
    return data[0];
  }

  StatusOr<std::vector<float>> Get(const DataPtr& data) {
    std::vector<DataPtr> handles = {data};
    ASSIGN_OR_RETURN(std::vector<Literal> literals,
                     client_->TransferFromDevice(handles));
    return literals[0].ToVector<float>();
  }

  std::string plugin_path_;
  std::unique_ptr<PjrtComputationClient> client_;
  std::string device0_;
  std::string device1_;
};

TEST_P(ExecuteTest, FourCrossingsOfOneStepGiveOneSampleEach) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> w = {0.5f, -1, 2, 0.25f, -3, 1};
  TensorSource sources[] = {{Shape(F32, {2, 3}), x.data(), device0_},
                            {Shape(F32, {2, 3}), w.data(), device0_}};
  ASSERT_OK_AND_ASSIGN(auto inputs, client_->TransferToDevice(sources));
  ASSERT_OK_AND_ASSIGN(ComputationPtr step, CompileOne(SumProgram({2, 3}, 2)));
  ASSERT_OK_AND_ASSIGN(auto outputs,
                       client_->ExecuteComputation(*step, inputs, device0_));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0]->shape(), Shape(F32, {2, 3}));
  EXPECT_EQ(outputs[0]->device(), device0_);
  ASSERT_OK_AND_ASSIGN(auto literals, client_->TransferFromDevice(outputs));
  EXPECT_EQ(literals[0].ToVector<float>(), SumExpected({x, w}));
  ASSERT_OK(client_->WaitDeviceOps({}));

  const Metrics& metrics = client_->metrics();
  EXPECT_EQ(metrics.MetricTotalSamples(names::kTransferToDeviceTime), 1);
  EXPECT_EQ(metrics.MetricTotalSamples(names::kCompileTime), 1);
  EXPECT_EQ(metrics.MetricTotalSamples(names::kExecuteTime), 1);
  EXPECT_EQ(metrics.MetricTotalSamples(names::kTransferFromDeviceTime), 1);
  EXPECT_EQ(metrics.CounterValue(names::kUncachedCompile), 1);
  EXPECT_EQ(metrics.CounterValue(names::kCachedCompile), 0);
  EXPECT_EQ(metrics.CounterValue(names::kExecuteComputation), 1);
  EXPECT_EQ(metrics.FindMetric(names::kInboundData)->snapshot().accumulator,
            48);
  EXPECT_EQ(metrics.FindMetric(names::kOutboundData)->snapshot().accumulator,
            24);
}

TEST_P(ExecuteTest, SecondCompileIsACacheHit) {
  ASSERT_OK_AND_ASSIGN(ComputationPtr first, CompileOne(SumProgram({4}, 2)));
  ASSERT_OK_AND_ASSIGN(ComputationPtr second, CompileOne(SumProgram({4}, 2)));
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(client_->metrics().CounterValue(names::kCachedCompile), 1);
  EXPECT_EQ(client_->metrics().CounterValue(names::kUncachedCompile), 1);
  EXPECT_EQ(client_->metrics().MetricTotalSamples(names::kCompileTime), 1);
  // Another device, another donation set, another program: new entries.
  ASSERT_OK_AND_ASSIGN(ComputationPtr elsewhere,
                       CompileOne(SumProgram({4}, 2), {}, {device1_}));
  ASSERT_OK_AND_ASSIGN(ComputationPtr donating,
                       CompileOne(SumProgram({4}, 2, true), {0}));
  ASSERT_OK_AND_ASSIGN(ComputationPtr wider, CompileOne(SumProgram({5}, 2)));
  EXPECT_NE(elsewhere->hash(), first->hash());
  EXPECT_NE(donating->hash(), first->hash());
  EXPECT_NE(wider->hash(), first->hash());
  EXPECT_EQ(client_->metrics().CounterValue(names::kUncachedCompile), 4);
  // The donation set is a set: order and repeats do not matter.
  ASSERT_OK_AND_ASSIGN(ComputationPtr again,
                       CompileOne(SumProgram({4}, 2, true), {0, 0}));
  EXPECT_EQ(again.get(), donating.get());
}

TEST_P(ExecuteTest, DonatedArgumentIsConsumedAndItsOutputTakesItsPlace) {
  ASSERT_OK_AND_ASSIGN(ComputationPtr step,
                       CompileOne(SumProgram({3}, 2, true), {0}));
  EXPECT_EQ(step->donated_parameters(), std::vector<int>{0});
  ASSERT_OK_AND_ASSIGN(DataPtr weights, Put({1, 2, 3}, {3}, device0_));
  ASSERT_OK_AND_ASSIGN(DataPtr delta, Put({0.5f, 0.5f, -4}, {3}, device0_));
  std::vector<DataPtr> arguments = {weights, delta};
  ASSERT_OK_AND_ASSIGN(auto result,
                       client_->ExecuteComputation(*step, arguments, device0_));
  EXPECT_FALSE(weights->HasValue());
  EXPECT_TRUE(delta->HasValue());
  ASSERT_OK_AND_ASSIGN(std::vector<float> once, Get(result[0]));
  EXPECT_EQ(once, (std::vector<float>{1.5f, 2.5f, -1}));
  auto again = client_->ExecuteComputation(*step, arguments, device0_);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(again.status().message().find("donated"), std::string_view::npos)
      << again.status().ToString();
  std::vector<DataPtr> next = {result[0], delta};
  ASSERT_OK_AND_ASSIGN(auto result2,
                       client_->ExecuteComputation(*step, next, device0_));
  EXPECT_FALSE(result[0]->HasValue());
  ASSERT_OK_AND_ASSIGN(std::vector<float> twice, Get(result2[0]));
  EXPECT_EQ(twice, (std::vector<float>{2, 3, -5}));
}

TEST_P(ExecuteTest, UndeclaredAliasIsPassedAsNonDonatable) {
  // The program aliases parameter 0, but the caller did not declare it:
  // the client passes it as non-donatable, so the caller's buffer survives.
  ASSERT_OK_AND_ASSIGN(ComputationPtr step,
                       CompileOne(SumProgram({3}, 2, true)));
  ASSERT_OK_AND_ASSIGN(DataPtr weights, Put({1, 2, 3}, {3}, device0_));
  ASSERT_OK_AND_ASSIGN(DataPtr delta, Put({1, 1, 1}, {3}, device0_));
  std::vector<DataPtr> arguments = {weights, delta};
  ASSERT_OK_AND_ASSIGN(auto result,
                       client_->ExecuteComputation(*step, arguments, device0_));
  EXPECT_TRUE(weights->HasValue());
  ASSERT_OK_AND_ASSIGN(std::vector<float> sum, Get(result[0]));
  EXPECT_EQ(sum, (std::vector<float>{2, 3, 4}));
  ASSERT_OK_AND_ASSIGN(std::vector<float> kept, Get(weights));
  EXPECT_EQ(kept, (std::vector<float>{1, 2, 3}));
}

TEST_P(ExecuteTest, ArgumentsMustBeOnTheExecutionDevice) {
  ASSERT_OK_AND_ASSIGN(ComputationPtr step, CompileOne(SumProgram({2}, 2)));
  ASSERT_OK_AND_ASSIGN(DataPtr a, Put({1, 2}, {2}, device1_));
  ASSERT_OK_AND_ASSIGN(DataPtr b, Put({3, 4}, {2}, device0_));
  std::vector<DataPtr> arguments = {a, b};
  auto result = client_->ExecuteComputation(*step, arguments, device0_);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("argument 0 is on " + device1_),
            std::string_view::npos)
      << result.status().ToString();
  // A single-device computation runs on any device given its arguments.
  std::vector<DataPtr> on_one = {a, a};
  ASSERT_OK_AND_ASSIGN(auto doubled,
                       client_->ExecuteComputation(*step, on_one, device1_));
  EXPECT_EQ(doubled[0]->device(), device1_);
  ASSERT_OK_AND_ASSIGN(std::vector<float> values, Get(doubled[0]));
  EXPECT_EQ(values, (std::vector<float>{2, 4}));
}

TEST_P(ExecuteTest, ExecutionErrorsAreStatusesAndCounted) {
  ASSERT_OK_AND_ASSIGN(ComputationPtr step, CompileOne(SumProgram({2}, 2)));
  ASSERT_OK_AND_ASSIGN(DataPtr a, Put({1, 2}, {2}, device0_));
  ASSERT_OK_AND_ASSIGN(DataPtr wide, Put({1, 2, 3}, {3}, device0_));
  std::vector<DataPtr> mismatched = {a, wide};
  auto result = client_->ExecuteComputation(*step, mismatched, device0_);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client_->metrics().CounterValue(names::kExecuteFailed), 1);
  EXPECT_OK(client_->WaitDeviceOps({}));  // nothing left in flight
  std::vector<DataPtr> with_null = {a, nullptr};
  EXPECT_FALSE(client_->ExecuteComputation(*step, with_null, device0_).ok());
  EXPECT_FALSE(client_->ExecuteComputation(*step, mismatched, "TPU:0").ok());
}

TEST_P(ExecuteTest, ManyExecutionsAreWaitedFor) {
  ASSERT_OK_AND_ASSIGN(ComputationPtr step,
                       CompileOne(SumProgram({256}, 2, true), {0}));
  ASSERT_OK_AND_ASSIGN(DataPtr total,
                       Put(std::vector<float>(256, 0), {256}, device1_));
  ASSERT_OK_AND_ASSIGN(DataPtr one,
                       Put(std::vector<float>(256, 1), {256}, device1_));
  for (int i = 0; i < 20; ++i) {
    std::vector<DataPtr> arguments = {total, one};
    ASSERT_OK_AND_ASSIGN(
        auto result, client_->ExecuteComputation(*step, arguments, device1_));
    total = result[0];
  }
  std::string devices[] = {device1_};
  ASSERT_OK(client_->WaitDeviceOps(devices));
  EXPECT_EQ(client_->metrics().MetricTotalSamples(names::kExecuteTime), 20);
  ASSERT_OK_AND_ASSIGN(std::vector<float> values, Get(total));
  EXPECT_EQ(values, std::vector<float>(256, 20));
}

TEST_P(ExecuteTest, ThreadsShareOneClient) {
  ASSERT_OK_AND_ASSIGN(ComputationPtr step, CompileOne(SumProgram({8}, 2)));
  constexpr int kThreads = 4;
  constexpr int kSteps = 25;
  std::vector<std::thread> threads;
  std::vector<Status> failures(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string& device = t % 2 == 0 ? device0_ : device1_;
      auto run = [&]() -> Status {
        for (int i = 0; i < kSteps; ++i) {
          std::vector<float> a(8, static_cast<float>(t)), b(8, i);
          TensorSource sources[] = {{Shape(F32, {8}), a.data(), device},
                                    {Shape(F32, {8}), b.data(), device}};
          ASSIGN_OR_RETURN(auto inputs, client_->TransferToDevice(sources));
          ASSIGN_OR_RETURN(auto outputs,
                           client_->ExecuteComputation(*step, inputs, device));
          ASSIGN_OR_RETURN(auto values, client_->TransferFromDevice(outputs));
          if (values[0].ToVector<float>() !=
              std::vector<float>(8, static_cast<float>(t + i))) {
            return InternalError("thread ", t, " step ", i, ": wrong sum");
          }
        }
        return OkStatus();
      };
      failures[t] = run();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const Status& failure : failures) EXPECT_OK(failure);
  ASSERT_OK(client_->WaitDeviceOps({}));
  const Metrics& metrics = client_->metrics();
  EXPECT_EQ(metrics.MetricTotalSamples(names::kExecuteTime), kThreads * kSteps);
  EXPECT_EQ(metrics.MetricTotalSamples(names::kTransferToDeviceTime),
            kThreads * kSteps);
  EXPECT_EQ(metrics.CounterValue(names::kExecuteComputation),
            kThreads * kSteps);
}

TEST_P(ExecuteTest, ExecutesReplicatedOnEveryDevice) {
  ASSERT_OK_AND_ASSIGN(
      ComputationPtr step,
      CompileOne(SumProgram({2, 3}, 2), {}, {device0_, device1_}));
  EXPECT_EQ(step->devices(), (std::vector<std::string>{device0_, device1_}));
  std::vector<float> x0 = {1, 2, 3, 4, 5, 6}, x1 = {-1, 0, 1, 2, 3, 4};
  std::vector<float> w = {1, 0, 0, 1, 1, 1};
  std::vector<std::vector<DataPtr>> arguments(2);
  ASSERT_OK_AND_ASSIGN(arguments[0].emplace_back(), Put(x0, {2, 3}, device0_));
  ASSERT_OK_AND_ASSIGN(arguments[0].emplace_back(), Put(w, {2, 3}, device0_));
  ASSERT_OK_AND_ASSIGN(arguments[1].emplace_back(), Put(x1, {2, 3}, device1_));
  ASSERT_OK_AND_ASSIGN(arguments[1].emplace_back(), Put(w, {2, 3}, device1_));
  std::string devices[] = {device0_, device1_};
  ASSERT_OK_AND_ASSIGN(auto outputs,
                       client_->ExecuteReplicated(*step, arguments, devices));
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0][0]->device(), device0_);
  EXPECT_EQ(outputs[1][0]->device(), device1_);
  ASSERT_OK_AND_ASSIGN(std::vector<float> y0, Get(outputs[0][0]));
  ASSERT_OK_AND_ASSIGN(std::vector<float> y1, Get(outputs[1][0]));
  EXPECT_EQ(y0, SumExpected({x0, w}));
  EXPECT_EQ(y1, SumExpected({x1, w}));
  ASSERT_OK(client_->WaitDeviceOps(devices));
  EXPECT_EQ(
      client_->metrics().MetricTotalSamples(names::kExecuteReplicatedTime), 1);
  EXPECT_EQ(client_->metrics().CounterValue(names::kExecuteReplicated), 1);
  // A replicated computation is not run as a single-device one, nor on
  // devices in another order.
  EXPECT_FALSE(client_->ExecuteComputation(*step, arguments[0], device0_).ok());
  std::string swapped[] = {device1_, device0_};
  EXPECT_FALSE(client_->ExecuteReplicated(*step, arguments, swapped).ok());
}

TEST_P(ExecuteTest, SerializedComputationRunsAgain) {
  ASSERT_OK_AND_ASSIGN(ComputationPtr step,
                       CompileOne(SumProgram({3}, 2, true), {0}));
  ASSERT_OK_AND_ASSIGN(std::string blob, client_->SerializeComputation(step));
  ASSERT_OK_AND_ASSIGN(ComputationPtr loaded,
                       client_->DeserializeComputation(blob));
  EXPECT_EQ(loaded->hash(), step->hash());
  EXPECT_EQ(loaded->devices(), step->devices());
  EXPECT_EQ(loaded->donated_parameters(), std::vector<int>{0});
  EXPECT_EQ(client_->metrics().MetricTotalSamples(names::kDeserializeTime), 1);
  EXPECT_EQ(client_->metrics().CounterValue(names::kUncachedCompile), 1);
  ASSERT_OK_AND_ASSIGN(DataPtr a, Put({1, 2, 3}, {3}, device0_));
  ASSERT_OK_AND_ASSIGN(DataPtr b, Put({10, 20, 30}, {3}, device0_));
  std::vector<DataPtr> arguments = {a, b};
  ASSERT_OK_AND_ASSIGN(
      auto out, client_->ExecuteComputation(*loaded, arguments, device0_));
  EXPECT_FALSE(a->HasValue());
  ASSERT_OK_AND_ASSIGN(std::vector<float> values, Get(out[0]));
  EXPECT_EQ(values, (std::vector<float>{11, 22, 33}));
}

// Runs the cache child (tests/client/cache_child/) and returns its output
// and exit code.
std::string RunCacheChild(const std::string& plugin, const std::string& dir) {
  std::string command = StrCat("KILN_LOG_LEVEL=error '", KILN_CACHE_CHILD,
                               "' '", plugin, "' '", dir, "'");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  char line[512] = {};
  std::string out;
  while (std::fgets(line, sizeof(line), pipe) != nullptr) out += line;
  int status = pclose(pipe);
  return StrCat(out, "exit=", WEXITSTATUS(status));
}

TEST_P(ExecuteTest, PersistentCacheSurvivesANewProcess) {
  std::string dir = StrCat(kiln::testing::BuildDir(), "/client_test_cache_",
                           GetParam(), "_", getpid());
  std::filesystem::remove_all(dir);
  std::string y = StrCat(
      " y=[", StrJoin(SumExpected({testing::ChildX(), testing::ChildW()}), ","),
      "]\nexit=0");
  // First process: nothing on disk; compiles and stores.
  EXPECT_EQ(RunCacheChild(plugin_path_, dir),
            "hit=0 miss=1 refused=0 uncached=1" + y);
  // Second process: loads the stored executable and compiles nothing.
  EXPECT_EQ(RunCacheChild(plugin_path_, dir),
            "hit=1 miss=0 refused=0 uncached=0" + y);
  // A damaged entry is refused, compiled again and replaced.
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    FILE* file = std::fopen(entry.path().c_str(), "r+b");
    ASSERT_NE(file, nullptr);
    std::fputs("garbage", file);
    std::fclose(file);
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  EXPECT_EQ(RunCacheChild(plugin_path_, dir),
            "hit=0 miss=0 refused=1 uncached=1" + y);
  EXPECT_EQ(RunCacheChild(plugin_path_, dir),
            "hit=1 miss=0 refused=0 uncached=0" + y);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Plugins, ExecuteTest,
                         ::testing::Values("test_plugin", "kiln"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln::client
