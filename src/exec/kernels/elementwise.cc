#include "exec/kernels/elementwise.h"

#include "exec/executor.h"
#include "exec/kernels/elementwise_ops.h"

namespace kiln::exec {
namespace {

template <typename Op, typename T>
class UnaryKernel : public Kernel {
 public:
  using Out = decltype(Op::Apply(std::declval<T>(), 0));
  UnaryKernel(int64_t count, int bits) : count_(count), bits_(bits) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    Out* out = ctx.Out<Out>(step, 0);
    for (int64_t i = 0; i < count_; ++i) out[i] = Op::Apply(in[i], bits_);
    return OkStatus();
  }

 private:
  int64_t count_;
  int bits_;
};

template <typename Op, typename T>
class BinaryKernel : public Kernel {
 public:
  BinaryKernel(int64_t count, int bits) : count_(count), bits_(bits) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* a = ctx.In<T>(step, 0);
    const T* b = ctx.In<T>(step, 1);
    T* out = ctx.Out<T>(step, 0);
    for (int64_t i = 0; i < count_; ++i) out[i] = Op::Apply(a[i], b[i], bits_);
    return OkStatus();
  }

 private:
  int64_t count_;
  int bits_;
};

// complex(real, imag).
template <typename T>
class ComplexKernel : public Kernel {
 public:
  explicit ComplexKernel(int64_t count) : count_(count) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* re = ctx.In<T>(step, 0);
    const T* im = ctx.In<T>(step, 1);
    auto* out = ctx.Out<std::complex<T>>(step, 0);
    for (int64_t i = 0; i < count_; ++i) out[i] = std::complex<T>(re[i], im[i]);
    return OkStatus();
  }

 private:
  int64_t count_;
};

template <typename Op>
std::unique_ptr<Kernel> MakeUnary(ElementType type, int64_t count, int bits) {
  std::unique_ptr<Kernel> kernel;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (requires(T x) { Op::Apply(x, 0); }) {
      kernel = std::make_unique<UnaryKernel<Op, T>>(count, bits);
    }
  });
  return kernel;
}

template <typename Op>
std::unique_ptr<Kernel> MakeBinary(ElementType type, int64_t count, int bits) {
  std::unique_ptr<Kernel> kernel;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (requires(T x) { Op::Apply(x, x, 0); }) {
      kernel = std::make_unique<BinaryKernel<Op, T>>(count, bits);
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
    return MakeUnary<ops::name>(type, count, bits);
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
    return MakeBinary<ops::name>(type, count, bits);
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
      KILN_CASE(Or) KILN_CASE(Xor) KILN_CASE(ShiftLeft)
          KILN_CASE(ShiftRightArithmetic) KILN_CASE(ShiftRightLogical)
              KILN_CASE(NextAfter) KILN_CASE(Mulhi)
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
