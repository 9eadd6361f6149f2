#include "exec/kernels/fft.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <utility>

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/vectorize.h"
#include "exec/parallel.h"

namespace kiln::exec {
namespace {

constexpr double kPi = 3.14159265358979323846;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// Below this many butterflies a stage runs on one thread.
constexpr int64_t kParallelButterflies = int64_t{1} << 15;

// exp(-2 pi i k / size) for k < size / 2, each computed directly (no
// recurrence, so the error does not accumulate).
std::vector<c128> Twiddles(int64_t size) {
  std::vector<c128> twiddles(size / 2);
  for (int64_t k = 0; k < size / 2; ++k) {
    double angle =
        -2 * kPi * static_cast<double>(k) / static_cast<double>(size);
    twiddles[k] = c128(std::cos(angle), std::sin(angle));
  }
  return twiddles;
}

// a * b without C's Annex G recovery of infinities (which makes each
// std::complex product a library call): the transform's inputs are
// finite, or their NaNs and infinities spread either way.
inline c128 Multiply(c128 a, c128 b) {
  return c128(a.real() * b.real() - a.imag() * b.imag(),
              a.real() * b.imag() + a.imag() * b.real());
}

// The twiddles of every stage of a radix-2 transform of length n, each
// stage's contiguous: the stage that combines halves of `half` elements
// uses exp(-+2 pi i k / (2 half)) for k < half, at offset half - 1. They
// are the values of Twiddles(n) (k * n / (2 half)), so the butterflies
// compute what they computed reading that table with a stride.
struct StageTwiddles {
  std::vector<c128> forward;  // an inverse negates their imaginary parts
  // The bit-reversal permutation's swaps (i < j), in the order the
  // transform makes them.
  std::vector<std::pair<int64_t, int64_t>> swaps;

