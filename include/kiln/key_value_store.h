// A key-value store the processes of one job share, for PJRT clients of
// several processes (PJRT_Client_Create's kv_get / kv_put callbacks).
//
// FileKeyValueStore keeps each key in a file of one directory, so processes
// on one machine (the `kiln` command line, tests, benchmarks) share it by
// naming the same directory. A framework with its own store (JAX's
// distributed client) passes that instead.
#ifndef KILN_CLIENT_KEY_VALUE_STORE_H_
#define KILN_CLIENT_KEY_VALUE_STORE_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::client {

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;
  // Sets `key` to `value`.
  virtual Status Put(std::string_view key, std::string_view value) = 0;
  // The value of `key`, waiting up to `timeout` for a process to put it;
  // DEADLINE_EXCEEDED when none does.
  virtual StatusOr<std::string> Get(std::string_view key,
                                    std::chrono::milliseconds timeout) = 0;
};

// Keys as files of `directory` (hex-encoded names), written to a temporary
// file and renamed, so a reader sees a value whole or not at all.
class FileKeyValueStore : public KeyValueStore {
 public:
  // Creates `directory` when missing.
  static StatusOr<std::shared_ptr<FileKeyValueStore>> Open(
      const std::string& directory);

  Status Put(std::string_view key, std::string_view value) override;
  StatusOr<std::string> Get(std::string_view key,
                            std::chrono::milliseconds timeout) override;
  const std::string& directory() const { return directory_; }

 private:
  explicit FileKeyValueStore(std::string directory)
      : directory_(std::move(directory)) {}
  std::string PathOf(std::string_view key) const;

  std::string directory_;
};

}  // namespace kiln::client

#endif  // KILN_CLIENT_KEY_VALUE_STORE_H_
