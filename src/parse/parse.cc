#include "parse/parse.h"

#include "parse/text/parser.h"

#ifdef KILN_HAVE_BYTECODE
#include "parse/bytecode/reader.h"
#endif

namespace kiln::parse {

bool IsBytecode(std::string_view bytes) {
  return bytes.size() >= 4 &&
         bytes.substr(0, 4) == std::string_view("ML\xEFR", 4);
}

StatusOr<std::unique_ptr<ir::Module>> ParseModule(
    std::string_view bytes, std::string_view source_name) {
  if (IsBytecode(bytes)) {
#ifdef KILN_HAVE_BYTECODE
    // Attributes and types that bytecode stores as assembly text go through
    // the text grammar.
    bytecode::BytecodeReadOptions options;
    options.parse_attribute = [](std::string_view text) {
      return ParseTextAttribute(text);
    };
    options.parse_type = [](std::string_view text) {
      return ParseTextType(text);
    };
    return bytecode::ReadBytecodeModule(bytes, source_name, options);
#else
    return UnimplementedError(source_name,
                              ": MLIR bytecode, but the bytecode reader is not "
                              "built into this Kiln");
#endif
  }
  return ParseTextModule(bytes, source_name);
}

}  // namespace kiln::parse
