#include "base/logging.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace kiln {
namespace {

LogLevel ThresholdFromEnvironment() {
  const char* value = std::getenv("KILN_LOG_LEVEL");
  if (value == nullptr) return LogLevel::kWarning;
  if (std::strcmp(value, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(value, "info") == 0) return LogLevel::kInfo;
  if (std::strcmp(value, "error") == 0) return LogLevel::kError;
  return LogLevel::kWarning;
}

const char* LevelLetter(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "D";
    case LogLevel::kInfo: return "I";
    case LogLevel::kWarning: return "W";
    case LogLevel::kError: return "E";
  }
  return "?";
}

std::mutex& LogMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

bool LogLevelEnabled(LogLevel level) {
  static const LogLevel threshold = ThresholdFromEnvironment();
  return static_cast<int>(level) >= static_cast<int>(threshold);
}

namespace internal {

LogMessage::LogMessage(LogLevel level, const char* file, int line)
    : level_(level) {
  const char* base = std::strrchr(file, '/');
  stream_ << "kiln " << LevelLetter(level) << " " << (base ? base + 1 : file)
          << ":" << line << "] ";
}

LogMessage::~LogMessage() {
  stream_ << "\n";
  std::lock_guard<std::mutex> lock(LogMutex());
  std::fputs(stream_.str().c_str(), stderr);
}

void CheckFailed(const char* condition, const char* file, int line,
                 const std::string& detail) {
  std::fprintf(stderr, "kiln: internal check failed at %s:%d: %s %s\n", file,
               line, condition, detail.c_str());
  std::abort();
}

}  // namespace internal
}  // namespace kiln
