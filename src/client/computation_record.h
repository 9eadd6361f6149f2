// The serialized form of a compiled computation (SerializeComputation and
// the on-disk compile cache): the plugin's executable blob plus everything
// needed to compile the program again when a plugin refuses that blob.
#ifndef KILN_SRC_CLIENT_COMPUTATION_RECORD_H_
#define KILN_SRC_CLIENT_COMPUTATION_RECORD_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::client::internal {

struct ComputationRecord {
  std::string platform_name;
  std::string platform_version;
  std::string name;
  std::string program;
  std::string compile_options;  // serialized xla.CompileOptionsProto
  std::vector<std::string> devices;
  std::vector<int> donated_parameters;
  std::string executable;  // PJRT_Executable_Serialize's bytes; may be empty
};

// "KILNCMP" + a format version byte, then length-prefixed fields.
std::string EncodeComputationRecord(const ComputationRecord& record);
// DATA_LOSS for anything that is not a whole record of this format (a
// length past the end is an error, never an allocation).
StatusOr<ComputationRecord> DecodeComputationRecord(std::string_view bytes);

}  // namespace kiln::client::internal

#endif  // KILN_SRC_CLIENT_COMPUTATION_RECORD_H_
