// Pretty forms described by ir::OpFormat: the format's pieces are matched
// against the input one by one (see ir/op_format.h for the notation).
#include <cstring>

#include "base/strings.h"
#include "parse/text/parser_impl.h"

namespace kiln::parse::text {
namespace {

bool IsPunctuationLiteral(std::string_view text, TokenKind& kind) {
  static const std::pair<std::string_view, TokenKind> kPunctuation[] = {
      {",", TokenKind::kComma},      {"=", TokenKind::kEqual},
      {"(", TokenKind::kLeftParen},  {")", TokenKind::kRightParen},
      {"[", TokenKind::kLeftSquare}, {"]", TokenKind::kRightSquare},
      {"{", TokenKind::kLeftBrace},  {"}", TokenKind::kRightBrace},
      {"->", TokenKind::kArrow},     {":", TokenKind::kColon},
  };
  for (const auto& [spelling, token_kind] : kPunctuation) {
    if (spelling == text) {
      kind = token_kind;
      return true;
    }
  }
  return false;
}

bool MatchesLiteral(const Token& token, const std::string& literal) {
  TokenKind kind;
  if (IsPunctuationLiteral(literal, kind)) return token.is(kind);
  return token.IsKeyword(literal);
}

}  // namespace

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseFormattedOperation(
    const std::string& name, const ir::OpFormat& format, const Token& start) {
  auto op = std::make_unique<ir::Operation>(name, std::vector<ir::Type>{});
  std::vector<OperandRef> operands;
  std::vector<ir::Type> operand_types, result_types;
  const Token op_token = start;
  const auto& pieces = format.pieces;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const ir::FormatPiece& piece = pieces[i];
    switch (piece.kind) {
      case ir::FormatPiece::Kind::kLiteral: {
        if (!MatchesLiteral(tok_, piece.text)) {
          return Error(StrCat("expected '", piece.text, "' in ", name,
                              ", found ", Describe(tok_)));
        }
        Advance();
        break;
      }
      case ir::FormatPiece::Kind::kOperand: {
        ASSIGN_OR_RETURN(OperandRef ref, ParseOperandRef());
        operands.push_back(ref);
        break;
      }
      case ir::FormatPiece::Kind::kOperands:
        RETURN_IF_ERROR(ParseOperandRefList(operands));
        break;
      case ir::FormatPiece::Kind::kOperandsWithComma:
        while (tok_.is(TokenKind::kPercentIdentifier)) {
          ASSIGN_OR_RETURN(OperandRef ref, ParseOperandRef());
          operands.push_back(ref);
          RETURN_IF_ERROR(
              Expect(TokenKind::kComma, StrCat("after operand in ", name)));
        }
        break;
      case ir::FormatPiece::Kind::kAttribute:
        RETURN_IF_ERROR(ParseFormatAttribute(piece, *op));
        break;
      case ir::FormatPiece::Kind::kAttrDict:
        RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/false));
        break;
      case ir::FormatPiece::Kind::kOptionalBegin: {
        // Enter the group when the input starts with its leading literals.
        Snapshot snapshot = Save();
        bool matches = true;
        size_t j = i + 1;
        for (; j < static_cast<size_t>(piece.group_end) &&
               pieces[j].kind == ir::FormatPiece::Kind::kLiteral;
             ++j) {
          if (!MatchesLiteral(tok_, pieces[j].text)) {
            matches = false;
            break;
          }
          Advance();
        }
        Restore(snapshot);
        if (!matches) i = static_cast<size_t>(piece.group_end);
        break;
      }
      case ir::FormatPiece::Kind::kOptionalEnd:
        break;
      case ir::FormatPiece::Kind::kTypes:
        RETURN_IF_ERROR(ParseFormatTypes(piece.types, operands.size(),
                                         operand_types, result_types));
        if (piece.types == ir::FormatTypes::kFromValue) {
          ir::Attribute value = op->GetAttr("value");
          if (!value || !value.type()) {
            return ErrorAt(op_token, StrCat(name, " needs a typed value"));
          }
          operand_types = {value.type()};
        }
        break;
    }
  }
  std::vector<ir::Value*> values;
  RETURN_IF_ERROR(ResolveOperands(operands, operand_types, op_token, values));
  op->SetResultTypes(result_types);
  SetOperands(*op, std::move(values));
  return op;
}

