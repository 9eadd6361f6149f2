// A key-value store the processes of one job share: how multi-process
// clients exchange their devices and set up their collectives.
//
// The framework provides it (PJRT_Client_Create's kv_get / kv_put
// callbacks; JAX passes its distributed client's store), or Kiln's client
// does (kiln/key_value_store.h). Keys are written once.
#ifndef KILN_RUNTIME_KEY_VALUE_STORE_H_
#define KILN_RUNTIME_KEY_VALUE_STORE_H_

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::runtime {

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;
  // Sets `key` to `value`.
  virtual Status Put(std::string_view key, std::string_view value) = 0;
  // The value of `key`, waiting up to `timeout` for some process to put
  // it: DEADLINE_EXCEEDED (or the store's own error) when none does.
  virtual StatusOr<std::string> Get(std::string_view key,
                                    std::chrono::milliseconds timeout) = 0;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_KEY_VALUE_STORE_H_
