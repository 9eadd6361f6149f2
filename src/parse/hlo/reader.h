// Reads an HLO program, XLA's own program format (a serialized
// `xla.HloModuleProto`, the "hlo" format of PJRT_Client_Compile, or an
// `xla.HloModuleProtoWithConfig`, "hlo_with_config"), into Kiln's IR: each
// HLO instruction becomes the StableHLO op of the same meaning, so the
// compiler and kernels run it as they run StableHLO (docs/hlo.md).
//
// Tuples do not survive the reading: every value is a list of leaves (one
// for an array), the entry function takes and returns the leaves of its
// parameters and root, and `tuple` / `get-tuple-element` only regroup
// leaves. Computations called by `call` and `fusion` are inlined; those of
// `while`, `conditional`, `reduce`, `sort`, `scatter`, `map`, ... become the
// regions of the op.
#ifndef KILN_PARSE_HLO_READER_H_
#define KILN_PARSE_HLO_READER_H_

#include <memory>
#include <string_view>

#include "base/status.h"
#include "ir/operation.h"

namespace xla {
class HloModuleProto;
}  // namespace xla

namespace kiln::parse::hlo {

// Parses `bytes` as a serialized HloModuleProto and converts it.
StatusOr<std::unique_ptr<ir::Module>> ReadHloModule(
    std::string_view bytes, std::string_view source_name);

// Parses `bytes` as a serialized HloModuleProtoWithConfig and converts its
// module (the config is not read).
StatusOr<std::unique_ptr<ir::Module>> ReadHloModuleWithConfig(
    std::string_view bytes, std::string_view source_name);

// Reads a `.hlo.pb` file: an HloProto as XLA's dumps write it, or a bare
// HloModuleProto.
StatusOr<std::unique_ptr<ir::Module>> ReadHloFile(std::string_view bytes,
                                                  std::string_view source_name);

// Converts a parsed module; the result is verified.
StatusOr<std::unique_ptr<ir::Module>> ConvertHloModule(
    const xla::HloModuleProto& proto, std::string_view source_name);

}  // namespace kiln::parse::hlo

#endif  // KILN_PARSE_HLO_READER_H_
