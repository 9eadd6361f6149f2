#include "base/file.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <unistd.h>

namespace kiln {

StatusOr<std::string> ReadFile(const std::string& path) {
  if (path == "-") {
    std::string contents((std::istreambuf_iterator<char>(std::cin)),
                         std::istreambuf_iterator<char>());
    return contents;
  }
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return NotFoundError("cannot open ", path, ": ", std::strerror(errno));
  }
  std::string contents;
  char chunk[1 << 16];
  size_t read;
  while ((read = std::fread(chunk, 1, sizeof(chunk), file)) > 0) {
    contents.append(chunk, read);
  }
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) return DataLossError("error reading ", path);
  return contents;
}

Status WriteFile(const std::string& path, std::string_view contents) {
  std::string temporary = StrCat(path, ".tmp.", getpid());
  FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) {
    return NotFoundError("cannot create ", temporary, ": ", std::strerror(errno));
  }
  size_t written = std::fwrite(contents.data(), 1, contents.size(), file);
  bool failed = written != contents.size() || std::fclose(file) != 0;
  if (failed) {
    std::remove(temporary.c_str());
    return DataLossError("error writing ", path);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return DataLossError("cannot rename ", temporary, " to ", path, ": ",
                         std::strerror(errno));
  }
  return OkStatus();
}

std::string GetEnv(const char* name, std::string_view fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::string(fallback);
  return value;
}

}  // namespace kiln
