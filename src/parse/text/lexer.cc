#include "parse/text/lexer.h"

namespace kiln::parse::text {
namespace {

bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(int c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsLetter(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsBareIdentifierStart(int c) { return IsLetter(c) || c == '_'; }
bool IsBareIdentifierChar(int c) {
  return IsLetter(c) || IsDigit(c) || c == '_' || c == '$' || c == '.';
}
// Characters of the identifier after %, ^, #, ! (MLIR's suffix-id).
bool IsSuffixIdentifierChar(int c) {
  return IsLetter(c) || IsDigit(c) || c == '_' || c == '$' || c == '.' ||
         c == '-';
}

}  // namespace

std::string_view TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEof:
      return "end of input";
    case TokenKind::kError:
      return "invalid character";
    case TokenKind::kBareIdentifier:
      return "identifier";
    case TokenKind::kPercentIdentifier:
      return "SSA value";
    case TokenKind::kCaretIdentifier:
      return "block label";
    case TokenKind::kHashIdentifier:
      return "attribute alias";
    case TokenKind::kBangIdentifier:
      return "type alias";
    case TokenKind::kAtIdentifier:
    case TokenKind::kAtString:
      return "symbol";
    case TokenKind::kInteger:
      return "integer";
    case TokenKind::kFloat:
      return "float";
    case TokenKind::kString:
      return "string";
    case TokenKind::kLeftParen:
      return "'('";
    case TokenKind::kRightParen:
      return "')'";
    case TokenKind::kLeftSquare:
      return "'['";
    case TokenKind::kRightSquare:
      return "']'";
    case TokenKind::kLeftBrace:
      return "'{'";
    case TokenKind::kRightBrace:
      return "'}'";
    case TokenKind::kLess:
      return "'<'";
    case TokenKind::kGreater:
      return "'>'";
    case TokenKind::kComma:
      return "','";
    case TokenKind::kColon:
      return "':'";
    case TokenKind::kColonColon:
      return "'::'";
    case TokenKind::kEqual:
      return "'='";
    case TokenKind::kArrow:
      return "'->'";
    case TokenKind::kQuestion:
      return "'?'";
    case TokenKind::kStar:
      return "'*'";
    case TokenKind::kPlus:
      return "'+'";
    case TokenKind::kMinus:
      return "'-'";
    case TokenKind::kVerticalBar:
      return "'|'";
    case TokenKind::kEllipsis:
      return "'...'";
    case TokenKind::kFileMetadataBegin:
      return "'{-#'";
    case TokenKind::kFileMetadataEnd:
      return "'#-}'";
  }
  return "token";
}

Lexer::Lexer(std::string_view buffer, int first_line)
    : buffer_(buffer), line_(first_line) {}

void Lexer::Bump() {
  if (offset_ >= buffer_.size()) return;
  if (buffer_[offset_] == '\n') {
    ++line_;
    line_start_ = offset_ + 1;
  }
  ++offset_;
}

void Lexer::ResetTo(const Token& token) {
  size_t end = OffsetOf(token) + token.text.size();
  // Tokens never span lines except opaque bodies, which the parser scans
  // with Bump(); recount from the token's own line.
  offset_ = OffsetOf(token);
  line_ = token.line;
  line_start_ = offset_ - (token.column - 1);
  while (offset_ < end) Bump();
}

void Lexer::SkipWhitespaceAndComments() {
  while (offset_ < buffer_.size()) {
    char c = buffer_[offset_];
    if (c == '\n') {
      ++line_;
      ++offset_;
      line_start_ = offset_;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++offset_;
    } else if (c == '/' && offset_ + 1 < buffer_.size() &&
               buffer_[offset_ + 1] == '/') {
      while (offset_ < buffer_.size() && buffer_[offset_] != '\n') ++offset_;
    } else {
      break;
    }
  }
}

Token Lexer::Make(TokenKind kind, size_t begin) {
  Token token;
  token.kind = kind;
  token.text = buffer_.substr(begin, offset_ - begin);
  token.line = token_line_;
  token.column = token_column_;
  return token;
}

Token Lexer::Next() {
  SkipWhitespaceAndComments();
  size_t begin = offset_;
  token_line_ = line_;
  token_column_ = static_cast<int>(offset_ - line_start_) + 1;
  if (offset_ >= buffer_.size()) return Make(TokenKind::kEof, begin);
  auto at = [&](size_t i) -> int {
    return begin + i < buffer_.size()
               ? static_cast<unsigned char>(buffer_[begin + i])
               : -1;
  };
  int c = at(0);
  ++offset_;
  switch (c) {
    case '(':
      return Make(TokenKind::kLeftParen, begin);
    case ')':
      return Make(TokenKind::kRightParen, begin);
    case '[':
      return Make(TokenKind::kLeftSquare, begin);
    case ']':
      return Make(TokenKind::kRightSquare, begin);
    case '}':
      return Make(TokenKind::kRightBrace, begin);
    case '<':
      return Make(TokenKind::kLess, begin);
    case '>':
      return Make(TokenKind::kGreater, begin);
    case ',':
      return Make(TokenKind::kComma, begin);
    case '=':
      return Make(TokenKind::kEqual, begin);
    case '?':
      return Make(TokenKind::kQuestion, begin);
    case '*':
      return Make(TokenKind::kStar, begin);
    case '+':
      return Make(TokenKind::kPlus, begin);
    case '|':
      return Make(TokenKind::kVerticalBar, begin);
    case '{':
      if (at(1) == '-' && at(2) == '#') {
        offset_ += 2;
        return Make(TokenKind::kFileMetadataBegin, begin);
      }
      return Make(TokenKind::kLeftBrace, begin);
    case ':':
      if (at(1) == ':') {
        ++offset_;
        return Make(TokenKind::kColonColon, begin);
      }
      return Make(TokenKind::kColon, begin);
    case '-':
      if (at(1) == '>') {
        ++offset_;
        return Make(TokenKind::kArrow, begin);
      }
      return Make(TokenKind::kMinus, begin);
    case '.':
      if (at(1) == '.' && at(2) == '.') {
        offset_ += 2;
        return Make(TokenKind::kEllipsis, begin);
      }
      return Make(TokenKind::kError, begin);
    case '"':
      return LexString(begin, TokenKind::kString);
    case '%':
      return LexPrefixedIdentifier(begin, TokenKind::kPercentIdentifier);
    case '^':
      return LexPrefixedIdentifier(begin, TokenKind::kCaretIdentifier);
    case '!':
      return LexPrefixedIdentifier(begin, TokenKind::kBangIdentifier);
    case '#':
      if (at(1) == '-' && at(2) == '}') {
        offset_ += 2;
        return Make(TokenKind::kFileMetadataEnd, begin);
      }
      return LexPrefixedIdentifier(begin, TokenKind::kHashIdentifier);
    case '@':
      if (at(1) == '"') {
        ++offset_;
        return LexString(begin, TokenKind::kAtString);
      }
      return LexPrefixedIdentifier(begin, TokenKind::kAtIdentifier);
    default:
      break;
  }
  if (IsDigit(c)) return LexNumber(begin);
  if (IsBareIdentifierStart(c)) return LexBareIdentifier(begin);
  // An unexpected byte; for a UTF-8 sequence, report the whole character.
  if (c >= 0x80) {
    while (offset_ < buffer_.size() && offset_ - begin < 4 &&
           (static_cast<unsigned char>(buffer_[offset_]) & 0xC0) == 0x80) {
      ++offset_;
    }
  }
  return Make(TokenKind::kError, begin);
}

Token Lexer::LexNumber(size_t begin) {
  // offset_ is just past the first digit.
  if (buffer_[begin] == '0' && offset_ + 1 < buffer_.size() &&
      buffer_[offset_] == 'x' &&
      IsHexDigit(static_cast<unsigned char>(buffer_[offset_ + 1]))) {
    ++offset_;
    while (IsHexDigit(Peek())) ++offset_;
    return Make(TokenKind::kInteger, begin);
  }
  while (IsDigit(Peek())) ++offset_;
  if (Peek() != '.') return Make(TokenKind::kInteger, begin);
  ++offset_;
  while (IsDigit(Peek())) ++offset_;
  if (Peek() == 'e' || Peek() == 'E') {
    size_t save = offset_;
    ++offset_;
    if (Peek() == '+' || Peek() == '-') ++offset_;
    if (IsDigit(Peek())) {
      while (IsDigit(Peek())) ++offset_;
    } else {
      offset_ = save;  // not an exponent; leave the 'e' to the next token
    }
  }
  return Make(TokenKind::kFloat, begin);
}

Token Lexer::LexString(size_t begin, TokenKind kind) {
  // offset_ is just past the opening quote.
  while (offset_ < buffer_.size()) {
    char c = buffer_[offset_];
    if (c == '"') {
      ++offset_;
      return Make(kind, begin);
    }
    if (c == '\n') break;
    if (c == '\\' && offset_ + 1 < buffer_.size() &&
        buffer_[offset_ + 1] != '\n') {
      offset_ += 2;
      continue;
    }
    ++offset_;
  }
  // Unterminated: the token is the text up to the end of the line.
  Token token = Make(TokenKind::kError, begin);
  return token;
}

Token Lexer::LexPrefixedIdentifier(size_t begin, TokenKind kind) {
  while (IsSuffixIdentifierChar(Peek())) ++offset_;
  if (offset_ == begin + 1) return Make(TokenKind::kError, begin);
  return Make(kind, begin);
}

Token Lexer::LexBareIdentifier(size_t begin) {
  while (IsBareIdentifierChar(Peek())) ++offset_;
  return Make(TokenKind::kBareIdentifier, begin);
}

bool UnescapeString(std::string_view body, std::string& out) {
  out.clear();
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= body.size()) return false;
    char e = body[++i];
    switch (e) {
      case '"':
      case '\\':
        out.push_back(e);
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      default: {
        if (i + 1 >= body.size() ||
            !IsHexDigit(static_cast<unsigned char>(e)) ||
            !IsHexDigit(static_cast<unsigned char>(body[i + 1]))) {
          return false;
        }
        auto nibble = [](char h) {
          return h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10;
        };
        out.push_back(static_cast<char>(nibble(e) * 16 + nibble(body[i + 1])));
        ++i;
      }
    }
  }
  return true;
}

bool IsValidUtf8(std::string_view text, size_t* bad_offset) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    int extra;
    uint32_t min;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      min = 0x10000;
    } else {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    if (i + extra >= text.size()) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    uint32_t code = c & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      unsigned char cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0) != 0x80) {
        if (bad_offset) *bad_offset = i;
        return false;
      }
      code = (code << 6) | (cc & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += extra + 1;
  }
  return true;
}

}  // namespace kiln::parse::text
