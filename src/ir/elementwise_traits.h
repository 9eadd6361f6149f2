// The elementwise math ops, one row each, with the traits every layer reads
// of them: the one place to add such an op besides ops.def (its name and
// attributes) and its kernel's function (exec/kernels/elementwise_ops.h).
//
//   KILN_ELEMENTWISE_OPS(ROW, OTHER, SHARED, X) expands, in order:
//   ROW(X, Op, Kernel, arity, cost, operands, results, rule)
//     an op StableHLO's elementwise table specifies; the verifier checks it
//     from its row (ir/verify_elementwise.cc);
//   OTHER(X, Op, Kernel, arity, cost)
//     one whose types a rule of its own checks (complex; CHLO's ops, which
//     JAX expands or Kiln runs as they are);
//   SHARED(X, Op, Kernel, arity, cost)
//     one of those that runs another row's kernel (chlo.tan is
//     stablehlo.tan's), so the kernel lists skip it.
// X is passed through to each row for the includer's own use (the kernel
// lists of exec/kernels/elementwise.h pass their X-macro).
//
// Op: its OpCode enumerator (ops.def). Kernel: the exec::UnaryOp (arity 1)
// or exec::BinaryOp (arity 2) it runs; the lists of kernels are these
// (exec/kernels/elementwise.h), and the lowering of power and erfc chooses
// among more (lower_elementwise.cc). cost: kTranscendental or kArithmetic,
// for the executable's cost analysis. operands, results: the element-type
// classes the spec's "Inputs" tables allow (verify_internal.h; per-tensor
// quantized types where the spec allows them, per-axis only for add).
// rule: how the result's element type follows from the operands'
// (verify_elementwise.cc).
//
// FindElementwiseTraits answers from the same rows at run time.
#ifndef KILN_IR_ELEMENTWISE_TRAITS_H_
#define KILN_IR_ELEMENTWISE_TRAITS_H_

#include "ir/operation.h"

