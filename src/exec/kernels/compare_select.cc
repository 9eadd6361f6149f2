// compare, select and clamp.
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "exec/executor.h"
#include "exec/kernels/elementwise.h"
#include "exec/kernels/elementwise_kernel.h"
#include "exec/kernels/elementwise_ops.h"
#include "exec/kernels/vectorize.h"

namespace kiln::exec {
namespace {

// The key whose unsigned order is the IEEE-754 totalOrder of floats:
// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
template <typename T>
auto TotalOrderKey(T value) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits bits;
  std::memcpy(&bits, &value, sizeof(T));
  constexpr Bits kSign = Bits{1} << (sizeof(T) * 8 - 1);
  return (bits & kSign) ? static_cast<Bits>(~bits)
                        : static_cast<Bits>(bits | kSign);
}

// kScalar: the input (0 or 1) that is one element serving every element
// (ElementwiseKernel::WithScalarInput), or -1 for none.
template <CompareDirection D, typename T, bool kTotal, int kScalar = -1>
class CompareKernel : public ElementwiseKernel {
 public:
  explicit CompareKernel(int64_t count)
      : ElementwiseKernel(count,
                          {kScalar == 0 ? 0 : static_cast<int>(sizeof(T)),
                           kScalar == 1 ? 0 : static_cast<int>(sizeof(T))},
                          {sizeof(bool)}) {}
  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t, int64_t n) const override {
    Loop(reinterpret_cast<const T*>(inputs[0]),
         reinterpret_cast<const T*>(inputs[1]),
         reinterpret_cast<bool*>(outputs[0]), n);
  }
  std::unique_ptr<ElementwiseKernel> WithScalarInput(int input) const override {
    if constexpr (kScalar == -1 &&
                  (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
      if (input == 0) {
        return std::make_unique<CompareKernel<D, T, kTotal, 0>>(count());
      }
      if (input == 1) {
        return std::make_unique<CompareKernel<D, T, kTotal, 1>>(count());
      }
    }
    return nullptr;
  }

 private:
  static bool Compare(const T& a, const T& b) {
    if constexpr (kTotal) {
      return Ordered<D>(TotalOrderKey(a), TotalOrderKey(b));
    } else if constexpr (kIsComplex<T>) {
      // Complex numbers: EQ/NE compare both parts; orderings compare
      // lexicographically.
      return Ordered<D>(std::make_pair(a.real(), a.imag()),
                        std::make_pair(b.real(), b.imag()));
    } else {
      return Ordered<D>(a, b);
    }
  }
  KILN_VECTORIZED static void Loop(const T* a, const T* b, bool* out,
                                   int64_t n) {
    if constexpr (kScalar == 0) {
      const T scalar = a[0];
      for (int64_t i = 0; i < n; ++i) out[i] = Compare(scalar, b[i]);
    } else if constexpr (kScalar == 1) {
      const T scalar = b[0];
      for (int64_t i = 0; i < n; ++i) out[i] = Compare(a[i], scalar);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = Compare(a[i], b[i]);
    }
  }
};

template <CompareDirection D>
std::unique_ptr<Kernel> MakeCompareFor(CompareType compare_type,
                                       ElementType type, int64_t count) {
  std::unique_ptr<Kernel> kernel;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloat<T>) {
      if (compare_type == CompareType::kTotalOrder) {
        kernel = std::make_unique<CompareKernel<D, T, true>>(count);
        return;
      }
    }
    kernel = std::make_unique<CompareKernel<D, T, false>>(count);
  });
  return kernel;
}

template <size_t kBytes>
struct Bytes {
  unsigned char data[kBytes];
};

