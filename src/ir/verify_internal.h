// Helpers shared by the verifier's op families (verify_*.cc). Not part of
// Kiln's public API: include ir/verifier.h instead.
//
// Vocabulary follows the StableHLO dialect: a type is "compatible" with
// another when the shapes agree where both are known (`?` matches any size,
// a bound caps the size it matches) and the element types are equal (a
// quantized type also matches its expressed type).
#ifndef KILN_IR_VERIFY_INTERNAL_H_
#define KILN_IR_VERIFY_INTERNAL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/containers.h"
#include "base/status.h"
#include "base/strings.h"
#include "ir/attributes.h"
#include "ir/operation.h"
#include "ir/types.h"

namespace kiln::ir::verifier {

// ---- The op table -----------------------------------------------------------

using OpVerifyFn = Status (*)(const Operation& op);
// Top-level func.func ops of a module by name.
using FunctionTable = std::unordered_map<std::string_view, const Operation*>;
inline constexpr size_t kNumOpCodes = static_cast<size_t>(OpCode::kUnknown);
using VerifierTable = std::array<OpVerifyFn, kNumOpCodes>;

// Each family adds its ops' verifiers to the table.
void RegisterElementwiseVerifiers(VerifierTable& table);
void RegisterConversionVerifiers(VerifierTable& table);
void RegisterShapeVerifiers(VerifierTable& table);
void RegisterSliceVerifiers(VerifierTable& table);
void RegisterGatherScatterVerifiers(VerifierTable& table);
void RegisterReduceVerifiers(VerifierTable& table);
void RegisterDotConvVerifiers(VerifierTable& table);
void RegisterLinalgVerifiers(VerifierTable& table);
void RegisterControlFlowVerifiers(VerifierTable& table);
void RegisterCollectiveVerifiers(VerifierTable& table);
void RegisterExtensibilityVerifiers(VerifierTable& table);
void RegisterChloCheckVerifiers(VerifierTable& table);

// Verifies the ops nested in `op`'s regions (used by VerifyOperation and by
// the module walk; defined in verify_module.cc).
Status VerifyOpOnly(const Operation& op);
// Whether the table has a verifier for `code` (for tests).
bool HasVerifier(OpCode code);

// ---- Errors -----------------------------------------------------------------

// "file:line:col: 'stablehlo.add' op " (without the location when unknown).
std::string OpPrefix(const Operation& op);

template <typename... Args>
Status OpError(const Operation& op, const Args&... args) {
  return InvalidArgumentError(OpPrefix(op), args...);
}

// 'tensor<2xf32>' (quoted, as MLIR diagnostics print types).
std::string Quoted(const Type& type);
// 'a', 'b'.
std::string QuotedList(const std::vector<Type>& types);
// "4" or "?".
std::string DimText(int64_t dim);
// "1, 2, 3".
std::string JoinInts(const std::vector<int64_t>& values);

// ---- Element classes (the ODS type constraints) -----------------------------

enum ElementClass : uint32_t {
  kPred = 1u << 0,
  kSignedInt = 1u << 1,
  kUnsignedInt = 1u << 2,
  kFloat = 1u << 3,
  kComplex = 1u << 4,
  kQuantized = 1u << 5,         // per-tensor uniform quantized
  kPerAxisQuantized = 1u << 6,  // per-axis uniform quantized
  kIndex = 1u << 7,
};
inline constexpr uint32_t kInt = kSignedInt | kUnsignedInt;
inline constexpr uint32_t kPredOrInt = kPred | kInt;
inline constexpr uint32_t kFloatOrComplex = kFloat | kComplex;
inline constexpr uint32_t kNonQuantized = kPred | kInt | kFloat | kComplex;
// HLO_Tensor: any element type, per-tensor quantization only.
inline constexpr uint32_t kAnyElement = kNonQuantized | kQuantized;
// HLO_TensorOrPerAxisQuantizedTensor.
inline constexpr uint32_t kAnyOrPerAxis = kAnyElement | kPerAxisQuantized;
// Shape operands (HLO_DimensionTensor).
inline constexpr uint32_t kDimensionValue = kInt | kIndex;

// The class of an element or quantized type (0 for anything else).
uint32_t ClassOf(const Type& element);
// "pred, integer or float" for messages.
std::string DescribeClasses(uint32_t classes);

bool IsTensor(const Type& type);
// A tensor whose element class is in `classes`.
bool IsTensorOf(const Type& type, uint32_t classes);
bool IsQuantizedElement(const Type& element);
bool IsPerAxisElement(const Type& element);
// The tensor's element type (null for non-tensors).
Type ElementOf(const Type& type);
// For a quantized element: its expressed type; otherwise the element itself.
Type ExpressedOrSelf(const Type& element);
// For a quantized element: its storage type; otherwise the element itself.
Type StorageOrSelf(const Type& element);
// Bit width of an element type (complex: both parts); 0 if unknown.
int ElementBitWidth(const Type& element);
bool IsFloatElement(const Type& element);
bool IsComplexElement(const Type& element);
bool IsIntElement(const Type& element);  // signed or unsigned, not i1
bool IsPredElement(const Type& element);
bool IsScalarElement(const Type& element, ElementType type);

// "operand #i must be ranked tensor of <classes> values, but got 'T'" unless
// operand `i` is a tensor of `classes` (quantized types are also checked
// against the quantized-type rules).
Status CheckOperandTensor(const Operation& op, int i, uint32_t classes);
Status CheckResultTensor(const Operation& op, int i, uint32_t classes);
// The same for every operand / result.
Status CheckAllOperandTensors(const Operation& op, uint32_t classes);
Status CheckAllResultTensors(const Operation& op, uint32_t classes);
// A 0-d tensor of `classes`.
Status CheckOperandScalarTensor(const Operation& op, int i, uint32_t classes);
// A 1-d tensor of `classes`, optionally statically shaped.
Status CheckOperand1DTensor(const Operation& op, int i, uint32_t classes,
                            bool require_static);
Status CheckOperandToken(const Operation& op, int i);
Status CheckResultToken(const Operation& op, int i);

// The quantized-type rules of the spec ((C1)-(C13) of "Types"). The rules
// of the element type alone (storage range, scales, a non-negative
// dimension) hold wherever a type appears; `value_rules` adds those the
// StableHLO ops check of their operands and results (zero points within the
// storage range, a quantization dimension within the rank and sized like
// the scales).
Status CheckQuantizedTypeRules(const Type& type, std::string_view what,
                               bool value_rules = true);
// The rules every type obeys wherever it appears (block arguments,
// function signatures, results of any dialect's ops): the element-level
// quantized rules, recursively through tuples, and no unknown
// `!stablehlo.*` type.
Status CheckTypeRules(const Type& type, std::string_view what);
// "2.000000e-01", as MLIR prints float attributes.
std::string FloatText(double value);

// ---- Counts -----------------------------------------------------------------

Status ExpectOperands(const Operation& op, int count);
Status ExpectResults(const Operation& op, int count);
Status ExpectMinOperands(const Operation& op, int count);
Status ExpectMinResults(const Operation& op, int count);
Status ExpectRegions(const Operation& op, int count);

// ---- Shapes and type compatibility ------------------------------------------

inline bool IsDynamic(int64_t dim) { return dim == kDynamic; }
inline bool DimsCompatible(int64_t a, int64_t b) {
  return a == kDynamic || b == kDynamic || a == b;
}
// Bounds of a tensor type (one per dimension, kDynamic where none); empty
// when the type has no #stablehlo.bounds encoding.
std::vector<int64_t> BoundsOf(const Type& type);
// Same rank, compatible dims, and a static size never above the other's
// bound (MLIR's verifyCompatibleShapeWithBounds).
bool ShapesCompatible(const Type& a, const Type& b);
// Element types equal, allowing a quantized type to match its expressed
// type and two quantized types with the same storage to match.
bool ElementsCompatible(const Type& a, const Type& b);
// isCompatibleForHloTypeInference: tensors by shape and element, tokens with
// tokens, tuples element-wise, anything else by equality.
bool TypesCompatible(const Type& a, const Type& b);
bool TypeListsCompatible(const std::vector<Type>& a,
                         const std::vector<Type>& b);
// Same element type, ignoring float precision when `ignore_fp_precision`.
bool SameElementType(const Type& a, const Type& b, bool ignore_fp_precision);

// A tensor type with `bounds` (empty or all kDynamic: no encoding).
Type MakeTensor(std::vector<int64_t> shape, Type element,
                const std::vector<int64_t>& bounds = {});
// Compares inferred result types with the declared ones:
// "inferred type(s) 'A' are incompatible with return type(s) of operation 'B'".
Status CheckInferredResults(const Operation& op,
                            const std::vector<Type>& inferred);
// The most specific of compatible types (static dims win; bounds merge).
Type MostSpecific(const std::vector<Type>& types);

// Product of static dims, or nullopt on overflow or a dynamic dim.
std::optional<int64_t> StaticElementCount(const std::vector<int64_t>& shape);

// "statically shaped or single bounded dimension tensor": every dimension
// static except at most one, which has a bound.
bool IsStaticOrSingleBounded(const Type& type);

// The integer values of `value` when a stablehlo.constant defines it (at
// most kMaxAttrElements of them); nullopt otherwise.
std::optional<std::vector<int64_t>> ConstantInts(const Value* value);

// A shape operand (output_shape, output_dimensions) against the result:
// a static operand length must equal the result rank, and constant values
// must be compatible with the result's dimensions.
Status CheckShapeOperand(const Operation& op, int index, const Type& result);

// ---- Quantization of shape-preserving ops (verify_quantized.cc) -------------

// Per-tensor operand and result must share scale and zero point; per-axis
// ones their scales and zero points (broadcast_in_dim, transpose, reshape).
Status CheckSameQuantizationParameters(const Operation& op, const Type& operand,
                                       const Type& result);
// broadcast_in_dim's per-axis rule (C6).
Status CheckBroadcastQuantization(const Operation& op, const Type& operand,
                                  const Type& result,
                                  const std::vector<int64_t>& dimensions);
// transpose's per-axis rule (C4).
Status CheckTransposeQuantization(const Operation& op, const Type& operand,
                                  const Type& result,
                                  const std::vector<int64_t>& permutation);
// reshape's per-axis rule (C3).
Status CheckReshapeQuantization(const Operation& op, const Type& operand,
                                const Type& result);

// ---- Attributes
// --------------------------------------------------------------

// Integer list attributes: array<i64: ...>, dense<...> : tensor<Nxi64> of
// rank 1, or [1, 2]. Error when present with another kind.
StatusOr<std::optional<std::vector<int64_t>>> OptionalInts(
    const Operation& op, std::string_view name);
StatusOr<std::vector<int64_t>> RequiredInts(const Operation& op,
                                            std::string_view name);
// Bool list attributes: array<i1: ...> or dense<[true, false]>.
StatusOr<std::optional<std::vector<bool>>> OptionalBools(const Operation& op,
                                                         std::string_view name);
StatusOr<std::optional<int64_t>> OptionalInt(const Operation& op,
                                             std::string_view name);
StatusOr<int64_t> RequiredInt(const Operation& op, std::string_view name);
// A non-negative / positive integer attribute, with MLIR's wording.
StatusOr<int64_t> RequiredNonNegativeInt(const Operation& op,
                                         std::string_view name, int bits = 64);
StatusOr<int64_t> RequiredPositiveInt(const Operation& op,
                                      std::string_view name, int bits = 64);
// true/false or a unit attribute; `fallback` when absent.
StatusOr<bool> OptionalBool(const Operation& op, std::string_view name,
                            bool fallback = false);
StatusOr<std::optional<int64_t>> OptionalEnum(const Operation& op,
                                              std::string_view name,
                                              EnumKind kind);
StatusOr<int64_t> RequiredEnum(const Operation& op, std::string_view name,
                               EnumKind kind);
// The attribute of `kind`, or an error naming what was expected; null when
// absent and not required.
StatusOr<Attribute> AttrOfKind(const Operation& op, std::string_view name,
                               AttrKind kind, bool required);

// An integer dense-elements attribute (or dense array) read into its shape
// and values; refuses more than `kMaxAttrElements` elements.
struct IntElements {
  std::vector<int64_t> shape;
  std::vector<int64_t> values;
};
inline constexpr int64_t kMaxAttrElements = int64_t{1} << 20;
StatusOr<IntElements> ReadIntElements(const Operation& op,
                                      std::string_view name,
                                      const Attribute& attr);

// ---- Regions
// --------------------------------------------------------------------

// The only block of region `index`: error if the region is empty or has
// several blocks.
StatusOr<const Block*> SingleBlock(const Operation& op, int index);
std::vector<Type> ArgumentTypes(const Block& block);
// The operand types of the block's terminator (empty when it has none).
std::vector<Type> TerminatorTypes(const Block& block);
// The block's terminator, which must be one of `codes`.
StatusOr<const Operation*> RegionTerminator(const Operation& op,
                                            const Block& block);

// Whether an element of `from` may be promoted to `to` in a reduction
// region: the same kind of element with at least as many bits (quantized:
// same expressed type and storage signedness).
bool IsPromotable(const Type& from, const Type& to);

// The reduction-region rules shared by reduce, reduce_window, scatter,
// select_and_scatter and the collectives (verifyReducerShape): the body of
// `block` takes 2N 0-d (or `allowed_dims`-shaped) tensors and returns N,
// whose element types are promotable from `inputs` and `inits`.
Status CheckReducerRegion(const Operation& op, const Block& block,
                          const std::vector<Type>& inputs,
                          const std::vector<Type>& inits,
                          const std::vector<int64_t>& allowed_dims);

// ---- Lists
// -------------------------------------------------------------------

bool HasDuplicates(const std::vector<int64_t>& values);
bool IsSortedAscending(const std::vector<int64_t>& values);
// Whether `values` is a permutation of [0, size).
bool IsPermutation(const std::vector<int64_t>& values);

}  // namespace kiln::ir::verifier

#endif  // KILN_IR_VERIFY_INTERNAL_H_
