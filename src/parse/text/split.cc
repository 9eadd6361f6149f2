// `// -----` split files and `expected-*` annotations (MLIR's
// -split-input-file and -verify-diagnostics conventions).
#include <cctype>
#include <cstdlib>

#include "parse/text/parser.h"

namespace kiln::parse {
namespace {

std::string_view TrimLeft(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return line.substr(i);
}

bool IsSplitMarker(std::string_view line) {
  return TrimLeft(line).substr(0, 8) == "// -----";
}

}  // namespace

std::vector<TextPart> SplitInputFile(std::string_view text) {
  std::vector<TextPart> parts;
  size_t part_begin = 0;
  int part_line = 1;
  size_t pos = 0;
  int line = 1;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view current = text.substr(pos, end - pos);
    if (IsSplitMarker(current)) {
      parts.push_back({text.substr(part_begin, pos - part_begin), part_line});
      part_begin = end < text.size() ? end + 1 : text.size();
      part_line = line + 1;
    }
    if (end >= text.size()) break;
    pos = end + 1;
    ++line;
  }
  parts.push_back({text.substr(part_begin), part_line});
  return parts;
}

std::vector<ExpectedDiagnostic> ExtractExpectedDiagnostics(
    const TextPart& part) {
  static const std::pair<std::string_view, ExpectedDiagnostic::Severity>
      kKinds[] = {
          {"expected-error", ExpectedDiagnostic::Severity::kError},
          {"expected-warning", ExpectedDiagnostic::Severity::kWarning},
          {"expected-note", ExpectedDiagnostic::Severity::kNote},
          {"expected-remark", ExpectedDiagnostic::Severity::kRemark},
      };
  std::vector<ExpectedDiagnostic> diagnostics;
  std::string_view text = part.text;
  size_t pos = 0;
  int line = part.first_line;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view current = text.substr(pos, end - pos);
    size_t comment = current.find("//");
    if (comment != std::string_view::npos) {
      std::string_view rest = current.substr(comment + 2);
      for (const auto& [word, severity] : kKinds) {
        size_t at = rest.find(word);
        if (at == std::string_view::npos) continue;
        std::string_view tail = rest.substr(at + word.size());
        // `expected-error-re` (a regex message) counts as expected-error.
        if (tail.substr(0, 3) == "-re") tail.remove_prefix(3);
        if (!tail.empty() &&
            (tail[0] == '-' ||
             std::isalnum(static_cast<unsigned char>(tail[0])))) {
          continue;
        }
        tail = TrimLeft(tail);
        int target = line;
        if (!tail.empty() && tail[0] == '@') {
          tail.remove_prefix(1);
          if (tail.substr(0, 5) == "above") {
            target = line - 1;
            tail.remove_prefix(5);
          } else if (tail.substr(0, 5) == "below") {
            target = line + 1;
            tail.remove_prefix(5);
          } else if (!tail.empty() && (tail[0] == '+' || tail[0] == '-')) {
            int sign = tail[0] == '+' ? 1 : -1;
            tail.remove_prefix(1);
            int offset = 0;
            while (!tail.empty() &&
                   std::isdigit(static_cast<unsigned char>(tail[0]))) {
              offset = offset * 10 + (tail[0] - '0');
              tail.remove_prefix(1);
            }
            target = line + sign * offset;
          }
          tail = TrimLeft(tail);
        }
        size_t open = tail.find("{{");
        size_t close = tail.rfind("}}");
        std::string message;
        if (open != std::string_view::npos && close != std::string_view::npos &&
            close > open) {
          message = std::string(tail.substr(open + 2, close - open - 2));
        }
        diagnostics.push_back({severity, target, std::move(message)});
        break;
      }
    }
    if (end >= text.size()) break;
    pos = end + 1;
    ++line;
  }
  return diagnostics;
}

}  // namespace kiln::parse
