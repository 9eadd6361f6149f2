// The type grammar: builtin types, tensors (with dimension lists and
// encodings), function types, quantized types and dialect types.
#include <algorithm>
#include <limits>

#include "base/strings.h"
#include "parse/text/parser_impl.h"

namespace kiln::parse::text {
namespace {

// Largest dimension Kiln accepts (a dimension must fit int64 and the
// element count must not overflow).
constexpr int64_t kMaxDimension = std::numeric_limits<int64_t>::max();

Token HereToken(const Lexer& lexer) {
  Token token;
  token.kind = TokenKind::kInteger;  // not kError, which names the text
  token.line = lexer.line();
  token.column = lexer.column();
  token.text = lexer.buffer().substr(lexer.offset(), 1);
  return token;
}

bool IsDigit(int c) { return c >= '0' && c <= '9'; }

bool IsOpener(char c) { return c == '<' || c == '(' || c == '[' || c == '{'; }
bool IsCloser(char c) {
  return c == '>' || c == ')' || c == ']' || c == '}' || c == ',';
}

// The text of another dialect's attribute or type body in one canonical
// spelling, so that the same value written over several lines (or with
// comments) and written on one line compare equal: comments dropped, each
// run of whitespace one space, none after an opening bracket or before a
// closing one or a comma. String literals are kept as they are.
std::string NormalizeOpaqueBody(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      if (pending_space && !out.empty() && !IsOpener(out.back())) out += ' ';
      pending_space = false;
      size_t end = i + 1;
      while (end < text.size() && text[end] != '"')
        end += text[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, text.size());
      out.append(text.substr(i, end - i));
      i = end - 1;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      pending_space = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      pending_space = true;
      continue;
    }
    bool closing = IsCloser(c) && !(c == '>' && i > 0 && text[i - 1] == '-');
    if (pending_space && !out.empty() && !IsOpener(out.back()) && !closing)
      out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

}  // namespace

StatusOr<ir::Type> Parser::ParseType() {
  RETURN_IF_ERROR(EnterNesting());
  struct Leave {
    Parser* parser;
    ~Leave() { parser->LeaveNesting(); }
  } leave{this};
  const Token token = tok_;
  switch (token.kind) {
    case TokenKind::kLeftParen:
      return ParseFunctionType();
    case TokenKind::kBangIdentifier: {
      Advance();
      return ParseDialectType(token);
    }
    case TokenKind::kBareIdentifier:
      break;
    default:
      return Error(StrCat("expected type, found ", Describe(token)));
  }
  std::string_view word = token.text;
  if (word == "tensor") {
    // Programs repeat the same tensor types many times: types are
    // immutable, so each spelling is parsed once and shared.
    std::string_view key = TensorTypeSpelling(token);
    if (!key.empty()) {
      auto cached = tensor_types_.find(key);
      if (cached != tensor_types_.end()) {
        // The type's own nesting counts where it is used.
        RETURN_IF_ERROR(AccountAliasDepth(cached->second.depth, token));
        Lexer::State state = lexer_.state();
        state.offset = lexer_.OffsetOf(token) + key.size();
        lexer_.set_state(state);
        Advance();
        return cached->second.value;
      }
    }
    int saved_max = max_depth_;
    max_depth_ = depth_;
    Advance();
    StatusOr<ir::Type> type = ParseTensorType(false);
    int depth = max_depth_ - depth_;
    max_depth_ = std::max(max_depth_, saved_max);
    if (!type.ok()) return type.status();
    if (!key.empty()) tensor_types_.emplace(key, Alias<ir::Type>{*type, depth});
    return type;
  }
  if (word == "memref") {
    Advance();
    return ParseTensorType(true);
  }
  if (word == "tuple") {
    Advance();
    RETURN_IF_ERROR(Expect(TokenKind::kLess, "after 'tuple'"));
    std::vector<ir::Type> elements;
    if (!tok_.is(TokenKind::kGreater)) RETURN_IF_ERROR(ParseTypeList(elements));
    RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end tuple type"));
    return ir::Type::Tuple(std::move(elements));
  }
  if (word == "complex") {
    Advance();
    RETURN_IF_ERROR(Expect(TokenKind::kLess, "after 'complex'"));
    const Token part = tok_;
    if (part.IsKeyword("f32") || part.IsKeyword("f64")) {
      Advance();
      RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end complex type"));
      return ir::Type::Element(part.text == "f32" ? ir::ElementType::kC64
                                                  : ir::ElementType::kC128);
    }
    return ErrorAt(part,
                   StrCat("unsupported complex element type ", Describe(part),
                          " (StableHLO has complex<f32> and complex<f64>)"));
  }
  if (word == "none") {
    Advance();
    return ir::Type::None();
  }
  if (std::optional<ir::ElementType> element = ir::ParseElementTypeName(word)) {
    Advance();
    return ir::Type::Element(*element);
  }
  if (word == "vector") {
    return Error(
        "vector types are not supported by StableHLO (use tensor<...>)");
  }
  return Error(StrCat("unknown type ", Describe(token)));
}

Status Parser::ParseTypeList(std::vector<ir::Type>& types) {
  do {
    ASSIGN_OR_RETURN(ir::Type type, ParseType());
    types.push_back(std::move(type));
  } while (Consume(TokenKind::kComma));
  return OkStatus();
}

Status Parser::ParseResultTypeList(std::vector<ir::Type>& types) {
  if (Consume(TokenKind::kLeftParen)) {
    if (Consume(TokenKind::kRightParen)) return OkStatus();
    RETURN_IF_ERROR(ParseTypeList(types));
    return Expect(TokenKind::kRightParen, "to end result type list");
  }
  ASSIGN_OR_RETURN(ir::Type type, ParseType());
  types.push_back(std::move(type));
  return OkStatus();
}

StatusOr<ir::Type> Parser::ParseFunctionType() {
  RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "to begin function type"));
  std::vector<ir::Type> inputs;
  if (!tok_.is(TokenKind::kRightParen)) RETURN_IF_ERROR(ParseTypeList(inputs));
  RETURN_IF_ERROR(
      Expect(TokenKind::kRightParen, "to end function input types"));
  RETURN_IF_ERROR(Expect(TokenKind::kArrow, "in function type"));
  std::vector<ir::Type> results;
  RETURN_IF_ERROR(ParseResultTypeList(results));
  return ir::Type::Function(std::move(inputs), std::move(results));
}

