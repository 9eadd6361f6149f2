// Starts the processes of a multi-process test or benchmark (fork/exec of
// worker.h's binary), waits for them under a hard deadline, and kills and
// reaps whatever is left, so no test leaves a process behind.
#ifndef KILN_TESTS_CLIENT_MULTIPROCESS_LAUNCHER_H_
#define KILN_TESTS_CLIENT_MULTIPROCESS_LAUNCHER_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace kiln::multiprocess {

struct ChildResult {
  int exit_code = -1;  // -1 when it did not exit normally
  int signal = 0;      // the signal that ended it, if any
  bool timed_out = false;
  std::string output;  // stdout and stderr
};

class ProcessGroup {
 public:
  // Starts one child per entry of `arguments` running `binary`, with
  // stdout and stderr in files of `log_dir`. Children that could not start
  // exit with 127.
  ProcessGroup(const std::string& binary,
               const std::vector<std::vector<std::string>>& arguments,
               const std::string& log_dir);
  // Kills (SIGKILL) and reaps every child still running.
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  size_t size() const { return pids_.size(); }
  // Sends SIGKILL to child `i`.
  void Kill(size_t i);
  // Sends `signal` to child `i` (SIGSTOP: a peer that hangs).
  void Signal(size_t i, int signal);
  // Waits for every child until `timeout` has passed, then kills the rest
  // (marked timed_out). Results by child.
  std::vector<ChildResult> Wait(std::chrono::milliseconds timeout);
  // Like Wait, but child `skip` (a stopped one) is not waited for: it is
  // killed and reaped once the others are done.
  std::vector<ChildResult> WaitExcept(size_t skip,
                                      std::chrono::milliseconds timeout);

 private:
  std::vector<pid_t> pids_;
  std::vector<std::string> logs_;
  std::vector<ChildResult> results_;
  std::vector<bool> done_;
};

// A fresh directory under $TMPDIR (or /tmp), and its removal with
// everything in it.
std::string MakeTemporaryDirectory(const std::string& prefix);
void RemoveDirectory(const std::string& path);

}  // namespace kiln::multiprocess

#endif  // KILN_TESTS_CLIENT_MULTIPROCESS_LAUNCHER_H_
