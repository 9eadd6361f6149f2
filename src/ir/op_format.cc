#include "ir/op_format.h"

#include <unordered_map>

#include "base/logging.h"
#include "base/strings.h"
#include "ir/elementwise_traits.h"

namespace kiln::ir {
namespace {

// Shared shapes of pretty forms (StablehloOps.td, ChloOps.td, CheckOps.td).
constexpr const char* kUnary = "% attr-dict :same";
constexpr const char* kBinary = "% , % attr-dict :same";
constexpr const char* kOperandsFunctional = "%* attr-dict :functional";
constexpr const char* kChloUnary = "% attr-dict :arrow";
constexpr const char* kChloBinary = "% , % attr-dict :arrow";

struct FormatSource {
  OpCode code;
  const char* format;
};

// clang-format off
const FormatSource kFormatSources[] = {
  // StableHLO's elementwise math (elementwise_traits.h): the unary and
  // binary forms, is_finite's functional one.
#define KILN_SPEC_ROW(x, op, kernel, arity, cost, operands, results, rule) \
  KILN_FORMAT_##rule(op, arity)
#define KILN_NO_ROW(x, op, kernel, arity, cost)
#define KILN_FORMAT_kSameAsOperands(op, arity) {OpCode::k##op, KILN_FORM_##arity},
#define KILN_FORMAT_kComponent(op, arity) {OpCode::k##op, KILN_FORM_##arity},
#define KILN_FORMAT_kPredicate(op, arity) {OpCode::k##op, kOperandsFunctional},
#define KILN_FORM_1 kUnary
#define KILN_FORM_2 kBinary
  KILN_ELEMENTWISE_OPS(KILN_SPEC_ROW, KILN_NO_ROW, KILN_NO_ROW, ~)
#undef KILN_SPEC_ROW
#undef KILN_NO_ROW
#undef KILN_FORMAT_kSameAsOperands
#undef KILN_FORMAT_kComponent
#undef KILN_FORMAT_kPredicate
#undef KILN_FORM_1
#undef KILN_FORM_2
  {OpCode::kConvert, kUnary},
  {OpCode::kUniformQuantize, kUnary}, {OpCode::kUniformDequantize, kUnary},
  {OpCode::kComplex, "% , % attr-dict :complex"},
  {OpCode::kCompare,
   "$comparison_direction:comparison_direction , % , % "
   "[? , $compare_type:comparison_type ?] attr-dict :functional"},
  {OpCode::kSelect, "% , % , % attr-dict :select"},
  {OpCode::kClamp, "% , % , % attr-dict :same"},
  // Conversions and constants.
  {OpCode::kBitcastConvert, kOperandsFunctional},
  {OpCode::kReducePrecision,
   "% , format = $exponent_bits:exponent_mantissa attr-dict :same"},
  {OpCode::kIota, "dim = $iota_dimension:i64 attr-dict :results"},
  {OpCode::kDynamicIota, "% , dim = $iota_dimension:i64 attr-dict :functional"},
  // Shapes and data movement.
  {OpCode::kBroadcastInDim,
   "% , dims = $broadcast_dimensions:i64_array attr-dict :functional"},
  {OpCode::kDynamicBroadcastInDim,
   "% , % , dims = $broadcast_dimensions:i64_array attr-dict :functional"},
  {OpCode::kReshape, kOperandsFunctional},
  {OpCode::kDynamicReshape, kOperandsFunctional},
  {OpCode::kTranspose, "% , dims = $permutation:i64_array attr-dict :functional"},
  {OpCode::kReverse, "% , dims = $dimensions:i64_array attr-dict :same"},
  {OpCode::kSlice, "% $start_indices:slice attr-dict :functional"},
  {OpCode::kDynamicSlice,
   "% , %*, sizes = $slice_sizes:i64_array attr-dict :functional"},
  {OpCode::kDynamicUpdateSlice, kOperandsFunctional},
  {OpCode::kConcatenate, "%*, dim = $dimension:i64 attr-dict :functional"},
  {OpCode::kPad,
   "% , % , low = $edge_padding_low:i64_array , "
   "high = $edge_padding_high:i64_array , "
   "interior = $interior_padding:i64_array attr-dict :functional"},
  {OpCode::kDynamicPad, kOperandsFunctional},
  {OpCode::kGetDimensionSize, "% , dim = $dimension:i64 attr-dict :functional"},
  {OpCode::kSetDimensionSize, "% , % , dim = $dimension:i64 attr-dict :functional"},
  {OpCode::kRealDynamicSlice, kOperandsFunctional},
  {OpCode::kBroadcast, "% , sizes = $broadcast_sizes:i64_array attr-dict :functional"},
  // Dot, convolution, linear algebra.
  {OpCode::kDotGeneral,
   "% , % , $dot_dimension_numbers:dot_dimensions "
   "[? , precision = $precision_config:precision ?] "
   "[? , algorithm = $algorithm:dot_algorithm ?] attr-dict :functional"},
  {OpCode::kDot,
   "% , % [? , precision = $precision_config:precision ?] attr-dict :functional"},
  {OpCode::kEinsum, "% , % , config = $einsum_config:string attr-dict :functional"},
  {OpCode::kUnaryEinsum, "% , config = $einsum_config:string attr-dict :functional"},
  {OpCode::kConvolution,
   "^( %* ) dim_numbers = $dimension_numbers:conv_dimensions , "
   "window = { $window_strides:window } attr-dict :functional"},
  {OpCode::kCholesky, "% [? , lower = $lower:bool ?] attr-dict :same"},
  {OpCode::kFft,
   "% , type = $fft_type:fft_type , length = $fft_length:i64_array "
   "attr-dict :functional"},
  // Random numbers.
  {OpCode::kRng,
   "% , % , % , distribution = $rng_distribution:rng_distribution "
   "attr-dict :functional"},
  {OpCode::kRngBitGenerator,
   "% , algorithm = $rng_algorithm:rng_algorithm attr-dict :functional"},
  // Control flow, tuples, tokens.
  {OpCode::kReturn, "%* attr-dict :return"},
  {OpCode::kFuncReturn, "%* attr-dict :return"},
  {OpCode::kCall, "$callee:symbol ^( %* ) attr-dict :functional"},
  {OpCode::kTuple, "%* attr-dict :tuple"},
  {OpCode::kGetTupleElement, "% ^[ $index:i32 ] attr-dict :functional"},
  {OpCode::kAfterAll, "%* attr-dict :variadic_same"},
  {OpCode::kCreateToken, "attr-dict :results"},
  {OpCode::kReplicaId, "attr-dict :results"},
  {OpCode::kPartitionId, "attr-dict :results"},
  // Extensibility.
  {OpCode::kCustomCall,
   "$call_target_name:call_target ^( %* ) attr-dict :functional"},
  {OpCode::kComposite, "$name:string %* attr-dict :functional"},
  // CHLO.
  {OpCode::kChloAcos, kChloUnary}, {OpCode::kChloAcosh, kChloUnary},
  {OpCode::kChloAsin, kChloUnary}, {OpCode::kChloAsinh, kChloUnary},
  {OpCode::kChloAtan, kChloUnary}, {OpCode::kChloAtanh, kChloUnary},
  {OpCode::kChloBesselI1e, kChloUnary}, {OpCode::kChloConj, kChloUnary},
  {OpCode::kChloCosh, kChloUnary}, {OpCode::kChloDigamma, kChloUnary},
  {OpCode::kChloErf, kChloUnary}, {OpCode::kChloErfInv, kChloUnary},
  {OpCode::kChloErfc, kChloUnary}, {OpCode::kChloIsInf, kChloUnary},
  {OpCode::kChloIsNegInf, kChloUnary}, {OpCode::kChloIsPosInf, kChloUnary},
  {OpCode::kChloLgamma, kChloUnary}, {OpCode::kChloSinh, kChloUnary},
  {OpCode::kChloSquare, kChloUnary}, {OpCode::kChloTan, kChloUnary},
  {OpCode::kChloMulhi, kChloBinary}, {OpCode::kChloNextAfter, kChloBinary},
  {OpCode::kChloPolygamma, kChloBinary}, {OpCode::kChloZeta, kChloBinary},
  {OpCode::kChloTopK, "^( % , k = $k:i64 ) attr-dict :arrow"},
  // The `check` dialect.
  {OpCode::kCheckExpectEq, "% , % attr-dict :same_no_result"},
  {OpCode::kCheckExpectEqConst, "% , $value:any attr-dict :from_value"},
  {OpCode::kCheckExpectAlmostEq,
   "% , % [? , tolerance = $tolerance:f64 ?] attr-dict :same_no_result"},
  {OpCode::kCheckExpectAlmostEqConst,
   "% , $value:any [? , tolerance = $tolerance:f64 ?] attr-dict :from_value"},
  {OpCode::kCheckExpectClose,
   "% , % , max_ulp_difference = $max_ulp_difference:u64 "
   "[? , min_ulp_difference = $min_ulp_difference:u64 ?] "
   "attr-dict :operand_list"},
  {OpCode::kCheckExpectSerializedEq,
   "% , probe_id = $probe_id:string [? , iter = $iter:u32 ?] "
   "attr-dict :operand_list"},
  // Other dialects seen in the corpus.
  {OpCode::kTensorCast, "% attr-dict :cast_to"},
  {OpCode::kInterpreterProbe, "% , probe_id = $probe_id:string attr-dict :same"},
  {OpCode::kInterpreterPrint, "% attr-dict :operand_list"},
};
// clang-format on

struct AttrKindName {
  std::string_view name;
  FormatAttrKind kind;
};
const AttrKindName kAttrKindNames[] = {
    {"i64", FormatAttrKind::kI64},
    {"i32", FormatAttrKind::kI32},
    {"u32", FormatAttrKind::kU32},
    {"u64", FormatAttrKind::kU64},
    {"f64", FormatAttrKind::kF64},
    {"i64_array", FormatAttrKind::kI64Array},
    {"bool", FormatAttrKind::kBool},
    {"string", FormatAttrKind::kString},
    {"call_target", FormatAttrKind::kCallTarget},
    {"symbol", FormatAttrKind::kSymbol},
    {"precision", FormatAttrKind::kPrecisionList},
    {"dot_dimensions", FormatAttrKind::kDotDimensions},
    {"dot_algorithm", FormatAttrKind::kDotAlgorithm},
    {"slice", FormatAttrKind::kSliceRanges},
    {"exponent_mantissa", FormatAttrKind::kExponentMantissa},
    {"conv_dimensions", FormatAttrKind::kConvDimensions},
    {"window", FormatAttrKind::kWindow},
    {"any", FormatAttrKind::kAny},
};

struct TypesName {
  std::string_view name;
  FormatTypes types;
};
const TypesName kTypesNames[] = {
    {"same", FormatTypes::kSame},
    {"same_no_result", FormatTypes::kSameNoResult},
    {"functional", FormatTypes::kFunctional},
    {"results", FormatTypes::kResults},
    {"return", FormatTypes::kReturn},
    {"select", FormatTypes::kSelect},
    {"tuple", FormatTypes::kTuple},
    {"complex", FormatTypes::kComplex},
    {"variadic_same", FormatTypes::kVariadicSame},
    {"arrow", FormatTypes::kArrow},
    {"cast_to", FormatTypes::kCastTo},
    {"operand_list", FormatTypes::kOperandList},
    {"from_value", FormatTypes::kFromValue},
};

FormatPiece ParsePiece(std::string_view word) {
  FormatPiece piece;
  if (word == "%") {
    piece.kind = FormatPiece::Kind::kOperand;
  } else if (word == "%*") {
    piece.kind = FormatPiece::Kind::kOperands;
  } else if (word == "%*,") {
    piece.kind = FormatPiece::Kind::kOperandsWithComma;
  } else if (word == "attr-dict") {
    piece.kind = FormatPiece::Kind::kAttrDict;
  } else if (word == "[?") {
    piece.kind = FormatPiece::Kind::kOptionalBegin;
  } else if (word == "?]") {
    piece.kind = FormatPiece::Kind::kOptionalEnd;
  } else if (word.size() > 1 && word[0] == ':') {
    piece.kind = FormatPiece::Kind::kTypes;
    std::string_view name = word.substr(1);
    bool found = false;
    for (const TypesName& entry : kTypesNames) {
      if (entry.name == name) {
        piece.types = entry.types;
        found = true;
      }
    }
    KILN_CHECK(found) << "unknown type directive in op format: " << word;
  } else if (word.size() > 1 && word[0] == '$') {
    piece.kind = FormatPiece::Kind::kAttribute;
    size_t colon = word.find(':');
    KILN_CHECK(colon != std::string_view::npos)
        << "attribute without kind: " << word;
    piece.text = std::string(word.substr(1, colon - 1));
    std::string_view kind = word.substr(colon + 1);
    bool found = false;
    for (const AttrKindName& entry : kAttrKindNames) {
      if (entry.name == kind) {
        piece.attr_kind = entry.kind;
        found = true;
      }
    }
    if (!found) {
      std::optional<EnumKind> enum_kind = ParseEnumKindName(kind);
      KILN_CHECK(enum_kind.has_value())
          << "unknown attribute kind in op format: " << word;
      piece.attr_kind = FormatAttrKind::kEnum;
      piece.enum_kind = *enum_kind;
    }
  } else {
    piece.kind = FormatPiece::Kind::kLiteral;
    if (word.size() > 1 && word[0] == '^') {
      piece.glued = true;
      word.remove_prefix(1);
    }
    piece.text = std::string(word);
  }
  return piece;
}

OpFormat BuildFormat(std::string_view source) {
  OpFormat format;
  std::vector<int> open_groups;
  for (std::string_view word : StrSplit(source, ' ')) {
    if (word.empty()) continue;
    FormatPiece piece = ParsePiece(word);
    switch (piece.kind) {
      case FormatPiece::Kind::kOperand:
        if (format.fixed_operands >= 0) ++format.fixed_operands;
        break;
      case FormatPiece::Kind::kOperands:
      case FormatPiece::Kind::kOperandsWithComma:
        format.fixed_operands = -1;
        break;
      case FormatPiece::Kind::kAttribute:
        for (std::string& name :
             CoveredAttributes(piece.attr_kind, piece.text)) {
          format.attributes.push_back(std::move(name));
        }
        break;
      case FormatPiece::Kind::kOptionalBegin:
        open_groups.push_back(static_cast<int>(format.pieces.size()));
        break;
      case FormatPiece::Kind::kOptionalEnd:
        KILN_CHECK(!open_groups.empty())
            << "unbalanced optional group: " << source;
        format.pieces[open_groups.back()].group_end =
            static_cast<int>(format.pieces.size());
        open_groups.pop_back();
        break;
      default:
        break;
    }
    format.pieces.push_back(std::move(piece));
  }
  KILN_CHECK(open_groups.empty()) << "unbalanced optional group: " << source;
  return format;
}

}  // namespace

std::vector<std::string> CoveredAttributes(FormatAttrKind kind,
                                           std::string_view name) {
  switch (kind) {
    case FormatAttrKind::kSliceRanges:
      return {"start_indices", "limit_indices", "strides"};
    case FormatAttrKind::kExponentMantissa:
      return {"exponent_bits", "mantissa_bits"};
    case FormatAttrKind::kWindow: {
      std::vector<std::string> names;
      for (const auto& [attribute, keyword] : WindowAttributeKeywords()) {
        names.push_back(attribute);
      }
      return names;
    }
    default:
      return {std::string(name)};
  }
}

const std::vector<std::pair<std::string, std::string>>&
WindowAttributeKeywords() {
  static const auto* kKeywords =
      new std::vector<std::pair<std::string, std::string>>{
          {"window_strides", "stride"},   {"padding", "pad"},
          {"lhs_dilation", "lhs_dilate"}, {"rhs_dilation", "rhs_dilate"},
          {"window_reversal", "reverse"},
      };
  return *kKeywords;
}

const OpFormat* GetOpFormat(OpCode code) {
  static const auto* kFormats = [] {
    auto* formats = new std::unordered_map<OpCode, OpFormat>();
    for (const FormatSource& source : kFormatSources) {
      (*formats)[source.code] = BuildFormat(source.format);
    }
    return formats;
  }();
  auto it = kFormats->find(code);
  return it == kFormats->end() ? nullptr : &it->second;
}

}  // namespace kiln::ir
