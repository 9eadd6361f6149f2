#include "parse/parse.h"

#include "parse/hlo/reader.h"
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

StatusOr<std::unique_ptr<ir::Module>> ParseProgram(
    std::string_view bytes, std::string_view format,
    std::string_view source_name) {
  if (format == "mlir") return ParseModule(bytes, source_name);
  if (format == "hlo") return hlo::ReadHloModule(bytes, source_name);
  if (format == "hlo_with_config") {
    return hlo::ReadHloModuleWithConfig(bytes, source_name);
  }
  return InvalidArgumentError("Unknown program format '", format,
                              "' (Kiln reads \"mlir\", \"hlo\" and "
                              "\"hlo_with_config\")");
}

bool IsHloModulePath(std::string_view path) {
  for (std::string_view suffix : {".hlo.pb", ".hlo_module.pb", ".hlo.binpb"}) {
    if (path.size() >= suffix.size() &&
        path.substr(path.size() - suffix.size()) == suffix) {
      return true;
    }
  }
  return false;
}

StatusOr<std::unique_ptr<ir::Module>> ParseFile(std::string_view bytes,
                                                std::string_view path) {
  if (IsHloModulePath(path)) return hlo::ReadHloFile(bytes, path);
  return ParseModule(bytes, path);
}

}  // namespace kiln::parse
