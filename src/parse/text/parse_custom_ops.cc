// Hand-written pretty forms: func.func, module, stablehlo.while,
// stablehlo.reduce (compact and full), stablehlo.constant (and
// arith.constant), stablehlo.optimization_barrier and chlo.scan.
#include "base/strings.h"
#include "parse/text/parser_impl.h"

namespace kiln::parse::text {

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseFuncOp(
    const Token& start) {
  auto op =
      std::make_unique<ir::Operation>("func.func", std::vector<ir::Type>{});
  if (tok_.IsKeyword("public") || tok_.IsKeyword("private") ||
      tok_.IsKeyword("nested")) {
    op->SetAttr("sym_visibility",
                ir::Attribute::String(std::string(tok_.text)));
    Advance();
  }
  const Token name = tok_;
  ASSIGN_OR_RETURN(ir::Attribute symbol, ParseSymbolRef());
  if (!symbol.symbol_nested().empty())
    return ErrorAt(name, "function name must be a flat symbol");
  op->SetAttr("sym_name", ir::Attribute::String(symbol.symbol_root()));
  // Arguments: `%name: type {attrs} loc(...)`, or bare types for a
  // declaration without a body.
  RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "to begin function arguments"));
  std::vector<ArgumentDef> args;
  bool named = tok_.is(TokenKind::kPercentIdentifier);
  if (!tok_.is(TokenKind::kRightParen)) {
    do {
      if (named) {
        ASSIGN_OR_RETURN(ArgumentDef def,
                         ParseArgumentDef(/*allow_attributes=*/true));
        args.push_back(std::move(def));
      } else {
        ArgumentDef def;
        def.token = tok_;
        if (tok_.is(TokenKind::kPercentIdentifier)) {
          return Error("expected all function arguments to be named or none");
        }
        ASSIGN_OR_RETURN(def.type, ParseType());
        if (tok_.is(TokenKind::kLeftBrace)) {
          ASSIGN_OR_RETURN(def.attributes, ParseDictionaryAttribute());
        }
        def.loc = DefaultLocation(def.token);
        args.push_back(std::move(def));
      }
    } while (Consume(TokenKind::kComma));
  }
  RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end function arguments"));
  std::vector<ir::Type> results;
  std::vector<ir::Attribute> result_attrs;
  if (Consume(TokenKind::kArrow)) {
    if (Consume(TokenKind::kLeftParen)) {
      if (!tok_.is(TokenKind::kRightParen)) {
        do {
          ASSIGN_OR_RETURN(ir::Type type, ParseType());
          results.push_back(std::move(type));
          ir::Attribute attrs;
          if (tok_.is(TokenKind::kLeftBrace)) {
            ASSIGN_OR_RETURN(attrs, ParseDictionaryAttribute());
          }
          result_attrs.push_back(std::move(attrs));
        } while (Consume(TokenKind::kComma));
      }
      RETURN_IF_ERROR(
          Expect(TokenKind::kRightParen, "to end function results"));
    } else {
      ASSIGN_OR_RETURN(ir::Type type, ParseType());
      results.push_back(std::move(type));
      result_attrs.emplace_back();
    }
  }
  std::vector<ir::Type> inputs;
  for (const ArgumentDef& def : args) inputs.push_back(def.type);
  op->SetAttr("function_type",
              ir::Attribute::TypeAttr(ir::Type::Function(inputs, results)));
  // arg_attrs / res_attrs exist only when some entry is not empty.
  auto attr_array =
      [](const std::vector<ir::Attribute>& dicts) -> ir::Attribute {
    bool any = false;
    for (const ir::Attribute& dict : dicts) {
      if (dict && !dict.dictionary().empty()) any = true;
    }
    if (!any) return ir::Attribute();
    std::vector<ir::Attribute> elements;
    for (const ir::Attribute& dict : dicts) {
      elements.push_back(dict ? dict : ir::Attribute::Dictionary({}));
    }
    return ir::Attribute::Array(std::move(elements));
  };
  std::vector<ir::Attribute> arg_attrs;
  for (const ArgumentDef& def : args) arg_attrs.push_back(def.attributes);
  if (ir::Attribute array = attr_array(arg_attrs))
    op->SetAttr("arg_attrs", array);
  if (ir::Attribute array = attr_array(result_attrs))
    op->SetAttr("res_attrs", array);
  RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/true));
  ir::Region& body = op->AddRegion();
  if (tok_.is(TokenKind::kLeftBrace)) {
    if (!named && !args.empty()) {
      return Error(
          "a function with a body needs named arguments (%name: type)");
    }
    RETURN_IF_ERROR(ParseRegion(body, args, /*isolated=*/true));
  }
  return op;
}

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseModuleOp(
    const Token& start) {
  auto op = std::make_unique<ir::Operation>("builtin.module",
                                            std::vector<ir::Type>{});
  if (tok_.is(TokenKind::kAtIdentifier) || tok_.is(TokenKind::kAtString)) {
    ASSIGN_OR_RETURN(ir::Attribute symbol, ParseSymbolRef());
    op->SetAttr("sym_name", ir::Attribute::String(symbol.symbol_root()));
  }
  RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/true));
  ir::Region& body = op->AddRegion();
  if (!tok_.is(TokenKind::kLeftBrace)) {
    return Error(
        StrCat("expected '{' to begin module body, found ", Describe(tok_)));
  }
  RETURN_IF_ERROR(ParseRegion(body, {}, /*isolated=*/true));
  if (body.empty()) body.AddBlock();
  if (body.num_blocks() != 1)
    return ErrorAt(start, "a module body must be a single block");
  return op;
}

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseWhileOp(
    const Token& start) {
  // stablehlo.while(%iterArg = %init, ...) : T, ... [attributes {...}]
  //     cond { ... } do { ... }
  auto op = std::make_unique<ir::Operation>("stablehlo.while",
                                            std::vector<ir::Type>{});
  RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "after stablehlo.while"));
  std::vector<ArgumentDef> iter_args;
  std::vector<OperandRef> operands;
  if (!tok_.is(TokenKind::kRightParen)) {
    do {
      ArgumentDef def;
      def.token = tok_;
      if (!tok_.is(TokenKind::kPercentIdentifier)) {
        return Error(
            StrCat("expected loop variable name, found ", Describe(tok_)));
      }
      def.name = tok_.text;
      def.loc = DefaultLocation(def.token);
      Advance();
      RETURN_IF_ERROR(Expect(TokenKind::kEqual, "after loop variable"));
      ASSIGN_OR_RETURN(OperandRef ref, ParseOperandRef());
      iter_args.push_back(def);
      operands.push_back(ref);
    } while (Consume(TokenKind::kComma));
  }
  RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end loop variables"));
  std::vector<ir::Type> types;
  if (!operands.empty()) {
    RETURN_IF_ERROR(Expect(TokenKind::kColon, "before loop variable types"));
    const Token type_token = tok_;
    RETURN_IF_ERROR(ParseTypeList(types));
    if (types.size() != operands.size()) {
      return ErrorAt(type_token, StrCat(operands.size(), " loop variables but ",
                                        types.size(), " types"));
    }
  }
  for (size_t i = 0; i < types.size(); ++i) iter_args[i].type = types[i];
  std::vector<ir::Value*> values;
  RETURN_IF_ERROR(ResolveOperands(operands, types, start, values));
  SetOperands(*op, std::move(values));
  op->SetResultTypes(types);
  RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/true));
  RETURN_IF_ERROR(ExpectKeyword("cond", "in stablehlo.while"));
  RETURN_IF_ERROR(ParseRegion(op->AddRegion(), iter_args, /*isolated=*/false));
  RETURN_IF_ERROR(ExpectKeyword("do", "in stablehlo.while"));
  RETURN_IF_ERROR(ParseRegion(op->AddRegion(), iter_args, /*isolated=*/false));
  return op;
}

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseReduceOp(
    const Token& start) {
  // stablehlo.reduce(%x init: %i), ... [applies OP] across dimensions = [..]
  //     {attrs} : (types) -> types [reducer(%a: T, %b: T) ... { body }]
  auto op = std::make_unique<ir::Operation>("stablehlo.reduce",
                                            std::vector<ir::Type>{});
  std::vector<OperandRef> inputs, inits;
  do {
    RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "to begin reduce operand"));
    ASSIGN_OR_RETURN(OperandRef input, ParseOperandRef());
    RETURN_IF_ERROR(ExpectKeyword("init", "in reduce operand"));
    RETURN_IF_ERROR(Expect(TokenKind::kColon, "after 'init'"));
    ASSIGN_OR_RETURN(OperandRef init, ParseOperandRef());
    RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end reduce operand"));
    inputs.push_back(input);
    inits.push_back(init);
  } while (Consume(TokenKind::kComma));
  Token inner_name;
  bool compact = false;
  if (ConsumeKeyword("applies")) {
    compact = true;
    inner_name = tok_;
    if (!inner_name.is(TokenKind::kBareIdentifier) ||
        ir::LookupOpCode(inner_name.text) == ir::OpCode::kUnknown) {
      return Error(
          StrCat("expected the name of a known op after 'applies', found ",
                 Describe(inner_name)));
    }
    Advance();
  }
  RETURN_IF_ERROR(ExpectKeyword("across", "in stablehlo.reduce"));
  RETURN_IF_ERROR(ExpectKeyword("dimensions", "in stablehlo.reduce"));
  RETURN_IF_ERROR(Expect(TokenKind::kEqual, "after 'dimensions'"));
  const Token dims_token = tok_;
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   ParseIntegerList("reduce dimensions"));
  RETURN_IF_ERROR(SetAttribute(*op, "dimensions",
                               ir::Attribute::DenseI64Array(dims), dims_token));
  RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/false));
  RETURN_IF_ERROR(Expect(TokenKind::kColon, "before reduce types"));
  const Token type_token = tok_;
  if (!tok_.is(TokenKind::kLeftParen)) {
    return Error(StrCat("expected function type, found ", Describe(tok_)));
  }
  ASSIGN_OR_RETURN(ir::Type type, ParseFunctionType());
  std::vector<OperandRef> operands = inputs;
  operands.insert(operands.end(), inits.begin(), inits.end());
  std::vector<ir::Value*> values;
  RETURN_IF_ERROR(ResolveOperands(operands, type.inputs(), type_token, values));
  SetOperands(*op, std::move(values));
  op->SetResultTypes(type.results());
  ir::Region& body = op->AddRegion();
  if (compact) {
    const ir::Type& first = type.inputs()[0];
    if (!first.IsTensor()) {
      return ErrorAt(type_token, StrCat("reduce input must be a tensor, found ",
                                        first.ToString()));
    }
    ir::Type scalar = ir::Type::Tensor({}, first.element());
    ir::Block& block = body.AddBlock();
    ir::Value* lhs = block.AddArgument(scalar, DefaultLocation(inner_name));
    ir::Value* rhs = block.AddArgument(scalar, DefaultLocation(inner_name));
    auto inner = std::make_unique<ir::Operation>(std::string(inner_name.text),
                                                 std::vector<ir::Type>{scalar});
    inner->set_operands({lhs, rhs});
    auto ret = std::make_unique<ir::Operation>("stablehlo.return",
                                               std::vector<ir::Type>{});
    ret->set_operands({inner->result(0)});
    inherit_location_.push_back(block.Append(std::move(inner)));
    inherit_location_.push_back(block.Append(std::move(ret)));
    return op;
  }
  RETURN_IF_ERROR(ExpectKeyword("reducer", "before the reduce body"));
  std::vector<ArgumentDef> accumulators, elements;
  for (size_t i = 0; i < inputs.size(); ++i) {
    RETURN_IF_ERROR(
        Expect(TokenKind::kLeftParen, "to begin reducer arguments"));
    ASSIGN_OR_RETURN(ArgumentDef accumulator, ParseArgumentDef(false));
    RETURN_IF_ERROR(Expect(TokenKind::kComma, "between reducer arguments"));
    ASSIGN_OR_RETURN(ArgumentDef element, ParseArgumentDef(false));
    RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end reducer arguments"));
    accumulators.push_back(std::move(accumulator));
    elements.push_back(std::move(element));
  }
  std::vector<ArgumentDef> args = std::move(accumulators);
  for (ArgumentDef& element : elements) args.push_back(std::move(element));
  RETURN_IF_ERROR(ParseRegion(body, args, /*isolated=*/false));
  return op;
}

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseConstantOp(
    const std::string& name, const Token& start) {
  auto op = std::make_unique<ir::Operation>(name, std::vector<ir::Type>{});
  if (Consume(TokenKind::kLeftParen)) {
    // The generic-like spelling used when the value's type differs from the
    // result type (quantized constants): `() <{value = ...}> {..} : () -> T`.
    RETURN_IF_ERROR(Expect(TokenKind::kRightParen, StrCat("in ", name)));
    if (Consume(TokenKind::kLess)) {
      const Token dict = tok_;
      std::vector<ir::NamedAttribute> properties;
      RETURN_IF_ERROR(ParseAttributeDictionary(properties));
      RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end properties"));
      for (auto& [key, value] : properties) {
        RETURN_IF_ERROR(SetAttribute(*op, key, std::move(value), dict));
      }
    }
    RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/false));
    RETURN_IF_ERROR(
        Expect(TokenKind::kColon, StrCat("before the type of ", name)));
    const Token type_token = tok_;
    if (!tok_.is(TokenKind::kLeftParen)) {
      return Error(StrCat("expected function type, found ", Describe(tok_)));
    }
    ASSIGN_OR_RETURN(ir::Type type, ParseFunctionType());
    if (!type.inputs().empty()) {
      return ErrorAt(type_token, StrCat(name, " takes no operands"));
    }
    op->SetResultTypes(type.results());
    return op;
  }
  RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/false));
  const Token value_token = tok_;
  ASSIGN_OR_RETURN(ir::Attribute value, ParseAttribute());
  if (!value.type() || value.is(ir::AttrKind::kType)) {
    return ErrorAt(
        value_token,
        StrCat(name, " needs a typed value such as dense<...> : tensor<...>"));
  }
  ir::Type type = value.type();
  RETURN_IF_ERROR(SetAttribute(*op, "value", std::move(value), value_token));
  op->SetResultTypes({type});
  return op;
}

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseOptimizationBarrierOp(
    const Token& start) {
  auto op = std::make_unique<ir::Operation>("stablehlo.optimization_barrier",
                                            std::vector<ir::Type>{});
  RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/false));
  if (Consume(TokenKind::kLeftParen)) {
    RETURN_IF_ERROR(
        Expect(TokenKind::kRightParen, "in empty optimization_barrier"));
    return op;
  }
  std::vector<OperandRef> operands;
  RETURN_IF_ERROR(ParseOperandRefList(operands));
  if (operands.empty()) {
    return Error(
        StrCat("expected operands or '()' in optimization_barrier, found ",
               Describe(tok_)));
  }
  RETURN_IF_ERROR(
      Expect(TokenKind::kColon, "before optimization_barrier types"));
  std::vector<ir::Type> types;
  RETURN_IF_ERROR(ParseTypeList(types));
  std::vector<ir::Value*> values;
  RETURN_IF_ERROR(ResolveOperands(operands, types, start, values));
  SetOperands(*op, std::move(values));
  op->SetResultTypes(types);
  return op;
}

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseScanOp(
    const Token& start) {
  // chlo.scan(%in, ...) inits(%init, ...) dimension=N [attributes {..}]
  //     { region } : (types) -> (types)
  // Both segment sizes follow from the operand lists and the types.
  auto op =
      std::make_unique<ir::Operation>("chlo.scan", std::vector<ir::Type>{});
  std::vector<OperandRef> inputs, inits;
  RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "after chlo.scan"));
  RETURN_IF_ERROR(ParseOperandRefList(inputs));
  RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end scan inputs"));
  RETURN_IF_ERROR(ExpectKeyword("inits", "in chlo.scan"));
  RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "after 'inits'"));
  RETURN_IF_ERROR(ParseOperandRefList(inits));
  RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end scan inits"));
  RETURN_IF_ERROR(ExpectKeyword("dimension", "in chlo.scan"));
  RETURN_IF_ERROR(Expect(TokenKind::kEqual, "after 'dimension'"));
  ASSIGN_OR_RETURN(int64_t dimension, ParseInteger("as scan dimension"));
  op->SetAttr("dimension",
              ir::Attribute::Integer(dimension,
                                     ir::Type::Element(ir::ElementType::kI64)));
  op->SetAttr("operandSegmentSizes",
              ir::Attribute::DenseIntArray(
                  ir::ElementType::kI32, {static_cast<int64_t>(inputs.size()),
                                          static_cast<int64_t>(inits.size())}));
  RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/true));
  RETURN_IF_ERROR(ParseRegion(op->AddRegion(), {}, /*isolated=*/false));
  RETURN_IF_ERROR(Expect(TokenKind::kColon, "before scan types"));
  const Token type_token = tok_;
  if (!tok_.is(TokenKind::kLeftParen)) {
    return Error(StrCat("expected function type, found ", Describe(tok_)));
  }
  ASSIGN_OR_RETURN(ir::Type type, ParseFunctionType());
  std::vector<OperandRef> operands = inputs;
  operands.insert(operands.end(), inits.begin(), inits.end());
  std::vector<ir::Value*> values;
  RETURN_IF_ERROR(ResolveOperands(operands, type.inputs(), type_token, values));
  SetOperands(*op, std::move(values));
  op->SetResultTypes(type.results());
  // The results are the outputs, then one carry per init (MLIR elides the
  // sizes in this form).
  int64_t num_results = static_cast<int64_t>(type.results().size());
  int64_t num_carries = static_cast<int64_t>(inits.size());
  if (!op->GetAttr("resultSegmentSizes") && num_results >= num_carries) {
    op->SetAttr(
        "resultSegmentSizes",
        ir::Attribute::DenseIntArray(ir::ElementType::kI32,
                                     {num_results - num_carries, num_carries}));
  }
  return op;
}

}  // namespace kiln::parse::text
