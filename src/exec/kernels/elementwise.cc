#include "exec/kernels/elementwise.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "exec/executor.h"
#include "exec/kernels/elementwise_kernel.h"
#include "exec/kernels/elementwise_ops.h"
#include "exec/kernels/two_branch.h"
#include "exec/kernels/vectorize.h"

namespace kiln::exec {
namespace {

template <typename Op, typename T>
class UnaryKernel : public ElementwiseKernel {
 public:
  using Out = decltype(Op::Apply(std::declval<T>(), 0));
  UnaryKernel(int64_t count, int bits, int cost)
      : ElementwiseKernel(count, {sizeof(T)}, {sizeof(Out)}),
        bits_(bits),
        cost_(cost) {}
  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t, int64_t n) const override {
    const auto* in = reinterpret_cast<const T*>(inputs[0]);
    auto* out = reinterpret_cast<Out*>(outputs[0]);
    if constexpr (std::is_same_v<T, float> && std::is_same_v<Out, float> &&
                  HasTwoBranches<Op>) {
      if (TwoBranchSplitAvailable()) {
        RunTwoBranchSplit<typename Op::Branches>(in, out, n);
        return;
      }
    }
    if constexpr (std::is_same_v<T, float> && std::is_same_v<Out, float> &&
                  requires(float x) { Op::InRangeValue(x); }) {
      RunInRange(in, out, n);
      return;
    }
    Loop(in, out, n, bits_);
  }
  int cost_per_element() const override { return cost_; }

 private:
  // An op whose f32 form is vectorizable for some arguments only
  // (`Op::InRange`, `Op::InRangeValue`: sin and cos up to 2^20): chunks of
  // the range are computed into a buffer by a vectorized loop over every
  // element, the few arguments outside it (none in most chunks) are
  // computed again by Op::Apply one at a time, and the chunk is copied
  // out. The buffer lets `out` be `in`.
  static void RunInRange(const float* in, float* out, int64_t n) {
    constexpr int64_t kChunk = 1024;
    float chunk[kChunk];
    for (int64_t begin = 0; begin < n; begin += kChunk) {
      const int64_t count = std::min(kChunk, n - begin);
      if (InRangeLoop(in + begin, chunk, count)) {
        for (int64_t i = 0; i < count; ++i) {
          float x = in[begin + i];
          if (!Op::InRange(x)) chunk[i] = Op::Apply(x, 0);
        }
      }
      std::memcpy(out + begin, chunk, count * sizeof(float));
    }
  }
  // Op::InRangeValue over every element (arguments outside the range
  // replaced by 0, so that it stays defined); whether any was outside.
  KILN_VECTORIZED static bool InRangeLoop(const float* in, float* out,
                                          int64_t n) {
    int outside = 0;  // an int: GCC 12 leaves a loop with a bool `|=` scalar
    for (int64_t i = 0; i < n; ++i) {
      float x = in[i];
      bool in_range = Op::InRange(x);
      outside |= in_range ? 0 : 1;
      out[i] = Op::InRangeValue(in_range ? x : 0.0f);
    }
    return outside != 0;
  }

  KILN_VECTORIZED static void Loop(const T* in, Out* out, int64_t n, int bits) {
    for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(in[i], bits);
  }

  int bits_;
  int cost_;
};

// kScalar: the input (0 or 1) that is one element serving every element
// (ElementwiseKernel::WithScalarInput), or -1 for none.
template <typename Op, typename T, int kScalar = -1>
class BinaryKernel : public ElementwiseKernel {
 public:
  BinaryKernel(int64_t count, int bits, int cost)
      : ElementwiseKernel(count,
                          {kScalar == 0 ? 0 : static_cast<int>(sizeof(T)),
                           kScalar == 1 ? 0 : static_cast<int>(sizeof(T))},
                          {sizeof(T)}),
        bits_(bits),
        cost_(cost) {}
  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t, int64_t n) const override {
    const auto* a = reinterpret_cast<const T*>(inputs[0]);
    const auto* b = reinterpret_cast<const T*>(inputs[1]);
    auto* out = reinterpret_cast<T*>(outputs[0]);
    if constexpr (std::is_same_v<T, float> &&
                  requires(float x) { Op::InRangeValue(x, x); }) {
      RunInRange(a, b, out, n);
      return;
    }
    Loop(a, b, out, n, bits_);
  }
  int cost_per_element() const override { return cost_; }
  std::optional<ArithmeticForm> arithmetic() const override {
    if constexpr (std::is_same_v<T, float>) {
      if constexpr (std::is_same_v<Op, ops::Add>) {
        return ArithmeticForm{ArithmeticOp::kAdd, kScalar};
      } else if constexpr (std::is_same_v<Op, ops::Subtract>) {
        return ArithmeticForm{ArithmeticOp::kSubtract, kScalar};
      } else if constexpr (std::is_same_v<Op, ops::Multiply>) {
        return ArithmeticForm{ArithmeticOp::kMultiply, kScalar};
      } else if constexpr (std::is_same_v<Op, ops::Divide>) {
        return ArithmeticForm{ArithmeticOp::kDivide, kScalar};
      }
    }
    return std::nullopt;
  }
  // Scalar forms exist for the float types, where broadcast constants
  // (polynomial coefficients, scales) are the common case, and for the
  // 32-bit integers, where they are shift amounts and masks (JAX's
  // threefry hash: some 200 ops by constants per random number).
  std::unique_ptr<ElementwiseKernel> WithScalarInput(int input) const override {
    if constexpr (kScalar == -1 &&
                  (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                   std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t>)) {
      if (input == 0) {
        return std::make_unique<BinaryKernel<Op, T, 0>>(count(), bits_, cost_);
      }
      if (input == 1) {
        return std::make_unique<BinaryKernel<Op, T, 1>>(count(), bits_, cost_);
      }
    }
    return nullptr;
  }

