// Status and StatusOr: Kiln's one error type.
//
// Every fallible function returns `Status` or `StatusOr<T>` and propagates
// failures with RETURN_IF_ERROR / ASSIGN_OR_RETURN. The codes are the
// canonical ones (the same numbers as `PJRT_Error_Code`), so a status crosses
// the C ABI without translation.
#ifndef KILN_BASE_STATUS_H_
#define KILN_BASE_STATUS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/strings.h"

namespace kiln {

// Canonical error codes, numbered as PJRT_Error_Code and absl::StatusCode.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "INVALID_ARGUMENT" etc.
std::string_view StatusCodeName(StatusCode code);

// A success or an error with a code, a message and optional key/value
// payloads. Copying is cheap: the error state is shared and immutable.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  std::string_view message() const {
    return state_ ? std::string_view(state_->message) : std::string_view();
  }
  // Payloads, as PJRT_Error_ForEachPayload reports them.
  const std::vector<std::pair<std::string, std::string>>& payloads() const;
  Status WithPayload(std::string key, std::string value) const;

  // A copy whose message is `prefix` + ": " + this message.
  Status WithContext(std::string_view prefix) const;

  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  // Marks a status as deliberately ignored.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct State {
    StatusCode code;
    std::string message;
    std::vector<std::pair<std::string, std::string>> payloads;
  };
  std::shared_ptr<const State> state_;
};

inline Status OkStatus() { return Status(); }

// Builders for each error code; the arguments are concatenated with StrCat.
#define KILN_DEFINE_ERROR_BUILDER(Name, Code)                 \
  template <typename... Args>                                 \
  Status Name(const Args&... args) {                          \
    return Status(StatusCode::Code, StrCat(args...));         \
  }
KILN_DEFINE_ERROR_BUILDER(CancelledError, kCancelled)
KILN_DEFINE_ERROR_BUILDER(UnknownError, kUnknown)
KILN_DEFINE_ERROR_BUILDER(InvalidArgumentError, kInvalidArgument)
KILN_DEFINE_ERROR_BUILDER(DeadlineExceededError, kDeadlineExceeded)
KILN_DEFINE_ERROR_BUILDER(NotFoundError, kNotFound)
KILN_DEFINE_ERROR_BUILDER(AlreadyExistsError, kAlreadyExists)
KILN_DEFINE_ERROR_BUILDER(ResourceExhaustedError, kResourceExhausted)
KILN_DEFINE_ERROR_BUILDER(FailedPreconditionError, kFailedPrecondition)
KILN_DEFINE_ERROR_BUILDER(AbortedError, kAborted)
KILN_DEFINE_ERROR_BUILDER(OutOfRangeError, kOutOfRange)
KILN_DEFINE_ERROR_BUILDER(UnimplementedError, kUnimplemented)
KILN_DEFINE_ERROR_BUILDER(InternalError, kInternal)
KILN_DEFINE_ERROR_BUILDER(UnavailableError, kUnavailable)
KILN_DEFINE_ERROR_BUILDER(DataLossError, kDataLoss)
#undef KILN_DEFINE_ERROR_BUILDER

// A value of type T or an error status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // An error. Passing an OK status is a programming error and becomes an
  // INTERNAL error.
  StatusOr(Status status)  // NOLINT(google-explicit-constructor)
      : status_(status.ok() ? InternalError("StatusOr built from OK status")
                            : std::move(status)) {}
  StatusOr(const T& value) : value_(value) {}  // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT
  template <typename U,
            typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                        !std::is_same_v<std::decay_t<U>, T> &&
                                        !std::is_same_v<std::decay_t<U>, Status>>>
  StatusOr(U&& value) : value_(T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

namespace internal {
inline const Status& AsStatus(const Status& s) { return s; }
template <typename T>
const Status& AsStatus(const StatusOr<T>& s) {
  return s.status();
}
}  // namespace internal

}  // namespace kiln

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status or StatusOr) failed.
// The status is copied (cheap: it is shared) so that `expr` may return a
// reference into a temporary, e.g. `RETURN_IF_ERROR(F().status())`.
#define RETURN_IF_ERROR(expr)                                          \
  do {                                                                 \
    ::kiln::Status kiln_status_ = ::kiln::internal::AsStatus((expr));  \
    if (!kiln_status_.ok()) return kiln_status_;                       \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, F())`: declares x from F()'s value or returns
// F()'s error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL(KILN_CONCAT(kiln_statusor_, __LINE__), lhs, expr)
#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#endif  // KILN_BASE_STATUS_H_
