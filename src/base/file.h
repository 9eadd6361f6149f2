// Whole-file reading and writing with Status errors.
#ifndef KILN_BASE_FILE_H_
#define KILN_BASE_FILE_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln {

// Reads a whole file; "-" reads standard input.
StatusOr<std::string> ReadFile(const std::string& path);

// Writes `contents` to `path` atomically (a temporary file, then rename).
Status WriteFile(const std::string& path, std::string_view contents);

// The value of an environment variable, or `fallback` when unset or empty.
std::string GetEnv(const char* name, std::string_view fallback = "");

}  // namespace kiln

#endif  // KILN_BASE_FILE_H_
