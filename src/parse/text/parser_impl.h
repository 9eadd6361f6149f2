// The MLIR text parser's internal class, shared by the files of
// src/parse/text/: tokens and errors (parser_impl.cc), types
// (parse_types.cc), attributes (parse_attributes.cc,
// parse_stablehlo_attributes.cc, parse_dense.cc), locations
// (parse_locations.cc), ops, regions and SSA names (parse_ops.cc), and the
// pretty forms (parse_formats.cc, parse_custom_ops.cc).
#ifndef KILN_PARSE_TEXT_PARSER_IMPL_H_
#define KILN_PARSE_TEXT_PARSER_IMPL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "ir/attributes.h"
#include "ir/location.h"
#include "ir/op_format.h"
#include "ir/operation.h"
#include "ir/types.h"
#include "parse/text/lexer.h"

namespace kiln::parse::text {

// How deeply regions, attributes, types and locations may nest. Real
// programs stay far below; the bound keeps the recursive parser (and the
// printer) from exhausting the stack on hostile input.
inline constexpr int kMaxNestingDepth = 200;

// A use of an SSA value before its type is known: `%name` or `%name#2`.
struct OperandRef {
  std::string_view name;  // with '%'
  int number = 0;
  Token token;
};

// A block argument or function argument being defined: `%x: type loc(..)`.
struct ArgumentDef {
  std::string_view name;  // with '%'; empty for unnamed (declarations)
  Token token;
  ir::Type type;
  ir::Attribute attributes;  // function arguments: the dictionary, or null
  ir::Location loc;
  bool has_loc = false;
  std::shared_ptr<struct LocExpr> pending_loc;  // loc with unresolved aliases
};

// A location as written, kept until every `#loc` alias it names is known.
struct LocExpr {
  enum class Kind : uint8_t { kResolved, kAlias, kName, kCallSite, kFused };
  Kind kind = Kind::kResolved;
  ir::Location resolved;  // kResolved
  std::string text;       // kAlias: the alias name; kName: the name
  Token token;            // kAlias: where it was used
  int depth = 1;          // nesting depth of the location it stands for
  std::vector<std::shared_ptr<LocExpr>> children;
  ir::Attribute metadata;  // kFused
};

class Parser;

// Checks that an integer literal (`bits`, with `negative` for a leading
// '-') fits element type `type` and returns it in the IR's canonical form:
// sign-extended for signless iN (255 : i8 reads as -1, as in MLIR),
// zero-extended for uiN, 0 or 1 for i1.
StatusOr<int64_t> CanonicalInteger(const Parser& parser, const Token& token,
                                   bool negative, uint64_t bits,
                                   ir::ElementType type);

class Parser {
 public:
  Parser(std::string_view text, std::string_view source_name,
         int first_line = 1);

  StatusOr<std::unique_ptr<ir::Module>> ParseFile();
  StatusOr<ir::Type> ParseStandaloneType();
  StatusOr<ir::Attribute> ParseStandaloneAttribute();

  // ---- Tokens and errors (parser_impl.cc).
  const Token& tok() const { return tok_; }
  void Advance() { tok_ = lexer_.Next(); }
  bool Consume(TokenKind kind) {
    if (!tok_.is(kind)) return false;
    Advance();
    return true;
  }
  bool ConsumeKeyword(std::string_view word) {
    if (!tok_.IsKeyword(word)) return false;
    Advance();
    return true;
  }
  Status Expect(TokenKind kind, std::string_view what);
  Status ExpectKeyword(std::string_view word, std::string_view what);
  Status ErrorAt(const Token& token, std::string_view message) const;
  Status Error(std::string_view message) const {
    return ErrorAt(tok_, message);
  }
  // "'foo'" or "end of input", for messages.
  static std::string Describe(const Token& token);
  std::string Position(const Token& token) const;

  struct Snapshot {
    Lexer::State state;
    Token token;
  };
  Snapshot Save() const { return {lexer_.state(), tok_}; }
  void Restore(const Snapshot& snapshot) {
    lexer_.set_state(snapshot.state);
    tok_ = snapshot.token;
  }
  // Re-lexes from just after the current token's start: for the few places
  // that scan characters themselves.
  Lexer& lexer() { return lexer_; }
  void ResyncAfterCharacterScan() { tok_ = lexer_.Next(); }

  // Counts one level of nesting; fails past kMaxNestingDepth.
  Status EnterNesting();
  void LeaveNesting() { --depth_; }
  // An alias expands to a value `alias_depth` levels deep at the current
  // depth; fails when that goes past kMaxNestingDepth (aliases of aliases
  // would otherwise build arbitrarily deep values without recursion here,
  // and the printer and comparisons recurse over them).
  Status AccountAliasDepth(int alias_depth, const Token& use);

