// Logging and internal invariant checks.
//
// KILN_LOG(INFO|WARNING|ERROR|DEBUG) << ...; writes one line to stderr when
// the level is enabled. The threshold comes from $KILN_LOG_LEVEL (debug,
// info, warning, error; default warning), read once.
//
// KILN_CHECK(cond) guards invariants of Kiln's own code. It is never used
// for anything a user can cause: those are Status errors.
#ifndef KILN_BASE_LOGGING_H_
#define KILN_BASE_LOGGING_H_

#include <sstream>
#include <string>

namespace kiln {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

bool LogLevelEnabled(LogLevel level);

namespace internal {
class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

[[noreturn]] void CheckFailed(const char* condition, const char* file, int line,
                              const std::string& detail);

struct CheckMessage {
  const char* condition;
  const char* file;
  int line;
  std::ostringstream stream;
  [[noreturn]] ~CheckMessage() { CheckFailed(condition, file, line, stream.str()); }
};
}  // namespace internal
}  // namespace kiln

#define KILN_LOG_LEVEL_DEBUG ::kiln::LogLevel::kDebug
#define KILN_LOG_LEVEL_INFO ::kiln::LogLevel::kInfo
#define KILN_LOG_LEVEL_WARNING ::kiln::LogLevel::kWarning
#define KILN_LOG_LEVEL_ERROR ::kiln::LogLevel::kError

#define KILN_LOG(level)                                       \
  if (!::kiln::LogLevelEnabled(KILN_LOG_LEVEL_##level)) {     \
  } else                                                      \
    ::kiln::internal::LogMessage(KILN_LOG_LEVEL_##level, __FILE__, __LINE__) \
        .stream()

#define KILN_CHECK(condition)                                          \
  if (condition) {                                                     \
  } else                                                               \
    ::kiln::internal::CheckMessage{#condition, __FILE__, __LINE__, {}} \
        .stream

#endif  // KILN_BASE_LOGGING_H_
