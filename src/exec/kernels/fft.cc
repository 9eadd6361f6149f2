#include "exec/kernels/fft.h"

#include <cmath>

#include "exec/executor.h"
#include "exec/kernels/element.h"

namespace kiln::exec {
namespace {

constexpr double kPi = 3.14159265358979323846;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// In-place iterative radix-2 transform; `inverse` flips the sign of the
// exponent (no scaling).
void Radix2(std::vector<c128>& a, bool inverse) {
  int64_t n = static_cast<int64_t>(a.size());
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int64_t length = 2; length <= n; length <<= 1) {
    double angle = 2 * kPi / static_cast<double>(length) * (inverse ? 1 : -1);
    for (int64_t start = 0; start < n; start += length) {
      for (int64_t k = 0; k < length / 2; ++k) {
        // Twiddles computed directly keep the error from accumulating.
        c128 w(std::cos(angle * k), std::sin(angle * k));
        c128 u = a[start + k];
        c128 v = a[start + k + length / 2] * w;
        a[start + k] = u + v;
        a[start + k + length / 2] = u - v;
      }
    }
  }
}

// One transform of any length: radix-2 when possible, else Bluestein's
// chirp-z through a power-of-two convolution.
void Transform(std::vector<c128>& a, bool inverse) {
  int64_t n = static_cast<int64_t>(a.size());
  if (n <= 1) return;
  if (IsPowerOfTwo(n)) {
    Radix2(a, inverse);
    return;
  }
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  double sign = inverse ? 1 : -1;
  std::vector<c128> chirp(n);
  for (int64_t k = 0; k < n; ++k) {
    // exp(sign * i * pi * k^2 / n), with k^2 reduced mod 2n for accuracy.
    int64_t k2 = (k * k) % (2 * n);
    double angle =
        sign * kPi * static_cast<double>(k2) / static_cast<double>(n);
    chirp[k] = c128(std::cos(angle), std::sin(angle));
  }
  std::vector<c128> x(m), y(m);
  for (int64_t k = 0; k < n; ++k) x[k] = a[k] * chirp[k];
  y[0] = std::conj(chirp[0]);
  for (int64_t k = 1; k < n; ++k) y[k] = y[m - k] = std::conj(chirp[k]);
  Radix2(x, false);
  Radix2(y, false);
  for (int64_t k = 0; k < m; ++k) x[k] *= y[k];
  Radix2(x, true);
  for (int64_t k = 0; k < n; ++k)
    a[k] = x[k] * chirp[k] / static_cast<double>(m);
}

// Applies `fn(line)` to every line of `data` (dims, row-major) along `dim`.
template <typename Fn>
void ForEachLine(std::vector<c128>& data, const std::vector<int64_t>& dims,
                 int64_t dim, Fn&& fn) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t length = dims[dim];
  int64_t stride = strides[dim];
  int64_t count = NumElements(dims);
  if (count == 0 || length == 0) return;
  std::vector<c128> line(length);
  int64_t outer = count / (length * stride);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t s = 0; s < stride; ++s) {
      int64_t base = o * length * stride + s;
      for (int64_t i = 0; i < length; ++i) line[i] = data[base + i * stride];
      fn(line);
      for (int64_t i = 0; i < length; ++i) data[base + i * stride] = line[i];
    }
  }
}

class FftKernel : public Kernel {
 public:
  FftKernel(FftKind kind, ArrayShape input, ArrayShape output,
            std::vector<int64_t> lengths)
      : kind_(kind),
        input_(std::move(input)),
        output_(std::move(output)),
        lengths_(std::move(lengths)) {}

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
        ForEachLine(data, dims, d, [](std::vector<c128>& line) {
          Transform(line, true);
          for (c128& v : line) v /= static_cast<double>(line.size());
        });
      }
      // The last dimension: X[full - k] = conj(X[k]).
      ForEachLine(data, dims, rank - 1, [&](std::vector<c128>& line) {
        for (int64_t k = half; k < full; ++k) {
          line[k] = full - k < half ? std::conj(line[full - k]) : c128();
        }
        Transform(line, true);
        for (c128& v : line) v /= static_cast<double>(full);
      });
      for (size_t i = 0; i < data.size(); ++i) {
        StoreDouble(output_.type, out, static_cast<int64_t>(i), data[i].real());
      }
      return OkStatus();
    }
    for (size_t i = 0; i < data.size(); ++i) {
      data[i] = LoadComplex(input_.type, in, static_cast<int64_t>(i));
    }
    bool inverse = kind_ == FftKind::kIfft;
    // RFFT: the last dimension first (the real side), then the others.
    for (int64_t step_d = 0; step_d < fft_rank; ++step_d) {
      int64_t d = rank - 1 - step_d;
      ForEachLine(data, dims, d, [&](std::vector<c128>& line) {
        Transform(line, inverse);
        if (inverse) {
          for (c128& v : line) v /= static_cast<double>(line.size());
        }
      });
    }
    if (kind_ == FftKind::kRfft) {
      int64_t full = dims.back();
      int64_t half = output_.dims.back();
      int64_t rows = full == 0 ? 0 : static_cast<int64_t>(data.size()) / full;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t k = 0; k < half; ++k) {
          StoreComplex(output_.type, out, r * half + k, data[r * full + k]);
        }
      }
      return OkStatus();
    }
    for (size_t i = 0; i < data.size(); ++i) {
      StoreComplex(output_.type, out, static_cast<int64_t>(i), data[i]);
    }
    return OkStatus();
  }

 private:
  FftKind kind_;
  ArrayShape input_, output_;
  std::vector<int64_t> lengths_;
};

}  // namespace

std::unique_ptr<Kernel> MakeFftKernel(FftKind kind, ArrayShape input,
                                      ArrayShape output,
                                      std::vector<int64_t> lengths) {
  return std::make_unique<FftKernel>(kind, std::move(input), std::move(output),
                                     std::move(lengths));
}

}  // namespace kiln::exec
