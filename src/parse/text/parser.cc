// The text front end's public entry points.
#include "parse/text/parser.h"

#include "parse/text/parser_impl.h"

namespace kiln::parse {

StatusOr<std::unique_ptr<ir::Module>> ParseTextModule(
    std::string_view text, std::string_view source_name, int first_line) {
  text::Parser parser(text, source_name, first_line);
  return parser.ParseFile();
}

StatusOr<ir::Type> ParseTextType(std::string_view text) {
  text::Parser parser(text, "<type>");
  return parser.ParseStandaloneType();
}

StatusOr<ir::Attribute> ParseTextAttribute(std::string_view text) {
  text::Parser parser(text, "<attribute>");
  return parser.ParseStandaloneAttribute();
}

}  // namespace kiln::parse
