// The compile options a client hands a plugin with a program: Kiln's view
// of xla.CompileOptionsProto, serialized with the real field numbers.
#ifndef KILN_CLIENT_COMPILE_OPTIONS_H_
#define KILN_CLIENT_COMPILE_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::client {

struct CompileOptions {
  int num_replicas = 1;
  int num_partitions = 1;
  // Global device ids, replica-major: device_ids[r * num_partitions + p] runs
  // replica r of partition p. Empty: let the plugin choose (and the
  // executable is portable when 1 x 1).
  std::vector<int64_t> device_ids;
  // A 1 x 1 program that may run on any device given at execute time.
  bool portable = false;
};

// Checks the counts against the device list; the error says what is wrong.
Status ValidateCompileOptions(const CompileOptions& options);

// The serialized xla.CompileOptionsProto (executable_build_options with
// num_replicas, num_partitions, device_assignment;
// compile_portable_executable).
StatusOr<std::string> SerializeCompileOptions(const CompileOptions& options);

// Reads back what SerializeCompileOptions writes (fields Kiln does not
// declare are ignored).
StatusOr<CompileOptions> ParseCompileOptions(const std::string& serialized);

}  // namespace kiln::client

#endif  // KILN_CLIENT_COMPILE_OPTIONS_H_
