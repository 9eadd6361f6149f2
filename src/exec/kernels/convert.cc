#include "exec/kernels/convert.h"

#include <cmath>
#include <limits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KILN_HAVE_F16C_PATH 1
#endif

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/elementwise_kernel.h"
#include "exec/kernels/vectorize.h"

namespace kiln::exec {
namespace {

// One element of a native type converted to another native type.
template <typename To, typename From>
To ConvertValue(From value) {
  if constexpr (std::is_same_v<To, bool> && kIsComplex<From>) {
    // Complex to bool (like complex to any real type) reads the real part.
    return value.real() != 0;
  } else if constexpr (std::is_same_v<To, bool>) {
    return value != From{};
  } else if constexpr (std::is_same_v<From, bool>) {
    return static_cast<To>(value ? 1 : 0);
  } else if constexpr (kIsComplex<From>) {
    if constexpr (kIsComplex<To>) {
      return To(value.real(), value.imag());
    } else {
      return ConvertValue<To>(value.real());
    }
  } else if constexpr (kIsComplex<To>) {
    return To(static_cast<typename To::value_type>(value), 0);
  } else if constexpr (kIsInt<To> && kIsFloat<From>) {
    // NaN to 0; saturate to the destination range.
    if (std::isnan(value)) return 0;
    constexpr double kMin = static_cast<double>(std::numeric_limits<To>::min());
    // 2^bits (or 2^(bits-1)) exactly: the first value out of range.
    constexpr double kLimit =
        static_cast<double>(std::numeric_limits<To>::max() / 2 + 1) * 2.0;
    double wide = static_cast<double>(value);
    if (wide <= kMin) return std::numeric_limits<To>::min();
    if (wide >= kLimit) return std::numeric_limits<To>::max();
    return static_cast<To>(value);
  } else {
    return static_cast<To>(value);
  }
}

template <typename To, typename From>
KILN_VECTORIZED void ConvertLoop(const From* in, To* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = ConvertValue<To>(in[i]);
}

// The bfloat16 conversions narrow-float compute goes through, vectorized.
KILN_VECTORIZED void BF16ToFloatLoop(const uint16_t* in, float* out,
                                     int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = BF16ToFloat(in[i]);
}
KILN_VECTORIZED void FloatToBF16Loop(const float* in, uint16_t* out,
                                     int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = FloatToBF16(in[i]);
}

// f16 <-> f32, the conversions every f16 op computes through (in f32).
// With F16C (every CPU with AVX2 has it) eight at a time in hardware, which
// rounds to nearest even as FloatToHalf does and gives the same bits for
// every input but a signaling NaN half, which it reads as quiet
// (ElementTest.HalfArrayConversionsMatchElementByElement); else the
// element conversions, a call and a few branches each (an f16 add of 1 Mi
// elements took 28x XLA:CPU's time so).
#ifdef KILN_HAVE_F16C_PATH
__attribute__((target("avx,f16c"))) void HalfToFloatF16c(const uint16_t* in,
                                                          float* out,
                                                          int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < count; ++i) out[i] = _cvtsh_ss(in[i]);
}

__attribute__((target("avx,f16c"))) void FloatToHalfF16c(const float* in,
                                                          uint16_t* out,
                                                          int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h =
        _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < count; ++i) out[i] = _cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT);
}

bool HasF16c() {
  static const bool has = __builtin_cpu_supports("f16c") &&
                          __builtin_cpu_supports("avx");
  return has;
}
#endif

void HalfToFloatArray(const uint16_t* in, float* out, int64_t count) {
#ifdef KILN_HAVE_F16C_PATH
  if (HasF16c()) {
    HalfToFloatF16c(in, out, count);
    return;
  }
#endif
  for (int64_t i = 0; i < count; ++i) out[i] = HalfToFloat(in[i]);
}

void FloatToHalfArray(const float* in, uint16_t* out, int64_t count) {
#ifdef KILN_HAVE_F16C_PATH
  if (HasF16c()) {
    FloatToHalfF16c(in, out, count);
    return;
  }
#endif
  for (int64_t i = 0; i < count; ++i) out[i] = FloatToHalf(in[i]);
}

// Slow path for types without a native C++ type (and sub-byte integers).
void ConvertGeneric(ElementType from, const std::byte* in, ElementType to,
                    std::byte* out, int64_t count) {
  bool to_float = ir::IsFloat(to) || ir::IsComplex(to);
  for (int64_t i = 0; i < count; ++i) {
    if (ir::IsComplex(from) && ir::IsComplex(to)) {
      StoreComplex(to, out, i, LoadComplex(from, in, i));
    } else if (ir::IsComplex(from) && ir::IsBool(to)) {
      StoreInt(to, out, i, LoadComplex(from, in, i).real() != 0);
    } else if ((ir::IsInteger(from) || ir::IsBool(from)) && !to_float &&
               from != ElementType::kUI64) {
      StoreInt(to, out, i, LoadInt(from, in, i));
    } else if (from == ElementType::kUI64 && !to_float) {
      StoreInt(to, out, i, LoadInt(from, in, i));
    } else {
      StoreDouble(to, out, i, LoadDouble(from, in, i));
    }
  }
}

bool IsSubByteInt(ElementType type) {
  return (ir::IsInteger(type)) && ir::BitWidth(type) < 8;
}

}  // namespace