  explicit StageTwiddles(int64_t n) {
    if (n < 2) return;
    for (int64_t i = 1, j = 0; i < n; ++i) {
      int64_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) {
        swaps.emplace_back(i, j);
      }
    }
    std::vector<c128> full = Twiddles(n);
    forward.resize(n - 1);
    for (int64_t half = 1; half < n; half <<= 1) {
      const int64_t step = n / (2 * half);
      for (int64_t k = 0; k < half; ++k) {
        forward[half - 1 + k] = full[k * step];
      }
    }
  }
};

// Four complex doubles, interleaved: one AVX-512 register, two AVX2 ones,
// four SSE2 ones. The butterflies are written in these vectors rather than
// left to the vectorizer: GCC recognizes the complex product in the plain
// loop and emits multiply-add-subtract instructions for it, which round
// once where the scalar loop rounds twice, -ffp-contract=off or not, so
// the AVX2 and AVX-512 versions gave other bits than the baseline one.
using Vector = double __attribute__((vector_size(64)));
using Lanes = int64_t __attribute__((vector_size(64)));
using UnalignedVector = double
    __attribute__((vector_size(64), aligned(alignof(double)), may_alias));
constexpr int64_t kComplexPerVector = 4;

// Butterflies k0 .. k1 - 1 of one block, one at a time: Butterflies' last
// few. Not inlined into Butterflies' versions, whose vectorizer would fuse
// the products with multiply-adds.
__attribute__((noinline)) void ScalarButterflies(double* lo, double* hi,
                                                 const double* w, double sign,
                                                 int64_t k0, int64_t k1) {
  for (int64_t k = k0; k < k1; ++k) {
    const double wr = w[2 * k], wi = sign * w[2 * k + 1];
    const double br = hi[2 * k], bi = hi[2 * k + 1];
    const double vr = br * wr - bi * wi;
    const double vi = br * wi + bi * wr;
    const double ur = lo[2 * k], ui = lo[2 * k + 1];
    lo[2 * k] = ur + vr;
    lo[2 * k + 1] = ui + vi;
    hi[2 * k] = ur - vr;
    hi[2 * k + 1] = ui - vi;
  }
}

// Four butterflies: l = u + b w, h = u - b w, each vector holding four
// complex numbers. b w is Multiply's product (br wr - bi wi, br wi + bi
// wr: the same roundings; sums' operands swapped where IEEE addition
// commutes), so every version (vectorize.h) gives the bits the scalar
// loop gives; `sign` -1 conjugates w (exactly).
#define KILN_FFT_INLINE inline __attribute__((always_inline))
KILN_FFT_INLINE void FourButterflies(const Vector& u, const Vector& b,
                                     const Vector& w, double sign, Vector& l,
                                     Vector& h) {
  const Lanes swap_pairs = {1, 0, 3, 2, 5, 4, 7, 6};
  const Lanes reals = {0, 0, 2, 2, 4, 4, 6, 6};
  const Lanes imaginaries = {1, 1, 3, 3, 5, 5, 7, 7};
  // Real lanes from the difference, imaginary ones from the sum.
  const Lanes combine = {0, 9, 2, 11, 4, 13, 6, 15};
  const Vector wr = __builtin_shuffle(w, reals);
  const Vector wi = __builtin_shuffle(w, imaginaries) * sign;
  const Vector p = b * wr;                                 // br wr, bi wr
  const Vector q = __builtin_shuffle(b, swap_pairs) * wi;  // bi wi, br wi
  const Vector v = __builtin_shuffle(p - q, p + q, combine);
  l = u + v;
  h = u - v;
}

// As expressions, not functions: a function returning a vector by value
// has another ABI in each of the kernels' versions.
#define KILN_FFT_LOAD(p) (*reinterpret_cast<const UnalignedVector*>(p))
#define KILN_FFT_STORE(p, v) (*reinterpret_cast<UnalignedVector*>(p) = (v))

// Butterflies [first, last) of the stage over halves of `half` >= 4
// complex numbers (interleaved real and imaginary parts): butterfly b
// pairs element k = b % half of block b / half with the one `half` after
// it.
KILN_VECTORIZED void Butterflies(double* a, int64_t half, const double* w,
                                 double sign, int64_t first, int64_t last) {
  for (int64_t b = first; b < last;) {
    const int64_t block = b / half;
    const int64_t k0 = b - block * half;
    const int64_t k1 = std::min(half, k0 + (last - b));
    double* lo = a + 2 * (block * 2 * half);
    double* hi = lo + 2 * half;
    int64_t k = k0;
    for (; k + kComplexPerVector <= k1; k += kComplexPerVector) {
      Vector l, h;
      // Copied out first: a reference would read them as aligned vectors.
      const Vector u = KILN_FFT_LOAD(lo + 2 * k);
      const Vector b = KILN_FFT_LOAD(hi + 2 * k);
      const Vector wv = KILN_FFT_LOAD(w + 2 * k);
      FourButterflies(u, b, wv, sign, l, h);
      KILN_FFT_STORE(lo + 2 * k, l);
      KILN_FFT_STORE(hi + 2 * k, h);
    }
    ScalarButterflies(lo, hi, w, sign, k, k1);
    b += k1 - k0;
  }
}

// The first two stages, whose blocks (2 and 4 complex numbers) are shorter
// than a vector: butterflies [first, last), four at a time from two
// vectors of whole blocks, regrouped into u's and b's and back.
// Four butterflies over 16 doubles at p whose u's and b's the shuffles
// `us` and `bs` gather from the two vectors there; `back0` and `back1`
// put the results l and h back in place.
KILN_FFT_INLINE void RegroupedButterflies(double* p, const Vector& w,
                                          double sign, const Lanes& us,
                                          const Lanes& bs, const Lanes& back0,
                                          const Lanes& back1) {
  const Vector x0 = KILN_FFT_LOAD(p), x1 = KILN_FFT_LOAD(p + 8);
  Vector l, h;
  FourButterflies(__builtin_shuffle(x0, x1, us), __builtin_shuffle(x0, x1, bs),
                  w, sign, l, h);
  KILN_FFT_STORE(p, __builtin_shuffle(l, h, back0));
  KILN_FFT_STORE(p + 8, __builtin_shuffle(l, h, back1));
}

KILN_VECTORIZED void ButterfliesOfOne(double* a, const double* w, double sign,
                                      int64_t first, int64_t last) {
  // x0 = [u0 b0 u1 b1], x1 = [u2 b2 u3 b3].
  const Lanes us = {0, 1, 4, 5, 8, 9, 12, 13};
  const Lanes bs = {2, 3, 6, 7, 10, 11, 14, 15};
  const Lanes first_half = {0, 1, 8, 9, 2, 3, 10, 11};
  const Lanes second_half = {4, 5, 12, 13, 6, 7, 14, 15};
  const Vector wv = {w[0], w[1], w[0], w[1], w[0], w[1], w[0], w[1]};
  int64_t b = first;
  for (; b + 4 <= last; b += 4) {
    RegroupedButterflies(a + 4 * b, wv, sign, us, bs, first_half, second_half);
  }
  for (; b < last; ++b) {
    ScalarButterflies(a + 4 * b, a + 4 * b + 2, w, sign, 0, 1);
  }
}

KILN_VECTORIZED void ButterfliesOfTwo(double* a, const double* w, double sign,
                                      int64_t first, int64_t last) {
  // x0 = [u0 u1 b0 b1], x1 = [u2 u3 b2 b3].
  const Lanes us = {0, 1, 2, 3, 8, 9, 10, 11};
  const Lanes bs = {4, 5, 6, 7, 12, 13, 14, 15};
  const Vector wv = {w[0], w[1], w[2], w[3], w[0], w[1], w[2], w[3]};
  int64_t b = first;
  if (b % 2 != 0 && b < last) {  // a block's second butterfly
    ScalarButterflies(a + 8 * (b / 2), a + 8 * (b / 2) + 4, w, sign, 1, 2);
    ++b;
  }
  for (; b + 4 <= last; b += 4) {
    RegroupedButterflies(a + 4 * b, wv, sign, us, bs, us, bs);
  }
  for (; b < last; ++b) {
    const int64_t block = b / 2, k = b % 2;
    ScalarButterflies(a + 8 * block, a + 8 * block + 4, w, sign, k, k + 1);
  }
}

// Butterflies [first, last) of the stage over halves of `half`.
void Stage(double* a, int64_t half, const double* w, double sign, int64_t first,
           int64_t last) {
  if (half == 1) {
    ButterfliesOfOne(a, w, sign, first, last);
  } else if (half == 2) {
    ButterfliesOfTwo(a, w, sign, first, last);
  } else {
    Butterflies(a, half, w, sign, first, last);
  }
}

#undef KILN_FFT_LOAD
#undef KILN_FFT_STORE
#undef KILN_FFT_INLINE

// In-place iterative radix-2 transform of n elements (a power of two,
// whose stage twiddles are `twiddles`); `inverse` flips the sign of the
// exponent (no scaling). With `parallel`, long stages split their
// butterflies over the cores.
void Radix2(c128* a, int64_t n, const StageTwiddles& twiddles, bool inverse,
            bool parallel) {
  for (const auto& [i, j] : twiddles.swaps) std::swap(a[i], a[j]);
  auto* values = reinterpret_cast<double*>(a);
  const std::vector<c128>& table = twiddles.forward;
  // The conjugate twiddles of an inverse: -1 * wi is exactly -wi.
  const double sign = inverse ? -1.0 : 1.0;
  for (int64_t half = 1; half < n; half <<= 1) {
    const auto* w = reinterpret_cast<const double*>(table.data() + half - 1);
    if (parallel && n / 2 >= kParallelButterflies) {
      ParallelFor(n / 2, kParallelButterflies / 4,
                  [&](int64_t first, int64_t last) {
                    Stage(values, half, w, sign, first, last);
                  });
    } else {
      Stage(values, half, w, sign, 0, n / 2);
    }
  }
}

// What one transform length needs, built once: its twiddles, and for a
// length that is not a power of two (Bluestein's chirp-z through a
// power-of-two convolution of length m) the chirp and the forward
// transform of the convolution's kernel.
struct LinePlan {
  int64_t n = 0;
  int64_t m = 0;  // the radix-2 length: n, or Bluestein's
  std::optional<StageTwiddles> twiddles;
  std::vector<c128> chirp;       // exp(-i pi k^2 / n)
  std::vector<c128> kernel_fft;  // FFT of conj(chirp), wrapped to m

