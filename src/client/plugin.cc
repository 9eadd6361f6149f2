#include "kiln/plugin.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <cstring>
#include <map>
#include <mutex>

#include "base/logging.h"
#include "base/strings.h"
#include "client/pjrt_util.h"

namespace kiln::client {
namespace {

struct SlotInfo {
  const char* name;
  size_t offset;
  int added_in_minor;
};

#define KILN_PJRT_SLOT(name, minor, state) \
  {#name, offsetof(PJRT_Api, name), minor},
constexpr SlotInfo kSlots[] = {
#include "pjrt_c_api_slots.def"
};

constexpr size_t kNumSlots = sizeof(kSlots) / sizeof(kSlots[0]);
static_assert(kNumSlots == 138, "PJRT_Api 0.112 has 138 slots");

// The slots without which no error can be read: a plugin must have them.
constexpr size_t kRequiredTableSize =
    offsetof(PJRT_Api, PJRT_Error_GetCode) + sizeof(void*);

// A chain longer than this is taken as a cycle (the C API defines 25 types).
constexpr int kMaxExtensions = 256;

using GetPjrtApiFn = const PJRT_Api* (*)();

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

// Plugins by canonical library path, alive for the whole process.
std::map<std::string, std::shared_ptr<Plugin>>& Registry() {
  static auto* registry = new std::map<std::string, std::shared_ptr<Plugin>>;
  return *registry;
}

bool SlotUsable(const SlotInfo& slot, size_t struct_size, int minor) {
  return slot.offset + sizeof(void*) <= struct_size &&
         slot.added_in_minor <= minor;
}

}  // namespace

std::string ExtensionTypeName(PJRT_Extension_Type type) {
  static constexpr const char* kNames[] = {"Gpu_Custom_Call",
                                           "Profiler",
                                           "Custom_Partitioner",
                                           "Stream",
                                           "Layouts",
                                           "FFI",
                                           "MemoryDescriptions",
                                           "Triton",
                                           "RawBuffer",
                                           "PhaseCompile",
                                           "Example",
                                           "Unknown",
                                           "CrossHostTransfers",
                                           "ExecutableMetadata",
                                           "Callback",
                                           "HostAllocator",
                                           "TpuTopology",
                                           "TpuExecutable",
                                           "Megascale",
                                           "Shardings",
                                           "AbiVersion",
                                           "Collectives",
                                           "MultiSlice",
                                           "HostMemoryAllocator",
                                           "XlaTransform"};
  int index = static_cast<int>(type);
  if (index >= 0 && index < static_cast<int>(std::size(kNames))) {
    return kNames[index];
  }
  return StrCat("Unknown(", index, ")");
}

std::string NamedValue::ValueToString() const {
  struct Printer {
    std::string operator()(const std::string& v) const {
      return StrCat("\"", EscapeForMessage(v, 256), "\"");
    }
    std::string operator()(int64_t v) const { return StrCat(v); }
    std::string operator()(const std::vector<int64_t>& v) const {
      return StrCat("[", StrJoin(v, ", "), "]");
    }
    std::string operator()(float v) const { return StrCat(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
  };
  return std::visit(Printer{}, value);
}

StatusOr<std::vector<NamedValue>> CopyNamedValues(const PJRT_NamedValue* values,
                                                  size_t count) {
  std::vector<NamedValue> out;
  if (count == 0) return out;
  if (values == nullptr) {
    return InvalidArgumentError("named-value list of ", count,
                                " entries has a null array");
  }
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& in = values[i];
    NamedValue value;
    if (in.name == nullptr && in.name_size > 0) {
      return InvalidArgumentError("named value ", i, " has a null name");
    }
    value.name.assign(in.name == nullptr ? "" : in.name, in.name_size);
    // Read as a number: a plugin may store anything in the field.
    int type = internal::RawEnumValue(in.type);
    switch (type) {
      case PJRT_NamedValue_kString:
        if (in.string_value == nullptr && in.value_size > 0) {
          return InvalidArgumentError("named value '", value.name,
                                      "' has a null string");
        }
        value.value = std::string(
            in.string_value == nullptr ? "" : in.string_value, in.value_size);
        break;
      case PJRT_NamedValue_kInt64:
        value.value = in.int64_value;
        break;
      case PJRT_NamedValue_kInt64List:
        if (in.int64_array_value == nullptr && in.value_size > 0) {
          return InvalidArgumentError("named value '", value.name,
                                      "' has a null list");
        }
        value.value = std::vector<int64_t>(
            in.int64_array_value, in.int64_array_value + in.value_size);
        break;
      case PJRT_NamedValue_kFloat:
        value.value = in.float_value;
        break;
      case PJRT_NamedValue_kBool:
        value.value = in.bool_value;
        break;
      default:
        return InvalidArgumentError("named value '", value.name,
                                    "' has unknown type ", type,
                                    " (expected 0 to 4)");
    }
    out.push_back(std::move(value));
  }
  return out;
}

StatusOr<std::shared_ptr<Plugin>> Plugin::Load(const std::string& path) {
  if (path.empty()) return InvalidArgumentError("PJRT plugin path is empty");
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) {
    return NotFoundError("cannot load PJRT plugin ", path, ": ",
                         std::strerror(errno));
  }
  std::string canonical(resolved);
  free(resolved);

  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto found = Registry().find(canonical);
  if (found != Registry().end()) return found->second;

  // RTLD_LOCAL: the plugin's symbols (its protobuf, its allocator, ...)
  // must not resolve another library's references, nor ours.
  dlerror();
  void* library = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    return NotFoundError("cannot load PJRT plugin ", path, ": ",
                         reason == nullptr ? "dlopen failed" : reason);
  }
  dlerror();
  auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(library, "GetPjrtApi"));
  if (get_api == nullptr) {
    dlclose(library);
    return NotFoundError(path,
                         " is not a PJRT plugin: it exports no GetPjrtApi "
                         "symbol");
  }
  const PJRT_Api* api = get_api();
  if (api == nullptr) {
    dlclose(library);
    return InvalidArgumentError("GetPjrtApi of ", path, " returned null");
  }
  auto plugin = std::shared_ptr<Plugin>(new Plugin());
  plugin->path_ = path;
  plugin->library_ = library;
  plugin->raw_ = api;
  auto initialized = Initialize(plugin);
  if (!initialized.ok()) {
    // A plugin that failed its checks was never initialized: unloading it
    // is safe, and keeps a rejected library from lingering.
    dlclose(library);
    return initialized.status();
  }
  Registry().emplace(canonical, plugin);
  return plugin;
}