// kScalar: the value input (1 on_true, 2 on_false) that is one element
// serving every element (ElementwiseKernel::WithScalarInput), or -1.
template <typename E, int kScalar = -1>
class SelectKernel : public ElementwiseKernel {
 public:
  SelectKernel(int64_t count, bool pred_is_scalar)
      : ElementwiseKernel(count,
                          {pred_is_scalar ? 0 : 1,
                           kScalar == 1 ? 0 : static_cast<int>(sizeof(E)),
                           kScalar == 2 ? 0 : static_cast<int>(sizeof(E))},
                          {sizeof(E)}),
        pred_is_scalar_(pred_is_scalar) {}
  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t, int64_t n) const override {
    const bool* pred = reinterpret_cast<const bool*>(inputs[0]);
    const E* on_true = reinterpret_cast<const E*>(inputs[1]);
    const E* on_false = reinterpret_cast<const E*>(inputs[2]);
    E* out = reinterpret_cast<E*>(outputs[0]);
    if constexpr (kScalar == -1) {
      if (pred_is_scalar_) {
        const E* chosen = pred[0] ? on_true : on_false;
        if (chosen != out && n > 0) std::memmove(out, chosen, n * sizeof(E));
        return;
      }
    }
    Loop(pred, on_true, on_false, out, n);
  }
  // Only with a per-element predicate, for the 4- and 8-byte elements
  // of f32 and f64 values.
  std::unique_ptr<ElementwiseKernel> WithScalarInput(int input) const override {
    if constexpr (kScalar == -1 && std::is_unsigned_v<E> && sizeof(E) >= 4) {
      if (pred_is_scalar_) return nullptr;
      if (input == 1) {
        return std::make_unique<SelectKernel<E, 1>>(count(), false);
      }
      if (input == 2) {
        return std::make_unique<SelectKernel<E, 2>>(count(), false);
      }
    }
    return nullptr;
  }

 private:
  KILN_VECTORIZED static void Loop(const bool* pred, const E* on_true,
                                   const E* on_false, E* out, int64_t n) {
    if constexpr (std::is_unsigned_v<E>) {
      // A mask of all ones or all zeros from the 0/1 predicate byte: the
      // compiler vectorizes this where it would not a conditional.
      const auto* bytes = reinterpret_cast<const uint8_t*>(pred);
      const E true_scalar = kScalar == 1 ? on_true[0] : E{0};
      const E false_scalar = kScalar == 2 ? on_false[0] : E{0};
      for (int64_t i = 0; i < n; ++i) {
        E mask = static_cast<E>(E{0} - static_cast<E>(bytes[i]));
        E t = kScalar == 1 ? true_scalar : on_true[i];
        E f = kScalar == 2 ? false_scalar : on_false[i];
        out[i] = static_cast<E>((t & mask) | (f & ~mask));
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        out[i] = pred[i] ? on_true[i] : on_false[i];
      }
    }
  }

  bool pred_is_scalar_;
};