Status Parser::ParseOptionalAttrDict(ir::Operation& op, bool with_keyword) {
  if (with_keyword) {
    if (!ConsumeKeyword("attributes")) return OkStatus();
  } else if (!tok_.is(TokenKind::kLeftBrace)) {
    return OkStatus();
  }
  const Token dict = tok_;
  std::vector<ir::NamedAttribute> entries;
  RETURN_IF_ERROR(ParseAttributeDictionary(entries));
  for (auto& [key, value] : entries) {
    RETURN_IF_ERROR(SetAttribute(op, key, std::move(value), dict));
  }
  return OkStatus();
}

Status Parser::ParseFormatAttribute(const ir::FormatPiece& piece,
                                    ir::Operation& op) {
  const Token where = tok_;
  const std::string& name = piece.text;
  auto set = [&](std::string attr_name, ir::Attribute value) {
    return SetAttribute(op, std::move(attr_name), std::move(value), where);
  };
  auto integer = [&](ir::ElementType type) -> Status {
    bool negative = Consume(TokenKind::kMinus);
    const Token literal = tok_;
    if (!literal.is(TokenKind::kInteger)) {
      return Error(
          StrCat("expected integer for ", name, ", found ", Describe(literal)));
    }
    uint64_t bits;
    RETURN_IF_ERROR(ParseIntegerLiteral(literal, negative, bits));
    ASSIGN_OR_RETURN(int64_t value,
                     CanonicalInteger(*this, literal, negative, bits, type));
    Advance();
    return set(name, ir::Attribute::Integer(value, ir::Type::Element(type)));
  };
  switch (piece.attr_kind) {
    case ir::FormatAttrKind::kI64:
      return integer(ir::ElementType::kI64);
    case ir::FormatAttrKind::kI32:
      return integer(ir::ElementType::kI32);
    case ir::FormatAttrKind::kU32:
      return integer(ir::ElementType::kUI32);
    case ir::FormatAttrKind::kU64:
      return integer(ir::ElementType::kUI64);
    case ir::FormatAttrKind::kF64: {
      ASSIGN_OR_RETURN(double value,
                       ParseFloatValue(ir::ElementType::kF64, "for " + name));
      return set(name, ir::Attribute::Float(
                           value, ir::Type::Element(ir::ElementType::kF64)));
    }
    case ir::FormatAttrKind::kI64Array: {
      ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseIntegerList(name));
      return set(name, ir::Attribute::DenseI64Array(std::move(values)));
    }
    case ir::FormatAttrKind::kBool: {
      if (!tok_.IsKeyword("true") && !tok_.IsKeyword("false")) {
        return Error(StrCat("expected true or false for ", name, ", found ",
                            Describe(tok_)));
      }
      bool value = tok_.text == "true";
      Advance();
      return set(name, ir::Attribute::Bool(value));
    }
    case ir::FormatAttrKind::kString: {
      ASSIGN_OR_RETURN(std::string value, ParseStringLiteral("for " + name));
      return set(name, ir::Attribute::String(std::move(value)));
    }
    case ir::FormatAttrKind::kCallTarget: {
      if (tok_.is(TokenKind::kString)) {
        ASSIGN_OR_RETURN(std::string value,
                         ParseStringLiteral("as call target"));
        return set(name, ir::Attribute::String(std::move(value)));
      }
      ASSIGN_OR_RETURN(ir::Attribute symbol, ParseSymbolRef());
      if (!symbol.symbol_nested().empty()) {
        return ErrorAt(where, "call target must be a flat symbol");
      }
      return set(name, ir::Attribute::String(symbol.symbol_root()));
    }
    case ir::FormatAttrKind::kSymbol: {
      ASSIGN_OR_RETURN(ir::Attribute symbol, ParseSymbolRef());
      return set(name, std::move(symbol));
    }
    case ir::FormatAttrKind::kEnum: {
      ASSIGN_OR_RETURN(ir::Attribute value, ParseEnumBody(piece.enum_kind));
      return set(name, std::move(value));
    }
    case ir::FormatAttrKind::kPrecisionList: {
      RETURN_IF_ERROR(
          Expect(TokenKind::kLeftSquare, "to begin precision list"));
      std::vector<ir::Attribute> values;
      if (!tok_.is(TokenKind::kRightSquare)) {
        do {
          ASSIGN_OR_RETURN(ir::Attribute value,
                           ParseEnumBody(ir::EnumKind::kPrecision));
          values.push_back(std::move(value));
        } while (Consume(TokenKind::kComma));
      }
      RETURN_IF_ERROR(Expect(TokenKind::kRightSquare, "to end precision list"));
      return set(name, ir::Attribute::Array(std::move(values)));
    }
    case ir::FormatAttrKind::kDotDimensions: {
      ASSIGN_OR_RETURN(ir::Attribute value, ParseDotDimensionsPretty());
      return set(name, std::move(value));
    }
    case ir::FormatAttrKind::kDotAlgorithm: {
      ASSIGN_OR_RETURN(ir::Attribute value, ParseDotAlgorithmBody());
      return set(name, std::move(value));
    }
    case ir::FormatAttrKind::kConvDimensions: {
      ASSIGN_OR_RETURN(ir::Attribute value, ParseConvDimensionsBody());
      return set(name, std::move(value));
    }
    case ir::FormatAttrKind::kSliceRanges: {
      // [start:limit(:stride)?, ...]
      RETURN_IF_ERROR(Expect(TokenKind::kLeftSquare, "to begin slice ranges"));
      std::vector<int64_t> starts, limits, strides;
      if (!tok_.is(TokenKind::kRightSquare)) {
        do {
          ASSIGN_OR_RETURN(int64_t start, ParseInteger("as slice start"));
          RETURN_IF_ERROR(Expect(TokenKind::kColon, "in slice range"));
          ASSIGN_OR_RETURN(int64_t limit, ParseInteger("as slice limit"));
          int64_t stride = 1;
          if (Consume(TokenKind::kColon)) {
            ASSIGN_OR_RETURN(stride, ParseInteger("as slice stride"));
          }
          starts.push_back(start);
          limits.push_back(limit);
          strides.push_back(stride);
        } while (Consume(TokenKind::kComma));
      }
      RETURN_IF_ERROR(Expect(TokenKind::kRightSquare, "to end slice ranges"));
      RETURN_IF_ERROR(set("start_indices",
                          ir::Attribute::DenseI64Array(std::move(starts))));
      RETURN_IF_ERROR(set("limit_indices",
                          ir::Attribute::DenseI64Array(std::move(limits))));
      return set("strides", ir::Attribute::DenseI64Array(std::move(strides)));
    }
    case ir::FormatAttrKind::kExponentMantissa: {
      // e8m10
      const Token word = tok_;
      std::string_view text = word.text;
      size_t m = text.find('m');
      auto digits = [](std::string_view s) {
        return !s.empty() && s.size() <= 9 &&
               s.find_first_not_of("0123456789") == std::string_view::npos;
      };
      if (!word.is(TokenKind::kBareIdentifier) || text.empty() ||
          text[0] != 'e' || m == std::string_view::npos ||
          !digits(text.substr(1, m - 1)) || !digits(text.substr(m + 1))) {
        return Error(
            StrCat("expected format eXmY (exponent and mantissa bits), found ",
                   Describe(word)));
      }
      int64_t exponent = std::stoll(std::string(text.substr(1, m - 1)));
      int64_t mantissa = std::stoll(std::string(text.substr(m + 1)));
      Advance();
      ir::Type i32 = ir::Type::Element(ir::ElementType::kI32);
      RETURN_IF_ERROR(
          set("exponent_bits", ir::Attribute::Integer(exponent, i32)));
      return set("mantissa_bits", ir::Attribute::Integer(mantissa, i32));
    }
    case ir::FormatAttrKind::kWindow: {
      // stride = [..], pad = [[l, h], ..], lhs_dilate = [..], rhs_dilate =
      // [..], reverse = [..]; all optional, inside the format's braces.
      if (tok_.is(TokenKind::kRightBrace)) return OkStatus();
      do {
        const Token key = tok_;
        std::string attribute;
        for (const auto& [attr_name, keyword] : ir::WindowAttributeKeywords()) {
          if (key.IsKeyword(keyword)) attribute = attr_name;
        }
        if (attribute.empty()) {
          return Error(StrCat(
              "unknown window attribute ", Describe(key),
              " (expected stride, pad, lhs_dilate, rhs_dilate or reverse)"));
        }
        Advance();
        RETURN_IF_ERROR(
            Expect(TokenKind::kEqual, StrCat("after '", key.text, "'")));
        if (attribute == "padding") {
          RETURN_IF_ERROR(Expect(TokenKind::kLeftSquare, "to begin padding"));
          std::vector<int64_t> values;
          if (!tok_.is(TokenKind::kRightSquare)) {
            do {
              ASSIGN_OR_RETURN(std::vector<int64_t> pair,
                               ParseIntegerList("padding pair"));
              if (pair.size() != 2) {
                return Error(StrCat("expected padding pair [low, high], got ",
                                    pair.size(), " values"));
              }
              values.insert(values.end(), pair.begin(), pair.end());
            } while (Consume(TokenKind::kComma));
          }
          RETURN_IF_ERROR(Expect(TokenKind::kRightSquare, "to end padding"));
          std::string data(values.size() * 8, '\0');
          // `padding = []`: no values, and memcpy may not take null.
          if (!values.empty()) {
            std::memcpy(data.data(), values.data(), data.size());
          }
          ir::Type type =
              ir::TensorOf({static_cast<int64_t>(values.size() / 2), 2},
                           ir::ElementType::kI64);
          RETURN_IF_ERROR(set("padding", ir::Attribute::DenseElements(
                                             type, std::move(data), false)));
        } else if (attribute == "window_reversal") {
          RETURN_IF_ERROR(Expect(TokenKind::kLeftSquare, "to begin reverse"));
          std::vector<bool> values;
          if (!tok_.is(TokenKind::kRightSquare)) {
            do {
              if (tok_.IsKeyword("true") || tok_.IsKeyword("false")) {
                values.push_back(tok_.text == "true");
                Advance();
              } else {
                ASSIGN_OR_RETURN(int64_t value, ParseInteger("in reverse"));
                values.push_back(value != 0);
              }
            } while (Consume(TokenKind::kComma));
          }
          RETURN_IF_ERROR(Expect(TokenKind::kRightSquare, "to end reverse"));
          RETURN_IF_ERROR(
              set(attribute, ir::Attribute::DenseBoolArray(std::move(values))));
        } else {
          ASSIGN_OR_RETURN(std::vector<int64_t> values,
                           ParseIntegerList(key.text));
          RETURN_IF_ERROR(
              set(attribute, ir::Attribute::DenseI64Array(std::move(values))));
        }
      } while (Consume(TokenKind::kComma));
      return OkStatus();
    }
    case ir::FormatAttrKind::kAny: {
      ASSIGN_OR_RETURN(ir::Attribute value, ParseAttribute());
      return set(name, std::move(value));
    }
  }
  return OkStatus();
}

