// Token handling, error messages and small literal helpers of the parser.
#include "parse/text/parser_impl.h"

#include <limits>

#include "base/strings.h"

namespace kiln::parse::text {

Parser::Parser(std::string_view text, std::string_view source_name,
               int first_line)
    : lexer_(text, first_line), source_name_(source_name) {
  tok_ = lexer_.Next();
}

std::string Parser::Describe(const Token& token) {
  if (token.is(TokenKind::kEof)) return "end of input";
  return StrCat("'", EscapeForMessage(token.text, 40), "'");
}

std::string Parser::Position(const Token& token) const {
  return StrCat(source_name_, ":", token.line, ":", token.column);
}

Status Parser::ErrorAt(const Token& token, std::string_view message) const {
  if (token.is(TokenKind::kError)) {
    std::string_view text = token.text;
    if (!text.empty() && text[0] == '"') {
      return InvalidArgumentError(Position(token), ": unterminated string ",
                                  EscapeForMessage(text, 40));
    }
    if (!text.empty() && static_cast<unsigned char>(text[0]) >= 0x80) {
      return InvalidArgumentError(Position(token), ": unexpected byte(s) ",
                                  EscapeForMessage(text, 8),
                                  " (non-ASCII outside a string or comment)");
    }
    return InvalidArgumentError(Position(token), ": unexpected character ",
                                Describe(token));
  }
  return InvalidArgumentError(Position(token), ": ", message);
}

Status Parser::Expect(TokenKind kind, std::string_view what) {
  if (tok_.is(kind)) {
    Advance();
    return OkStatus();
  }
  return Error(StrCat("expected ", TokenKindName(kind), " ", what, ", found ",
                      Describe(tok_)));
}

Status Parser::ExpectKeyword(std::string_view word, std::string_view what) {
  if (tok_.IsKeyword(word)) {
    Advance();
    return OkStatus();
  }
  return Error(
      StrCat("expected '", word, "' ", what, ", found ", Describe(tok_)));
}

Status Parser::EnterNesting() {
  if (++depth_ > kMaxNestingDepth) {
    --depth_;
    return Error(StrCat("nesting deeper than ", kMaxNestingDepth,
                        " levels (regions, attributes, types or locations)"));
  }
  if (depth_ > max_depth_) max_depth_ = depth_;
  return OkStatus();
}

Status Parser::AccountAliasDepth(int alias_depth, const Token& use) {
  int total = depth_ + alias_depth;
  if (total > kMaxNestingDepth) {
    return ErrorAt(use, StrCat("nesting deeper than ", kMaxNestingDepth,
                               " levels through alias ", Describe(use)));
  }
  if (total > max_depth_) max_depth_ = total;
  return OkStatus();
}

Status Parser::ParseIntegerLiteral(const Token& token, bool negative,
                                   uint64_t& bits) const {
  std::string_view text = token.text;
  uint64_t value = 0;
  bool overflow = false;
  if (text.size() > 2 && text[0] == '0' && text[1] == 'x') {
    if (text.size() - 2 > 16) overflow = true;
    for (size_t i = 2; i < text.size() && !overflow; ++i) {
      char c = text[i];
      int digit = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
      value = value * 16 + digit;
    }
  } else {
    for (char c : text) {
      uint64_t digit = static_cast<uint64_t>(c - '0');
      if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
        overflow = true;
        break;
      }
      value = value * 10 + digit;
    }
  }
  if (overflow) {
    return ErrorAt(
        token, StrCat("integer ", Describe(token), " does not fit in 64 bits"));
  }
  if (negative) {
    if (value > (1ULL << 63)) {
      return ErrorAt(
          token, StrCat("integer -", token.text, " does not fit in 64 bits"));
    }
    value = ~value + 1;
  }
  bits = value;
  return OkStatus();
}

StatusOr<int64_t> Parser::ParseInteger(std::string_view what) {
  bool negative = Consume(TokenKind::kMinus);
  if (!tok_.is(TokenKind::kInteger)) {
    return Error(StrCat("expected integer ", what, ", found ", Describe(tok_)));
  }
  uint64_t bits;
  RETURN_IF_ERROR(ParseIntegerLiteral(tok_, negative, bits));
  if (!negative &&
      bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Error(StrCat("integer ", Describe(tok_), " ", what,
                        " is out of range for i64"));
  }
  Advance();
  return static_cast<int64_t>(bits);
}

StatusOr<std::string> Parser::ParseStringLiteral(std::string_view what) {
  if (!tok_.is(TokenKind::kString)) {
    return Error(StrCat("expected string ", what, ", found ", Describe(tok_)));
  }
  std::string_view body = tok_.text.substr(1, tok_.text.size() - 2);
  size_t bad = 0;
  if (!IsValidUtf8(body, &bad)) {
    return Error(StrCat("invalid UTF-8 in string literal (byte ", bad + 1,
                        " of the string)"));
  }
  std::string value;
  if (!UnescapeString(body, value)) {
    return Error(StrCat("invalid escape sequence in string ", Describe(tok_)));
  }
  Advance();
  return value;
}

StatusOr<std::vector<int64_t>> Parser::ParseIntegerList(std::string_view what) {
  RETURN_IF_ERROR(Expect(TokenKind::kLeftSquare, StrCat("to begin ", what)));
  std::vector<int64_t> values;
  if (Consume(TokenKind::kRightSquare)) return values;
  do {
    ASSIGN_OR_RETURN(int64_t value, ParseInteger(StrCat("in ", what)));
    values.push_back(value);
  } while (Consume(TokenKind::kComma));
  RETURN_IF_ERROR(Expect(TokenKind::kRightSquare, StrCat("to end ", what)));
  return values;
}

}  // namespace kiln::parse::text
