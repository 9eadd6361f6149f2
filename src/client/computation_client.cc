// The process-wide ComputationClient, chosen by $PJRT_DEVICE, and the
// search for Kiln's own plugin.
#include "kiln/computation_client.h"

#include <unistd.h>

#include <mutex>

#include "base/file.h"
#include "base/strings.h"
#include "kiln/pjrt_computation_client.h"

namespace kiln::client {
namespace {

constexpr const char kKilnPluginName[] = "libpjrt_kiln.so";

std::mutex& GlobalMutex() {
  static std::mutex mutex;
  return mutex;
}

ComputationClient*& GlobalClient() {
  static ComputationClient* client = nullptr;
  return client;
}

bool FileExists(const std::string& path) {
  return access(path.c_str(), R_OK) == 0;
}

// The folder of the running program, or "" if /proc does not say.
std::string ExecutableDir() {
  char path[4096];
  ssize_t size = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (size <= 0) return "";
  std::string exe(path, size);
  size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

}  // namespace

StatusOr<std::string> FindKilnPlugin() {
  std::string explicit_path = GetEnv("KILN_LIBRARY_PATH");
  if (!explicit_path.empty()) {
    if (!FileExists(explicit_path)) {
      return NotFoundError("$KILN_LIBRARY_PATH names ", explicit_path,
                           ", which does not exist");
    }
    return explicit_path;
  }
  std::vector<std::string> candidates;
  std::string exe_dir = ExecutableDir();
  if (!exe_dir.empty()) {
    candidates.push_back(StrCat(exe_dir, "/../lib/", kKilnPluginName));
    candidates.push_back(StrCat(exe_dir, "/", kKilnPluginName));
  }
#ifdef KILN_INSTALL_LIBDIR
  candidates.push_back(StrCat(KILN_INSTALL_LIBDIR, "/", kKilnPluginName));
#endif
  for (const std::string& candidate : candidates) {
    if (FileExists(candidate)) return candidate;
  }
  return NotFoundError("Kiln's plugin (", kKilnPluginName,
                       ") was not found; set $KILN_LIBRARY_PATH. Tried: ",
                       StrJoin(candidates, ", "));
}

StatusOr<std::string> FindPluginForPlatform(std::string_view platform) {
  std::string name = ToUpper(platform);
  if (name == "KILN") return FindKilnPlugin();
  std::string own_variable = StrCat(name, "_LIBRARY_PATH");
  std::string path = GetEnv(own_variable.c_str());
  if (path.empty()) path = GetEnv("PJRT_LIBRARY_PATH");
  if (path.empty()) {
    return FailedPreconditionError("no PJRT plugin for platform ", platform,
                                   ": set $", own_variable,
                                   " or $PJRT_LIBRARY_PATH to its library");
  }
  return path;
}

StatusOr<std::pair<std::string, int>> ParseDeviceName(std::string_view name) {
  size_t colon = name.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return InvalidArgumentError("device name '", name,
                                "' is not of the form PLATFORM:ordinal");
  }
  std::optional<int64_t> ordinal = ParseInt64(name.substr(colon + 1));
  if (!ordinal || *ordinal < 0 || *ordinal > INT32_MAX) {
    return InvalidArgumentError("device name '", name,
                                "' has no ordinal after the ':'");
  }
  return std::make_pair(std::string(name.substr(0, colon)),
                        static_cast<int>(*ordinal));
}

StatusOr<ComputationClient*> ComputationClient::Create() {
  // Checked before anything else, as PyTorch/XLA does: the error means no
  // client was built, nothing about a model.
  std::string device_type = GetEnv("PJRT_DEVICE");
  if (device_type.empty()) {
    return FailedPreconditionError("$PJRT_DEVICE is not set.");
  }
  std::lock_guard<std::mutex> lock(GlobalMutex());
  if (GlobalClient() != nullptr) {
    return FailedPreconditionError(
        "ComputationClient can only be initialized once.");
  }
  PjrtComputationClientOptions options;
  auto plugin_path = FindPluginForPlatform(device_type);
  if (!plugin_path.ok()) {
    return plugin_path.status().WithContext(
        StrCat("$PJRT_DEVICE is ", device_type));
  }
  options.plugin_path = std::move(*plugin_path);
  options.persistent_cache_path = GetEnv("KILN_PERSISTENT_CACHE_PATH");
  ASSIGN_OR_RETURN(std::unique_ptr<PjrtComputationClient> client,
                   PjrtComputationClient::Create(std::move(options)));
  // Lives until the process exits, as PyTorch/XLA's does: device data held
  // in static objects may still refer to it at exit.
  GlobalClient() = client.release();
  return GlobalClient();
}

ComputationClient* ComputationClient::Get() {
  std::lock_guard<std::mutex> lock(GlobalMutex());
  return GlobalClient();
}

}  // namespace kiln::client
