// Replays inputs through a fuzz target's LLVMFuzzerTestOneInput without
// libFuzzer, so that the normal build (and its sanitizer builds) run every
// input that ever crashed a target (tests/fuzz/regressions/<target>/) and a
// sample of seeds on every test run.
//   <target>_replay [--limit N] [--shared] FILE_OR_DIR...
// Directories are read recursively, in name order; at most N files of each
// (default: all). Paths after --shared are relative to $KILN_SHARED_DIR
// (default: the build's KILN_DEFAULT_SHARED_DIR). Exits 77 (CTest's skip)
// when no input was found at all.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#ifndef KILN_DEFAULT_SHARED_DIR
#define KILN_DEFAULT_SHARED_DIR "../shared"
#endif

int main(int argc, char** argv) {
  size_t limit = SIZE_MAX;
  size_t replayed = 0;
  bool shared = false;
  const char* shared_dir = std::getenv("KILN_SHARED_DIR");
  if (shared_dir == nullptr) shared_dir = KILN_DEFAULT_SHARED_DIR;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--limit" && i + 1 < argc) {
      limit = std::strtoull(argv[++i], nullptr, 10);
      continue;
    }
    if (arg == "--shared") {
      shared = true;
      continue;
    }
    if (shared) arg = std::string(shared_dir) + "/" + arg;
    std::vector<std::filesystem::path> files;
    std::error_code error;
    if (std::filesystem::is_directory(arg, error)) {
      for (const auto& entry :
           std::filesystem::recursive_directory_iterator(arg, error)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      if (files.size() > limit) files.resize(limit);
    } else if (std::filesystem::is_regular_file(arg, error)) {
      files.push_back(arg);
    } else {
      std::printf("replay: %s is absent, skipped\n", arg.c_str());
      continue;
    }
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)),
                        std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                             bytes.size());
      ++replayed;
    }
  }
  if (replayed == 0) {
    std::printf("replay: skipped: no inputs (no regressions or seeds of this "
                "target, and the shared corpus is absent)\n");
    return 77;
  }
  std::printf("replay: %zu inputs ran clean\n", replayed);
  return 0;
}