 private:
  // An op whose f32 form is vectorizable for some arguments only
  // (`Op::InRange`, `Op::InRangeValue`: a power of a finite nonzero base):
  // as the unary kernels' RunInRange, with element i of a and b (or the
  // one element of a scalar input).
  static void RunInRange(const float* a, const float* b, float* out,
                         int64_t n) {
    constexpr int64_t kChunk = 1024;
    float chunk[kChunk];
    for (int64_t begin = 0; begin < n; begin += kChunk) {
      const int64_t count = std::min(kChunk, n - begin);
      const float* a_chunk = kScalar == 0 ? a : a + begin;
      const float* b_chunk = kScalar == 1 ? b : b + begin;
      if (InRangeLoop(a_chunk, b_chunk, chunk, count)) {
        for (int64_t i = 0; i < count; ++i) {
          float x = a_chunk[kScalar == 0 ? 0 : i];
          float y = b_chunk[kScalar == 1 ? 0 : i];
          if (!Op::InRange(x, y)) chunk[i] = Op::Apply(x, y, 0);
        }
      }
      std::memcpy(out + begin, chunk, count * sizeof(float));
    }
  }
  // Op::InRangeValue over every pair (pairs outside the range replaced by
  // 1^0), and whether any was outside: two loops, since GCC 12 vectorizes
  // neither half when they are one.
  KILN_VECTORIZED static bool InRangeLoop(const float* a, const float* b,
                                          float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      float x = a[kScalar == 0 ? 0 : i];
      float y = b[kScalar == 1 ? 0 : i];
      bool in_range = Op::InRange(x, y);
      out[i] = Op::InRangeValue(in_range ? x : 1.0f, in_range ? y : 0.0f);
    }
    int outside = 0;  // an int: GCC 12 leaves a loop with a bool `|=` scalar
    for (int64_t i = 0; i < n; ++i) {
      outside |=
          Op::InRange(a[kScalar == 0 ? 0 : i], b[kScalar == 1 ? 0 : i]) ? 0 : 1;
    }
    return outside != 0;
  }
  // Integer ops of a type's full width (every type but the sub-byte ones)
  // get their width as a constant, so that no op masks or widens.
  KILN_VECTORIZED static void Loop(const T* a, const T* b, T* out, int64_t n,
                                   int bits) {
    constexpr int kFull = 8 * sizeof(T);
    if constexpr (std::is_integral_v<T>) {
      if (bits == kFull) {
        if constexpr (kScalar == 0) {
          const T scalar = a[0];
          for (int64_t i = 0; i < n; ++i) {
            out[i] = Op::Apply(scalar, b[i], kFull);
          }
        } else if constexpr (kScalar == 1) {
          const T scalar = b[0];
          for (int64_t i = 0; i < n; ++i) {
            out[i] = Op::Apply(a[i], scalar, kFull);
          }
        } else {
          for (int64_t i = 0; i < n; ++i) {
            out[i] = Op::Apply(a[i], b[i], kFull);
          }
        }
        return;
      }
    }
    if constexpr (kScalar == 0) {
      const T scalar = a[0];
      for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(scalar, b[i], bits);
    } else if constexpr (kScalar == 1) {
      const T scalar = b[0];
      for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(a[i], scalar, bits);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(a[i], b[i], bits);
    }
  }

  int bits_;
  int cost_;
};