  // Literal helpers: integers with an optional leading '-'.
  StatusOr<int64_t> ParseInteger(std::string_view what);
  // An unsigned or negative integer literal as its 64-bit pattern, with
  // `negative` set for a leading '-'; fails when it does not fit 64 bits.
  Status ParseIntegerLiteral(const Token& token, bool negative,
                             uint64_t& bits) const;
  StatusOr<std::string> ParseStringLiteral(std::string_view what);
  StatusOr<std::vector<int64_t>> ParseIntegerList(
      std::string_view what);  // [1, 2]

  // ---- Types (parse_types.cc).
  StatusOr<ir::Type> ParseType();
  // `(T, U) -> R` / `-> (R, S)`; the current token is '('.
  StatusOr<ir::Type> ParseFunctionType();
  // A comma separated list of types (at least one).
  Status ParseTypeList(std::vector<ir::Type>& types);
  // `T` or `(T, U)` or `()`.
  Status ParseResultTypeList(std::vector<ir::Type>& types);
  StatusOr<ir::Type> ParseTensorType(bool memref);
  // The source text of the `tensor<...>` type starting at `token`, when it
  // sits on one line; empty otherwise.
  std::string_view TensorTypeSpelling(const Token& token) const;
  StatusOr<ir::Type> ParseQuantizedTypeBody();
  StatusOr<ir::Type> ParseDialectType(const Token& name);

  // ---- Attributes (parse_attributes.cc).
  // Any attribute. `type` is the type a bare literal takes when it has no
  // `: type` of its own (null: i64 for integers, f64 for floats).
  StatusOr<ir::Attribute> ParseAttribute(ir::Type type = ir::Type());
  // `{a = 1, b}`; the current token is '{'.
  Status ParseAttributeDictionary(std::vector<ir::NamedAttribute>& entries);
  StatusOr<ir::Attribute> ParseDictionaryAttribute();
  StatusOr<ir::Attribute> ParseArrayAttribute();
  StatusOr<ir::Attribute> ParseDenseArray();
  StatusOr<ir::Attribute> ParseSymbolRef();
  StatusOr<ir::Attribute> ParseHashAttribute();
  // `-`? integer or float literal with optional `: type`.
  StatusOr<ir::Attribute> ParseNumberAttribute(ir::Type type);
  // A float value literal: decimal, integer, or hex bit pattern of `type`.
  StatusOr<double> ParseFloatValue(ir::ElementType type, std::string_view what);
  // The raw text of an opaque dialect body `<...>` (balanced), starting at
  // the current token '<'.
  StatusOr<std::string> ScanOpaqueBody();

  // ---- StableHLO attributes (parse_stablehlo_attributes.cc).
  StatusOr<ir::Attribute> ParseStableHloAttribute(const Token& name);
  StatusOr<ir::Attribute> ParseEnumBody(ir::EnumKind kind);
  StatusOr<ir::Attribute> ParseConvDimensionsBody();   // [b, 0, f]x[...]->[...]
  StatusOr<ir::Attribute> ParseDotAlgorithmBody();     // <k = v, ...>
  StatusOr<ir::Attribute> ParseDotDimensionsPretty();  // batching_dims = ...
  StatusOr<ir::Attribute> ParseResultAccuracyBody();

  // ---- Dense elements (parse_dense.cc).
  StatusOr<ir::Attribute> ParseDenseElements();  // after 'dense'
  StatusOr<ir::Attribute> ParseDenseResource();  // after 'dense_resource'

  // ---- Locations (parse_locations.cc).
  // `loc(...)`; the current token is 'loc'.
  StatusOr<std::shared_ptr<LocExpr>> ParseLocation();
  StatusOr<std::shared_ptr<LocExpr>> ParseLocationBody();
  Status ResolveDeferredLocations();
  Status SetOpLocation(ir::Operation& op, const std::shared_ptr<LocExpr>& expr);
  ir::Location DefaultLocation(const Token& token) const;

  // ---- Ops and regions (parse_ops.cc).
  Status ParseTopLevel(ir::Block& block);
  Status ParseOperation(ir::Block& block);
  StatusOr<std::unique_ptr<ir::Operation>> ParseGenericOperation(
      const Token& start);
  StatusOr<std::unique_ptr<ir::Operation>> ParseCustomOperation(
      const Token& start);
  // `{ ... }`; the current token is '{'. `entry_args` become the entry
  // block's arguments. `isolated` starts a new SSA name scope.
  Status ParseRegion(ir::Region& region,
                     const std::vector<ArgumentDef>& entry_args, bool isolated);
  StatusOr<OperandRef> ParseOperandRef();
  Status ParseOperandRefList(std::vector<OperandRef>& refs);  // may be empty
  // Resolves a use to its value, which must be defined (and visible) and
  // have type `type`.
  StatusOr<ir::Value*> ResolveOperand(const OperandRef& ref,
                                      const ir::Type& type);
  Status ResolveOperands(const std::vector<OperandRef>& refs,
                         const std::vector<ir::Type>& types, const Token& where,
                         std::vector<ir::Value*>& values);
  void SetOperands(ir::Operation& op, std::vector<ir::Value*> values);
  Status DefineValue(std::string_view name, const Token& token,
                     ir::Value* value);
  // `%x: type` (+ optional loc); used by block headers and custom forms.
  StatusOr<ArgumentDef> ParseArgumentDef(bool allow_attributes);
  Status ApplyArgumentLocation(const ArgumentDef& def, ir::Value& value);
  void PushNameScope(bool isolated);
  Status PopNameScope();

