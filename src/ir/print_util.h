// Spelling helpers shared by the attribute printer (print_attributes.cc)
// and the op printer (printer.cc, print_pretty.cc).
#ifndef KILN_IR_PRINT_UTIL_H_
#define KILN_IR_PRINT_UTIL_H_

#include <string>
#include <string_view>

#include "ir/element_type.h"

namespace kiln::ir {

// A double in exponent form with the fewest digits that read back exactly.
std::string FormatDouble(double value);
// A string literal as MLIR writes it ("..." with \" \\ and \XX escapes).
std::string QuoteString(std::string_view text);
// `@name`, or `@"name"` when name is not a bare identifier.
std::string SymbolString(std::string_view name);
// A float value of element type `type`: decimal, or the format's hex bit
// pattern for values a decimal cannot carry (NaN, infinities).
std::string FloatElementString(ElementType type, double value);
// Whether `text` is a bare identifier (letters, digits, _ $ .; not
// starting with a digit).
bool IsBareIdentifier(std::string_view text);

}  // namespace kiln::ir

#endif  // KILN_IR_PRINT_UTIL_H_
