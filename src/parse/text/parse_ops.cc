// The file structure (aliases, top-level ops, the {-# ... #-} resource
// section), the generic op form, regions and blocks, and SSA names with
// MLIR's scoping rules.
#include <algorithm>

#include "base/strings.h"
#include "ir/attr_defaults.h"
#include "parse/text/parser_impl.h"

namespace kiln::parse::text {
namespace {

// The most results one op may declare (`%0:N`); far above any real program
// and small enough that a hostile count cannot exhaust memory.
constexpr int64_t kMaxResults = 1 << 16;

bool IsIsolatedFromAbove(std::string_view name) {
  return name == "func.func" || name == "builtin.module";
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// ---- SSA names

void Parser::PushNameScope(bool isolated) {
  name_scopes_.emplace_back();
  if (isolated) {
    IsolatedScope scope;
    scope.first_name_scope = name_scopes_.size() - 1;
    isolated_scopes_.push_back(std::move(scope));
  }
}

Status Parser::PopNameScope() {
  bool closes_isolated =
      !isolated_scopes_.empty() &&
      isolated_scopes_.back().first_name_scope == name_scopes_.size() - 1;
  name_scopes_.pop_back();
  if (closes_isolated) isolated_scopes_.pop_back();
  return OkStatus();
}

const Parser::ValueGroup* Parser::LookupValue(std::string_view name) const {
  size_t floor =
      isolated_scopes_.empty() ? 0 : isolated_scopes_.back().first_name_scope;
  for (size_t i = name_scopes_.size(); i-- > floor;) {
    auto it = name_scopes_[i].values.find(name);
    if (it != name_scopes_[i].values.end()) return &it->second;
  }
  return nullptr;
}

StatusOr<OperandRef> Parser::ParseOperandRef() {
  const Token token = tok_;
  if (!token.is(TokenKind::kPercentIdentifier)) {
    return Error(StrCat("expected SSA value, found ", Describe(token)));
  }
  Advance();
  OperandRef ref{token.text, 0, token};
  // `%name#N`: the hash must follow the name directly.
  if (tok_.is(TokenKind::kHashIdentifier) &&
      tok_.text.data() == token.text.data() + token.text.size()) {
    std::string_view digits = tok_.text.substr(1);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos) {
      return Error(StrCat("invalid result number ", Describe(tok_)));
    }
    ref.number = std::stoi(std::string(digits));
    Advance();
  }
  return ref;
}

Status Parser::ParseOperandRefList(std::vector<OperandRef>& refs) {
  if (!tok_.is(TokenKind::kPercentIdentifier)) return OkStatus();
  do {
    ASSIGN_OR_RETURN(OperandRef ref, ParseOperandRef());
    refs.push_back(ref);
  } while (Consume(TokenKind::kComma));
  return OkStatus();
}

StatusOr<ir::Value*> Parser::ResolveOperand(const OperandRef& ref,
                                            const ir::Type& type) {
  ir::Value* value = nullptr;
  if (const ValueGroup* group = LookupValue(ref.name)) {
    if (ref.number >= group->count) {
      return ErrorAt(ref.token, StrCat("result number ", ref.number, " of ",
                                       ref.name, " is out of range (it has ",
                                       group->count, " results)"));
    }
    value = group->op ? group->op->result(group->first + ref.number)
                      : group->single;
  } else {
    // Values are defined before use: StableHLO regions are single blocks in
    // SSA order (MLIR's verifier would reject the use as not dominated).
    return ErrorAt(ref.token,
                   StrCat("use of undeclared SSA value '", ref.name, "'"));
  }
  if (type && value->type() != type) {
    return ErrorAt(
        ref.token,
        StrCat("use of value '", ref.name,
               "' expects different type than prior uses: '", type.ToString(),
               "' vs '", value->type().ToString(), "'"));
  }
  return value;
}

Status Parser::ResolveOperands(const std::vector<OperandRef>& refs,
                               const std::vector<ir::Type>& types,
                               const Token& where,
                               std::vector<ir::Value*>& values) {
  if (refs.size() != types.size()) {
    return ErrorAt(
        where,
        StrCat(refs.size(), " operands present, but expected ", types.size()));
  }
  values.reserve(refs.size());
  for (size_t i = 0; i < refs.size(); ++i) {
    ASSIGN_OR_RETURN(ir::Value * value, ResolveOperand(refs[i], types[i]));
    values.push_back(value);
  }
  return OkStatus();
}

void Parser::SetOperands(ir::Operation& op, std::vector<ir::Value*> values) {
  op.set_operands(std::move(values));
}

Status Parser::DefineValue(std::string_view name, const Token& token,
                           ir::Value* value) {
  if (LookupValue(name)) {
    return ErrorAt(token, StrCat("redefinition of SSA value '", name, "'"));
  }
  ValueGroup group;
  group.single = value;
  name_scopes_.back().values.emplace(name, group);
  return OkStatus();
}

// ---- Ops

Status Parser::ParseOperation(ir::Block& block) {
  const Token start = tok_;
  struct ResultGroup {
    Token token;
    int count;
  };
  std::vector<ResultGroup> groups;
  int64_t num_results = 0;
  if (tok_.is(TokenKind::kPercentIdentifier)) {
    do {
      const Token name = tok_;
      if (!name.is(TokenKind::kPercentIdentifier)) {
        return Error(StrCat("expected result name, found ", Describe(name)));
      }
      Advance();
      int64_t count = 1;
      if (Consume(TokenKind::kColon)) {
        const Token count_token = tok_;
        ASSIGN_OR_RETURN(count, ParseInteger("as result count"));
        if (count < 1 || count > kMaxResults) {
          return ErrorAt(count_token,
                         StrCat("invalid result count ", count,
                                " (expected 1 to ", kMaxResults, ")"));
        }
      }
      groups.push_back({name, static_cast<int>(count)});
      num_results += count;
      if (num_results > kMaxResults) {
        return ErrorAt(
            name, StrCat("too many results (more than ", kMaxResults, ")"));
      }
    } while (Consume(TokenKind::kComma));
    RETURN_IF_ERROR(Expect(TokenKind::kEqual, "after result names"));
  }
  std::unique_ptr<ir::Operation> op;
  if (tok_.is(TokenKind::kString)) {
    ASSIGN_OR_RETURN(op, ParseGenericOperation(start));
  } else if (tok_.is(TokenKind::kBareIdentifier)) {
    ASSIGN_OR_RETURN(op, ParseCustomOperation(start));
  } else {
    return Error(StrCat(
        "expected operation name (a quoted generic name or a custom op), "
        "found ",
        Describe(tok_)));
  }
  std::vector<ir::Operation*> inherit = std::move(inherit_location_);
  inherit_location_.clear();
  if (tok_.IsKeyword("loc")) {
    ASSIGN_OR_RETURN(std::shared_ptr<LocExpr> loc, ParseLocation());
    RETURN_IF_ERROR(SetOpLocation(*op, loc));
    for (ir::Operation* inner : inherit)
      RETURN_IF_ERROR(SetOpLocation(*inner, loc));
  } else {
    // No `loc(...)`: the op's place in the file (set here rather than when
    // the op is built, since most ops in real programs carry a location).
    op->set_loc(DefaultLocation(start));
    for (ir::Operation* inner : inherit) inner->set_loc(op->loc());
  }
  if (op->num_results() != num_results) {
    return ErrorAt(
        start, StrCat("operation defines ", op->num_results(),
                      " results but was provided ", num_results, " to bind"));
  }
  int first = 0;
  for (const ResultGroup& group : groups) {
    if (LookupValue(group.token.text)) {
      return ErrorAt(group.token, StrCat("redefinition of SSA value '",
                                         group.token.text, "'"));
    }
    ValueGroup value_group;
    value_group.op = op.get();
    value_group.first = first;
    value_group.count = group.count;
    name_scopes_.back().values.emplace(group.token.text, value_group);
    first += group.count;
  }
  // Kiln's IR keeps inherent attributes at their default value absent
  // (ir/attr_defaults.h), whether the text wrote them or not.
  ir::EraseDefaultAttributes(*op);
  block.Append(std::move(op));
  return OkStatus();
}

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseGenericOperation(
    const Token& start) {
  const Token name_token = tok_;
  ASSIGN_OR_RETURN(std::string name, ParseStringLiteral("as operation name"));
  if (name.empty()) return ErrorAt(name_token, "empty operation name");
  auto op = std::make_unique<ir::Operation>(name, std::vector<ir::Type>{});
  RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "to begin operand list"));
  std::vector<OperandRef> operands;
  RETURN_IF_ERROR(ParseOperandRefList(operands));
  RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end operand list"));
  std::vector<Token> successors;
  if (Consume(TokenKind::kLeftSquare)) {
    do {
      if (!tok_.is(TokenKind::kCaretIdentifier)) {
        return Error(
            StrCat("expected block successor, found ", Describe(tok_)));
      }
      successors.push_back(tok_);
      Advance();
    } while (Consume(TokenKind::kComma));
    RETURN_IF_ERROR(Expect(TokenKind::kRightSquare, "to end successor list"));
  }
  if (tok_.is(TokenKind::kLess)) {
    Advance();
    const Token dict = tok_;
    std::vector<ir::NamedAttribute> properties;
    RETURN_IF_ERROR(ParseAttributeDictionary(properties));
    RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end properties"));
    for (auto& [key, value] : properties) {
      RETURN_IF_ERROR(SetAttribute(*op, key, std::move(value), dict));
    }
  }
  if (Consume(TokenKind::kLeftParen)) {
    bool isolated = IsIsolatedFromAbove(name);
    do {
      RETURN_IF_ERROR(ParseRegion(op->AddRegion(), {}, isolated));
    } while (Consume(TokenKind::kComma));
    RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "to end region list"));
  }
  if (tok_.is(TokenKind::kLeftBrace)) {
    const Token dict = tok_;
    std::vector<ir::NamedAttribute> attributes;
    RETURN_IF_ERROR(ParseAttributeDictionary(attributes));
    for (auto& [key, value] : attributes) {
      RETURN_IF_ERROR(SetAttribute(*op, key, std::move(value), dict));
    }
  }
  RETURN_IF_ERROR(
      Expect(TokenKind::kColon, "before the type of a generic operation"));
  const Token type_token = tok_;
  if (!tok_.is(TokenKind::kLeftParen)) {
    return Error(StrCat("expected function type for generic operation, found ",
                        Describe(tok_)));
  }
  ASSIGN_OR_RETURN(ir::Type type, ParseFunctionType());
  if (type.inputs().size() != operands.size()) {
    return ErrorAt(type_token,
                   StrCat("expected ", operands.size(),
                          " operand types but had ", type.inputs().size()));
  }
  op->SetResultTypes(type.results());
  std::vector<ir::Value*> values;
  RETURN_IF_ERROR(ResolveOperands(operands, type.inputs(), type_token, values));
  SetOperands(*op, std::move(values));
  if (!successors.empty()) {
    // Successors name blocks of the enclosing region; they are resolved
    // when that region ends.
    return ErrorAt(successors[0],
                   "block successors are not supported (StableHLO programs "
                   "use region-based control flow)");
  }
  if (op->is(ir::OpCode::kModule) && op->num_regions() == 1 &&
      op->region(0).empty()) {
    op->region(0).AddBlock();
  }
  return op;
}

