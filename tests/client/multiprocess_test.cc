// Jobs of several processes on loopback through Kiln's client and plugin:
// each test starts 2 or 4 worker processes (multiprocess/worker.h) that
// share a file key-value store, and checks that every one computed its
// collective's outputs exactly (the workers compare against values they
// compute independently), or that the survivors of a killed peer fail in
// time with UNAVAILABLE or DEADLINE_EXCEEDED. Every child is killed and
// reaped by the end of its test.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "multiprocess/launcher.h"

namespace kiln::multiprocess {
namespace {

#if defined(KILN_PLUGIN_PATH) && defined(KILN_MULTIPROCESS_WORKER)

// Hard limit for one job: a hang fails the test instead of the suite.
constexpr std::chrono::seconds kJobDeadline(120);

class MultiprocessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTemporaryDirectory("kiln_multiprocess_");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override { RemoveDirectory(dir_); }

  // Arguments of a new job, with a store of its own: keys are written
  // once per job (a stale Gloo address would send a job to a dead port).
  std::vector<std::vector<std::string>> Arguments(
      int processes, const std::vector<std::string>& extra) {
    store_ = dir_ + "/kv" + std::to_string(jobs_++);
    std::vector<std::vector<std::string>> all;
    for (int p = 0; p < processes; ++p) {
      std::vector<std::string> args = {
          std::string("plugin=") + KILN_PLUGIN_PATH, "store=" + store_,
          "process=" + std::to_string(p),
          "processes=" + std::to_string(processes)};
      args.insert(args.end(), extra.begin(), extra.end());
      all.push_back(std::move(args));
    }
    return all;
  }

  // Runs `op` on `processes` processes of `devices` devices each and
  // expects every worker to succeed.
  void RunJob(int processes, int devices, const std::string& op, int64_t bytes,
              const std::string& mode = "kiln") {
    SCOPED_TRACE(op + " on " + std::to_string(processes) + " processes x " +
                 std::to_string(devices) + " devices, " +
                 std::to_string(bytes) + " bytes");
    ProcessGroup group(
        KILN_MULTIPROCESS_WORKER,
        Arguments(processes,
                  {"op=" + op, "bytes=" + std::to_string(bytes),
                   "devices=" + std::to_string(devices), "timeout_s=60"}),
        dir_);
    std::vector<ChildResult> results = group.Wait(kJobDeadline);
    for (size_t p = 0; p < results.size(); ++p) {
      EXPECT_FALSE(results[p].timed_out) << "process " << p << " hung";
      EXPECT_EQ(results[p].exit_code, 0)
          << "process " << p << " (signal " << results[p].signal << "):\n"
          << results[p].output;
    }
  }

  // Starts `processes` workers looping over all_reduce with a collective
  // timeout of `timeout_seconds`, waits until each has finished one, sends
  // `signal` to the last one, and expects the others to exit with
  // UNAVAILABLE or DEADLINE_EXCEEDED (worker exit code 3) within
  // `within_seconds` of the signal.
  void RunFault(int processes, int signal, int timeout_seconds,
                double within_seconds) {
    ProcessGroup group(
        KILN_MULTIPROCESS_WORKER,
        Arguments(processes, {"op=all_reduce", "bytes=1048576", "forever=1",
                              "timeout_s=" + std::to_string(timeout_seconds)}),
        dir_);
    // Every process has finished one collective: they are now in the
    // middle of the next ones.
    const auto started = std::chrono::steady_clock::now();
    bool ready = false;
    while (!ready &&
           std::chrono::steady_clock::now() - started < kJobDeadline) {
      ready = true;
      for (int p = 0; p < processes; ++p) {
        struct stat info {};
        std::string path = store_ + "/ready." + std::to_string(p);
        ready = ready && stat(path.c_str(), &info) == 0;
      }
      if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(ready) << "the processes never completed a collective";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const size_t victim = processes - 1;
    group.Signal(victim, signal);
    const auto signalled = std::chrono::steady_clock::now();
    // The survivors only: the victim (stopped, or dead) is killed and
    // reaped when the group goes.
    std::vector<ChildResult> results = group.WaitExcept(
        victim, std::chrono::seconds(static_cast<int>(within_seconds * 3)));
    const double waited = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - signalled)
                              .count();
    EXPECT_LT(waited, within_seconds);
    for (size_t p = 0; p < results.size(); ++p) {
      if (p == victim) continue;
      EXPECT_FALSE(results[p].timed_out) << "process " << p << " hung";
      // 3: the worker saw UNAVAILABLE or DEADLINE_EXCEEDED.
      EXPECT_EQ(results[p].exit_code, 3)
          << "process " << p << " (signal " << results[p].signal << "):\n"
          << results[p].output;
      if (signal == SIGSTOP) {
        EXPECT_NE(results[p].output.find("DEADLINE_EXCEEDED"),
                  std::string::npos)
            << results[p].output;
      }
    }
  }

