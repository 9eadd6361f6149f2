#include "support/test_support.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <limits>

#include "base/file.h"

#ifndef KILN_DEFAULT_SHARED_DIR
#define KILN_DEFAULT_SHARED_DIR "../shared"
#endif
#ifndef KILN_BINARY_DIR
#define KILN_BINARY_DIR "build"
#endif

namespace kiln::testing {

std::optional<std::string> SharedDir() {
  std::string dir = GetEnv("KILN_SHARED_DIR", KILN_DEFAULT_SHARED_DIR);
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return std::nullopt;
  return dir;
}

std::string BuildDir() { return GetEnv("KILN_BUILD_DIR", KILN_BINARY_DIR); }

std::vector<std::string> ListFiles(const std::string& dir,
                                   const std::string& suffix) {
  std::vector<std::string> files;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
       !error && it != std::filesystem::recursive_directory_iterator();
       it.increment(error)) {
    if (!it->is_regular_file()) continue;
    std::string path = it->path().string();
    if (path.size() >= suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      files.push_back(path);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

int64_t UlpDistance(float a, float b) {
  auto key = [](float v) {
    int32_t bits = std::bit_cast<int32_t>(v);
    return bits < 0 ? int64_t{std::numeric_limits<int32_t>::min()} - bits
                    : int64_t{bits};
  };
  int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

}  // namespace kiln::testing