  explicit LinePlan(int64_t length) : n(length) {
    if (n <= 1) return;
    if (IsPowerOfTwo(n)) {
      m = n;
      twiddles.emplace(n);
      return;
    }
    m = 1;
    while (m < 2 * n - 1) m <<= 1;
    twiddles.emplace(m);
    chirp.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      // k^2 reduced mod 2n for accuracy.
      int64_t k2 = (k * k) % (2 * n);
      double angle = -kPi * static_cast<double>(k2) / static_cast<double>(n);
      chirp[k] = c128(std::cos(angle), std::sin(angle));
    }
    kernel_fft.assign(m, c128());
    kernel_fft[0] = std::conj(chirp[0]);
    for (int64_t k = 1; k < n; ++k) {
      kernel_fft[k] = kernel_fft[m - k] = std::conj(chirp[k]);
    }
    Radix2(kernel_fft.data(), m, *twiddles, false, false);
  }

  // Transforms `a` (n elements) in place; `scratch` holds m elements.
  void Transform(c128* a, bool inverse, bool parallel,
                 std::vector<c128>& scratch) const {
    if (n <= 1) return;
    if (chirp.empty()) {
      Radix2(a, n, *twiddles, inverse, parallel);
      return;
    }
    // The inverse uses the conjugate chirp, whose kernel's transform is
    // conj(kernel_fft[-k mod m]).
    scratch.assign(m, c128());
    for (int64_t k = 0; k < n; ++k) {
      scratch[k] = Multiply(a[k], inverse ? std::conj(chirp[k]) : chirp[k]);
    }
    Radix2(scratch.data(), m, *twiddles, false, parallel);
    for (int64_t k = 0; k < m; ++k) {
      scratch[k] =
          Multiply(scratch[k], inverse ? std::conj(kernel_fft[(m - k) % m])
                                       : kernel_fft[k]);
    }
    Radix2(scratch.data(), m, *twiddles, true, parallel);
    for (int64_t k = 0; k < n; ++k) {
      a[k] = Multiply(scratch[k], inverse ? std::conj(chirp[k]) : chirp[k]) /
             static_cast<double>(m);
    }
  }
};