// complex(real, imag).
template <typename T>
class ComplexKernel : public ElementwiseKernel {
 public:
  explicit ComplexKernel(int64_t count)
      : ElementwiseKernel(count, {sizeof(T), sizeof(T)},
                          {sizeof(std::complex<T>)}) {}
  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t, int64_t n) const override {
    const T* re = reinterpret_cast<const T*>(inputs[0]);
    const T* im = reinterpret_cast<const T*>(inputs[1]);
    auto* out = reinterpret_cast<std::complex<T>*>(outputs[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = std::complex<T>(re[i], im[i]);
  }
};

// Relative cost of one element (an add is 1), for splitting over threads.
int UnaryCost(UnaryOp op) {
  switch (op) {
    case UnaryOp::kAbs:
    case UnaryOp::kNegate:
    case UnaryOp::kNot:
    case UnaryOp::kSign:
    case UnaryOp::kCeil:
    case UnaryOp::kFloor:
    case UnaryOp::kRoundAfz:
    case UnaryOp::kRoundEven:
    case UnaryOp::kIsFinite:
    case UnaryOp::kReal:
    case UnaryOp::kImag:
    case UnaryOp::kPopcnt:
    case UnaryOp::kClz:
    case UnaryOp::kSquare:
    case UnaryOp::kConj:
    case UnaryOp::kIsInf:
    case UnaryOp::kIsNegInf:
    case UnaryOp::kIsPosInf:
      return 1;
    case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt:
      return 4;
    default:
      return 20;
  }
}

int BinaryCost(BinaryOp op) {
  switch (op) {
    case BinaryOp::kDivide:
    case BinaryOp::kRemainder:
      return 4;
    case BinaryOp::kPower:
    case BinaryOp::kAtan2:
    case BinaryOp::kNextAfter:
    case BinaryOp::kPolygamma:
    case BinaryOp::kZeta:
      return 20;
    default:
      return 1;
  }
}

template <typename Op>
std::unique_ptr<Kernel> MakeUnary(ElementType type, int64_t count, int bits,
                                  int cost) {
  std::unique_ptr<Kernel> kernel;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (requires(T x) { Op::Apply(x, 0); }) {
      kernel = std::make_unique<UnaryKernel<Op, T>>(count, bits, cost);
    }
  });
  return kernel;
}

template <typename Op>
std::unique_ptr<Kernel> MakeBinary(ElementType type, int64_t count, int bits,
                                   int cost) {
  std::unique_ptr<Kernel> kernel;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (requires(T x) { Op::Apply(x, x, 0); }) {
      kernel = std::make_unique<BinaryKernel<Op, T>>(count, bits, cost);
    }
  });
  return kernel;
}

}  // namespace

const char* UnaryOpName(UnaryOp op) {
  switch (op) {
#define KILN_CASE(name)  \
  case UnaryOp::k##name: \
    return #name;
    KILN_UNARY_OPS(KILN_CASE)
#undef KILN_CASE
  }
  return "?";
}

const char* BinaryOpName(BinaryOp op) {
  switch (op) {
#define KILN_CASE(name)   \
  case BinaryOp::k##name: \
    return #name;
    KILN_BINARY_OPS(KILN_CASE)
#undef KILN_CASE
  }
  return "?";
}

std::unique_ptr<Kernel> MakeUnaryKernel(UnaryOp op, ElementType type,
                                        int64_t count, int bits) {
  switch (op) {
#define KILN_CASE(name)  \
  case UnaryOp::k##name: \
    return MakeUnary<ops::name>(type, count, bits, UnaryCost(op));
    KILN_UNARY_OPS(KILN_CASE)
#undef KILN_CASE
  }
  return nullptr;
}

std::unique_ptr<Kernel> MakeBinaryKernel(BinaryOp op, ElementType type,
                                         int64_t count, int bits) {
  switch (op) {
    case BinaryOp::kComplex:
      if (type == ElementType::kF32)
        return std::make_unique<ComplexKernel<float>>(count);
      if (type == ElementType::kF64)
        return std::make_unique<ComplexKernel<double>>(count);
      return nullptr;
    case BinaryOp::kPolygamma:
    case BinaryOp::kZeta:
      return nullptr;
#define KILN_CASE(name)   \
  case BinaryOp::k##name: \
    return MakeBinary<ops::name>(type, count, bits, BinaryCost(op));
      KILN_CASE(Add)
      KILN_CASE(Subtract)
      KILN_CASE(Multiply)
      KILN_CASE(Divide)
      KILN_CASE(Remainder)
      KILN_CASE(Maximum)
      KILN_CASE(Minimum)
      KILN_CASE(Power)
      KILN_CASE(Atan2)
      KILN_CASE(And)
      KILN_CASE(Or)
      KILN_CASE(Xor)
      KILN_CASE(ShiftLeft)
      KILN_CASE(ShiftRightArithmetic)
      KILN_CASE(ShiftRightLogical) KILN_CASE(NextAfter) KILN_CASE(Mulhi)
#undef KILN_CASE
  }
  return nullptr;
}

ElementType UnaryResultType(UnaryOp op, ElementType type) {
  switch (op) {
    case UnaryOp::kIsFinite:
    case UnaryOp::kIsInf:
    case UnaryOp::kIsNegInf:
    case UnaryOp::kIsPosInf:
      return ElementType::kI1;
    case UnaryOp::kAbs:
    case UnaryOp::kReal:
    case UnaryOp::kImag:
      return ir::IsComplex(type) ? ir::ComplexComponentType(type) : type;
    default:
      return type;
  }
}

ElementType BinaryResultType(BinaryOp op, ElementType type) {
  if (op == BinaryOp::kComplex) {
    return type == ElementType::kF64 ? ElementType::kC128 : ElementType::kC64;
  }
  return type;
}

}  // namespace kiln::exec
