// The framework's key-value store (PJRT_Client_Create's kv_get and kv_put
// callbacks) as the runtime's KeyValueStore.
#ifndef KILN_PJRT_KEY_VALUE_STORE_H_
#define KILN_PJRT_KEY_VALUE_STORE_H_

#include <memory>

#include "base/status.h"
#include "pjrt_c_api.h"
#include "runtime/key_value_store.h"

namespace kiln::pjrt {

// The store behind `args`' callbacks: INVALID_ARGUMENT when kv_get or
// kv_put is missing. The callbacks must stay valid as long as the client
// (PJRT's contract: the framework's distributed client outlives it).
StatusOr<std::shared_ptr<runtime::KeyValueStore>> CallbackKeyValueStore(
    const PJRT_Client_Create_Args& args);

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_KEY_VALUE_STORE_H_
