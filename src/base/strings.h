// Small string helpers: concatenation, joining, splitting, number parsing.
#ifndef KILN_BASE_STRINGS_H_
#define KILN_BASE_STRINGS_H_

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

namespace internal {
template <typename T>
void AppendPiece(std::string& out, const T& value) {
  if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out.append(std::string_view(value));
  } else if constexpr (std::is_same_v<T, char>) {
    out.push_back(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    out.append(value ? "true" : "false");
  } else if constexpr (std::is_integral_v<T>) {
    out.append(std::to_string(value));
  } else {
    std::ostringstream stream;
    stream << value;
    out.append(stream.str());
  }
}
}  // namespace internal

// Concatenates the text forms of its arguments (strings, numbers, chars, and
// anything with operator<<).
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (internal::AppendPiece(out, args), ...);
  return out;
}

// Appends the text forms of `args` to `out`.
template <typename... Args>
void StrAppend(std::string& out, const Args&... args) {
  (internal::AppendPiece(out, args), ...);
}

// Joins the elements of `range` with `separator`.
template <typename Range>
std::string StrJoin(const Range& range, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& item : range) {
    if (!first) out.append(separator);
    first = false;
    internal::AppendPiece(out, item);
  }
  return out;
}

// Joins with a formatter called as `format(out, item)`.
template <typename Range, typename Formatter>
std::string StrJoin(const Range& range, std::string_view separator,
                    Formatter&& format) {
  std::string out;
  bool first = true;
  for (const auto& item : range) {
    if (!first) out.append(separator);
    first = false;
    format(out, item);
  }
  return out;
}

// Splits on every occurrence of `separator` (empty pieces kept).
std::vector<std::string_view> StrSplit(std::string_view text, char separator);

bool StartsWith(std::string_view text, std::string_view prefix);
bool EndsWith(std::string_view text, std::string_view suffix);
std::string_view StripWhitespace(std::string_view text);
std::string ToLower(std::string_view text);
std::string ToUpper(std::string_view text);

// Parses a whole string as a decimal integer; nullopt on any junk or overflow.
std::optional<int64_t> ParseInt64(std::string_view text);
std::optional<double> ParseDouble(std::string_view text);

// Text for a byte count: "1.5 MiB".
std::string HumanBytes(uint64_t bytes);

// C-style escaping of arbitrary bytes for error messages (at most
// `max_length` bytes shown, then "...").
std::string EscapeForMessage(std::string_view bytes, size_t max_length = 64);

// `text` as a JSON string literal: quoted, with quotes, backslashes and
// control characters escaped.
std::string JsonString(std::string_view text);

}  // namespace kiln

#endif  // KILN_BASE_STRINGS_H_