void ConvertElements(ElementType from, const std::byte* input, ElementType to,
                     std::byte* output, int64_t count) {
  // Fast paths for the conversions narrow-float compute goes through.
  if (from == ElementType::kF16 && to == ElementType::kF32) {
    HalfToFloatArray(reinterpret_cast<const uint16_t*>(input),
                     reinterpret_cast<float*>(output), count);
    return;
  }
  if (from == ElementType::kF32 && to == ElementType::kF16) {
    FloatToHalfArray(reinterpret_cast<const float*>(input),
                     reinterpret_cast<uint16_t*>(output), count);
    return;
  }
  if (from == ElementType::kBF16 && to == ElementType::kF32) {
    BF16ToFloatLoop(reinterpret_cast<const uint16_t*>(input),
                    reinterpret_cast<float*>(output), count);
    return;
  }
  if (from == ElementType::kF32 && to == ElementType::kBF16) {
    FloatToBF16Loop(reinterpret_cast<const float*>(input),
                    reinterpret_cast<uint16_t*>(output), count);
    return;
  }
  bool native = HasNativeType(from) && HasNativeType(to) &&
                !IsSubByteInt(from) && !IsSubByteInt(to) &&
                from != ElementType::kIndex && to != ElementType::kIndex;
  if (!native) {
    ConvertGeneric(from, input, to, output, count);
    return;
  }
  DispatchNative(from, [&](auto from_tag) {
    using From = decltype(from_tag);
    DispatchNative(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      if constexpr (std::is_same_v<From, bool>) {
        // Read as the bytes they are (0 or 1 in canonical storage): GCC
        // loads a bool through a branch per element (the predicate
        // mispredicts on a one_hot's random indices) and vectorizes bytes.
        ConvertLoop<To, uint8_t>(reinterpret_cast<const uint8_t*>(input),
                                 reinterpret_cast<To*>(output), count);
      } else {
        ConvertLoop<To, From>(reinterpret_cast<const From*>(input),
                              reinterpret_cast<To*>(output), count);
      }
    });
  });
}

namespace {

class ConvertKernel : public ElementwiseKernel {
 public:
  ConvertKernel(ElementType from, ElementType to, int64_t count)
      : ElementwiseKernel(count, {ir::StorageBytes(from)},
                          {ir::StorageBytes(to)}),
        from_(from),
        to_(to) {}
  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t, int64_t n) const override {
    ConvertElements(from_, inputs[0], to_, outputs[0], n);
  }

 private:
  ElementType from_, to_;
};

// Bits of element `index` (the logical width, zero-extended).
uint64_t LoadBits(ElementType type, const std::byte* data, int64_t index) {
  int bytes = ir::StorageBytes(type);
  uint64_t raw = 0;
  std::memcpy(&raw, data + index * bytes, bytes);
  int bits = ir::BitWidth(type);
  if (bits < 64) raw &= (uint64_t{1} << bits) - 1;
  return raw;
}

void StoreBits(ElementType type, std::byte* data, int64_t index, uint64_t raw) {
  int bits = ir::BitWidth(type);
  int bytes = ir::StorageBytes(type);
  if (bits < 64) raw &= (uint64_t{1} << bits) - 1;
  if (ir::IsBool(type)) raw = raw != 0;
  // Signed sub-byte integers are stored sign-extended.
  if (ir::IsSignedInteger(type) && bits < bytes * 8 &&
      ((raw >> (bits - 1)) & 1)) {
    raw |= ~uint64_t{0} << bits;
  }
  std::memcpy(data + index * bytes, &raw, bytes);
}

class BitcastConvertKernel : public Kernel {
 public:
  BitcastConvertKernel(ElementType from, ElementType to, int64_t input_count)
      : from_(from), to_(to), input_count_(input_count) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const std::byte* in = ctx.slot(step.inputs[0]);
    std::byte* out = ctx.slot(step.outputs[0]);
    int from_bits = ir::BitWidth(from_);
    int to_bits = ir::BitWidth(to_);
    bool plain = from_bits == ir::StorageBytes(from_) * 8 &&
                 to_bits == ir::StorageBytes(to_) * 8;
    if (plain && !ir::IsBool(to_)) {
      int64_t bytes = input_count_ * ir::StorageBytes(from_);
      if (bytes > 0) std::memcpy(out, in, bytes);
      return OkStatus();
    }
    if (from_bits == to_bits) {
      for (int64_t i = 0; i < input_count_; ++i) {
        StoreBits(to_, out, i, LoadBits(from_, in, i));
      }
    } else if (from_bits > to_bits) {
      // Each input element splits into several outputs, low bits first.
      int ratio = from_bits / to_bits;
      for (int64_t i = 0; i < input_count_; ++i) {
        uint64_t raw = LoadBits(from_, in, i);
        for (int j = 0; j < ratio; ++j) {
          StoreBits(to_, out, i * ratio + j, raw >> (j * to_bits));
        }
      }
    } else {
      int ratio = to_bits / from_bits;
      for (int64_t i = 0; i < input_count_ / ratio; ++i) {
        uint64_t raw = 0;
        for (int j = 0; j < ratio; ++j) {
          raw |= LoadBits(from_, in, i * ratio + j) << (j * from_bits);
        }
        StoreBits(to_, out, i, raw);
      }
    }
    return OkStatus();
  }

 private:
  ElementType from_, to_;
  int64_t input_count_;
};

}  // namespace

std::unique_ptr<Kernel> MakeConvertKernel(ElementType from, ElementType to,
                                          int64_t count) {
  return std::make_unique<ConvertKernel>(from, to, count);
}

std::unique_ptr<Kernel> MakeBitcastConvertKernel(ElementType from,
                                                 ElementType to,
                                                 int64_t input_count) {
  return std::make_unique<BitcastConvertKernel>(from, to, input_count);
}

}  // namespace kiln::exec
