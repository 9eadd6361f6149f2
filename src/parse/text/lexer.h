// The tokens of MLIR's textual assembly, read from a buffer in one pass.
//
// Tokens are views into the buffer; the lexer keeps the line and column of
// every token so that the parser can name positions in error messages and
// give ops without an explicit `loc(...)` their place in the file.
#ifndef KILN_PARSE_TEXT_LEXER_H_
#define KILN_PARSE_TEXT_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::parse::text {

enum class TokenKind : uint8_t {
  kEof,
  kError,              // text: the offending character(s)
  kBareIdentifier,     // foo, stablehlo.add, f32, x3xf32
  kPercentIdentifier,  // %0, %arg0 (text includes '%')
  kCaretIdentifier,    // ^bb0
  kHashIdentifier,     // #loc1, #stablehlo, #1 (text includes '#')
  kBangIdentifier,     // !stablehlo.token (text includes '!')
  kAtIdentifier,       // @main (text includes '@'); @"quoted" is kAtString
  kAtString,           // @"foo-bar" (text includes '@' and the quotes)
  kInteger,            // 12, 0x1F
  kFloat,              // 1.5, 2.0e-3
  kString,             // "..." (text includes the quotes)
  kLeftParen,
  kRightParen,
  kLeftSquare,
  kRightSquare,
  kLeftBrace,
  kRightBrace,
  kLess,
  kGreater,
  kComma,
  kColon,
  kColonColon,
  kEqual,
  kArrow,  // ->
  kQuestion,
  kStar,
  kPlus,
  kMinus,
  kVerticalBar,
  kEllipsis,           // ...
  kFileMetadataBegin,  // {-#
  kFileMetadataEnd,    // #-}
};

// "'('", "identifier", ... for messages.
std::string_view TokenKindName(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string_view text;
  int line = 0;
  int column = 0;

  bool is(TokenKind k) const { return kind == k; }
  bool IsKeyword(std::string_view word) const {
    return kind == TokenKind::kBareIdentifier && text == word;
  }
};

class Lexer {
 public:
  // `first_line` is the line number of the buffer's first line (for parts
  // of `// -----` files).
  explicit Lexer(std::string_view buffer, int first_line = 1);

  // Where the lexer is; restoring it rewinds to that point.
  struct State {
    size_t offset = 0;
    int line = 1;
    size_t line_start = 0;
  };
  State state() const { return {offset_, line_, line_start_}; }
  void set_state(const State& state) {
    offset_ = state.offset;
    line_ = state.line;
    line_start_ = state.line_start;
  }

  Token Next();

  std::string_view buffer() const { return buffer_; }
  size_t offset() const { return offset_; }
  int line() const { return line_; }
  int column() const { return static_cast<int>(offset_ - line_start_) + 1; }
  // The offset of a token's first byte.
  size_t OffsetOf(const Token& token) const {
    return static_cast<size_t>(token.text.data() - buffer_.data());
  }
  // Moves to just after `token` (which must come from this buffer).
  void ResetTo(const Token& token);

  // Character-level scanning, for the few grammars that do not split into
  // tokens (tensor dimension lists, opaque dialect bodies).
  void SkipWhitespaceAndComments();
  int Peek() const {
    return offset_ < buffer_.size()
               ? static_cast<unsigned char>(buffer_[offset_])
               : -1;
  }
  // Consumes one byte (tracking lines).
  void Bump();

 private:
  Token Make(TokenKind kind, size_t begin);
  Token LexNumber(size_t begin);
  Token LexString(size_t begin, TokenKind kind);
  Token LexPrefixedIdentifier(size_t begin, TokenKind kind);
  Token LexBareIdentifier(size_t begin);

  std::string_view buffer_;
  size_t offset_ = 0;
  int line_;
  size_t line_start_ = 0;
  int token_line_ = 0;
  int token_column_ = 0;
};

// Decodes the body of a string literal (without quotes): MLIR escapes
// \" \\ \n \t and \XX (two hex digits). Returns false on a malformed escape.
bool UnescapeString(std::string_view body, std::string& out);

// Whether `text` is valid UTF-8 (used for string literal contents).
bool IsValidUtf8(std::string_view text, size_t* bad_offset = nullptr);

}  // namespace kiln::parse::text

#endif  // KILN_PARSE_TEXT_LEXER_H_
