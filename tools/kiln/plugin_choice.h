// Which PJRT plugin a `kiln` command loads (info, run, bench).
#ifndef KILN_TOOLS_KILN_PLUGIN_CHOICE_H_
#define KILN_TOOLS_KILN_PLUGIN_CHOICE_H_

#include <optional>
#include <string>

#include "base/status.h"

namespace kiln::cli {

// --plugin PATH when given; else the plugin of --device's platform
// ("KILN:0" is Kiln's, "CUDA:0" the one at $CUDA_LIBRARY_PATH or
// $PJRT_LIBRARY_PATH); else $PJRT_LIBRARY_PATH; else Kiln's own plugin.
StatusOr<std::string> ChoosePlugin(const std::optional<std::string>& plugin,
                                   const std::optional<std::string>& device);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_PLUGIN_CHOICE_H_