std::string_view Parser::TensorTypeSpelling(const Token& token) const {
  // `tensor<...>` on one line, up to the matching '>' (the '>' of "->"
  // and the contents of strings do not count). Empty when that is not
  // found quickly, and the type is then parsed without the cache.
  constexpr size_t kMaxSpelling = 512;
  std::string_view buffer = lexer_.buffer();
  size_t begin = lexer_.OffsetOf(token);
  size_t i = begin + token.text.size();
  if (i >= buffer.size() || buffer[i] != '<') return {};
  int depth = 0;
  bool in_string = false;
  for (; i < buffer.size() && i - begin < kMaxSpelling; ++i) {
    char c = buffer[i];
    if (c == '\n') return {};
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '<') {
      ++depth;
    } else if (c == '>' && buffer[i - 1] != '-') {
      if (--depth == 0) return buffer.substr(begin, i + 1 - begin);
    }
  }
  return {};
}

StatusOr<ir::Type> Parser::ParseTensorType(bool memref) {
  const char* what = memref ? "memref" : "tensor";
  if (!tok_.is(TokenKind::kLess)) {
    return Error(
        StrCat("expected '<' after '", what, "', found ", Describe(tok_)));
  }
  // The dimension list (`2x?x3x`) does not split into tokens ("2x3xf32"
  // would lex as 2 and x3xf32), so it is scanned character by character
  // from just after '<'.
  Lexer& lex = lexer_;
  std::vector<int64_t> shape;
  while (true) {
    lex.SkipWhitespaceAndComments();
    int c = lex.Peek();
    if (c == '*') {
      if (memref || !shape.empty()) {
        return ErrorAt(HereToken(lex),
                       StrCat("unexpected '*' in ", what, " type"));
      }
      lex.Bump();
      lex.SkipWhitespaceAndComments();
      if (lex.Peek() != 'x') {
        return ErrorAt(HereToken(lex),
                       "expected 'x' after '*' in unranked tensor type");
      }
      lex.Bump();
      ResyncAfterCharacterScan();
      const Token element_token = tok_;
      ASSIGN_OR_RETURN(ir::Type element, ParseType());
      if (!element.is(ir::TypeKind::kElement) &&
          !element.is(ir::TypeKind::kQuantized)) {
        return ErrorAt(element_token, StrCat("invalid tensor element type ",
                                             element.ToString()));
      }
      RETURN_IF_ERROR(
          Expect(TokenKind::kGreater, "to end unranked tensor type"));
      return ir::Type::UnrankedTensor(std::move(element));
    }
    if (c != '?' && !IsDigit(c)) break;
    Token dim_token = HereToken(lex);
    if (c == '?') {
      lex.Bump();
      shape.push_back(ir::kDynamic);
    } else {
      uint64_t value = 0;
      bool overflow = false;
      size_t begin = lex.offset();
      while (IsDigit(lex.Peek())) {
        uint64_t digit = static_cast<uint64_t>(lex.Peek() - '0');
        if (value > (static_cast<uint64_t>(kMaxDimension) - digit) / 10)
          overflow = true;
        if (!overflow) value = value * 10 + digit;
        lex.Bump();
      }
      if (overflow) {
        dim_token.text = lex.buffer().substr(begin, lex.offset() - begin);
        return ErrorAt(dim_token,
                       StrCat("dimension ", dim_token.text,
                              " is too large (the limit is 2^63-1)"));
      }
      shape.push_back(static_cast<int64_t>(value));
    }
    lex.SkipWhitespaceAndComments();
    if (lex.Peek() != 'x') {
      return ErrorAt(
          HereToken(lex),
          StrCat("expected 'x' after a dimension in ", what, " type"));
    }
    lex.Bump();
  }
  ResyncAfterCharacterScan();
  // The element count must fit int64 (NumElements() and the buffer planner
  // rely on it).
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d == ir::kDynamic) continue;
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) {
      return Error(StrCat(what, " type has more than 2^63-1 elements"));
    }
    count *= d;
  }
  const Token element_token = tok_;
  ASSIGN_OR_RETURN(ir::Type element, ParseType());
  if (!element.is(ir::TypeKind::kElement) &&
      !element.is(ir::TypeKind::kQuantized)) {
    return ErrorAt(element_token, StrCat("invalid ", what, " element type ",
                                         element.ToString()));
  }
  ir::Attribute encoding;
  if (Consume(TokenKind::kComma)) {
    if (memref)
      return Error("memref layouts and memory spaces are not supported");
    ASSIGN_OR_RETURN(encoding, ParseAttribute());
  }
  RETURN_IF_ERROR(
      Expect(TokenKind::kGreater, StrCat("to end ", what, " type")));
  if (memref) return ir::Type::MemRef(std::move(shape), std::move(element));
  return ir::Type::Tensor(std::move(shape), std::move(element), encoding);
}