StatusOr<std::shared_ptr<Plugin>> Plugin::FromApi(const PJRT_Api* api,
                                                  std::string name) {
  if (api == nullptr) {
    return InvalidArgumentError("PJRT_Api of ", name, " is null");
  }
  std::string key = StrCat("api:", reinterpret_cast<uintptr_t>(api));
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto found = Registry().find(key);
  if (found != Registry().end()) return found->second;
  auto plugin = std::shared_ptr<Plugin>(new Plugin());
  plugin->path_ = std::move(name);
  plugin->raw_ = api;
  ASSIGN_OR_RETURN(plugin, Initialize(plugin));
  Registry().emplace(key, plugin);
  return plugin;
}

StatusOr<std::shared_ptr<Plugin>> Plugin::Initialize(
    std::shared_ptr<Plugin> plugin) {
  const PJRT_Api* api = plugin->raw_;
  // The version struct sits before the slots; a table too small for it and
  // the three error slots cannot be used at all.
  if (api->struct_size < kRequiredTableSize) {
    return InvalidArgumentError(
        "PJRT plugin ", plugin->path_, " has a PJRT_Api of ", api->struct_size,
        " bytes; at least ", kRequiredTableSize,
        " are needed for the version and the error slots");
  }
  plugin->major_ = api->pjrt_api_version.major_version;
  plugin->minor_ = api->pjrt_api_version.minor_version;
  plugin->api_struct_size_ = api->struct_size;
  if (plugin->major_ != PJRT_API_MAJOR) {
    return FailedPreconditionError(
        "PJRT plugin ", plugin->path_, " speaks PJRT C API ",
        plugin->version_string(), "; Kiln's client speaks ", PJRT_API_MAJOR,
        ".", PJRT_API_MINOR, " and loads plugins of major version ",
        PJRT_API_MAJOR, " only");
  }
  if (plugin->minor_ < kMinimumPluginMinorVersion) {
    return FailedPreconditionError(
        "PJRT plugin ", plugin->path_, " speaks PJRT C API ",
        plugin->version_string(), "; the oldest version Kiln's client loads ",
        "is ", PJRT_API_MAJOR, ".", kMinimumPluginMinorVersion);
  }

  // Copy only what the plugin's table holds, then drop every slot its
  // version cannot have: those pointers are never read again.
  size_t copy_size = std::min(api->struct_size, sizeof(PJRT_Api));
  std::memcpy(&plugin->table_, api, copy_size);
  plugin->table_.struct_size = copy_size;
  for (const SlotInfo& slot : kSlots) {
    if (!SlotUsable(slot, api->struct_size, plugin->minor_)) {
      std::memset(reinterpret_cast<char*>(&plugin->table_) + slot.offset, 0,
                  sizeof(void*));
    }
  }
  if (plugin->table_.PJRT_Error_Destroy == nullptr ||
      plugin->table_.PJRT_Error_Message == nullptr ||
      plugin->table_.PJRT_Error_GetCode == nullptr) {
    return InvalidArgumentError("PJRT plugin ", plugin->path_,
                                " leaves an error slot (PJRT_Error_Destroy, "
                                "PJRT_Error_Message, PJRT_Error_GetCode) null");
  }

  // The extension chain, guarded against cycles.
  const PJRT_Extension_Base* extension = api->extension_start;
  for (int count = 0; extension != nullptr; ++count) {
    if (count == kMaxExtensions) {
      return InvalidArgumentError("PJRT plugin ", plugin->path_,
                                  " has an extension chain longer than ",
                                  kMaxExtensions, " entries (a cycle?)");
    }
    plugin->extensions_.push_back(extension);
    plugin->extension_types_.push_back(extension->type);
    extension = extension->next;
  }

  if (plugin->table_.PJRT_Plugin_Initialize != nullptr) {
    auto args = KILN_PJRT_ARGS(PJRT_Plugin_Initialize_Args);
    Status status = KILN_PJRT_CALL(*plugin, PJRT_Plugin_Initialize, args);
    if (!status.ok()) {
      return status.WithContext(
          StrCat("PJRT_Plugin_Initialize of ", plugin->path_));
    }
  }
  if (plugin->table_.PJRT_Plugin_Attributes != nullptr) {
    auto args = KILN_PJRT_ARGS(PJRT_Plugin_Attributes_Args);
    RETURN_IF_ERROR(KILN_PJRT_CALL(*plugin, PJRT_Plugin_Attributes, args));
    auto attributes = CopyNamedValues(args.attributes, args.num_attributes);
    if (!attributes.ok()) {
      return attributes.status().WithContext(
          StrCat("PJRT_Plugin_Attributes of ", plugin->path_));
    }
    plugin->attributes_ = std::move(*attributes);
  }
  KILN_LOG(DEBUG) << "loaded PJRT plugin " << plugin->path_ << " (API "
                  << plugin->version_string() << ", "
                  << plugin->AvailableSlots().size() << " slots usable)";
  return plugin;
}

