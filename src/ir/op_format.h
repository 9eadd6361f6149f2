// The declarative pretty forms of ops: one format string per op, read by
// both the text parser and the printer, so that what one writes the other
// reads back.
//
// A format is a list of space-separated pieces (MLIR's assemblyFormat in
// miniature):
//   %            one operand (the next one, in order)
//   %*           every remaining operand, comma separated
//   %*,          every remaining operand, each followed by ','
//   $name:kind   an attribute in a custom spelling (FormatAttrKind)
//   attr-dict    `{...}` with every attribute the other pieces do not print
//   [?  ?]       an optional group, printed when its first attribute is
//                present and parsed when the input starts with its literals
//   :kind        the type section, starting with ':' (FormatTypes)
//   ^x           the literal x, glued to what precedes it (no space)
//   anything else: a literal keyword or punctuation
// Ops with regions or unusual syntax (func.func, module, while, reduce,
// constant, optimization_barrier, chlo.scan) have hand-written forms.
#ifndef KILN_IR_OP_FORMAT_H_
#define KILN_IR_OP_FORMAT_H_

#include <string>
#include <string_view>
#include <vector>

#include "ir/attributes.h"
#include "ir/operation.h"

namespace kiln::ir {

// How an attribute is spelled inside a pretty form.
enum class FormatAttrKind : uint8_t {
  kI64,               // 3 (an i64 integer attribute)
  kI32,               // 3 (i32)
  kU32,               // 3 (ui32)
  kU64,               // 3 (ui64)
  kF64,               // 0.1 (an f64 float attribute)
  kI64Array,          // [1, 2] (array<i64: 1, 2>)
  kBool,              // true
  kString,            // "text"
  kCallTarget,        // @foo or @"foo-bar" (a string attribute)
  kSymbol,            // @f (a flat symbol reference)
  kEnum,              // LT (the value of a #stablehlo<...> enum)
  kPrecisionList,     // [DEFAULT, HIGH]
  kDotDimensions,     // batching_dims = [0] x [0], contracting_dims = [2] x [1]
  kDotAlgorithm,      // <lhs_precision_type = tf32, ...>
  kSliceRanges,       // [1:3, 4:8:2] (start_indices, limit_indices, strides)
  kExponentMantissa,  // e8m10 (exponent_bits, mantissa_bits)
  kConvDimensions,    // [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
  kWindow,            // stride = [..], pad = [[..]], lhs_dilate = [..], ...
  kAny,               // any attribute, with its own `: type`
};

// How the type section after ':' is spelled.
enum class FormatTypes : uint8_t {
  kSame,          // T, or (T, T) -> T when types differ; one result
  kSameNoResult,  // as kSame, with no results (check.expect_eq)
  kFunctional,    // (T, U) -> R
  kResults,       // R (result types only; no operands)
  kReturn,        // T, U after ':' only when there are operands
  kSelect,        // tensor<..xi1>, T (or functional)
  kTuple,         // tuple<T, U> (the result; operands are its elements)
  kComplex,       // tensor<..xcomplex<f32>> (or functional)
  kVariadicSame,  // !stablehlo.token (or functional)
  kArrow,         // T, U -> R (CHLO)
  kCastTo,        // T to R (tensor.cast)
  kOperandList,   // T, U (operand types; no results)
  kFromValue,     // nothing: the operand has the type of `value`
};

struct FormatPiece {
  enum class Kind : uint8_t {
    kLiteral,
    kOperand,
    kOperands,
    kOperandsWithComma,
    kAttribute,
    kAttrDict,
    kOptionalBegin,
    kOptionalEnd,
    kTypes,
  };
  Kind kind = Kind::kLiteral;
  std::string text;  // literal text, or attribute name
  bool glued = false;
  FormatAttrKind attr_kind = FormatAttrKind::kAny;
  EnumKind enum_kind = EnumKind::kComparisonDirection;
  FormatTypes types = FormatTypes::kFunctional;
  // For kOptionalBegin: the index of the matching kOptionalEnd.
  int group_end = -1;
};

struct OpFormat {
  std::vector<FormatPiece> pieces;
  // Every attribute the pieces spell (the attr-dict prints the others).
  std::vector<std::string> attributes;
  // Operands the format consumes: fixed count, or -1 when it has %* / %*,.
  int fixed_operands = 0;
};

// The declarative format of `code`, or null when the op has none (generic
// only, or a hand-written form).
const OpFormat* GetOpFormat(OpCode code);

// The attributes one piece of kind `kind` covers, `name` being the one
// named in the format (kSliceRanges names start_indices and covers
// limit_indices and strides, and so on).
std::vector<std::string> CoveredAttributes(FormatAttrKind kind,
                                           std::string_view name);

// The names of the window attributes of convolution, in spelling order,
// with their keywords: {"window_strides", "stride"}, ...
const std::vector<std::pair<std::string, std::string>>&
WindowAttributeKeywords();

}  // namespace kiln::ir

#endif  // KILN_IR_OP_FORMAT_H_
