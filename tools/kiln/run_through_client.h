// `kiln run FILE --plugin PATH | --device NAME`: the program goes through a
// PJRT plugin by way of Kiln's client (compile, transfer, execute, read
// back), so `kiln run` works against any plugin, not only Kiln's own
// compiler.
#ifndef KILN_TOOLS_KILN_RUN_THROUGH_CLIENT_H_
#define KILN_TOOLS_KILN_RUN_THROUGH_CLIENT_H_

#include <optional>
#include <string>
#include <vector>

#include "tools/kiln/npy.h"

namespace kiln::cli {

struct ClientRunRequest {
  std::string program_path;
  std::string program;  // MLIR text or a portable artifact
  std::vector<NpyArray> inputs;
  // The plugin library; when absent, the one for --device's platform
  // ("KILN:1" loads Kiln's plugin, "CUDA:0" $CUDA_LIBRARY_PATH's).
  std::optional<std::string> plugin;
  // "PLATFORM:ordinal"; the client's default device when absent.
  std::optional<std::string> device;
  std::optional<std::string> outputs_dir;
  bool print_metrics = false;
};

// Runs @main through the client; prints the outputs (or writes them as
// .npy files into outputs_dir). Returns the exit code.
int RunThroughClient(const ClientRunRequest& request);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_RUN_THROUGH_CLIENT_H_
