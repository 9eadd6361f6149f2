// Locations: loc(unknown), loc("file":line:col [to ...]), loc("name"(child)),
// loc(callsite(a at b)), loc(fused<meta>[...]) and `#loc` aliases, which
// JAX defines after the module that uses them. A location that names an
// alias not yet defined is kept as a LocExpr and resolved at end of file.
#include <algorithm>

#include "base/strings.h"
#include "parse/text/parser_impl.h"

namespace kiln::parse::text {
namespace {

std::shared_ptr<LocExpr> Resolved(ir::Location loc, int depth = 1) {
  auto expr = std::make_shared<LocExpr>();
  expr->kind = LocExpr::Kind::kResolved;
  expr->resolved = std::move(loc);
  expr->depth = depth;
  return expr;
}

// 1 + the deepest child (unresolved children count 1 until resolved).
int DepthOver(const std::vector<std::shared_ptr<LocExpr>>& children) {
  int depth = 0;
  for (const auto& child : children) depth = std::max(depth, child->depth);
  return depth + 1;
}

bool AllResolved(const std::vector<std::shared_ptr<LocExpr>>& children) {
  for (const auto& child : children) {
    if (child->kind != LocExpr::Kind::kResolved) return false;
  }
  return true;
}

}  // namespace

ir::Location Parser::DefaultLocation(const Token& token) const {
  return ir::Location::FileLineCol(source_name_, token.line, token.column);
}

StatusOr<std::shared_ptr<LocExpr>> Parser::ParseLocation() {
  RETURN_IF_ERROR(ExpectKeyword("loc", "to begin location"));
  RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "after 'loc'"));
  ASSIGN_OR_RETURN(std::shared_ptr<LocExpr> expr, ParseLocationBody());
  RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end location"));
  return expr;
}

StatusOr<std::shared_ptr<LocExpr>> Parser::ParseLocationBody() {
  RETURN_IF_ERROR(EnterNesting());
  struct Leave {
    Parser* parser;
    ~Leave() { parser->LeaveNesting(); }
  } leave{this};
  const Token token = tok_;
  // A compound location, resolved now when its children are; its depth
  // (with aliases expanded) is bounded like any nesting.
  auto compound =
      [&](LocExpr::Kind kind, std::vector<std::shared_ptr<LocExpr>> children,
          std::string text,
          ir::Attribute metadata) -> StatusOr<std::shared_ptr<LocExpr>> {
    auto expr = std::make_shared<LocExpr>();
    expr->kind = kind;
    expr->depth = DepthOver(children);
    if (expr->depth > kMaxNestingDepth) {
      return ErrorAt(token, StrCat("location nesting deeper than ",
                                   kMaxNestingDepth, " levels"));
    }
    expr->children = std::move(children);
    expr->text = std::move(text);
    expr->metadata = std::move(metadata);
    if (!AllResolved(expr->children)) return expr;
    ASSIGN_OR_RETURN(ResolvedLocation resolved, ResolveLocation(expr));
    return Resolved(std::move(resolved.loc), resolved.depth);
  };
  if (token.is(TokenKind::kHashIdentifier)) {
    Advance();
    std::string name(token.text.substr(1));
    auto it = location_aliases_.find(name);
    if (it != location_aliases_.end() && it->second.state == 2) {
      return Resolved(it->second.resolved, it->second.depth);
    }
    auto expr = std::make_shared<LocExpr>();
    expr->kind = LocExpr::Kind::kAlias;
    expr->text = std::move(name);
    expr->token = token;
    return expr;
  }
  if (ConsumeKeyword("unknown")) return Resolved(ir::Location::Unknown());
  if (ConsumeKeyword("callsite")) {
    RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "after 'callsite'"));
    ASSIGN_OR_RETURN(std::shared_ptr<LocExpr> callee, ParseLocationBody());
    RETURN_IF_ERROR(ExpectKeyword("at", "in callsite location"));
    ASSIGN_OR_RETURN(std::shared_ptr<LocExpr> caller, ParseLocationBody());
    RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end callsite location"));
    return compound(LocExpr::Kind::kCallSite,
                    {std::move(callee), std::move(caller)}, "",
                    ir::Attribute());
  }
  if (ConsumeKeyword("fused")) {
    ir::Attribute metadata;
    if (Consume(TokenKind::kLess)) {
      ASSIGN_OR_RETURN(metadata, ParseAttribute());
      RETURN_IF_ERROR(
          Expect(TokenKind::kGreater, "to end fused location metadata"));
    }
    RETURN_IF_ERROR(Expect(TokenKind::kLeftSquare, "in fused location"));
    std::vector<std::shared_ptr<LocExpr>> children;
    if (!tok_.is(TokenKind::kRightSquare)) {
      do {
        ASSIGN_OR_RETURN(std::shared_ptr<LocExpr> child, ParseLocationBody());
        children.push_back(std::move(child));
      } while (Consume(TokenKind::kComma));
    }
    RETURN_IF_ERROR(Expect(TokenKind::kRightSquare, "to end fused location"));
    return compound(LocExpr::Kind::kFused, std::move(children), "",
                    std::move(metadata));
  }
  if (token.is(TokenKind::kString)) {
    ASSIGN_OR_RETURN(std::string text, ParseStringLiteral("in location"));
    if (Consume(TokenKind::kColon)) {
      // "file":line:col [to [line]:col]
      ASSIGN_OR_RETURN(int64_t line, ParseInteger("as location line"));
      RETURN_IF_ERROR(Expect(TokenKind::kColon, "after location line"));
      ASSIGN_OR_RETURN(int64_t column, ParseInteger("as location column"));
      int64_t end_line = 0, end_column = 0;
      if (ConsumeKeyword("to")) {
        end_line = line;
        if (!Consume(TokenKind::kColon)) {
          ASSIGN_OR_RETURN(end_line, ParseInteger("as location end line"));
          RETURN_IF_ERROR(Expect(TokenKind::kColon, "after location end line"));
        }
        ASSIGN_OR_RETURN(end_column, ParseInteger("as location end column"));
      }
      return Resolved(ir::Location::FileLineCol(std::move(text), line, column,
                                                end_line, end_column));
    }
    if (Consume(TokenKind::kLeftParen)) {
      ASSIGN_OR_RETURN(std::shared_ptr<LocExpr> child, ParseLocationBody());
      RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end name location"));
      return compound(LocExpr::Kind::kName, {std::move(child)}, std::move(text),
                      ir::Attribute());
    }
    return Resolved(ir::Location::Name(std::move(text)));
  }
  return Error(
      StrCat("expected location (unknown, \"file\":line:col, \"name\", "
             "callsite(...), fused[...] or #alias), found ",
             Describe(token)));
}

