// Elementwise kernels: unary and binary arithmetic, bitwise and math ops,
// compare, select, clamp. Operands and results have the same number of
// elements (StableHLO has no implicit broadcasting); `count` is that
// number. Element types are the kernels' native ones (see element.h): the
// lowering computes narrow floats in f32 and sub-byte integers in 8 bits.
#ifndef KILN_EXEC_KERNELS_ELEMENTWISE_H_
#define KILN_EXEC_KERNELS_ELEMENTWISE_H_

#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

// X(name): the unary ops.
#define KILN_UNARY_OPS(X)                                                    \
  X(Abs)                                                                     \
  X(Negate)                                                                  \
  X(Not)                                                                     \
  X(Sign)                                                                    \
  X(Sqrt)                                                                    \
  X(Rsqrt)                                                                   \
  X(Cbrt)                                                                    \
  X(Exp)                                                                     \
  X(Expm1)                                                                   \
  X(Log)                                                                     \
  X(Log1p) X(Logistic) X(Sin) X(Cos) X(Tan) X(Tanh) X(Ceil) X(Floor)         \
      X(RoundAfz) X(RoundEven) X(IsFinite) X(Real) X(Imag) X(Popcnt) X(Clz)  \
          X(Acos) X(Acosh) X(Asin) X(Asinh) X(Atan) X(Atanh) X(Cosh) X(Sinh) \
              X(Erf) X(Erfc) X(ErfcSingle) X(ErfInv) X(Lgamma) X(Digamma)    \
                  X(BesselI1e) X(Square) X(Conj) X(IsInf) X(IsNegInf)        \
                      X(IsPosInf)

// X(name): the binary ops (operands of one type).
#define KILN_BINARY_OPS(X)                                               \
  X(Add)                                                                 \
  X(Subtract)                                                            \
  X(Multiply)                                                            \
  X(Divide)                                                              \
  X(Remainder)                                                           \
  X(Maximum)                                                             \
  X(Minimum)                                                             \
  X(Power)                                                               \
  X(Atan2)                                                               \
  X(And)                                                                 \
  X(Or) X(Xor) X(ShiftLeft) X(ShiftRightArithmetic) X(ShiftRightLogical) \
      X(Complex) X(NextAfter) X(Mulhi) X(Polygamma) X(Zeta)

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
