#include "base/status.h"

namespace kiln {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kCancelled: return "CANCELLED";
    case StatusCode::kUnknown: return "UNKNOWN";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kAborted: return "ABORTED";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kUnauthenticated: return "UNAUTHENTICATED";
  }
  return "UNKNOWN_CODE";
}

Status::Status(StatusCode code, std::string message) {
  if (code == StatusCode::kOk) return;
  state_ = std::make_shared<const State>(State{code, std::move(message), {}});
}

const std::vector<std::pair<std::string, std::string>>& Status::payloads()
    const {
  static const std::vector<std::pair<std::string, std::string>> kNone;
  return state_ ? state_->payloads : kNone;
}

Status Status::WithPayload(std::string key, std::string value) const {
  if (ok()) return *this;
  auto state = std::make_shared<State>(*state_);
  state->payloads.emplace_back(std::move(key), std::move(value));
  Status result;
  result.state_ = std::move(state);
  return result;
}

Status Status::WithContext(std::string_view prefix) const {
  if (ok()) return *this;
  auto state = std::make_shared<State>(*state_);
  state->message = StrCat(prefix, ": ", state_->message);
  Status result;
  result.state_ = std::move(state);
  return result;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return StrCat(StatusCodeName(code()), ": ", message());
}

}  // namespace kiln
