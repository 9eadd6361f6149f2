// Reads a program: StableHLO in either of its formats (MLIR text, or MLIR
// bytecode such as a portable artifact, told apart by the bytecode magic),
// or an HLO module (a serialized xla.HloModuleProto, parse/hlo/reader.h).
#ifndef KILN_PARSE_PARSE_H_
#define KILN_PARSE_PARSE_H_

#include <memory>
#include <string_view>

#include "base/status.h"
#include "ir/operation.h"

namespace kiln::parse {

// Whether `bytes` starts with the MLIR bytecode magic "ML\xEFR".
bool IsBytecode(std::string_view bytes);

// Parses `bytes` (bytecode when IsBytecode, otherwise MLIR text).
// `source_name` names the input in messages and locations.
StatusOr<std::unique_ptr<ir::Module>> ParseModule(std::string_view bytes,
                                                  std::string_view source_name);

// Parses a program of a PJRT format: "mlir" (ParseModule), "hlo" (a
// serialized HloModuleProto) or "hlo_with_config" (HloModuleProtoWithConfig).
StatusOr<std::unique_ptr<ir::Module>> ParseProgram(std::string_view bytes,
                                                   std::string_view format,
                                                   std::string_view source_name);

// Whether `path` names an HLO module file (".hlo.pb", ".hlo_module.pb" or
// ".hlo.binpb", as XLA's --xla_dump_hlo_as_proto writes them).
bool IsHloModulePath(std::string_view path);

// Parses a file's bytes: an HLO module when IsHloModulePath(path), else
// ParseModule.
StatusOr<std::unique_ptr<ir::Module>> ParseFile(std::string_view bytes,
                                                std::string_view path);

}  // namespace kiln::parse

#endif  // KILN_PARSE_PARSE_H_
