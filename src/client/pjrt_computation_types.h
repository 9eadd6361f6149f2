// The Data, Computation and bookkeeping types behind PjrtComputationClient.
#ifndef KILN_SRC_CLIENT_PJRT_COMPUTATION_TYPES_H_
#define KILN_SRC_CLIENT_PJRT_COMPUTATION_TYPES_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/pjrt_computation_client.h"

namespace kiln::client::internal {

// Device data backed by a PJRT buffer.
class PjrtData : public Data {
 public:
  PjrtData(std::string device, Shape shape, const Client* client,
           std::shared_ptr<Buffer> buffer)
      : Data(std::move(device), std::move(shape)),
        client_(client),
        buffer_(std::move(buffer)) {}

  bool HasValue() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return buffer_ != nullptr;
  }
  std::shared_ptr<Buffer> buffer() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return buffer_;
  }
  // Drops the buffer (after donation): the Data no longer has a value.
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    buffer_.reset();
  }
  const Client* client() const { return client_; }

 private:
  const Client* client_;
  mutable std::mutex mutex_;
  std::shared_ptr<Buffer> buffer_;
};

// A compiled program and its loaded executable.
class PjrtComputation : public Computation {
 public:
  const std::string& name() const override { return name_; }
  const std::string& program() const override { return program_; }
  uint64_t hash() const override { return hash_; }
  const std::vector<std::string>& devices() const override { return devices_; }
  const std::vector<int>& donated_parameters() const override {
    return donated_parameters_;
  }

  std::string name_;
  std::string program_;
  std::string compile_options_;
  uint64_t hash_ = 0;
  std::vector<std::string> devices_;
  std::vector<Device*> pjrt_devices_;
  std::vector<int> donated_parameters_;
  const Client* client_ = nullptr;
  std::shared_ptr<Executable> executable_;
};

}  // namespace kiln::client::internal

namespace kiln::client {

// Counts executions per device that have started and not finished, so
// WaitDeviceOps can wait for them. Shared with the completion callbacks,
// which may run after the client is gone.
class PjrtComputationClient::InFlight {
 public:
  void Begin(const std::string& device) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++count_[device];
  }
  void End(const std::string& device) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--count_[device] == 0) count_.erase(device);
    done_.notify_all();
  }
  // Waits until none of `devices` (all, when empty) has work in flight.
  void Wait(std::span<const std::string> devices) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] {
      if (devices.empty()) return count_.empty();
      for (const std::string& device : devices) {
        if (count_.count(device) != 0) return false;
      }
      return true;
    });
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  std::map<std::string, int> count_;
};

}  // namespace kiln::client

#endif  // KILN_SRC_CLIENT_PJRT_COMPUTATION_TYPES_H_