Status Parser::SetAttribute(ir::Operation& op, std::string name,
                            ir::Attribute value, const Token& where) {
  if (op.HasAttr(name)) {
    return ErrorAt(where,
                   StrCat("duplicate attribute '", name, "' on ", op.name()));
  }
  op.SetAttr(std::move(name), std::move(value));
  return OkStatus();
}

StatusOr<std::unique_ptr<ir::Operation>> Parser::ParseCustomOperation(
    const Token& start) {
  const Token name_token = tok_;
  std::string name(name_token.text);
  if (name.find('.') == std::string::npos) {
    // Ops of the default dialects print without a prefix.
    if (name == "module") {
      name = "builtin.module";
    } else if (ir::LookupOpCode("func." + name) != ir::OpCode::kUnknown) {
      name = "func." + name;
    }
  }
  ir::OpCode code = ir::LookupOpCode(name);
  Advance();
  if (name.rfind("sdy.", 0) == 0) {
    ASSIGN_OR_RETURN(std::unique_ptr<ir::Operation> op,
                     ParseShardyOp(name, start));
    if (op != nullptr) return op;
  }
  switch (code) {
    case ir::OpCode::kFunc:
      return ParseFuncOp(start);
    case ir::OpCode::kModule:
      return ParseModuleOp(start);
    case ir::OpCode::kWhile:
      return ParseWhileOp(start);
    case ir::OpCode::kReduce:
      return ParseReduceOp(start);
    case ir::OpCode::kConstant:
    case ir::OpCode::kArithConstant:
      return ParseConstantOp(name, start);
    case ir::OpCode::kOptimizationBarrier:
      return ParseOptimizationBarrierOp(start);
    case ir::OpCode::kChloScan:
      return ParseScanOp(start);
    default:
      break;
  }
  const ir::OpFormat* format = ir::GetOpFormat(code);
  if (!format) {
    if (code != ir::OpCode::kUnknown) {
      return ErrorAt(name_token, StrCat("op '", name,
                                        "' has no pretty form; write it in the "
                                        "generic form \"",
                                        name, "\"(...)"));
    }
    return ErrorAt(name_token, StrCat("custom op '", name, "' is unknown"));
  }
  return ParseFormattedOperation(name, *format, start);
}