StatusOr<ir::Type> Parser::ParseDialectType(const Token& name) {
  std::string_view full = name.text.substr(1);  // without '!'
  auto alias = type_aliases_.find(std::string(full));
  if (alias != type_aliases_.end()) {
    RETURN_IF_ERROR(AccountAliasDepth(alias->second.depth, name));
    return alias->second.value;
  }
  if (full == "stablehlo.token") return ir::Type::Token();
  if (full == "stablehlo.future") {
    RETURN_IF_ERROR(Expect(TokenKind::kLess, "after '!stablehlo.future'"));
    std::vector<ir::Type> elements;
    if (!tok_.is(TokenKind::kGreater)) RETURN_IF_ERROR(ParseTypeList(elements));
    RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end future type"));
    return ir::Type::Future(std::move(elements));
  }
  if (full == "quant.uniform") {
    RETURN_IF_ERROR(Expect(TokenKind::kLess, "after '!quant.uniform'"));
    return ParseQuantizedTypeBody();
  }
  if (full.find('.') == std::string_view::npos) {
    return ErrorAt(name, StrCat("undefined type alias ", Describe(name)));
  }
  std::string text(full);
  if (tok_.is(TokenKind::kLess)) {
    ASSIGN_OR_RETURN(std::string body, ScanOpaqueBody());
    text += body;
  }
  return ir::Type::Opaque(std::move(text));
}

