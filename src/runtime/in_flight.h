// A bound on the executions a device has been given and not finished.
//
// JAX issues a program and returns before it runs; a training loop that
// issues steps faster than the device runs them would otherwise queue
// without end, each queued step holding fresh output storage (the memory
// grows with the queue, and no freed block is there to reuse: a loop of
// 19-output steps ran at a third of its speed, in page faults). Like
// XLA:CPU's bound on in-flight computations, an execute past the bound
// waits until the oldest run ends.
#ifndef KILN_RUNTIME_IN_FLIGHT_H_
#define KILN_RUNTIME_IN_FLIGHT_H_

#include <condition_variable>
#include <memory>
#include <mutex>

namespace kiln::runtime {

class InFlightLimit : public std::enable_shared_from_this<InFlightLimit> {
 public:
  // The most runs in flight per device.
  static constexpr int kDefaultLimit = 32;

  explicit InFlightLimit(int limit = kDefaultLimit) : limit_(limit) {}
  InFlightLimit(const InFlightLimit&) = delete;
  InFlightLimit& operator=(const InFlightLimit&) = delete;

  // One run's place: released when it is destroyed or reset.
  class Token {
   public:
    Token() = default;
    Token(Token&& other) noexcept : limit_(std::move(other.limit_)) {}
    Token& operator=(Token&& other) noexcept;
    ~Token() { Release(); }
    void Release();
    bool held() const { return limit_ != nullptr; }

   private:
    friend class InFlightLimit;
    explicit Token(std::shared_ptr<InFlightLimit> limit)
        : limit_(std::move(limit)) {}
    std::shared_ptr<InFlightLimit> limit_;
  };

  // Waits until fewer than the limit are in flight, and takes a place.
  Token Acquire();
  int in_flight() const;

 private:
  void Return();

  const int limit_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  int in_flight_ = 0;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_IN_FLIGHT_H_
