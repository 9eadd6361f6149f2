// iota and reduce_precision.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "exec/executor.h"
#include "exec/kernels/data_movement.h"
#include "exec/kernels/element.h"
#include "exec/kernels/elementwise_kernel.h"

namespace kiln::exec {
namespace {

class IotaKernel : public ElementwiseKernel {
 public:
  IotaKernel(const ArrayShape& result, int64_t dimension)
      : ElementwiseKernel(result.num_elements(), {},
                          {ir::StorageBytes(result.type)}),
        type_(result.type) {
    size_ = result.dims.empty() ? 1 : result.dims[dimension];
    inner_ = 1;
    for (int64_t d = dimension + 1; d < result.rank(); ++d)
      inner_ *= result.dims[d];
  }
  void RunRange(const std::byte* const*, std::byte* const* outputs,
                int64_t begin, int64_t n) const override {
    std::byte* out = outputs[0];
    bool native = DispatchNative(type_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kIsInt<T> || kIsFloat<T>) {
        if (ir::BitWidth(type_) == static_cast<int>(sizeof(T) * 8)) {
          FillTyped(reinterpret_cast<T*>(out), begin, n);
          return;
        }
      }
      for (int64_t i = 0; i < n; ++i)
        StoreInt(type_, out, i, ((begin + i) / inner_) % size_);
    });
    if (!native) {
      for (int64_t i = 0; i < n; ++i)
        StoreInt(type_, out, i, ((begin + i) / inner_) % size_);
    }
  }
  int cost_per_element() const override { return 4; }

 private:
  // Elements [begin, begin + n) without a division per element: the index
  // advances by runs of `inner_` equal values (along the last dimension,
  // runs of one: a count that wraps at `size_`).
  template <typename T>
  void FillTyped(T* typed, int64_t begin, int64_t n) const {
    int64_t within = begin % inner_;
    int64_t value = (begin / inner_) % size_;
    int64_t i = 0;
    if (inner_ == 1) {
      while (i < n) {
        const int64_t run = std::min(n - i, size_ - value);
        for (int64_t k = 0; k < run; ++k) {
          typed[i + k] = static_cast<T>(value + k);
        }
        i += run;
        value = 0;
      }
      return;
    }
    while (i < n) {
      const int64_t run = std::min(n - i, inner_ - within);
      std::fill_n(typed + i, run, static_cast<T>(value));
      i += run;
      within = 0;
      if (++value == size_) value = 0;
    }
  }

  ElementType type_;
  int64_t size_ = 1;
  int64_t inner_ = 1;
};

template <typename T, typename Bits>
T ReducePrecision(T value, int exponent_bits, int mantissa_bits) {
  constexpr int kSourceMantissa = sizeof(T) == 4 ? 23 : 52;
  constexpr int kSourceExponent = sizeof(T) == 4 ? 8 : 11;
  constexpr int kBits = sizeof(T) * 8;
  if (std::isnan(value)) {
    // Without mantissa bits a NaN cannot stay a NaN: it becomes infinity.
    if (mantissa_bits > 0) return value;
    return std::signbit(value) ? -std::numeric_limits<T>::infinity()
                               : std::numeric_limits<T>::infinity();
  }
  Bits x;
  std::memcpy(&x, &value, sizeof(T));
  if (mantissa_bits < kSourceMantissa) {
    // Round to nearest even at the new last mantissa bit.
    Bits last_bit = Bits{1} << (kSourceMantissa - mantissa_bits);
    Bits bias = (last_bit >> 1) - 1 + ((x & last_bit) ? 1 : 0);
    x = (x + bias) & ~(last_bit - 1);
  }
  if (exponent_bits < kSourceExponent) {
    Bits sign = Bits{1} << (kBits - 1);
    Bits exponent_mask = ((Bits{1} << kSourceExponent) - 1) << kSourceMantissa;
    Bits bias = (Bits{1} << (kSourceExponent - 1)) - 1;
    Bits reduced_bias = (Bits{1} << (exponent_bits - 1)) - 1;
    Bits max_exponent = bias + reduced_bias;
    Bits min_exponent = bias - reduced_bias;
    Bits exponent = x & exponent_mask;
    if (exponent > (max_exponent << kSourceMantissa)) {
      x = (x & sign) | exponent_mask;  // infinity
    } else if (exponent <= (min_exponent << kSourceMantissa)) {
      x = x & sign;  // zero
    }
  }
  T result;
  std::memcpy(&result, &x, sizeof(T));
  return result;
}

template <typename T, typename Bits>
class ReducePrecisionKernel : public Kernel {
 public:
  ReducePrecisionKernel(int64_t count, int exponent_bits, int mantissa_bits)
      : count_(count),
        exponent_bits_(exponent_bits),
        mantissa_bits_(mantissa_bits) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    for (int64_t i = 0; i < count_; ++i) {
      out[i] = ReducePrecision<T, Bits>(in[i], exponent_bits_, mantissa_bits_);
    }
    return OkStatus();
  }

 private:
  int64_t count_;
  int exponent_bits_, mantissa_bits_;
};

}  // namespace

std::unique_ptr<Kernel> MakeIotaKernel(const ArrayShape& result,
                                       int64_t dimension) {
  return std::make_unique<IotaKernel>(result, dimension);
}

std::unique_ptr<Kernel> MakeReducePrecisionKernel(ElementType type,
                                                  int64_t count,
                                                  int exponent_bits,
                                                  int mantissa_bits) {
  if (type == ElementType::kF32) {
    return std::make_unique<ReducePrecisionKernel<float, uint32_t>>(
        count, exponent_bits, mantissa_bits);
  }
  if (type == ElementType::kF64) {
    return std::make_unique<ReducePrecisionKernel<double, uint64_t>>(
        count, exponent_bits, mantissa_bits);
  }
  return nullptr;
}

}  // namespace kiln::exec