std::string Plugin::version_string() const {
  return StrCat(major_, ".", minor_);
}

std::vector<std::string_view> Plugin::AvailableSlots() const {
  std::vector<std::string_view> names;
  for (const SlotInfo& slot : kSlots) {
    void* pointer;
    std::memcpy(&pointer, reinterpret_cast<const char*>(&table_) + slot.offset,
                sizeof(void*));
    if (pointer != nullptr) names.push_back(slot.name);
  }
  return names;
}

std::vector<std::string_view> Plugin::AbsentSlots() const {
  std::vector<std::string_view> names;
  for (const SlotInfo& slot : kSlots) {
    void* pointer;
    std::memcpy(&pointer, reinterpret_cast<const char*>(&table_) + slot.offset,
                sizeof(void*));
    if (pointer == nullptr) names.push_back(slot.name);
  }
  return names;
}

const NamedValue* Plugin::FindAttribute(std::string_view name) const {
  for (const NamedValue& attribute : attributes_) {
    if (attribute.name == name) return &attribute;
  }
  return nullptr;
}

const PJRT_Extension_Base* Plugin::FindExtension(
    PJRT_Extension_Type type) const {
  for (const PJRT_Extension_Base* extension : extensions_) {
    if (extension->type == type) return extension;
  }
  return nullptr;
}

