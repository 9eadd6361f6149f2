#include "launcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace kiln::multiprocess {

ProcessGroup::ProcessGroup(
    const std::string& binary,
    const std::vector<std::vector<std::string>>& arguments,
    const std::string& log_dir) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string log = log_dir + "/log." + std::to_string(i);
    std::vector<std::string> argv_storage = {binary};
    argv_storage.insert(argv_storage.end(), arguments[i].begin(),
                        arguments[i].end());
    std::vector<char*> argv;
    for (std::string& arg : argv_storage) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      // The child: its own process group, output to the log, then the
      // worker. Only async-signal-safe calls until exec.
      setpgid(0, 0);
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
      }
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    pids_.push_back(pid);
    logs_.push_back(log);
    results_.emplace_back();
    done_.push_back(pid < 0);
    if (pid < 0) results_.back().exit_code = 127;
  }
}

ProcessGroup::~ProcessGroup() {
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (done_[i]) continue;
    kill(pids_[i], SIGKILL);
    waitpid(pids_[i], nullptr, 0);
  }
}

void ProcessGroup::Kill(size_t i) { Signal(i, SIGKILL); }

void ProcessGroup::Signal(size_t i, int signal) {
  if (i < pids_.size() && !done_[i]) kill(pids_[i], signal);
}

std::vector<ChildResult> ProcessGroup::Wait(std::chrono::milliseconds timeout) {
  return WaitExcept(pids_.size(), timeout);
}

std::vector<ChildResult> ProcessGroup::WaitExcept(
    size_t skip, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto reap = [&](size_t i, int status) {
    done_[i] = true;
    if (WIFEXITED(status)) results_[i].exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) results_[i].signal = WTERMSIG(status);
  };
  while (true) {
    bool running = false;
    for (size_t i = 0; i < pids_.size(); ++i) {
      if (done_[i] || i == skip) continue;
      int status = 0;
      pid_t got = waitpid(pids_[i], &status, WNOHANG);
      if (got == pids_[i]) {
        reap(i, status);
      } else {
        running = true;
      }
    }
    if (!running) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (size_t i = 0; i < pids_.size(); ++i) {
        if (done_[i]) continue;
        results_[i].timed_out = true;
        kill(pids_[i], SIGKILL);
        int status = 0;
        waitpid(pids_[i], &status, 0);
        reap(i, status);
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (skip < pids_.size() && !done_[skip]) {
    kill(pids_[skip], SIGKILL);
    int status = 0;
    waitpid(pids_[skip], &status, 0);
    reap(skip, status);
  }
  for (size_t i = 0; i < pids_.size(); ++i) {
    std::ifstream in(logs_[i]);
    std::stringstream text;
    text << in.rdbuf();
    results_[i].output = text.str();
  }
  return results_;
}

std::string MakeTemporaryDirectory(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string path = std::string(base != nullptr && *base ? base : "/tmp") +
                     "/" + prefix + "XXXXXX";
  if (mkdtemp(path.data()) == nullptr) return "";
  return path;
}

void RemoveDirectory(const std::string& path) {
  if (path.empty()) return;
  DIR* dir = opendir(path.c_str());
  if (dir != nullptr) {
    while (dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      std::string child = path + "/" + name;
      struct stat info {};
      if (lstat(child.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
        RemoveDirectory(child);
      } else {
        unlink(child.c_str());
      }
    }
    closedir(dir);
  }
  rmdir(path.c_str());
}

}  // namespace kiln::multiprocess
