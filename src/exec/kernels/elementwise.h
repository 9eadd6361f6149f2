// Elementwise kernels: unary and binary arithmetic, bitwise and math ops,
// compare, select, clamp. Operands and results have the same number of
// elements (StableHLO has no implicit broadcasting); `count` is that
// number. Element types are the kernels' native ones (see element.h): the
// lowering computes narrow floats in f32 and sub-byte integers in 8 bits.
#ifndef KILN_EXEC_KERNELS_ELEMENTWISE_H_
#define KILN_EXEC_KERNELS_ELEMENTWISE_H_

#include <memory>

#include "exec/plan.h"
#include "ir/elementwise_traits.h"

namespace kiln::exec {

// X(name): the unary kernels, one per row of ir/elementwise_traits.h of
// arity 1 (rows that share another's kernel name it once), and erfc's
// float-only variant, ErfcSingle (recover_erfc.h).
#define KILN_UNARY_OPS(X)                                       \
  KILN_ELEMENTWISE_OPS(KILN_KERNEL_SPEC_1, KILN_KERNEL_OTHER_1, \
                       KILN_KERNEL_SHARED, X)                   \
  X(ErfcSingle)

// X(name): the binary kernels (operands of one type), one per row of
// arity 2.
#define KILN_BINARY_OPS(X)                                      \
  KILN_ELEMENTWISE_OPS(KILN_KERNEL_SPEC_2, KILN_KERNEL_OTHER_2, \
                       KILN_KERNEL_SHARED, X)

// The rows' filters: X(kernel) for a row of the arity, nothing otherwise.
#define KILN_KERNEL_SPEC_1(X, op, kernel, arity, cost, operands, results, \
                           rule)                                          \
  KILN_KERNEL_IF_1_##arity(X, kernel)
#define KILN_KERNEL_OTHER_1(X, op, kernel, arity, cost) \
  KILN_KERNEL_IF_1_##arity(X, kernel)
#define KILN_KERNEL_SPEC_2(X, op, kernel, arity, cost, operands, results, \
                           rule)                                          \
  KILN_KERNEL_IF_2_##arity(X, kernel)
#define KILN_KERNEL_OTHER_2(X, op, kernel, arity, cost) \
  KILN_KERNEL_IF_2_##arity(X, kernel)
#define KILN_KERNEL_SHARED(X, op, kernel, arity, cost)
#define KILN_KERNEL_IF_1_1(X, kernel) X(kernel)
#define KILN_KERNEL_IF_1_2(X, kernel)
#define KILN_KERNEL_IF_2_1(X, kernel)
#define KILN_KERNEL_IF_2_2(X, kernel) X(kernel)

enum class UnaryOp {
#define KILN_ENUM(name) k##name,
  KILN_UNARY_OPS(KILN_ENUM)
#undef KILN_ENUM
};

enum class BinaryOp {
#define KILN_ENUM(name) k##name,
  KILN_BINARY_OPS(KILN_ENUM)
#undef KILN_ENUM
};

const char* UnaryOpName(UnaryOp op);
const char* BinaryOpName(BinaryOp op);

// The kernel of `op` over `count` elements of native type `type`; null when
// the op does not support the type. `bits` is the logical bit width of
// integer operands (for popcnt, count_leading_zeros and shifts on sub-byte
// types).
std::unique_ptr<Kernel> MakeUnaryKernel(UnaryOp op, ElementType type,
                                        int64_t count, int bits);
std::unique_ptr<Kernel> MakeBinaryKernel(BinaryOp op, ElementType type,
                                         int64_t count, int bits);

// The result element type of `op` on `type` (e.g. abs of complex<f32> is
// f32; is_finite is i1; complex of f64 is complex<f64>).
ElementType UnaryResultType(UnaryOp op, ElementType type);
ElementType BinaryResultType(BinaryOp op, ElementType type);

// compare_direction and compare_type as in ir/attributes.h.
enum class CompareDirection { kEQ, kNE, kGE, kGT, kLE, kLT };
enum class CompareType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };

// a D b, by C++'s operators on K (the compare kernels pass numbers, total
// order keys or (real, imaginary) pairs).
template <CompareDirection D, typename K>
bool Ordered(const K& a, const K& b) {
  if constexpr (D == CompareDirection::kEQ) return a == b;
  if constexpr (D == CompareDirection::kNE) return a != b;
  if constexpr (D == CompareDirection::kGE) return a >= b;
  if constexpr (D == CompareDirection::kGT) return a > b;
  if constexpr (D == CompareDirection::kLE) return a <= b;
  if constexpr (D == CompareDirection::kLT) return a < b;
}
// The same with the direction known at run time.
template <typename K>
bool Ordered(CompareDirection direction, const K& a, const K& b) {
  switch (direction) {
    case CompareDirection::kEQ:
      return Ordered<CompareDirection::kEQ>(a, b);
    case CompareDirection::kNE:
      return Ordered<CompareDirection::kNE>(a, b);
    case CompareDirection::kGE:
      return Ordered<CompareDirection::kGE>(a, b);
    case CompareDirection::kGT:
      return Ordered<CompareDirection::kGT>(a, b);
    case CompareDirection::kLE:
      return Ordered<CompareDirection::kLE>(a, b);
    case CompareDirection::kLT:
      return Ordered<CompareDirection::kLT>(a, b);
  }
  return false;
}
// An i1 result of comparing two operands of native type `type`.
std::unique_ptr<Kernel> MakeCompareKernel(CompareDirection direction,
                                          CompareType compare_type,
                                          ElementType type, int64_t count);

// select(pred, on_true, on_false): `pred_is_scalar` when pred is a rank-0
// i1 choosing whole operands. Elements are `element_bytes` wide.
std::unique_ptr<Kernel> MakeSelectKernel(int64_t element_bytes, int64_t count,
                                         bool pred_is_scalar);

// clamp(min, operand, max) of native type `type`; `min_count` and
// `max_count` are 1 (a scalar bound) or `count`.
std::unique_ptr<Kernel> MakeClampKernel(ElementType type, int64_t count,
                                        int64_t min_count, int64_t max_count);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_ELEMENTWISE_H_