StatusOr<ir::Type> Parser::ParseQuantizedTypeBody() {
  ir::QuantizedType q;
  // Storage type: iN or uN (uN means uiN).
  const Token storage = tok_;
  if (!storage.is(TokenKind::kBareIdentifier)) {
    return Error(
        StrCat("expected quantized storage type, found ", Describe(storage)));
  }
  std::string name(storage.text);
  if (name.size() > 1 && name[0] == 'u' && name[1] != 'i')
    name = "ui" + name.substr(1);
  std::optional<ir::ElementType> storage_type = ir::ParseElementTypeName(name);
  // MLIR's quant dialect stores at most 32 bits (wider ones would also
  // overflow the storage range computed below).
  if (!storage_type || !ir::IsInteger(*storage_type) ||
      *storage_type == ir::ElementType::kIndex ||
      ir::BitWidth(*storage_type) > 32) {
    return Error(StrCat("invalid quantized storage type ", Describe(storage),
                        " (expected i2..i32 or u2..u32)"));
  }
  Advance();
  q.storage_type = *storage_type;
  int bits = ir::BitWidth(q.storage_type);
  bool is_unsigned = ir::IsUnsignedInteger(q.storage_type);
  int64_t type_min = is_unsigned ? 0 : -(int64_t{1} << (bits - 1));
  int64_t type_max = is_unsigned
                         ? (bits == 64 ? std::numeric_limits<int64_t>::max()
                                       : (int64_t{1} << bits) - 1)
                         : (int64_t{1} << (bits - 1)) - 1;
  q.storage_min = type_min;
  q.storage_max = type_max;
  if (Consume(TokenKind::kLess)) {
    const Token range = tok_;
    ASSIGN_OR_RETURN(q.storage_min, ParseInteger("as storage minimum"));
    RETURN_IF_ERROR(Expect(TokenKind::kColon, "in storage range"));
    ASSIGN_OR_RETURN(q.storage_max, ParseInteger("as storage maximum"));
    RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end storage range"));
    if (q.storage_min < type_min || q.storage_max > type_max ||
        q.storage_min > q.storage_max) {
      return ErrorAt(
          range, StrCat("illegal storage range <", q.storage_min, ":",
                        q.storage_max, "> for ", storage.text,
                        " (expected within [", type_min, ", ", type_max, "])"));
    }
    q.explicit_storage_range = true;
  }
  RETURN_IF_ERROR(Expect(TokenKind::kColon, "after quantized storage type"));
  const Token expressed = tok_;
  std::optional<ir::ElementType> expressed_type =
      expressed.is(TokenKind::kBareIdentifier)
          ? ir::ParseElementTypeName(expressed.text)
          : std::nullopt;
  if (!expressed_type || !ir::IsFloat(*expressed_type)) {
    return Error(StrCat("invalid quantized expressed type ",
                        Describe(expressed), " (expected a float type)"));
  }
  Advance();
  q.expressed_type = *expressed_type;
  if (Consume(TokenKind::kColon)) {
    ASSIGN_OR_RETURN(int64_t axis, ParseInteger("as quantization axis"));
    if (axis < 0 || axis > std::numeric_limits<int32_t>::max()) {
      return Error(StrCat("quantization axis ", axis, " is out of range"));
    }
    q.axis = static_cast<int32_t>(axis);
  }
  RETURN_IF_ERROR(Expect(TokenKind::kComma, "before quantization parameters"));
  auto parse_param = [&]() -> Status {
    ASSIGN_OR_RETURN(double scale,
                     ParseFloatValue(ir::ElementType::kF64, "as scale"));
    int64_t zero_point = 0;
    if (Consume(TokenKind::kColon)) {
      ASSIGN_OR_RETURN(zero_point, ParseInteger("as zero point"));
    }
    q.scales.push_back(scale);
    q.zero_points.push_back(zero_point);
    return OkStatus();
  };
  if (q.axis) {
    RETURN_IF_ERROR(
        Expect(TokenKind::kLeftBrace, "to begin per-axis parameters"));
    do {
      RETURN_IF_ERROR(parse_param());
    } while (Consume(TokenKind::kComma));
    RETURN_IF_ERROR(
        Expect(TokenKind::kRightBrace, "to end per-axis parameters"));
  } else {
    RETURN_IF_ERROR(parse_param());
  }
  RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end quantized type"));
  return ir::Type::Quantized(std::move(q));
}

