// Shardy's ops in their pretty forms, as JAX prints them
// (`jax.jit(f).lower(...).as_text()`):
//
//   sdy.mesh @mesh = <["x"=4, "y"=2]>
//   %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x4xf32>
//   %2 = sdy.reshard %1 <@mesh, [{}, {"x"}]> : tensor<8x4xf32>
//   %3 = sdy.manual_computation(%2) in_shardings=[<@mesh, [{"x"}, {}]>]
//            out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"}
//            (%arg1: tensor<2x4xf32>) { ... sdy.return %v : tensor<2x4xf32> }
//            : (tensor<8x4xf32>) -> tensor<8x4xf32>
//
// Their attributes become the same opaque attributes the bytecode reader
// makes of the binary forms (`#sdy.sharding<...>`,
// `#sdy.sharding_per_value<[...]>`, `#sdy<manual_axes{...}>`), so the two
// front ends agree and the printer's generic form reads back.
#include "parse/text/parser_impl.h"

namespace kiln::parse::text {

StatusOr<std::string> Parser::ScanBracketedText(std::string_view what) {
  if (!tok_.is(TokenKind::kLess) && !tok_.is(TokenKind::kLeftSquare) &&
      !tok_.is(TokenKind::kLeftBrace)) {
    return Error(
        StrCat("expected '<', '[' or '{' ", what, ", found ", Describe(tok_)));
  }
  return ScanOpaqueBody();
}

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseShardyOp(
    const std::string& name, const Token& start) {
  if (name == "sdy.mesh") {
    // sdy.mesh @name = <mesh> attr-dict
    auto op =
        std::make_unique<ir::Operation>("sdy.mesh", std::vector<ir::Type>{});
    if (!tok_.is(TokenKind::kAtIdentifier)) {
      return Error(StrCat("expected the mesh's @name, found ", Describe(tok_)));
    }
    op->SetAttr("sym_name",
                ir::Attribute::String(std::string(tok_.text.substr(1))));
    Advance();
    RETURN_IF_ERROR(Expect(TokenKind::kEqual, "after the mesh's name"));
    ASSIGN_OR_RETURN(std::string mesh, ScanBracketedText("for the mesh"));
    op->SetAttr("mesh", ir::Attribute::Opaque("sdy.mesh" + mesh));
    RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/false));
    return op;
  }
  if (name == "sdy.sharding_constraint" || name == "sdy.reshard") {
    // %r = sdy.sharding_constraint %input <sharding> attr-dict : type
    auto op = std::make_unique<ir::Operation>(name, std::vector<ir::Type>{});
    ASSIGN_OR_RETURN(OperandRef input, ParseOperandRef());
    ASSIGN_OR_RETURN(std::string sharding,
                     ScanBracketedText(StrCat("for the sharding of ", name)));
    op->SetAttr("sharding", ir::Attribute::Opaque("sdy.sharding" + sharding));
    RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/false));
    RETURN_IF_ERROR(
        Expect(TokenKind::kColon, StrCat("before ", name, "'s type")));
    ASSIGN_OR_RETURN(ir::Type type, ParseType());
    std::vector<ir::Value*> values;
    RETURN_IF_ERROR(ResolveOperands({input}, {type}, start, values));
    SetOperands(*op, std::move(values));
    op->SetResultTypes({type});
    return op;
  }
  if (name == "sdy.return") {
    // sdy.return attr-dict (%v, ... : types)?
    auto op = std::make_unique<ir::Operation>(name, std::vector<ir::Type>{});
    RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/false));
    if (!tok_.is(TokenKind::kPercentIdentifier)) return op;
    std::vector<OperandRef> operands;
    RETURN_IF_ERROR(ParseOperandRefList(operands));
    RETURN_IF_ERROR(Expect(TokenKind::kColon, "before sdy.return's types"));
    std::vector<ir::Type> types;
    RETURN_IF_ERROR(ParseTypeList(types));
    std::vector<ir::Value*> values;
    RETURN_IF_ERROR(ResolveOperands(operands, types, start, values));
    SetOperands(*op, std::move(values));
    return op;
  }
  if (name == "sdy.manual_computation") {
    auto op = std::make_unique<ir::Operation>(name, std::vector<ir::Type>{});
    RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "after " + name));
    std::vector<OperandRef> operands;
    RETURN_IF_ERROR(ParseOperandRefList(operands));
    RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end the operands"));
    for (std::string_view key : {"in_shardings", "out_shardings"}) {
      RETURN_IF_ERROR(ExpectKeyword(key, "in sdy.manual_computation"));
      RETURN_IF_ERROR(Expect(TokenKind::kEqual, StrCat("after ", key)));
      ASSIGN_OR_RETURN(std::string list,
                       ScanBracketedText(StrCat("for ", key)));
      op->SetAttr(
          std::string(key),
          ir::Attribute::Opaque("sdy.sharding_per_value<" + list + ">"));
    }
    RETURN_IF_ERROR(ExpectKeyword("manual_axes", "in sdy.manual_computation"));
    RETURN_IF_ERROR(Expect(TokenKind::kEqual, "after manual_axes"));
    ASSIGN_OR_RETURN(std::string axes, ScanBracketedText("for manual_axes"));
    op->SetAttr("manual_axes",
                ir::Attribute::Opaque("sdy<manual_axes" + axes + ">"));
    RETURN_IF_ERROR(
        Expect(TokenKind::kLeftParen, "before the body's arguments"));
    std::vector<ArgumentDef> arguments;
    if (!tok_.is(TokenKind::kRightParen)) {
      do {
        ASSIGN_OR_RETURN(ArgumentDef def,
                         ParseArgumentDef(/*allow_attributes=*/false));
        arguments.push_back(std::move(def));
      } while (Consume(TokenKind::kComma));
    }
    RETURN_IF_ERROR(
        Expect(TokenKind::kRightParen, "after the body's arguments"));
    RETURN_IF_ERROR(ParseRegion(op->AddRegion(), arguments, /*isolated=*/true));
    RETURN_IF_ERROR(ParseOptionalAttrDict(*op, /*with_keyword=*/false));
    RETURN_IF_ERROR(Expect(TokenKind::kColon, "before the function type"));
    const Token type_token = tok_;
    ASSIGN_OR_RETURN(ir::Type type, ParseFunctionType());
    std::vector<ir::Value*> values;
    RETURN_IF_ERROR(
        ResolveOperands(operands, type.inputs(), type_token, values));
    SetOperands(*op, std::move(values));
    op->SetResultTypes(type.results());
    return op;
  }
  return std::unique_ptr<ir::Operation>();
}

}  // namespace kiln::parse::text
