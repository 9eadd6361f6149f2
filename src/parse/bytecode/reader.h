// Reads MLIR bytecode (container versions 0 to 6) into Kiln's IR: either a
// StableHLO portable artifact (VHLO 0.9.0 to 1.20.0, producer
// "StableHLO_vX.Y.Z"), or plain bytecode of the stablehlo, chlo and func
// dialects themselves (what MLIR's writer makes of such a module, e.g.
// `module.operation.write_bytecode()` in MLIR's Python bindings).
//
// Either way the result is the module the StableHLO text of the same
// program parses to: VHLO ops become the StableHLO / func ops they stand
// for, with their attributes converted back (struct attributes rebuilt from
// their flattened fields, dense arrays from tensors, default values
// dropped); the dialects' own attribute and type encodings are decoded into
// the same values the text parser builds. Ops of other dialects are kept as
// generic ops. Attributes and types that the file stores as assembly text
// go through the hooks in the options.
#ifndef KILN_PARSE_BYTECODE_READER_H_
#define KILN_PARSE_BYTECODE_READER_H_

#include <functional>
#include <memory>
#include <string_view>

#include "base/status.h"
#include "ir/attributes.h"
#include "ir/operation.h"
#include "ir/types.h"

namespace kiln::parse::bytecode {

struct BytecodeReadOptions {
  // Parse attribute / type assembly text (e.g. "#sdy.sharding<...>",
  // "!sdy.foo", "f8E4M3FN"); the text includes the leading '#' or '!' when
  // the file has one. When unset, such entries are kept as
  // ir::Attribute::Opaque / ir::Type::Opaque.
  std::function<StatusOr<ir::Attribute>(std::string_view)> parse_attribute;
  std::function<StatusOr<ir::Type>(std::string_view)> parse_type;
};

// Whether `bytes` starts with the MLIR bytecode magic ("ML\xefR").
bool LooksLikeBytecode(std::string_view bytes);

// Decodes a portable artifact or plain StableHLO bytecode. `source_name`
// names the input in messages and becomes the module's source name.
StatusOr<std::unique_ptr<ir::Module>> ReadBytecodeModule(
    std::string_view bytes, std::string_view source_name,
    const BytecodeReadOptions& options = {});

}  // namespace kiln::parse::bytecode

#endif  // KILN_PARSE_BYTECODE_READER_H_
