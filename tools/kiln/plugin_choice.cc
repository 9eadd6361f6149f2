#include "tools/kiln/plugin_choice.h"

#include "base/file.h"
#include "kiln/computation_client.h"

namespace kiln::cli {

StatusOr<std::string> ChoosePlugin(const std::optional<std::string>& plugin,
                                   const std::optional<std::string>& device) {
  if (plugin) return *plugin;
  if (device) {
    ASSIGN_OR_RETURN(auto parsed, client::ParseDeviceName(*device));
    return client::FindPluginForPlatform(parsed.first);
  }
  std::string from_env = GetEnv("PJRT_LIBRARY_PATH");
  if (!from_env.empty()) return from_env;
  return client::FindKilnPlugin();
}

}  // namespace kiln::cli