// ---- Regions

StatusOr<ArgumentDef> Parser::ParseArgumentDef(bool allow_attributes) {
  ArgumentDef def;
  def.token = tok_;
  if (!tok_.is(TokenKind::kPercentIdentifier)) {
    return Error(StrCat("expected argument name, found ", Describe(tok_)));
  }
  def.name = tok_.text;
  Advance();
  RETURN_IF_ERROR(
      Expect(TokenKind::kColon, StrCat("after argument ", def.name)));
  ASSIGN_OR_RETURN(def.type, ParseType());
  if (allow_attributes && tok_.is(TokenKind::kLeftBrace)) {
    ASSIGN_OR_RETURN(def.attributes, ParseDictionaryAttribute());
  }
  if (tok_.IsKeyword("loc")) {
    ASSIGN_OR_RETURN(std::shared_ptr<LocExpr> loc, ParseLocation());
    if (loc->kind == LocExpr::Kind::kResolved) {
      def.loc = loc->resolved;
    } else {
      def.pending_loc = std::move(loc);
    }
    def.has_loc = true;
  } else {
    def.loc = DefaultLocation(def.token);
  }
  return def;
}

Status Parser::ParseRegion(ir::Region& region,
                           const std::vector<ArgumentDef>& entry_args,
                           bool isolated) {
  const Token open = tok_;
  RETURN_IF_ERROR(Expect(TokenKind::kLeftBrace, "to begin region"));
  RETURN_IF_ERROR(EnterNesting());
  struct Leave {
    Parser* parser;
    ~Leave() { parser->LeaveNesting(); }
  } leave{this};
  PushNameScope(isolated);
  if (entry_args.empty() && Consume(TokenKind::kRightBrace))
    return PopNameScope();
  std::unordered_map<std::string_view, ir::Block*> labels;
  ir::Block* block = nullptr;
  if (!entry_args.empty() || !tok_.is(TokenKind::kCaretIdentifier)) {
    if (!entry_args.empty() && tok_.is(TokenKind::kCaretIdentifier)) {
      return Error("invalid block name in region with named arguments");
    }
    block = &region.AddBlock();
    for (const ArgumentDef& def : entry_args) {
      ir::Value* value = block->AddArgument(def.type, def.loc);
      RETURN_IF_ERROR(ApplyArgumentLocation(def, *value));
      if (!def.name.empty())
        RETURN_IF_ERROR(DefineValue(def.name, def.token, value));
    }
  }
  while (true) {
    if (tok_.is(TokenKind::kCaretIdentifier)) {
      const Token label = tok_;
      Advance();
      if (labels.count(label.text)) {
        return ErrorAt(label,
                       StrCat("redefinition of block ", Describe(label)));
      }
      block = &region.AddBlock();
      labels[label.text] = block;
      if (Consume(TokenKind::kLeftParen)) {
        if (!tok_.is(TokenKind::kRightParen)) {
          do {
            ASSIGN_OR_RETURN(ArgumentDef def, ParseArgumentDef(false));
            ir::Value* value = block->AddArgument(def.type, def.loc);
            RETURN_IF_ERROR(ApplyArgumentLocation(def, *value));
            RETURN_IF_ERROR(DefineValue(def.name, def.token, value));
          } while (Consume(TokenKind::kComma));
        }
        RETURN_IF_ERROR(
            Expect(TokenKind::kRightParen, "to end block arguments"));
      }
      RETURN_IF_ERROR(Expect(TokenKind::kColon, "after block label"));
    }
    while (!tok_.is(TokenKind::kRightBrace) &&
           !tok_.is(TokenKind::kCaretIdentifier)) {
      if (tok_.is(TokenKind::kEof)) {
        return ErrorAt(open, "unterminated region: missing '}' for this '{'");
      }
      RETURN_IF_ERROR(ParseOperation(*block));
    }
    if (Consume(TokenKind::kRightBrace)) break;
  }
  return PopNameScope();
}