Status Parser::ParseFormatTypes(ir::FormatTypes types, size_t num_operands,
                                std::vector<ir::Type>& operand_types,
                                std::vector<ir::Type>& result_types) {
  using ir::FormatTypes;
  if (types == FormatTypes::kFromValue) return OkStatus();
  if (types == FormatTypes::kReturn && num_operands == 0) return OkStatus();
  const Token colon = tok_;
  RETURN_IF_ERROR(Expect(TokenKind::kColon, "before the types of the op"));
  const Token type_token = tok_;
  auto from_function = [&](const ir::Type& type) -> Status {
    if (type.inputs().size() != num_operands) {
      return ErrorAt(type_token,
                     StrCat(num_operands, " operands present, but expected ",
                            type.inputs().size()));
    }
    operand_types = type.inputs();
    result_types = type.results();
    return OkStatus();
  };
  switch (types) {
    case FormatTypes::kSame:
    case FormatTypes::kSameNoResult:
    case FormatTypes::kVariadicSame: {
      ASSIGN_OR_RETURN(ir::Type type, ParseType());
      size_t results = types == FormatTypes::kSameNoResult ? 0 : 1;
      if (type.is(ir::TypeKind::kFunction)) {
        RETURN_IF_ERROR(from_function(type));
        if (result_types.size() != results) {
          return ErrorAt(type_token, results == 1 ? "expected single output"
                                                  : "expected no results");
        }
        return OkStatus();
      }
      operand_types.assign(num_operands, type);
      result_types.assign(results, type);
      return OkStatus();
    }
    case FormatTypes::kFunctional: {
      if (!tok_.is(TokenKind::kLeftParen)) {
        return Error(
            StrCat("expected function type (operands) -> results, found ",
                   Describe(tok_)));
      }
      ASSIGN_OR_RETURN(ir::Type type, ParseFunctionType());
      return from_function(type);
    }
    case FormatTypes::kResults:
      if (num_operands != 0) return ErrorAt(colon, "this op takes no operands");
      return ParseTypeList(result_types);
    case FormatTypes::kReturn:
    case FormatTypes::kOperandList:
      RETURN_IF_ERROR(ParseTypeList(operand_types));
      if (operand_types.size() != num_operands) {
        return ErrorAt(type_token,
                       StrCat(num_operands, " operands present, but expected ",
                              operand_types.size()));
      }
      return OkStatus();
    case FormatTypes::kSelect: {
      ASSIGN_OR_RETURN(ir::Type pred, ParseType());
      if (pred.is(ir::TypeKind::kFunction)) return from_function(pred);
      RETURN_IF_ERROR(Expect(TokenKind::kComma, "between select types"));
      ASSIGN_OR_RETURN(ir::Type value, ParseType());
      operand_types = {pred, value, value};
      result_types = {value};
      if (num_operands != 3) {
        return ErrorAt(type_token, StrCat(num_operands,
                                          " operands present, but expected 3"));
      }
      return OkStatus();
    }
    case FormatTypes::kTuple: {
      ASSIGN_OR_RETURN(ir::Type type, ParseType());
      if (type.is(ir::TypeKind::kFunction)) return from_function(type);
      if (!type.IsTuple()) {
        return ErrorAt(type_token,
                       StrCat("expected tuple type, found ", type.ToString()));
      }
      operand_types = type.elements();
      result_types = {type};
      if (operand_types.size() != num_operands) {
        return ErrorAt(type_token,
                       StrCat(num_operands, " operands present, but expected ",
                              operand_types.size()));
      }
      return OkStatus();
    }
    case FormatTypes::kComplex: {
      ASSIGN_OR_RETURN(ir::Type type, ParseType());
      if (type.is(ir::TypeKind::kFunction)) return from_function(type);
      if (!type.IsTensor() || !type.element().is(ir::TypeKind::kElement) ||
          !ir::IsComplex(type.element().element_type())) {
        return ErrorAt(
            type_token,
            StrCat("expected tensor with complex element type, found ",
                   type.ToString()));
      }
      ir::Type part = type.WithElement(ir::Type::Element(
          ir::ComplexComponentType(type.element().element_type())));
      operand_types.assign(num_operands, part);
      result_types = {type};
      return OkStatus();
    }
    case FormatTypes::kArrow: {
      RETURN_IF_ERROR(ParseTypeList(operand_types));
      if (operand_types.size() != num_operands) {
        return ErrorAt(type_token,
                       StrCat(num_operands, " operands present, but expected ",
                              operand_types.size()));
      }
      RETURN_IF_ERROR(Expect(TokenKind::kArrow, "before result types"));
      return ParseResultTypeList(result_types);
    }
    case FormatTypes::kCastTo: {
      ASSIGN_OR_RETURN(ir::Type source, ParseType());
      RETURN_IF_ERROR(ExpectKeyword("to", "in cast"));
      ASSIGN_OR_RETURN(ir::Type target, ParseType());
      operand_types = {source};
      result_types = {target};
      return OkStatus();
    }
    case FormatTypes::kFromValue:
      return OkStatus();
  }
  return OkStatus();
}

}  // namespace kiln::parse::text