  // ---- Pretty forms (parse_formats.cc, parse_custom_ops.cc).
  StatusOr<std::unique_ptr<ir::Operation>> ParseFormattedOperation(
      const std::string& name, const ir::OpFormat& format, const Token& start);
  Status ParseFormatAttribute(const ir::FormatPiece& piece, ir::Operation& op);
  Status ParseFormatTypes(ir::FormatTypes types, size_t num_operands,
                          std::vector<ir::Type>& operand_types,
                          std::vector<ir::Type>& result_types);
  Status SetAttribute(ir::Operation& op, std::string name, ir::Attribute value,
                      const Token& where);
  Status ParseOptionalAttrDict(ir::Operation& op, bool with_keyword);
  StatusOr<std::unique_ptr<ir::Operation>> ParseFuncOp(const Token& start);
  StatusOr<std::unique_ptr<ir::Operation>> ParseModuleOp(const Token& start);
  StatusOr<std::unique_ptr<ir::Operation>> ParseWhileOp(const Token& start);
  StatusOr<std::unique_ptr<ir::Operation>> ParseReduceOp(const Token& start);
  StatusOr<std::unique_ptr<ir::Operation>> ParseConstantOp(
      const std::string& name, const Token& start);
  StatusOr<std::unique_ptr<ir::Operation>> ParseOptimizationBarrierOp(
      const Token& start);
  StatusOr<std::unique_ptr<ir::Operation>> ParseScanOp(const Token& start);
  // The pretty forms of Shardy's ops (parse_shardy_ops.cc): sdy.mesh,
  // sdy.sharding_constraint, sdy.reshard, sdy.manual_computation and
  // sdy.return. Null when `name` is none of them.
  StatusOr<std::unique_ptr<ir::Operation>> ParseShardyOp(
      const std::string& name, const Token& start);
  // A bracketed dialect body (`<...>`, `[...]` or `{...}`) as text.
  StatusOr<std::string> ScanBracketedText(std::string_view what);

  // ---- File-level sections (parse_ops.cc).
  Status ParseAliasDefinition();
  Status ParseFileMetadata();

  std::string_view source_name() const { return source_name_; }
  ir::Module* module() const { return module_; }

 private:
  friend struct ParserTestPeer;

  struct ValueGroup {
    ir::Operation* op = nullptr;  // results op->result(first .. first+count)
    ir::Value* single = nullptr;  // a block argument
    int first = 0;
    int count = 1;
  };
  struct NameScope {
    std::unordered_map<std::string_view, ValueGroup> values;
  };
  struct IsolatedScope {
    size_t first_name_scope = 0;
  };
  struct DeferredLocation {
    ir::Operation* op = nullptr;
    ir::Value* value = nullptr;
    std::shared_ptr<LocExpr> expr;
  };
  struct LocationAlias {
    std::shared_ptr<LocExpr> expr;
    ir::Location resolved;
    int depth = 1;
    int state = 0;  // 0 unresolved, 1 resolving, 2 resolved
  };
  struct ResolvedLocation {
    ir::Location loc;
    int depth = 1;
  };
  template <typename T>
  struct Alias {
    T value;
    int depth = 0;
  };

  StatusOr<ResolvedLocation> ResolveLocation(
      const std::shared_ptr<LocExpr>& expr);
  StatusOr<ResolvedLocation> ResolveAlias(const std::string& name,
                                          const Token& use);
  const ValueGroup* LookupValue(std::string_view name) const;

  Lexer lexer_;
  Token tok_;
  std::string source_name_;
  int depth_ = 0;
  int max_depth_ = 0;  // the deepest depth_ reached (for alias depths)
  ir::Module* module_ = nullptr;

  // Aliases: `#name = attr`, `!name = type`, `#loc = loc(...)`.
  std::unordered_map<std::string, Alias<ir::Attribute>> attribute_aliases_;
  std::unordered_map<std::string, Alias<ir::Type>> type_aliases_;
  // Tensor types already parsed, by spelling (see ParseType).
  std::unordered_map<std::string_view, Alias<ir::Type>> tensor_types_;
  std::unordered_map<std::string, LocationAlias> location_aliases_;
  std::vector<DeferredLocation> deferred_locations_;
  // Ops a custom form created that take the location of the op being
  // parsed (the body of a compact stablehlo.reduce).
  std::vector<ir::Operation*> inherit_location_;

  // SSA names.
  std::vector<NameScope> name_scopes_;
  std::vector<IsolatedScope> isolated_scopes_;
};

}  // namespace kiln::parse::text

#endif  // KILN_PARSE_TEXT_PARSER_IMPL_H_
