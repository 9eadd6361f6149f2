#include "runtime/in_flight.h"

namespace kiln::runtime {

InFlightLimit::Token& InFlightLimit::Token::operator=(Token&& other) noexcept {
  if (this != &other) {
    Release();
    limit_ = std::move(other.limit_);
  }
  return *this;
}

void InFlightLimit::Token::Release() {
  if (limit_ == nullptr) return;
  std::shared_ptr<InFlightLimit> limit = std::move(limit_);
  limit->Return();
}

InFlightLimit::Token InFlightLimit::Acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  freed_.wait(lock, [&] { return in_flight_ < limit_; });
  ++in_flight_;
  return Token(shared_from_this());
}

int InFlightLimit::in_flight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_;
}

void InFlightLimit::Return() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --in_flight_;
  }
  freed_.notify_one();
}

}  // namespace kiln::runtime