template <typename T>
class ClampKernel : public ElementwiseKernel {
 public:
  // A bound of one element (with more than one operand element) is a
  // scalar read whole.
  ClampKernel(int64_t count, int64_t min_count, int64_t max_count)
      : ElementwiseKernel(
            count,
            {min_count == count ? static_cast<int>(sizeof(T)) : 0, sizeof(T),
             max_count == count ? static_cast<int>(sizeof(T)) : 0},
            {sizeof(T)}) {}
  // A fused kernel reads a broadcast bound as one element.
  std::unique_ptr<ElementwiseKernel> WithScalarInput(int input) const override {
    if (input == 1 || reads_whole(input)) return nullptr;
    const bool min_scalar = input == 0 || reads_whole(0);
    const bool max_scalar = input == 2 || reads_whole(2);
    return std::make_unique<ClampKernel>(count(), min_scalar ? 1 : count(),
                                         max_scalar ? 1 : count());
  }
  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t, int64_t n) const override {
    const auto* lo = reinterpret_cast<const T*>(inputs[0]);
    const auto* x = reinterpret_cast<const T*>(inputs[1]);
    const auto* hi = reinterpret_cast<const T*>(inputs[2]);
    auto* out = reinterpret_cast<T*>(outputs[0]);
    const bool min_array = !reads_whole(0), max_array = !reads_whole(2);
    if (!min_array && !max_array) {
      // Bounds that are neither NaN nor zero need no NaN or signed-zero
      // rules of their own: two compares per element.
      bool plain =
          !(lo[0] != lo[0] || hi[0] != hi[0] || lo[0] == T{} || hi[0] == T{});
      if (plain) {
        PlainLoop(lo[0], x, hi[0], out, n);
      } else {
        Loop<false, false>(lo, x, hi, out, n);
      }
    } else if (!min_array) {
      Loop<false, true>(lo, x, hi, out, n);
    } else if (!max_array) {
      Loop<true, false>(lo, x, hi, out, n);
    } else {
      Loop<true, true>(lo, x, hi, out, n);
    }
  }

 private:
  // clamp with scalar bounds that are not NaN or zero: a NaN operand
  // fails both compares and is returned itself, as max and min return it.
  KILN_VECTORIZED static void PlainLoop(T lo, const T* x, T hi, T* out,
                                        int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      T low = x[i] < lo ? lo : x[i];
      out[i] = low > hi ? hi : low;
    }
  }

  // clamp = min(max(operand, min), max), with max/min's NaN rules. Each
  // bound is an array or one element, with a loop for each case: an index
  // multiplied by a step known only at run time kept the compiler from
  // vectorizing (the clamps of JAX's erf expansion ran 8x slower so).
  template <bool kMinArray, bool kMaxArray>
  KILN_VECTORIZED static void Loop(const T* lo, const T* x, const T* hi, T* out,
                                   int64_t n) {
    const T lo_scalar = kMinArray ? T{} : lo[0];
    const T hi_scalar = kMaxArray ? T{} : hi[0];
    for (int64_t i = 0; i < n; ++i) {
      T low = ops::Maximum::Apply(x[i], kMinArray ? lo[i] : lo_scalar, 0);
      out[i] = ops::Minimum::Apply(low, kMaxArray ? hi[i] : hi_scalar, 0);
    }
  }
};

}  // namespace

std::unique_ptr<Kernel> MakeCompareKernel(CompareDirection direction,
                                          CompareType compare_type,
                                          ElementType type, int64_t count) {
  switch (direction) {
    case CompareDirection::kEQ:
      return MakeCompareFor<CompareDirection::kEQ>(compare_type, type, count);
    case CompareDirection::kNE:
      return MakeCompareFor<CompareDirection::kNE>(compare_type, type, count);
    case CompareDirection::kGE:
      return MakeCompareFor<CompareDirection::kGE>(compare_type, type, count);
    case CompareDirection::kGT:
      return MakeCompareFor<CompareDirection::kGT>(compare_type, type, count);
    case CompareDirection::kLE:
      return MakeCompareFor<CompareDirection::kLE>(compare_type, type, count);
    case CompareDirection::kLT:
      return MakeCompareFor<CompareDirection::kLT>(compare_type, type, count);
  }
  return nullptr;
}

std::unique_ptr<Kernel> MakeSelectKernel(int64_t element_bytes, int64_t count,
                                         bool pred_is_scalar) {
  switch (element_bytes) {
    case 1:
      return std::make_unique<SelectKernel<uint8_t>>(count, pred_is_scalar);
    case 2:
      return std::make_unique<SelectKernel<uint16_t>>(count, pred_is_scalar);
    case 4:
      return std::make_unique<SelectKernel<uint32_t>>(count, pred_is_scalar);
    case 8:
      return std::make_unique<SelectKernel<uint64_t>>(count, pred_is_scalar);
    case 16:
      return std::make_unique<SelectKernel<Bytes<16>>>(count, pred_is_scalar);
    default:
      return nullptr;
  }
}

std::unique_ptr<Kernel> MakeClampKernel(ElementType type, int64_t count,
                                        int64_t min_count, int64_t max_count) {
  std::unique_ptr<Kernel> kernel;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (requires(T a) { ops::Maximum::Apply(a, a, 0); } &&
                  !kIsComplex<T>) {
      kernel = std::make_unique<ClampKernel<T>>(count, min_count, max_count);
    }
  });
  return kernel;
}

}  // namespace kiln::exec
