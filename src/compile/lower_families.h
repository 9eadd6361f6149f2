// The op families' lowering registrations (one lower_*.cc each) and helpers
// they share. Internal to compile/.
#ifndef KILN_COMPILE_LOWER_FAMILIES_H_
#define KILN_COMPILE_LOWER_FAMILIES_H_

#include <optional>
#include <string>
#include <vector>

#include "compile/lowering.h"
#include "exec/kernels/region_call.h"

namespace kiln::compile {

// Fills the lowering table; each family registers its ops.
void RegisterAllLowerings();
void RegisterStructuralLowerings();     // lower_structural.cc
void RegisterElementwiseLowerings();    // lower_elementwise.cc
void RegisterShapeLowerings();          // lower_shape.cc
void RegisterReduceLowerings();         // lower_reduce.cc
void RegisterDotLowerings();            // lower_dot.cc
void RegisterEinsumLowerings();         // lower_einsum.cc
void RegisterGatherScatterLowerings();  // lower_gather_scatter.cc
void RegisterControlFlowLowerings();    // lower_control_flow.cc
void RegisterMiscLowerings();           // lower_misc.cc
void RegisterCollectiveLowerings();     // lower_collectives.cc
void RegisterSortLowerings();           // lower_sort.cc

// --- Shared helpers
// ------------------------------------------------------------

// `slot` converted to element type `to` (the slot itself when it already
// has that type).
SlotId ConvertSlot(Lowering& lowering, const ir::Operation& op, SlotId slot,
                   ElementType to);

// `slot` with its dimensions permuted (result dim i = operand dim
// permutation[i]); the slot itself when the permutation is the identity.
SlotId TransposeSlot(Lowering& lowering, const ir::Operation& op, SlotId slot,
                     const std::vector<int64_t>& permutation);

// An integer attribute list (dense array, array of integers or dense
// elements); `fallback` when absent; an error naming the op otherwise.
StatusOr<std::vector<int64_t>> IntsAttr(
    const ir::Operation& op, std::string_view name,
    std::optional<std::vector<int64_t>> fallback = std::nullopt);
// An integer attribute; `fallback` when absent.
StatusOr<int64_t> IntAttr(const ir::Operation& op, std::string_view name,
                          std::optional<int64_t> fallback = std::nullopt);
// A bool attribute (true/false or unit); false when absent.
bool BoolAttr(const ir::Operation& op, std::string_view name);

// An error "OP: element type T is not supported".
Status UnsupportedType(const ir::Operation& op, ElementType type);

// The k largest of `operand` along its last dimension into `op`'s results
// 0 (values, of the operand's type) and 1 (their indices, i32 or i64):
// chlo.top_k, dynamic_top_k, the TopK custom call (lower_sort.cc).
Status EmitTopK(Lowering& lowering, const ir::Operation& op, SlotId operand,
                int64_t k);

// A compare op's comparison_direction (ir::kEQ ... ir::kLT) and
// compare_type (ir::kNoType where the attribute is absent).
struct Comparison {
  int64_t direction;
  int64_t type;
};
// The comparison of `op` if it is a compare of two operands.
std::optional<Comparison> ComparisonOf(const ir::Operation* op);
// Whether a compare of `compare_type` compares elements of `type` as C++'s
// operators do: NOTYPE, or the one of `type`'s kind (FLOAT, SIGNED or
// UNSIGNED); never TOTALORDER.
bool ComparesLikeCpp(int64_t compare_type, ElementType type);

// The value of a splat f32 or f64 constant, if `op` is one; with
// `narrow_too`, of an f16 or bf16 one too.
std::optional<double> FloatSplat(const ir::Operation& op,
                                 bool narrow_too = false);

// The combiner a two-operand-per-value body computes, when it is one the
// kernels know: `(a, b) -> op(a, b)` (either order for commutative ops),
// `(a, b) -> b` or `(a, b) -> a`; kGeneric otherwise.
exec::Combiner MatchCombiner(const ir::Region& region);

// Lowers a region whose arguments are scalars of `types` (rank-0 arrays),
// to be called per element (exec::ScalarRegion).
StatusOr<std::unique_ptr<exec::Region>> LowerScalarRegion(
    Lowering& lowering, const ir::Region& region,
    const std::vector<ElementType>& types);

// Sorts `inputs` (one shape) along `dimension` (negative counts from the
// end) by `comparator_region` (params: lhs/rhs pairs per input; stable).
// With `bind_results`, the outputs are `op`'s results; otherwise fresh
// temps (for a custom call that reads them further). lower_sort.cc.
StatusOr<std::vector<SlotId>> EmitSort(Lowering& lowering,
                                       const ir::Operation& op,
                                       const std::vector<SlotId>& inputs,
                                       int64_t dimension,
                                       const ir::Region& comparator_region,
                                       bool bind_results);

// The window of a reduce_window, as the op's attributes or a dynamic
// custom call's constant operands give it (empty lists mean all ones or no
// padding).
struct WindowAttrs {
  std::vector<int64_t> dimensions;
  std::vector<int64_t> strides;
  std::vector<int64_t> base_dilations;
  std::vector<int64_t> window_dilations;
  std::vector<int64_t> padding;  // [low, high] per dimension, flattened
};
// reduce_window of `op`'s first N operands with the next N as inits, by
// `body`, into `op`'s N results. lower_reduce.cc.
Status EmitReduceWindow(Lowering& lowering, const ir::Operation& op,
                        int num_inputs, WindowAttrs window,
                        const ir::Region& body);

// rng_bit_generator of `op` (operand 0 the state, results state and bits),
// the bits of `bits_dims` when given (a dynamic custom call's shape
// operand), else of the result type. lower_misc.cc.
Status EmitRngBitGenerator(Lowering& lowering, const ir::Operation& op,
                           std::optional<std::vector<int64_t>> bits_dims);

// How often `value` is an operand of `op` or of the ops in its regions.
int CountUses(const ir::Operation& op, const ir::Value* value);
// The only reader of `op`'s one result in its block (with no use in nested
// regions), or null.
const ir::Operation* OnlyReader(const ir::Operation& op);

// The leaves of a type: tensors and tokens in order, tuples flattened
// (lowering.cc).
void FlattenType(const ir::Type& type, std::vector<ir::Type>& leaves);

// INVALID_ARGUMENT naming `op` and `what` unless `dims` are distinct
// dimensions of a rank-`rank` array (lower_dot.cc).
Status CheckDistinctDims(const ir::Operation& op,
                         const std::vector<int64_t>& dims, int64_t rank,
                         std::string_view what);

}  // namespace kiln::compile

#endif  // KILN_COMPILE_LOWER_FAMILIES_H_