  std::string dir_;
  std::string store_;
  int jobs_ = 0;
};

TEST_F(MultiprocessTest, CollectivesOfOneKibOnTwoAndFourProcesses) {
  for (int processes : {2, 4}) {
    for (const char* op : {"all_reduce", "all_gather", "all_to_all"}) {
      RunJob(processes, 1, op, 1024);
    }
  }
}

TEST_F(MultiprocessTest, EveryCollectiveWithTwoDevicesPerProcess) {
  // Four participants, two in each process: ranks in this process and in
  // the other meet alike.
  for (const char* op :
       {"all_reduce", "all_reduce_max_i32", "all_reduce_f64", "all_gather",
        "all_to_all", "reduce_scatter", "permute", "broadcast"}) {
    RunJob(2, 2, op, 1024);
  }
}

TEST_F(MultiprocessTest, ExecuteReplicatedAcrossProcesses) {
  for (const char* op : {"all_reduce", "all_to_all"}) {
    RunJob(2, 2, op, 1024, "replicated");
  }
}

TEST_F(MultiprocessTest, CollectivesOf64MibOnTwoAndFourProcesses) {
  // About 16 s on a 2-core machine, and up to 0.6 GiB per process (the
  // 4-process all_gather).
  if (std::getenv("KILN_MULTIPROCESS_SKIP_LARGE") != nullptr) {
    GTEST_SKIP() << "KILN_MULTIPROCESS_SKIP_LARGE is set";
  }
  for (int processes : {2, 4}) {
    for (const char* op : {"all_reduce", "all_gather", "all_to_all"}) {
      RunJob(processes, 1, op, int64_t{64} << 20);
    }
  }
}

TEST_F(MultiprocessTest, KilledPeerFailsTheOthersWithinTheTimeout) {
  // The killed process's sockets close: UNAVAILABLE, long before the 10 s
  // timeout.
  for (int processes : {2, 4}) {
    SCOPED_TRACE(std::to_string(processes) + " processes");
    RunFault(processes, SIGKILL, 10, 10 + 5.0);
  }
}

#ifdef KILN_BINARY
TEST_F(MultiprocessTest, KilnInfoListsTheJobsDevices) {
  if (access(KILN_BINARY, X_OK) != 0) {
    GTEST_SKIP() << "the kiln command is not built (" << KILN_BINARY << ")";
  }
  std::vector<std::vector<std::string>> arguments;
  for (int p = 0; p < 2; ++p) {
    arguments.push_back({"info", std::string("--plugin=") + KILN_PLUGIN_PATH,
                         "--devices=2", "--processes=2",
                         "--process=" + std::to_string(p),
                         "--store=" + dir_ + "/kv_info"});
  }
  ProcessGroup group(KILN_BINARY, arguments, dir_);
  std::vector<ChildResult> results = group.Wait(kJobDeadline);
  for (int p = 0; p < 2; ++p) {
    ASSERT_EQ(results[p].exit_code, 0) << results[p].output;
    const std::string& out = results[p].output;
    EXPECT_NE(out.find("process index: " + std::to_string(p)),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("devices: 4 (2 addressable)"), std::string::npos) << out;
    EXPECT_NE(out.find("device " + std::to_string(2 * p + 1) +
                       ": kind \"cpu\", process " + std::to_string(p) +
                       ", local hardware id 1, addressable"),
              std::string::npos)
        << out;
  }
}
#endif

TEST_F(MultiprocessTest, StoppedPeerFailsTheOthersWithDeadlineExceeded) {
  // A peer that hangs keeps its sockets open: Gloo's timeout (the
  // collective timeout, 3 s) ends the wait.
  RunFault(2, SIGSTOP, 3, 3 + 5.0);
}

#else

TEST(MultiprocessTest, NeedsThePluginAndTheWorker) {
  GTEST_SKIP() << "this build has no Kiln plugin or multiprocess worker";
}

#endif

}  // namespace
}  // namespace kiln::multiprocess