// clang-format off
#define KILN_ELEMENTWISE_OPS(ROW, OTHER, SHARED, X) \
  ROW(X, Abs, Abs, 1, kArithmetic, kSignedNumeric, kSignedInt | kFpQuant, kComponent)                         \
  ROW(X, Cbrt, Cbrt, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)                   \
  ROW(X, Ceil, Ceil, 1, kArithmetic, kFpQuant, kFpQuant, kSameAsOperands)                                     \
  ROW(X, Cosine, Cos, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)                  \
  ROW(X, CountLeadingZeros, Clz, 1, kArithmetic, kInt, kInt, kSameAsOperands)                                 \
  ROW(X, Exponential, Exp, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)             \
  ROW(X, ExponentialMinusOne, Expm1, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)   \
  ROW(X, Floor, Floor, 1, kArithmetic, kFpQuant, kFpQuant, kSameAsOperands)                                   \
  ROW(X, Imag, Imag, 1, kArithmetic, kFloatOrComplex, kFloat, kComponent)                                     \
  ROW(X, IsFinite, IsFinite, 1, kArithmetic, kFpQuant, kPred, kPredicate)                                     \
  ROW(X, Log, Log, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)                     \
  ROW(X, LogPlusOne, Log1p, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)            \
  ROW(X, Logistic, Logistic, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)           \
  ROW(X, Negate, Negate, 1, kArithmetic, kNumeric, kNumeric, kSameAsOperands)                                 \
  ROW(X, Not, Not, 1, kArithmetic, kPredOrInt, kPredOrInt, kSameAsOperands)                                   \
  ROW(X, Popcnt, Popcnt, 1, kArithmetic, kInt, kInt, kSameAsOperands)                                         \
  ROW(X, Real, Real, 1, kArithmetic, kFloatOrComplex, kFloat, kComponent)                                     \
  ROW(X, RoundNearestAfz, RoundAfz, 1, kArithmetic, kFpQuant, kFpQuant, kSameAsOperands)                      \
  ROW(X, RoundNearestEven, RoundEven, 1, kArithmetic, kFpQuant, kFpQuant, kSameAsOperands)                    \
  ROW(X, Rsqrt, Rsqrt, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)                 \
  ROW(X, Sign, Sign, 1, kArithmetic, kSignedNumeric, kSignedNumeric, kSameAsOperands)                         \
  ROW(X, Sine, Sin, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)                    \
  ROW(X, Sqrt, Sqrt, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)                   \
  ROW(X, Tan, Tan, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)                     \
  ROW(X, Tanh, Tanh, 1, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)                   \
  ROW(X, Add, Add, 2, kArithmetic, kAnyOrPerAxis, kAnyOrPerAxis, kSameAsOperands)                             \
  ROW(X, And, And, 2, kArithmetic, kPredOrInt, kPredOrInt, kSameAsOperands)                                   \
  ROW(X, Atan2, Atan2, 2, kTranscendental, kFpComplexQuant, kFpComplexQuant, kSameAsOperands)                 \
  ROW(X, Divide, Divide, 2, kArithmetic, kNumeric, kNumeric, kSameAsOperands)                                 \
  ROW(X, Maximum, Maximum, 2, kArithmetic, kAnyElement, kAnyElement, kSameAsOperands)                         \
  ROW(X, Minimum, Minimum, 2, kArithmetic, kAnyElement, kAnyElement, kSameAsOperands)                         \
  ROW(X, Multiply, Multiply, 2, kArithmetic, kAnyElement, kAnyElement, kSameAsOperands)                       \
  ROW(X, Or, Or, 2, kArithmetic, kPredOrInt, kPredOrInt, kSameAsOperands)                                     \
  ROW(X, Power, Power, 2, kTranscendental, kNumeric, kNumeric, kSameAsOperands)                               \
  ROW(X, Remainder, Remainder, 2, kArithmetic, kNumeric, kNumeric, kSameAsOperands)                           \
  ROW(X, ShiftLeft, ShiftLeft, 2, kArithmetic, kInt, kInt, kSameAsOperands)                                   \
  ROW(X, ShiftRightArithmetic, ShiftRightArithmetic, 2, kArithmetic, kInt, kInt, kSameAsOperands)             \
  ROW(X, ShiftRightLogical, ShiftRightLogical, 2, kArithmetic, kInt, kInt, kSameAsOperands)                   \
  ROW(X, Subtract, Subtract, 2, kArithmetic, kNumeric, kNumeric, kSameAsOperands)                             \
  ROW(X, Xor, Xor, 2, kArithmetic, kPredOrInt, kPredOrInt, kSameAsOperands)                                   \
  OTHER(X, Complex, Complex, 2, kArithmetic)                                                                  \
  OTHER(X, ChloAcos, Acos, 1, kTranscendental)                                                                \
  OTHER(X, ChloAcosh, Acosh, 1, kTranscendental)                                                              \
  OTHER(X, ChloAsin, Asin, 1, kTranscendental)                                                                \
  OTHER(X, ChloAsinh, Asinh, 1, kTranscendental)                                                              \
  OTHER(X, ChloAtan, Atan, 1, kTranscendental)                                                                \
  OTHER(X, ChloAtanh, Atanh, 1, kTranscendental)                                                              \
  OTHER(X, ChloBesselI1e, BesselI1e, 1, kTranscendental)                                                      \
  OTHER(X, ChloConj, Conj, 1, kArithmetic)                                                                    \
  OTHER(X, ChloCosh, Cosh, 1, kTranscendental)                                                                \
  OTHER(X, ChloDigamma, Digamma, 1, kTranscendental)                                                          \
  OTHER(X, ChloErf, Erf, 1, kTranscendental)                                                                  \
  OTHER(X, ChloErfInv, ErfInv, 1, kTranscendental)                                                            \
  OTHER(X, ChloErfc, Erfc, 1, kTranscendental)                                                                \
  OTHER(X, ChloIsInf, IsInf, 1, kArithmetic)                                                                  \
  OTHER(X, ChloIsNegInf, IsNegInf, 1, kArithmetic)                                                            \
  OTHER(X, ChloIsPosInf, IsPosInf, 1, kArithmetic)                                                            \
  OTHER(X, ChloLgamma, Lgamma, 1, kTranscendental)                                                            \
  OTHER(X, ChloSinh, Sinh, 1, kTranscendental)                                                                \
  OTHER(X, ChloSquare, Square, 1, kArithmetic)                                                                \
  SHARED(X, ChloTan, Tan, 1, kTranscendental)                                                                 \
  OTHER(X, ChloMulhi, Mulhi, 2, kArithmetic)                                                                  \
  OTHER(X, ChloNextAfter, NextAfter, 2, kArithmetic)                                                          \
  OTHER(X, ChloPolygamma, Polygamma, 2, kTranscendental)                                                      \
  OTHER(X, ChloZeta, Zeta, 2, kTranscendental)
// clang-format on

namespace kiln::ir {
enum class OpCost : uint8_t { kArithmetic, kTranscendental };

struct ElementwiseTraits {
  OpCode code;
  int arity;
  OpCost cost;
  // Whether the verifier reads its element types from the row (StableHLO's
  // own elementwise ops) rather than from a rule of its own.
  bool spec_row;
};

// The row of `code`, or null for an op that is not an elementwise math op.
const ElementwiseTraits* FindElementwiseTraits(OpCode code);

}  // namespace kiln::ir

#endif  // KILN_IR_ELEMENTWISE_TRAITS_H_
