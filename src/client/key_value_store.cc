#include "kiln/key_value_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "base/strings.h"

namespace kiln::client {
namespace {

// How often Get looks for a key that is not there yet.
constexpr std::chrono::milliseconds kPollInterval(2);

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 15]);
  }
  return hex;
}

// Reads the whole file at `path`; false when it does not exist.
StatusOr<bool> ReadIfPresent(const std::string& path, std::string& out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    return UnavailableError("cannot open ", path, ": ", std::strerror(errno));
  }
  out.clear();
  char chunk[65536];
  while (true) {
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      close(fd);
      return UnavailableError("cannot read ", path, ": ", std::strerror(error));
    }
    if (n == 0) break;
    out.append(chunk, static_cast<size_t>(n));
  }
  close(fd);
  return true;
}

}  // namespace

StatusOr<std::shared_ptr<FileKeyValueStore>> FileKeyValueStore::Open(
    const std::string& directory) {
  if (directory.empty()) {
    return InvalidArgumentError("the key-value store needs a directory");
  }
  if (mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    return InvalidArgumentError("cannot create the key-value directory ",
                                directory, ": ", std::strerror(errno));
  }
  return std::shared_ptr<FileKeyValueStore>(new FileKeyValueStore(directory));
}

std::string FileKeyValueStore::PathOf(std::string_view key) const {
  return StrCat(directory_, "/", HexEncode(key));
}

Status FileKeyValueStore::Put(std::string_view key, std::string_view value) {
  static std::atomic<uint64_t> counter{0};
  const std::string path = PathOf(key);
  const std::string temporary =
      StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
  int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return UnavailableError("cannot write ", temporary, ": ",
                            std::strerror(errno));
  }
  size_t written = 0;
  while (written < value.size()) {
    ssize_t n = write(fd, value.data() + written, value.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      close(fd);
      unlink(temporary.c_str());
      return UnavailableError("cannot write ", temporary, ": ",
                              std::strerror(error));
    }
    written += static_cast<size_t>(n);
  }
  close(fd);
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    unlink(temporary.c_str());
    return UnavailableError("cannot rename ", temporary, " to ", path, ": ",
                            std::strerror(error));
  }
  return OkStatus();
}

StatusOr<std::string> FileKeyValueStore::Get(
    std::string_view key, std::chrono::milliseconds timeout) {
  const std::string path = PathOf(key);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string value;
  while (true) {
    ASSIGN_OR_RETURN(bool present, ReadIfPresent(path, value));
    if (present) return value;
    if (std::chrono::steady_clock::now() >= deadline) {
      return DeadlineExceededError(
          "key \"", EscapeForMessage(key), "\" did not appear in ", directory_,
          " within ", std::chrono::duration<double>(timeout).count(), " s");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace kiln::client
