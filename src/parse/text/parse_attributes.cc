// The builtin attribute grammar: numbers, strings, arrays, dictionaries,
// dense arrays, symbol references, types, aliases and opaque dialect
// attributes.
#include <cmath>
#include <cstdlib>
#include <limits>

#include "base/strings.h"
#include "ir/float_bits.h"
#include "parse/text/parser_impl.h"

namespace kiln::parse::text {
namespace {

// Sign-extends the low `bits` bits of `value`.
int64_t SignExtend(uint64_t value, int bits) {
  if (bits >= 64) return static_cast<int64_t>(value);
  uint64_t mask = (1ULL << bits) - 1;
  value &= mask;
  if ((value >> (bits - 1)) & 1) value |= ~mask;
  return static_cast<int64_t>(value);
}

}  // namespace

StatusOr<int64_t> CanonicalInteger(const Parser& parser, const Token& token,
                                   bool negative, uint64_t bits,
                                   ir::ElementType type) {
  int width = ir::BitWidth(type);
  if (ir::IsBool(type)) {
    if (!negative && bits <= 1) return static_cast<int64_t>(bits);
    if (negative && bits == ~0ULL) return 1;  // -1 : i1 is true
    return parser.ErrorAt(token, StrCat("integer value ", negative ? "-" : "",
                                        token.text, " is out of range for i1"));
  }
  if (width >= 64) {
    if (ir::IsUnsignedInteger(type) && negative && bits != 0) {
      return parser.ErrorAt(token, StrCat("negative value -", token.text,
                                          " for ", ir::ElementTypeName(type)));
    }
    return static_cast<int64_t>(bits);
  }
  uint64_t limit = 1ULL << width;
  bool ok;
  if (ir::IsUnsignedInteger(type)) {
    ok = !negative ? bits < limit : bits == 0;
  } else if (negative) {
    // bits is the two's complement pattern of a negative value.
    ok = static_cast<int64_t>(bits) >= -static_cast<int64_t>(limit / 2);
  } else {
    ok = bits < limit;
  }
  if (!ok) {
    return parser.ErrorAt(
        token, StrCat("integer value ", negative ? "-" : "", token.text,
                      " is out of range for ", ir::ElementTypeName(type)));
  }
  if (ir::IsUnsignedInteger(type)) return static_cast<int64_t>(bits);
  return SignExtend(bits, width);
}

StatusOr<ir::Attribute> Parser::ParseAttribute(ir::Type type) {
  RETURN_IF_ERROR(EnterNesting());
  struct Leave {
    Parser* parser;
    ~Leave() { parser->LeaveNesting(); }
  } leave{this};
  const Token token = tok_;
  switch (token.kind) {
    case TokenKind::kString: {
      ASSIGN_OR_RETURN(std::string value, ParseStringLiteral("attribute"));
      return ir::Attribute::String(std::move(value));
    }
    case TokenKind::kInteger:
    case TokenKind::kFloat:
    case TokenKind::kMinus:
      return ParseNumberAttribute(type);
    case TokenKind::kLeftSquare:
      return ParseArrayAttribute();
    case TokenKind::kLeftBrace:
      return ParseDictionaryAttribute();
    case TokenKind::kAtIdentifier:
    case TokenKind::kAtString:
      return ParseSymbolRef();
    case TokenKind::kHashIdentifier:
      return ParseHashAttribute();
    case TokenKind::kBangIdentifier:
    case TokenKind::kLeftParen: {
      ASSIGN_OR_RETURN(ir::Type value, ParseType());
      return ir::Attribute::TypeAttr(std::move(value));
    }
    case TokenKind::kBareIdentifier:
      break;
    default:
      return Error(StrCat("expected attribute value, found ", Describe(token)));
  }
  std::string_view word = token.text;
  if (word == "true" || word == "false") {
    Advance();
    return ir::Attribute::Bool(word == "true");
  }
  if (word == "unit") {
    Advance();
    return ir::Attribute::Unit();
  }
  if (word == "dense") {
    Advance();
    return ParseDenseElements();
  }
  if (word == "dense_resource") {
    Advance();
    return ParseDenseResource();
  }
  if (word == "array") {
    Advance();
    return ParseDenseArray();
  }
  if (word == "affine_map" || word == "affine_set" || word == "sparse" ||
      word == "strided" || word == "distinct" || word == "loc") {
    return Error(StrCat("unsupported builtin attribute ", Describe(token)));
  }
  ASSIGN_OR_RETURN(ir::Type value, ParseType());
  return ir::Attribute::TypeAttr(std::move(value));
}

StatusOr<double> Parser::ParseFloatValue(ir::ElementType type,
                                         std::string_view what) {
  bool negative = Consume(TokenKind::kMinus);
  const Token token = tok_;
  if (token.is(TokenKind::kFloat)) {
    Advance();
    std::string text(token.text);
    double value;
    if (type == ir::ElementType::kF32) {
      value = std::strtof(text.c_str(), nullptr);  // one rounding, as MLIR does
    } else {
      value = std::strtod(text.c_str(), nullptr);
      if (type != ir::ElementType::kF64 && ir::IsFloat(type)) {
        value = ir::DecodeFloat(type, ir::EncodeFloat(type, value));
      }
    }
    return negative ? -value : value;
  }
  if (token.is(TokenKind::kInteger)) {
    Advance();
    uint64_t bits;
    RETURN_IF_ERROR(ParseIntegerLiteral(token, false, bits));
    bool hex = token.text.size() > 2 && token.text[1] == 'x';
    if (hex) {
      // A hex integer for a float is its bit pattern.
      if (negative)
        return ErrorAt(token, "a hex float bit pattern cannot be negative");
      int width = ir::BitWidth(type);
      if (width < 64 && bits >> width) {
        return ErrorAt(token,
                       StrCat("hex value ", token.text, " does not fit in ",
                              ir::ElementTypeName(type)));
      }
      return ir::DecodeFloat(type, bits);
    }
    double value = static_cast<double>(bits);
    if (type != ir::ElementType::kF64 && ir::IsFloat(type)) {
      value = ir::DecodeFloat(type, ir::EncodeFloat(type, value));
    }
    return negative ? -value : value;
  }
  if (token.IsKeyword("inf") || token.IsKeyword("nan")) {
    Advance();
    double value = token.text == "inf"
                       ? std::numeric_limits<double>::infinity()
                       : std::numeric_limits<double>::quiet_NaN();
    return negative ? -value : value;
  }
  return Error(StrCat("expected floating point literal ", what, ", found ",
                      Describe(token)));
}

StatusOr<ir::Attribute> Parser::ParseNumberAttribute(ir::Type type) {
  // Look past an optional '-' to see what kind of literal this is, then
  // read the `: type` that decides how it is interpreted.
  Snapshot start = Save();
  bool negative = Consume(TokenKind::kMinus);
  const Token literal = tok_;
  if (!literal.is(TokenKind::kInteger) && !literal.is(TokenKind::kFloat)) {
    return Error(
        StrCat("expected number after '-', found ", Describe(literal)));
  }
  Advance();
  if (Consume(TokenKind::kColon)) {
    ASSIGN_OR_RETURN(type, ParseType());
  }
  Snapshot after = Save();
  if (!type) {
    type = ir::Type::Element(literal.is(TokenKind::kFloat)
                                 ? ir::ElementType::kF64
                                 : ir::ElementType::kI64);
  }
  if (!type.is(ir::TypeKind::kElement)) {
    return ErrorAt(literal, StrCat("number literal with non-scalar type ",
                                   type.ToString()));
  }
  ir::ElementType et = type.element_type();
  if (ir::IsFloat(et)) {
    Restore(start);
    ASSIGN_OR_RETURN(double value, ParseFloatValue(et, "attribute"));
    Restore(after);
    return ir::Attribute::Float(value, type);
  }
  if (literal.is(TokenKind::kFloat)) {
    return ErrorAt(literal, StrCat("floating point literal ", literal.text,
                                   " with non-float type ", type.ToString()));
  }
  if (ir::IsComplex(et)) {
    return ErrorAt(literal, "complex scalar attributes are not supported");
  }
  uint64_t bits;
  RETURN_IF_ERROR(ParseIntegerLiteral(literal, negative, bits));
  ASSIGN_OR_RETURN(int64_t value,
                   CanonicalInteger(*this, literal, negative, bits, et));
  if (ir::IsBool(et)) return ir::Attribute::Bool(value != 0);
  return ir::Attribute::Integer(value, type);
}

StatusOr<ir::Attribute> Parser::ParseArrayAttribute() {
  RETURN_IF_ERROR(Expect(TokenKind::kLeftSquare, "to begin array"));
  std::vector<ir::Attribute> elements;
  if (!tok_.is(TokenKind::kRightSquare)) {
    do {
      ASSIGN_OR_RETURN(ir::Attribute element, ParseAttribute());
      elements.push_back(std::move(element));
    } while (Consume(TokenKind::kComma));
  }
  RETURN_IF_ERROR(Expect(TokenKind::kRightSquare, "to end array"));
  return ir::Attribute::Array(std::move(elements));
}

Status Parser::ParseAttributeDictionary(
    std::vector<ir::NamedAttribute>& entries) {
  RETURN_IF_ERROR(
      Expect(TokenKind::kLeftBrace, "to begin attribute dictionary"));
  std::unordered_set<std::string> seen;
  if (!tok_.is(TokenKind::kRightBrace)) {
    do {
      const Token key_token = tok_;
      std::string key;
      if (key_token.is(TokenKind::kBareIdentifier)) {
        key = std::string(key_token.text);
        Advance();
      } else if (key_token.is(TokenKind::kString)) {
        ASSIGN_OR_RETURN(key, ParseStringLiteral("as attribute name"));
        if (key.empty()) return ErrorAt(key_token, "attribute name is empty");
      } else {
        return Error(
            StrCat("expected attribute name, found ", Describe(key_token)));
      }
      if (!seen.insert(key).second) {
        return ErrorAt(key_token, StrCat("duplicate key '", key,
                                         "' in dictionary attribute"));
      }
      ir::Attribute value = ir::Attribute::Unit();
      if (Consume(TokenKind::kEqual)) {
        ASSIGN_OR_RETURN(value, ParseAttribute());
      }
      entries.emplace_back(std::move(key), std::move(value));
    } while (Consume(TokenKind::kComma));
  }
  return Expect(TokenKind::kRightBrace, "to end attribute dictionary");
}

StatusOr<ir::Attribute> Parser::ParseDictionaryAttribute() {
  std::vector<ir::NamedAttribute> entries;
  RETURN_IF_ERROR(ParseAttributeDictionary(entries));
  return ir::Attribute::Dictionary(std::move(entries));
}

StatusOr<ir::Attribute> Parser::ParseDenseArray() {
  RETURN_IF_ERROR(Expect(TokenKind::kLess, "after 'array'"));
  const Token type_token = tok_;
  std::optional<ir::ElementType> type =
      type_token.is(TokenKind::kBareIdentifier)
          ? ir::ParseElementTypeName(type_token.text)
          : std::nullopt;
  if (!type || ir::IsComplex(*type) || *type == ir::ElementType::kIndex) {
    return Error(
        StrCat("expected integer or float element type in array<...>, found ",
               Describe(type_token)));
  }
  Advance();
  std::vector<int64_t> ints;
  std::vector<double> floats;
  if (Consume(TokenKind::kColon)) {
    do {
      if (ir::IsFloat(*type)) {
        ASSIGN_OR_RETURN(double value, ParseFloatValue(*type, "in array"));
        floats.push_back(value);
      } else if (ir::IsBool(*type) &&
                 (tok_.IsKeyword("true") || tok_.IsKeyword("false"))) {
        ints.push_back(tok_.text == "true" ? 1 : 0);
        Advance();
      } else {
        bool negative = Consume(TokenKind::kMinus);
        const Token literal = tok_;
        if (!literal.is(TokenKind::kInteger)) {
          return Error(StrCat("expected integer in array<", type_token.text,
                              ">, found ", Describe(literal)));
        }
        uint64_t bits;
        RETURN_IF_ERROR(ParseIntegerLiteral(literal, negative, bits));
        ASSIGN_OR_RETURN(
            int64_t value,
            CanonicalInteger(*this, literal, negative, bits, *type));
        ints.push_back(value);
        Advance();
      }
    } while (Consume(TokenKind::kComma));
  }
  RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end array<...>"));
  if (ir::IsFloat(*type))
    return ir::Attribute::DenseFloatArray(*type, std::move(floats));
  return ir::Attribute::DenseIntArray(*type, std::move(ints));
}

namespace {
StatusOr<std::string> SymbolName(Parser& parser, const Token& token) {
  if (token.is(TokenKind::kAtIdentifier))
    return std::string(token.text.substr(1));
  std::string value;
  std::string_view body = token.text.substr(2, token.text.size() - 3);
  if (!IsValidUtf8(body) || !UnescapeString(body, value)) {
    return parser.ErrorAt(
        token, StrCat("invalid symbol name ", Parser::Describe(token)));
  }
  return value;
}
}  // namespace

StatusOr<ir::Attribute> Parser::ParseSymbolRef() {
  const Token root_token = tok_;
  if (!root_token.is(TokenKind::kAtIdentifier) &&
      !root_token.is(TokenKind::kAtString)) {
    return Error(
        StrCat("expected symbol reference, found ", Describe(root_token)));
  }
  ASSIGN_OR_RETURN(std::string root, SymbolName(*this, root_token));
  Advance();
  std::vector<std::string> nested;
  while (Consume(TokenKind::kColonColon)) {
    const Token part = tok_;
    if (!part.is(TokenKind::kAtIdentifier) && !part.is(TokenKind::kAtString)) {
      return Error(
          StrCat("expected nested symbol after '::', found ", Describe(part)));
    }
    ASSIGN_OR_RETURN(std::string name, SymbolName(*this, part));
    nested.push_back(std::move(name));
    Advance();
  }
  return ir::Attribute::SymbolRef(std::move(root), std::move(nested));
}

StatusOr<ir::Attribute> Parser::ParseHashAttribute() {
  const Token name = tok_;
  std::string full(name.text.substr(1));
  auto alias = attribute_aliases_.find(full);
  if (alias != attribute_aliases_.end()) {
    RETURN_IF_ERROR(AccountAliasDepth(alias->second.depth, name));
    Advance();
    return alias->second.value;
  }
  if (full == "stablehlo" || full.rfind("stablehlo.", 0) == 0) {
    Advance();
    return ParseStableHloAttribute(name);
  }
  Advance();
  // Another dialect's attribute: `#dialect<...>`, `#dialect.name<...>` or
  // `#dialect.name`, kept as its text.
  if (tok_.is(TokenKind::kLess)) {
    ASSIGN_OR_RETURN(std::string body, ScanOpaqueBody());
    return ir::Attribute::Opaque(full + body);
  }
  if (full.find('.') != std::string::npos)
    return ir::Attribute::Opaque(std::move(full));
  return ErrorAt(name, StrCat("undefined attribute alias ", Describe(name)));
}

}  // namespace kiln::parse::text
