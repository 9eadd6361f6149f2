// The MLIR text front end: StableHLO (and func, CHLO, check) programs as
// JAX, stablehlo-opt or a person write them, in pretty or generic form.
#ifndef KILN_PARSE_TEXT_PARSER_H_
#define KILN_PARSE_TEXT_PARSER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/attributes.h"
#include "ir/operation.h"
#include "ir/types.h"

namespace kiln::parse {

// Parses a whole file. A file holding one `module` is that module; a bare
// list of ops (or several functions) gets an implicit module, as in MLIR.
// Errors read "source_name:line:col: message". `first_line` numbers the
// text's first line (for one part of a `// -----` file).
StatusOr<std::unique_ptr<ir::Module>> ParseTextModule(
    std::string_view text, std::string_view source_name, int first_line = 1);

// One type or attribute in MLIR assembly (the bytecode reader uses these
// for types and attributes stored as text). A dense_resource attribute
// parsed here refers to a blob that is not present.
StatusOr<ir::Type> ParseTextType(std::string_view text);
StatusOr<ir::Attribute> ParseTextAttribute(std::string_view text);

// One part of a file split at `// -----` lines.
struct TextPart {
  std::string_view text;
  int first_line = 1;  // the line of the whole file where `text` starts
};

// Splits at lines starting with `// -----` (MLIR's -split-input-file). A
// file without markers is one part.
std::vector<TextPart> SplitInputFile(std::string_view text);

// A diagnostic a test file expects: `// expected-error@+1 {{message}}`.
struct ExpectedDiagnostic {
  enum class Severity { kError, kWarning, kNote, kRemark };
  Severity severity = Severity::kError;
  int line = 0;         // the line of the whole file the diagnostic is for
  std::string message;  // the text between {{ and }}
};

// The expected-* annotations of one part: `@+N`, `@-N`, `@above`,
// `@below`, or none (the annotation's own line).
std::vector<ExpectedDiagnostic> ExtractExpectedDiagnostics(
    const TextPart& part);

}  // namespace kiln::parse

#endif  // KILN_PARSE_TEXT_PARSER_H_