// ---- File

Status Parser::ParseAliasDefinition() {
  const Token name = tok_;
  Advance();
  RETURN_IF_ERROR(Expect(TokenKind::kEqual, "in alias definition"));
  std::string key(name.text.substr(1));
  // The depth the value reaches, so that uses of the alias count it.
  int saved_max = max_depth_;
  max_depth_ = depth_;
  struct RestoreMax {
    int& max_depth;
    int saved;
    ~RestoreMax() { max_depth = std::max(max_depth, saved); }
  } restore_max{max_depth_, saved_max};
  if (name.is(TokenKind::kBangIdentifier)) {
    if (type_aliases_.count(key)) {
      return ErrorAt(name,
                     StrCat("redefinition of type alias ", Describe(name)));
    }
    ASSIGN_OR_RETURN(ir::Type type, ParseType());
    type_aliases_[key] = {std::move(type), max_depth_ - depth_};
    return OkStatus();
  }
  if (attribute_aliases_.count(key) || location_aliases_.count(key)) {
    return ErrorAt(name,
                   StrCat("redefinition of attribute alias ", Describe(name)));
  }
  if (tok_.IsKeyword("loc")) {
    ASSIGN_OR_RETURN(std::shared_ptr<LocExpr> expr, ParseLocation());
    LocationAlias alias;
    if (expr->kind == LocExpr::Kind::kResolved) {
      alias.resolved = expr->resolved;
      alias.depth = expr->depth;
      alias.state = 2;
    }
    alias.expr = std::move(expr);
    location_aliases_[key] = std::move(alias);
    return OkStatus();
  }
  ASSIGN_OR_RETURN(ir::Attribute value, ParseAttribute());
  attribute_aliases_[key] = {std::move(value), max_depth_ - depth_};
  return OkStatus();
}

