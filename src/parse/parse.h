// Reads a StableHLO program in either of its formats: MLIR text, or MLIR
// bytecode (a portable artifact), told apart by the bytecode magic.
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

}  // namespace kiln::parse

#endif  // KILN_PARSE_PARSE_H_
