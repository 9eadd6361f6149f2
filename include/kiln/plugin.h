// Loading a PJRT plugin: dlopen, GetPjrtApi, the version check,
// PJRT_Plugin_Initialize (once per plugin), its attributes and extensions.
//
// The client reads a plugin only through the PJRT C ABI. A plugin of another
// minor version works: every slot the plugin's minor version or its
// `PJRT_Api.struct_size` does not cover is treated as absent and never
// called, and every argument struct carries Kiln's own `struct_size`, so the
// plugin reads only the fields both sides know.
#ifndef KILN_CLIENT_PLUGIN_H_
#define KILN_CLIENT_PLUGIN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"
#include "pjrt_c_api.h"

namespace kiln::client {

// The oldest minor version the client accepts (the same floor as XLA's own
// plugin loader in compatibility mode).
inline constexpr int kMinimumPluginMinorVersion = 29;

// One entry of a PJRT named-value list (plugin, device and topology
// attributes; client create options).
struct NamedValue {
  using Value =
      std::variant<std::string, int64_t, std::vector<int64_t>, float, bool>;
  std::string name;
  Value value;

  // "2", "[1, 2, 3]", "\"text\"", "true", "0.5".
  std::string ValueToString() const;
};

// "Layouts", "MemoryDescriptions", ...; "Unknown(N)" past the 0.112 list.
std::string ExtensionTypeName(PJRT_Extension_Type type);

// Copies a PJRT named-value array. A value of an unknown type is an
// INVALID_ARGUMENT error naming the entry (never a crash).
StatusOr<std::vector<NamedValue>> CopyNamedValues(const PJRT_NamedValue* values,
                                                  size_t count);

// A loaded plugin. Plugins are never unloaded: one `Plugin` per library
// file lives until the process exits, and `Load` of the same file returns it.
class Plugin {
 public:
  // Loads the library at `path` (dlopen with local symbols), checks its
  // version, calls PJRT_Plugin_Initialize and reads its attributes. Errors:
  // NOT_FOUND (no such library, or no GetPjrtApi symbol), FAILED_PRECONDITION
  // (another major version, a minor older than kMinimumPluginMinorVersion),
  // INVALID_ARGUMENT (a table too small to hold the error slots), or the
  // plugin's own error from PJRT_Plugin_Initialize.
  static StatusOr<std::shared_ptr<Plugin>> Load(const std::string& path);

  // Wraps a table that is already in the process (a plugin linked in). The
  // same checks and initialization as `Load`; `name` is used in messages.
  static StatusOr<std::shared_ptr<Plugin>> FromApi(const PJRT_Api* api,
                                                   std::string name);

  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  // The library path given to Load (or the name given to FromApi).
  const std::string& path() const { return path_; }
  int major_version() const { return major_; }
  int minor_version() const { return minor_; }
  // "0.112".
  std::string version_string() const;
  // The plugin's own `PJRT_Api.struct_size`.
  size_t api_struct_size() const { return api_struct_size_; }

  // The plugin's table as the client may use it: a copy in which every slot
  // past the plugin's struct_size, or newer than its minor version, is null.
  const PJRT_Api& api() const { return table_; }
  // The plugin's table itself (for passing to code that wants PJRT_Api*).
  const PJRT_Api* raw_api() const { return raw_; }

  // Names of the slots the plugin provides that the client may call, and of
  // those it does not (null, past its table, or newer than its version).
  std::vector<std::string_view> AvailableSlots() const;
  std::vector<std::string_view> AbsentSlots() const;

  // The attributes from PJRT_Plugin_Attributes (empty when the slot is
  // absent), copied at load time.
  const std::vector<NamedValue>& attributes() const { return attributes_; }
  // The attribute `name`, or null.
  const NamedValue* FindAttribute(std::string_view name) const;

  // The extension types on the plugin's `PJRT_Api.extension_start` chain,
  // in chain order.
  const std::vector<PJRT_Extension_Type>& extension_types() const {
    return extension_types_;
  }
  // The first extension of `type`, or null (absent features are not errors).
  const PJRT_Extension_Base* FindExtension(PJRT_Extension_Type type) const;

  // Converts and destroys an error the plugin returned: its code, message
  // and payloads become a Status. Null is OK.
  Status ConsumeError(PJRT_Error* error) const;

  // Calls a slot of the plugin's table with `args`; an absent slot is
  // UNIMPLEMENTED naming the slot and the plugin's version. Use through
  // KILN_PJRT_CALL.
  template <typename Args>
  Status Call(PJRT_Error* (*fn)(Args*), std::string_view slot,
              Args* args) const {
    if (fn == nullptr) return AbsentSlotError(slot);
    return ConsumeError(fn(args));
  }
  Status AbsentSlotError(std::string_view slot) const;

 private:
  Plugin() = default;
  static StatusOr<std::shared_ptr<Plugin>> Initialize(
      std::shared_ptr<Plugin> plugin);

  std::string path_;
  void* library_ = nullptr;
  const PJRT_Api* raw_ = nullptr;
  PJRT_Api table_{};
  size_t api_struct_size_ = 0;
  int major_ = 0;
  int minor_ = 0;
  std::vector<NamedValue> attributes_;
  std::vector<PJRT_Extension_Type> extension_types_;
  std::vector<const PJRT_Extension_Base*> extensions_;
};

// A PJRT argument struct of type T, zeroed, with Kiln's struct_size.
template <typename T>
T MakePjrtArgs(size_t struct_size) {
  T args{};
  args.struct_size = struct_size;
  return args;
}

}  // namespace kiln::client

// `auto args = KILN_PJRT_ARGS(PJRT_Client_Devices_Args);`
#define KILN_PJRT_ARGS(Type) \
  ::kiln::client::MakePjrtArgs<Type>(Type##_STRUCT_SIZE)

// `RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_Client_Devices, args));`
#define KILN_PJRT_CALL(plugin, Slot, args) \
  (plugin).Call((plugin).api().Slot, #Slot, &(args))

#endif  // KILN_CLIENT_PLUGIN_H_