Status Parser::ParseFileMetadata() {
  // {-# dialect_resources: { builtin: { key: "0x..." } }, external_resources:
  // {...} #-}
  RETURN_IF_ERROR(
      Expect(TokenKind::kFileMetadataBegin, "to begin file metadata"));
  if (!tok_.is(TokenKind::kFileMetadataEnd)) {
    do {
      const Token section = tok_;
      if (!section.is(TokenKind::kBareIdentifier)) {
        return Error(StrCat("expected resource section name, found ",
                            Describe(section)));
      }
      Advance();
      RETURN_IF_ERROR(Expect(TokenKind::kColon, "after resource section name"));
      RETURN_IF_ERROR(
          Expect(TokenKind::kLeftBrace, "to begin resource section"));
      if (!tok_.is(TokenKind::kRightBrace)) {
        do {
          const Token group = tok_;
          if (!group.is(TokenKind::kBareIdentifier)) {
            return Error(StrCat("expected resource group name, found ",
                                Describe(group)));
          }
          Advance();
          RETURN_IF_ERROR(
              Expect(TokenKind::kColon, "after resource group name"));
          RETURN_IF_ERROR(
              Expect(TokenKind::kLeftBrace, "to begin resource group"));
          bool blobs =
              section.text == "dialect_resources" && group.text == "builtin";
          if (!tok_.is(TokenKind::kRightBrace)) {
            do {
              const Token key = tok_;
              if (!key.is(TokenKind::kBareIdentifier) &&
                  !key.is(TokenKind::kString)) {
                return Error(
                    StrCat("expected resource key, found ", Describe(key)));
              }
              std::string key_text(key.text);
              if (key.is(TokenKind::kString)) {
                ASSIGN_OR_RETURN(key_text,
                                 ParseStringLiteral("as resource key"));
              } else {
                Advance();
              }
              RETURN_IF_ERROR(Expect(TokenKind::kColon, "after resource key"));
              if (blobs && tok_.is(TokenKind::kString)) {
                const Token value = tok_;
                std::string_view body =
                    value.text.substr(1, value.text.size() - 2);
                if (body.size() < 10 || body.substr(0, 2) != "0x" ||
                    body.size() % 2 != 0) {
                  return ErrorAt(
                      value,
                      "expected hex blob \"0x...\" (4-byte alignment, then "
                      "data) for builtin resource");
                }
                std::string bytes((body.size() - 2) / 2, '\0');
                for (size_t i = 0; i < bytes.size(); ++i) {
                  int hi = HexValue(body[2 + 2 * i]);
                  int lo = HexValue(body[3 + 2 * i]);
                  if (hi < 0 || lo < 0)
                    return ErrorAt(value, "invalid hex digit in resource blob");
                  bytes[i] = static_cast<char>(hi * 16 + lo);
                }
                Advance();
                uint32_t alignment = 0;
                for (int i = 3; i >= 0; --i) {
                  alignment =
                      alignment * 256 + static_cast<unsigned char>(bytes[i]);
                }
                std::shared_ptr<ir::ResourceBlob> blob =
                    module_->GetOrCreateResource(key_text);
                blob->present = true;
                blob->alignment = alignment;
                blob->data = bytes.substr(4);
              } else {
                // Other resources (external, or non-blob values) are skipped.
                ASSIGN_OR_RETURN(ir::Attribute ignored, ParseAttribute());
                (void)ignored;
              }
            } while (Consume(TokenKind::kComma));
          }
          RETURN_IF_ERROR(
              Expect(TokenKind::kRightBrace, "to end resource group"));
        } while (Consume(TokenKind::kComma));
      }
      RETURN_IF_ERROR(
          Expect(TokenKind::kRightBrace, "to end resource section"));
    } while (Consume(TokenKind::kComma));
  }
  return Expect(TokenKind::kFileMetadataEnd, "to end file metadata");
}