// Applies `fn(line, scratch, parallel)` to every line of `data` (dims,
// row-major) along `dim`. Lines split over the cores; a lone line's
// transform splits its own stages instead.
template <typename Fn>
void ForEachLine(std::vector<c128>& data, const std::vector<int64_t>& dims,
                 int64_t dim, Fn&& fn) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  const int64_t length = dims[dim];
  const int64_t stride = strides[dim];
  const int64_t count = NumElements(dims);
  if (count == 0 || length == 0) return;
  const int64_t lines = count / length;
  const bool one_line = lines == 1;
  // Strided lines (columns) are copied out and back kGroup at a time, so
  // that each row of the array is read a cache line at a time.
  constexpr int64_t kGroup = 8;
  auto run = [&](int64_t first, int64_t last) {
    std::vector<c128> block(stride == 1 ? 0 : length * kGroup), scratch;
    for (int64_t l = first; l < last;) {
      int64_t base = l / stride * length * stride + l % stride;
      if (stride == 1) {
        fn(data.data() + base, scratch, one_line);
        ++l;
        continue;
      }
      // Lines l .. l + group - 1: adjacent columns of one outer slice.
      int64_t group = std::min({kGroup, last - l, stride - l % stride});
      for (int64_t i = 0; i < length; ++i) {
        for (int64_t j = 0; j < group; ++j) {
          block[j * length + i] = data[base + i * stride + j];
        }
      }
      for (int64_t j = 0; j < group; ++j) {
        fn(block.data() + j * length, scratch, one_line);
      }
      for (int64_t i = 0; i < length; ++i) {
        for (int64_t j = 0; j < group; ++j) {
          data[base + i * stride + j] = block[j * length + i];
        }
      }
      l += group;
    }
  };
  if (one_line) {
    run(0, 1);
  } else {
    ParallelFor(lines, std::max<int64_t>(1, 4096 / length), run);
  }
}

