// dense<...> : tensor<...> and dense_resource<...>: element literals are
// read first (their meaning depends on the type that follows), then
// converted to Kiln's storage layout (row-major, StorageBytes() per element;
// i1 one byte 0/1; sub-byte types one byte each, holding the low bits).
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "base/strings.h"
#include "ir/float_bits.h"
#include "parse/text/parser_impl.h"

namespace kiln::parse::text {
namespace {

// One element as written: a number (with sign), true/false, or a complex
// pair `(re, im)`.
struct ElementLiteral {
  Token token;
  bool negative = false;
  bool complex = false;
  Token imag_token;
  bool imag_negative = false;
};

struct DenseLiteral {
  bool hex = false;
  std::string_view hex_digits;
  Token hex_token;
  bool scalar = false;         // a splat written as one element
  std::vector<int64_t> shape;  // of the nested lists
  std::vector<ElementLiteral> elements;
};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// Reads one element literal.
static Status ParseElementLiteral(Parser& p, ElementLiteral& element) {
  if (p.Consume(TokenKind::kLeftParen)) {
    element.complex = true;
    element.negative = p.Consume(TokenKind::kMinus);
    element.token = p.tok();
    if (!element.token.is(TokenKind::kInteger) &&
        !element.token.is(TokenKind::kFloat)) {
      return p.Error(StrCat("expected real part of complex value, found ",
                            Parser::Describe(element.token)));
    }
    p.Advance();
    RETURN_IF_ERROR(p.Expect(TokenKind::kComma, "in complex value"));
    element.imag_negative = p.Consume(TokenKind::kMinus);
    element.imag_token = p.tok();
    if (!element.imag_token.is(TokenKind::kInteger) &&
        !element.imag_token.is(TokenKind::kFloat)) {
      return p.Error(StrCat("expected imaginary part of complex value, found ",
                            Parser::Describe(element.imag_token)));
    }
    p.Advance();
    return p.Expect(TokenKind::kRightParen, "to end complex value");
  }
  element.negative = p.Consume(TokenKind::kMinus);
  element.token = p.tok();
  bool ok = element.token.is(TokenKind::kInteger) ||
            element.token.is(TokenKind::kFloat) ||
            (!element.negative && (element.token.IsKeyword("true") ||
                                   element.token.IsKeyword("false"))) ||
            element.token.IsKeyword("inf") || element.token.IsKeyword("nan");
  if (!ok) {
    return p.Error(StrCat("expected element literal in dense attribute, found ",
                          Parser::Describe(element.token)));
  }
  p.Advance();
  return OkStatus();
}

// Reads `[...]` (nested), recording the shape it implies: every list at
// one depth must have the same length and the same kind (lists or
// elements).
static Status ParseNestedList(Parser& p, DenseLiteral& literal,
                              std::vector<int8_t>& leaf, size_t depth) {
  RETURN_IF_ERROR(p.EnterNesting());
  struct Leave {
    Parser& parser;
    ~Leave() { parser.LeaveNesting(); }
  } leave{p};
  const Token open = p.tok();
  RETURN_IF_ERROR(p.Expect(TokenKind::kLeftSquare, "in dense attribute"));
  if (literal.shape.size() == depth) {
    literal.shape.push_back(-1);
    leaf.push_back(-1);
  }
  int64_t count = 0;
  bool nested = p.tok().is(TokenKind::kLeftSquare);
  if (!p.tok().is(TokenKind::kRightSquare)) {
    int8_t kind = nested ? 0 : 1;
    if (leaf[depth] == -1) leaf[depth] = kind;
    if (leaf[depth] != kind) {
      return p.ErrorAt(open, "inconsistent nesting in dense attribute");
    }
    do {
      if (nested) {
        if (!p.tok().is(TokenKind::kLeftSquare)) {
          return p.Error(StrCat(
              "inconsistent nesting in dense attribute (expected '[', found ",
              Parser::Describe(p.tok()), ")"));
        }
        RETURN_IF_ERROR(ParseNestedList(p, literal, leaf, depth + 1));
      } else {
        if (p.tok().is(TokenKind::kLeftSquare)) {
          return p.Error(
              "inconsistent nesting in dense attribute (expected an element)");
        }
        ElementLiteral element;
        RETURN_IF_ERROR(ParseElementLiteral(p, element));
        literal.elements.push_back(element);
      }
      ++count;
    } while (p.Consume(TokenKind::kComma));
  }
  RETURN_IF_ERROR(p.Expect(TokenKind::kRightSquare, "to end dense list"));
  if (literal.shape[depth] == -1) {
    literal.shape[depth] = count;
  } else if (literal.shape[depth] != count) {
    return p.ErrorAt(open, StrCat("dense list has ", count,
                                  " elements where an earlier "
                                  "list at the same depth had ",
                                  literal.shape[depth]));
  }
  return OkStatus();
}

// Writes one element of element type `et` at `out`.
static Status StoreElement(Parser& p, const ElementLiteral& e,
                           ir::ElementType et, char* out) {
  auto float_value = [&p](const Token& token, bool negative,
                          ir::ElementType type) -> StatusOr<double> {
    if (token.IsKeyword("true") || token.IsKeyword("false")) {
      return p.ErrorAt(token, StrCat("boolean value for ",
                                     ir::ElementTypeName(type), " element"));
    }
    Token literal = token;
    if (token.is(TokenKind::kFloat)) {
      std::string text(token.text);
      double value =
          type == ir::ElementType::kF32
              ? static_cast<double>(std::strtof(text.c_str(), nullptr))
              : std::strtod(text.c_str(), nullptr);
      if (type != ir::ElementType::kF32 && type != ir::ElementType::kF64) {
        value = ir::DecodeFloat(type, ir::EncodeFloat(type, value));
      }
      return negative ? -value : value;
    }
    if (token.IsKeyword("inf") || token.IsKeyword("nan")) {
      double value = token.text == "inf" ? HUGE_VAL : std::nan("");
      return negative ? -value : value;
    }
    uint64_t bits;
    RETURN_IF_ERROR(p.ParseIntegerLiteral(literal, false, bits));
    if (token.text.size() > 2 && token.text[1] == 'x') {
      if (negative)
        return p.ErrorAt(token, "a hex float bit pattern cannot be negative");
      int width = ir::BitWidth(type);
      if (width < 64 && (bits >> width) != 0) {
        return p.ErrorAt(token,
                         StrCat("hex value ", token.text, " does not fit in ",
                                ir::ElementTypeName(type)));
      }
      return ir::DecodeFloat(type, bits);
    }
    double value = static_cast<double>(bits);
    if (type != ir::ElementType::kF64)
      value = ir::DecodeFloat(type, ir::EncodeFloat(type, value));
    return negative ? -value : value;
  };
  // Writes the bits of a float value; a hex literal keeps its exact bits
  // (NaN payloads and signs included).
  auto store_float = [&](const Token& token, bool negative,
                         ir::ElementType type, char* where) -> Status {
    uint64_t bits;
    if (token.is(TokenKind::kInteger) && token.text.size() > 2 &&
        token.text[1] == 'x' && !negative) {
      RETURN_IF_ERROR(p.ParseIntegerLiteral(token, false, bits));
      int width = ir::BitWidth(type);
      if (width < 64 && (bits >> width) != 0) {
        return p.ErrorAt(token,
                         StrCat("hex value ", token.text, " does not fit in ",
                                ir::ElementTypeName(type)));
      }
    } else {
      ASSIGN_OR_RETURN(double value, float_value(token, negative, type));
      bits = ir::EncodeFloat(type, value);
    }
    std::memcpy(where, &bits, ir::StorageBytes(type));
    return OkStatus();
  };
  if (ir::IsComplex(et)) {
    ir::ElementType part = ir::ComplexComponentType(et);
    if (!e.complex) {
      return p.ErrorAt(e.token, StrCat("expected complex value (re, im) for ",
                                       ir::ElementTypeName(et)));
    }
    RETURN_IF_ERROR(store_float(e.token, e.negative, part, out));
    return store_float(e.imag_token, e.imag_negative, part,
                       out + ir::StorageBytes(part));
  }
  if (e.complex) {
    return p.ErrorAt(e.token, StrCat("complex value for ",
                                     ir::ElementTypeName(et), " element"));
  }
  if (ir::IsFloat(et)) return store_float(e.token, e.negative, et, out);
  if (ir::IsBool(et)) {
    if (e.token.IsKeyword("true") || e.token.IsKeyword("false")) {
      out[0] = e.token.text == "true" ? 1 : 0;
      return OkStatus();
    }
  } else if (!e.token.is(TokenKind::kInteger)) {
    return p.ErrorAt(e.token,
                     StrCat("expected integer for ", ir::ElementTypeName(et),
                            " element, found ", Parser::Describe(e.token)));
  }
  if (!e.token.is(TokenKind::kInteger)) {
    return p.ErrorAt(
        e.token, StrCat("expected true, false, 0 or 1 for i1 element, found ",
                        Parser::Describe(e.token)));
  }
  uint64_t bits;
  RETURN_IF_ERROR(p.ParseIntegerLiteral(e.token, e.negative, bits));
  ASSIGN_OR_RETURN(int64_t value,
                   CanonicalInteger(p, e.token, e.negative, bits, et));
  uint64_t raw = static_cast<uint64_t>(value);
  int width = ir::BitWidth(et);
  if (width < 64) raw &= (1ULL << width) - 1;  // sub-byte and narrow: low bits
  std::memcpy(out, &raw, ir::StorageBytes(et));
  return OkStatus();
}

StatusOr<ir::Attribute> Parser::ParseDenseElements() {
  RETURN_IF_ERROR(Expect(TokenKind::kLess, "after 'dense'"));
  DenseLiteral literal;
  if (tok_.is(TokenKind::kString)) {
    literal.hex = true;
    literal.hex_token = tok_;
    std::string_view body = tok_.text.substr(1, tok_.text.size() - 2);
    if (body.size() < 2 || body[0] != '0' || body[1] != 'x') {
      return Error(
          StrCat("expected hex string \"0x...\" in dense attribute, found ",
                 Describe(tok_)));
    }
    literal.hex_digits = body.substr(2);
    Advance();
  } else if (tok_.is(TokenKind::kLeftSquare)) {
    std::vector<int8_t> leaf;
    RETURN_IF_ERROR(ParseNestedList(*this, literal, leaf, 0));
  } else if (!tok_.is(TokenKind::kGreater)) {
    literal.scalar = true;
    ElementLiteral element;
    RETURN_IF_ERROR(ParseElementLiteral(*this, element));
    literal.elements.push_back(element);
  }
  RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end dense attribute"));
  RETURN_IF_ERROR(
      Expect(TokenKind::kColon, "before the type of a dense attribute"));
  const Token type_token = tok_;
  ASSIGN_OR_RETURN(ir::Type type, ParseType());
  if (!type.IsTensor()) {
    return ErrorAt(type_token,
                   StrCat("dense attribute must have a tensor type, found ",
                          type.ToString()));
  }
  if (!type.HasStaticShape()) {
    return ErrorAt(type_token, StrCat("dense attribute type ", type.ToString(),
                                      " must have a static shape"));
  }
  ir::ElementType et = type.StorageElementType();
  int64_t count = type.NumElements();
  size_t bytes = static_cast<size_t>(ir::StorageBytes(et));
  if (literal.hex) {
    const std::string_view digits = literal.hex_digits;
    if (digits.size() % 2 != 0) {
      return ErrorAt(
          literal.hex_token,
          "hex string in dense attribute has an odd number of digits");
    }
    size_t size = digits.size() / 2;
    bool splat;
    if (count >= 0 && size == static_cast<size_t>(count) * bytes) {
      splat = false;
    } else if (size == bytes) {
      splat = true;
    } else {
      return ErrorAt(
          literal.hex_token,
          StrCat("dense hex data has ", size, " bytes; ", type.ToString(),
                 " needs ", static_cast<uint64_t>(count) * bytes, " (or ",
                 bytes, " for a splat)"));
    }
    std::string data(size, '\0');
    for (size_t i = 0; i < size; ++i) {
      int hi = HexValue(digits[2 * i]);
      int lo = HexValue(digits[2 * i + 1]);
      if (hi < 0 || lo < 0) {
        return ErrorAt(literal.hex_token,
                       "invalid hex digit in dense attribute");
      }
      data[i] = static_cast<char>(hi * 16 + lo);
    }
    // Canonical sub-byte storage: the low bits; i1: 0 or 1.
    int width = ir::BitWidth(et);
    if (ir::IsBool(et)) {
      for (char& c : data) c = c != 0 ? 1 : 0;
    } else if (width < 8) {
      for (char& c : data) c = static_cast<char>(c & ((1 << width) - 1));
    }
    return ir::Attribute::DenseElements(type, std::move(data), splat);
  }
  if (literal.scalar) {
    std::string data(bytes, '\0');
    RETURN_IF_ERROR(StoreElement(*this, literal.elements[0], et, data.data()));
    return ir::Attribute::DenseElements(type, std::move(data), true);
  }
  // Nested lists (or `dense<>`): the shape must match the type's.
  bool empty = literal.elements.empty();
  if (empty) {
    if (count != 0) {
      return ErrorAt(type_token,
                     StrCat("empty dense attribute for ", type.ToString(),
                            " which has ", count, " elements"));
    }
    return ir::Attribute::DenseElements(type, std::string(), false);
  }
  if (literal.shape != type.shape()) {
    return ErrorAt(type_token, StrCat("dense literal has shape [",
                                      StrJoin(literal.shape, ", "),
                                      "] but the type is ", type.ToString()));
  }
  std::string data(literal.elements.size() * bytes, '\0');
  for (size_t i = 0; i < literal.elements.size(); ++i) {
    RETURN_IF_ERROR(
        StoreElement(*this, literal.elements[i], et, data.data() + i * bytes));
  }
  return ir::Attribute::DenseElements(type, std::move(data), false);
}

StatusOr<ir::Attribute> Parser::ParseDenseResource() {
  RETURN_IF_ERROR(Expect(TokenKind::kLess, "after 'dense_resource'"));
  const Token key = tok_;
  if (!key.is(TokenKind::kBareIdentifier)) {
    return Error(StrCat("expected resource key in dense_resource<...>, found ",
                        Describe(key)));
  }
  Advance();
  RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end dense_resource"));
  RETURN_IF_ERROR(
      Expect(TokenKind::kColon, "before the type of dense_resource"));
  const Token type_token = tok_;
  ASSIGN_OR_RETURN(ir::Type type, ParseType());
  if (!type.IsTensor() || !type.HasStaticShape()) {
    return ErrorAt(type_token,
                   StrCat("dense_resource must have a statically shaped tensor "
                          "type, found ",
                          type.ToString()));
  }
  std::shared_ptr<ir::ResourceBlob> blob;
  if (module_) {
    blob = module_->GetOrCreateResource(std::string(key.text));
  } else {
    blob = std::make_shared<ir::ResourceBlob>();
    blob->key = std::string(key.text);
  }
  return ir::Attribute::DenseResource(type, std::move(blob));
}

}  // namespace kiln::parse::text