StatusOr<Parser::ResolvedLocation> Parser::ResolveAlias(const std::string& name,
                                                        const Token& use) {
  auto it = location_aliases_.find(name);
  if (it == location_aliases_.end()) {
    return ErrorAt(use, StrCat("undefined location alias #", name));
  }
  LocationAlias& alias = it->second;
  if (alias.state == 2) return ResolvedLocation{alias.resolved, alias.depth};
  if (alias.state == 1) {
    return ErrorAt(use, StrCat("location alias #", name, " refers to itself"));
  }
  alias.state = 1;
  // Aliases chain through each other: bound the recursion like nesting.
  RETURN_IF_ERROR(EnterNesting());
  StatusOr<ResolvedLocation> resolved = ResolveLocation(alias.expr);
  LeaveNesting();
  if (!resolved.ok()) return resolved.status();
  alias.resolved = resolved->loc;
  alias.depth = resolved->depth;
  alias.state = 2;
  return *resolved;
}

StatusOr<Parser::ResolvedLocation> Parser::ResolveLocation(
    const std::shared_ptr<LocExpr>& expr) {
  if (expr->kind == LocExpr::Kind::kResolved) {
    return ResolvedLocation{expr->resolved, expr->depth};
  }
  if (expr->kind == LocExpr::Kind::kAlias)
    return ResolveAlias(expr->text, expr->token);
  std::vector<ir::Location> children;
  int depth = 0;
  for (const auto& child : expr->children) {
    ASSIGN_OR_RETURN(ResolvedLocation resolved, ResolveLocation(child));
    children.push_back(std::move(resolved.loc));
    depth = std::max(depth, resolved.depth);
  }
  ++depth;
  if (depth > kMaxNestingDepth) {
    const Token& where = expr->token.text.empty() ? tok_ : expr->token;
    return ErrorAt(where,
                   StrCat("location nesting deeper than ", kMaxNestingDepth,
                          " levels (through aliases)"));
  }
  switch (expr->kind) {
    case LocExpr::Kind::kName:
      return ResolvedLocation{
          ir::Location::Name(expr->text, std::move(children[0])), depth};
    case LocExpr::Kind::kCallSite:
      return ResolvedLocation{ir::Location::CallSite(std::move(children[0]),
                                                     std::move(children[1])),
                              depth};
    case LocExpr::Kind::kFused:
      return ResolvedLocation{
          ir::Location::Fused(std::move(children), expr->metadata), depth};
    default:
      break;
  }
  return ResolvedLocation{};
}

Status Parser::SetOpLocation(ir::Operation& op,
                             const std::shared_ptr<LocExpr>& expr) {
  if (expr->kind == LocExpr::Kind::kResolved) {
    op.set_loc(expr->resolved);
  } else {
    deferred_locations_.push_back({&op, nullptr, expr});
  }
  return OkStatus();
}

Status Parser::ApplyArgumentLocation(const ArgumentDef& def, ir::Value& value) {
  if (def.pending_loc) {
    deferred_locations_.push_back({nullptr, &value, def.pending_loc});
  } else {
    value.set_loc(def.loc);
  }
  return OkStatus();
}

Status Parser::ResolveDeferredLocations() {
  for (DeferredLocation& deferred : deferred_locations_) {
    ASSIGN_OR_RETURN(ResolvedLocation resolved, ResolveLocation(deferred.expr));
    if (deferred.op) deferred.op->set_loc(resolved.loc);
    if (deferred.value) deferred.value->set_loc(resolved.loc);
  }
  deferred_locations_.clear();
  return OkStatus();
}

}  // namespace kiln::parse::text