// Element conversions between the operand's or result's type and the
// double-precision work array, split over the cores (f32 and c64, JAX's
// usual types, read and written directly).
void LoadAll(ElementType type, const std::byte* in, c128* data, int64_t count) {
  ParallelFor(count, 1 << 14, [&](int64_t first, int64_t last) {
    if (type == ElementType::kF32) {
      const float* values = reinterpret_cast<const float*>(in);
      for (int64_t i = first; i < last; ++i) data[i] = c128(values[i], 0);
    } else if (type == ElementType::kC64) {
      const c64* values = reinterpret_cast<const c64*>(in);
      for (int64_t i = first; i < last; ++i) data[i] = c128(values[i]);
    } else {
      for (int64_t i = first; i < last; ++i) data[i] = LoadComplex(type, in, i);
    }
  });
}

void StoreAll(ElementType type, const c128* data, std::byte* out, int64_t count,
              bool real_part) {
  ParallelFor(count, 1 << 14, [&](int64_t first, int64_t last) {
    if (type == ElementType::kC64 && !real_part) {
      c64* values = reinterpret_cast<c64*>(out);
      for (int64_t i = first; i < last; ++i) values[i] = c64(data[i]);
    } else if (type == ElementType::kF32 && real_part) {
      float* values = reinterpret_cast<float*>(out);
      for (int64_t i = first; i < last; ++i) {
        values[i] = static_cast<float>(data[i].real());
      }
    } else if (real_part) {
      for (int64_t i = first; i < last; ++i) {
        StoreDouble(type, out, i, data[i].real());
      }
    } else {
      for (int64_t i = first; i < last; ++i)
        StoreComplex(type, out, i, data[i]);
    }
  });
}

class FftKernel : public Kernel {
 public:
  FftKernel(FftKind kind, ArrayShape input, ArrayShape output,
            std::vector<int64_t> lengths)
      : kind_(kind),
        input_(std::move(input)),
        output_(std::move(output)),
        lengths_(std::move(lengths)) {}