StatusOr<std::string> Parser::ScanOpaqueBody() {
  // The current token is '<' (or '[' or '{', for the bracketed bodies of
  // other dialects' op forms) and the lexer stands just after it.
  const Token open = tok_;
  Lexer& lex = lexer_;
  size_t begin = lex.OffsetOf(open);
  const char first = open.text.empty() ? '<' : open.text[0];
  std::vector<char> stack = {first == '[' ? ']' : first == '{' ? '}' : '>'};
  while (!stack.empty()) {
    int c = lex.Peek();
    if (c < 0) {
      return ErrorAt(
          open,
          "unbalanced '<' in dialect attribute or type (no matching '>')");
    }
    if (c == '"') {
      lex.Bump();
      while (lex.Peek() >= 0 && lex.Peek() != '"' && lex.Peek() != '\n') {
        if (lex.Peek() == '\\') lex.Bump();
        lex.Bump();
      }
      if (lex.Peek() != '"')
        return ErrorAt(open, "unterminated string in dialect body");
      lex.Bump();
      continue;
    }
    size_t here = lex.offset();
    if (c == '/' && here + 1 < lex.buffer().size() &&
        lex.buffer()[here + 1] == '/') {
      // A comment: its brackets do not count (and it is dropped from the
      // stored text).
      while (lex.Peek() >= 0 && lex.Peek() != '\n') lex.Bump();
      continue;
    }
    lex.Bump();
    switch (c) {
      case '<':
        stack.push_back('>');
        break;
      case '(':
        stack.push_back(')');
        break;
      case '[':
        stack.push_back(']');
        break;
      case '{':
        stack.push_back('}');
        break;
      case '>':
        // The '>' of an arrow "->" is not a bracket.
        if (here > 0 && lex.buffer()[here - 1] == '-') break;
        [[fallthrough]];
      case ')':
      case ']':
      case '}':
        if (stack.back() != c) {
          return ErrorAt(
              open, StrCat("unbalanced '", std::string(1, static_cast<char>(c)),
                           "' in dialect attribute or type body"));
        }
        stack.pop_back();
        break;
      default:
        break;
    }
  }
  std::string body =
      NormalizeOpaqueBody(lex.buffer().substr(begin, lex.offset() - begin));
  ResyncAfterCharacterScan();
  return body;
}

}  // namespace kiln::parse::text
