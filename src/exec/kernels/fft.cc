#include "exec/kernels/fft.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "exec/executor.h"
#include "exec/kernels/element.h"
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

// In-place iterative radix-2 transform of a.size() (a power of two, whose
// forward twiddles are `twiddles`); `inverse` flips the sign of the
// exponent (no scaling). With `parallel`, long stages split their
// butterflies over the cores.
void Radix2(c128* a, int64_t n, const std::vector<c128>& twiddles, bool inverse,
            bool parallel) {
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int64_t length = 2; length <= n; length <<= 1) {
    const int64_t half = length / 2;
    const int64_t step = n / length;
    auto butterflies = [&](int64_t first, int64_t last) {
      for (int64_t b = first; b < last;) {
        int64_t start = b / half * length;
        int64_t k = b % half;
        for (; k < half && b < last; ++k, ++b) {
          c128 w = twiddles[k * step];
          if (inverse) w = std::conj(w);
          c128 u = a[start + k];
          c128 v = Multiply(a[start + k + half], w);
          a[start + k] = u + v;
          a[start + k + half] = u - v;
        }
      }
    };
    if (parallel && n / 2 >= kParallelButterflies) {
      ParallelFor(n / 2, kParallelButterflies / 4, butterflies);
    } else {
      butterflies(0, n / 2);
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
  std::vector<c128> twiddles;
  std::vector<c128> chirp;       // exp(-i pi k^2 / n)
  std::vector<c128> kernel_fft;  // FFT of conj(chirp), wrapped to m

  explicit LinePlan(int64_t length) : n(length) {
    if (n <= 1) return;
    if (IsPowerOfTwo(n)) {
      m = n;
      twiddles = Twiddles(n);
      return;
    }
    m = 1;
    while (m < 2 * n - 1) m <<= 1;
    twiddles = Twiddles(m);
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
    Radix2(kernel_fft.data(), m, twiddles, false, false);
  }

  // Transforms `a` (n elements) in place; `scratch` holds m elements.
  void Transform(c128* a, bool inverse, bool parallel,
                 std::vector<c128>& scratch) const {
    if (n <= 1) return;
    if (chirp.empty()) {
      Radix2(a, n, twiddles, inverse, parallel);
      return;
    }
    // The inverse uses the conjugate chirp, whose kernel's transform is
    // conj(kernel_fft[-k mod m]).
    scratch.assign(m, c128());
    for (int64_t k = 0; k < n; ++k) {
      scratch[k] = Multiply(a[k], inverse ? std::conj(chirp[k]) : chirp[k]);
    }
    Radix2(scratch.data(), m, twiddles, false, parallel);
    for (int64_t k = 0; k < m; ++k) {
      scratch[k] =
          Multiply(scratch[k], inverse ? std::conj(kernel_fft[(m - k) % m])
                                       : kernel_fft[k]);
    }
    Radix2(scratch.data(), m, twiddles, true, parallel);
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