Status Plugin::AbsentSlotError(std::string_view slot) const {
  return UnimplementedError("PJRT plugin ", path_, " (API ", version_string(),
                            ") does not provide ", slot);
}

Status Plugin::ConsumeError(PJRT_Error* error) const {
  if (error == nullptr) return OkStatus();
  auto code_args = KILN_PJRT_ARGS(PJRT_Error_GetCode_Args);
  code_args.error = error;
  PJRT_Error* code_error = table_.PJRT_Error_GetCode(&code_args);
  StatusCode code = StatusCode::kUnknown;
  if (code_error == nullptr) {
    int raw = internal::RawEnumValue(code_args.code);
    // A plugin that reports OK or an unknown number for a real error still
    // failed: keep the failure, call it UNKNOWN.
    if (raw > 0 && raw <= static_cast<int>(StatusCode::kUnauthenticated)) {
      code = static_cast<StatusCode>(raw);
    }
  } else {
    auto destroy = KILN_PJRT_ARGS(PJRT_Error_Destroy_Args);
    destroy.error = code_error;
    table_.PJRT_Error_Destroy(&destroy);
  }

  auto message_args = KILN_PJRT_ARGS(PJRT_Error_Message_Args);
  message_args.error = error;
  table_.PJRT_Error_Message(&message_args);
  std::string message =
      message_args.message == nullptr
          ? std::string("(the plugin gave no message)")
          : std::string(message_args.message, message_args.message_size);
  Status status(code, std::move(message));

  if (table_.PJRT_Error_ForEachPayload != nullptr) {
    std::vector<std::pair<std::string, std::string>> payloads;
    auto payload_args = KILN_PJRT_ARGS(PJRT_Error_ForEachPayload_Args);
    payload_args.error = error;
    payload_args.user_arg = &payloads;
    payload_args.visitor = [](const char* key, size_t key_size,
                              const char* value, size_t value_size,
                              void* user_arg) {
      auto* out =
          static_cast<std::vector<std::pair<std::string, std::string>>*>(
              user_arg);
      out->emplace_back(
          std::string(key == nullptr ? "" : key, key == nullptr ? 0 : key_size),
          std::string(value == nullptr ? "" : value,
                      value == nullptr ? 0 : value_size));
    };
    PJRT_Error* payload_error = table_.PJRT_Error_ForEachPayload(&payload_args);
    if (payload_error != nullptr) {
      // Never convert this one recursively: a failing ForEachPayload would
      // recurse forever (a known plugin bug). Drop it.
      auto destroy = KILN_PJRT_ARGS(PJRT_Error_Destroy_Args);
      destroy.error = payload_error;
      table_.PJRT_Error_Destroy(&destroy);
    } else {
      for (auto& [key, value] : payloads) {
        status = status.WithPayload(std::move(key), std::move(value));
      }
    }
  }

  auto destroy = KILN_PJRT_ARGS(PJRT_Error_Destroy_Args);
  destroy.error = error;
  table_.PJRT_Error_Destroy(&destroy);
  return status;
}

}  // namespace kiln::client