Status Parser::ParseTopLevel(ir::Block& block) {
  while (!tok_.is(TokenKind::kEof)) {
    if (tok_.is(TokenKind::kHashIdentifier) ||
        tok_.is(TokenKind::kBangIdentifier)) {
      RETURN_IF_ERROR(ParseAliasDefinition());
    } else if (tok_.is(TokenKind::kFileMetadataBegin)) {
      RETURN_IF_ERROR(ParseFileMetadata());
    } else {
      RETURN_IF_ERROR(ParseOperation(block));
    }
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<ir::Module>> Parser::ParseFile() {
  auto scratch = std::make_unique<ir::Module>();
  module_ = scratch.get();
  ir::Block top;
  PushNameScope(/*isolated=*/true);
  RETURN_IF_ERROR(ParseTopLevel(top));
  RETURN_IF_ERROR(PopNameScope());
  RETURN_IF_ERROR(ResolveDeferredLocations());
  std::unique_ptr<ir::Module> module;
  // A lone module op is the module, when it has the one body block a module
  // holds (a malformed one stays a generic op in an implicit module).
  const ir::Operation* lone =
      top.operations().size() == 1 ? top.operations()[0].get() : nullptr;
  if (lone && lone->is(ir::OpCode::kModule) && lone->num_regions() == 1 &&
      lone->region(0).num_blocks() == 1) {
    std::vector<std::unique_ptr<ir::Operation>> ops = top.TakeOperations();
    module = std::make_unique<ir::Module>(std::move(ops[0]));
  } else {
    // A bare list of ops gets an implicit module, as in MLIR.
    module = std::make_unique<ir::Module>();
    module->op().set_loc(ir::Location::FileLineCol(source_name_, 0, 0));
    module->body().SetOperations(top.TakeOperations());
  }
  module->resources() = scratch->resources();
  module->set_source_name(source_name_);
  module_ = nullptr;
  return module;
}

StatusOr<ir::Type> Parser::ParseStandaloneType() {
  ASSIGN_OR_RETURN(ir::Type type, ParseType());
  if (!tok_.is(TokenKind::kEof)) {
    return Error(StrCat("unexpected ", Describe(tok_), " after type"));
  }
  return type;
}

StatusOr<ir::Attribute> Parser::ParseStandaloneAttribute() {
  ASSIGN_OR_RETURN(ir::Attribute attribute, ParseAttribute());
  if (!tok_.is(TokenKind::kEof)) {
    return Error(StrCat("unexpected ", Describe(tok_), " after attribute"));
  }
  return attribute;
}

}  // namespace kiln::parse::text