  // The plan of each transformed dimension (lengths_ order), built on the
  // first run rather than at compile time: a long transform's twiddles
  // take milliseconds.
  const std::vector<LinePlan>& Plans() const {
    std::call_once(plans_once_, [&] {
      for (int64_t length : lengths_) plans_.emplace_back(length);
    });
    return plans_;
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const std::byte* in = ctx.slot(step.inputs[0]);
    std::byte* out = ctx.slot(step.outputs[0]);
    int64_t rank = input_.rank();
    int64_t fft_rank = static_cast<int64_t>(lengths_.size());
    // Work on the complex array of the "full" side: the output for FFT,
    // IFFT and RFFT-before-truncation; the real side for IRFFT.
    std::vector<int64_t> dims = input_.dims;
    if (kind_ == FftKind::kIrfft) dims.back() = lengths_.back();
    std::vector<c128> data(NumElements(dims));
    const std::vector<LinePlan>& plans = Plans();
    // The plan of array dimension d.
    auto plan_of = [&](int64_t d) -> const LinePlan& {
      return plans[d - (rank - fft_rank)];
    };
    for (int64_t d = rank - fft_rank; d < rank; ++d) {
      if (plan_of(d).n != dims[d]) {
        return InvalidArgumentError("fft_length ", plan_of(d).n,
                                    " does not match dimension ", d, " (",
                                    dims[d], ")");
      }
    }
    if (kind_ == FftKind::kIrfft) {
      // Rebuild the full Hermitian spectrum of the last dimension.
      int64_t full = lengths_.back();
      int64_t half = input_.dims.back();
      int64_t rows = full == 0 ? 0 : static_cast<int64_t>(data.size()) / full;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t k = 0; k < full; ++k) {
          data[r * full + k] =
              k < half ? LoadComplex(input_.type, in, r * half + k) : c128();
        }
      }
      // Inverse transforms of the other dimensions first.
      for (int64_t d = rank - fft_rank; d < rank - 1; ++d) {
        const LinePlan& plan = plan_of(d);
        ForEachLine(data, dims, d,
                    [&](c128* line, std::vector<c128>& scratch, bool one) {
                      plan.Transform(line, true, one, scratch);
                      for (int64_t k = 0; k < plan.n; ++k) {
                        line[k] /= static_cast<double>(plan.n);
                      }
                    });
      }
      // The last dimension: X[full - k] = conj(X[k]).
      const LinePlan& last = plan_of(rank - 1);
      ForEachLine(data, dims, rank - 1,
                  [&](c128* line, std::vector<c128>& scratch, bool one) {
                    for (int64_t k = half; k < full; ++k) {
                      line[k] =
                          full - k < half ? std::conj(line[full - k]) : c128();
                    }
                    last.Transform(line, true, one, scratch);
                    for (int64_t k = 0; k < full; ++k) {
                      line[k] /= static_cast<double>(full);
                    }
                  });
      StoreAll(output_.type, data.data(), out,
               static_cast<int64_t>(data.size()), /*real_part=*/true);
      return OkStatus();
    }
    LoadAll(input_.type, in, data.data(), static_cast<int64_t>(data.size()));
    bool inverse = kind_ == FftKind::kIfft;
    // RFFT: the last dimension first (the real side), then the others,
    // over only the half+1 columns the result keeps.
    auto transform = [&](std::vector<c128>& values,
                         const std::vector<int64_t>& shape, int64_t d) {
      const LinePlan& plan = plan_of(d);
      ForEachLine(values, shape, d,
                  [&](c128* line, std::vector<c128>& scratch, bool one) {
                    plan.Transform(line, inverse, one, scratch);
                    if (inverse) {
                      for (int64_t k = 0; k < plan.n; ++k) {
                        line[k] /= static_cast<double>(plan.n);
                      }
                    }
                  });
    };
    if (kind_ == FftKind::kRfft) {
      transform(data, dims, rank - 1);
      int64_t full = dims.back();
      int64_t half = output_.dims.back();
      int64_t rows = full == 0 ? 0 : static_cast<int64_t>(data.size()) / full;
      std::vector<c128> kept(rows * half);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t k = 0; k < half; ++k)
          kept[r * half + k] = data[r * full + k];
      }
      for (int64_t d = rank - 2; d >= rank - fft_rank; --d) {
        transform(kept, output_.dims, d);
      }
      StoreAll(output_.type, kept.data(), out,
               static_cast<int64_t>(kept.size()), /*real_part=*/false);
      return OkStatus();
    }
    for (int64_t d = rank - 1; d >= rank - fft_rank; --d) {
      transform(data, dims, d);
    }
    StoreAll(output_.type, data.data(), out, static_cast<int64_t>(data.size()),
             /*real_part=*/false);
    return OkStatus();
  }

 private:
  FftKind kind_;
  ArrayShape input_, output_;
  std::vector<int64_t> lengths_;
  mutable std::once_flag plans_once_;
  mutable std::vector<LinePlan> plans_;
};

}  // namespace

std::unique_ptr<Kernel> MakeFftKernel(FftKind kind, ArrayShape input,
                                      ArrayShape output,
                                      std::vector<int64_t> lengths) {
  return std::make_unique<FftKernel>(kind, std::move(input), std::move(output),
                                     std::move(lengths));
}

}  // namespace kiln::exec
