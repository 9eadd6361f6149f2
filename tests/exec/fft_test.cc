// The FFT kernel (DUCC underneath, exec/kernels/fft.cc) against a direct
// DFT in long double: lengths of every kind (powers of two, mixed radices,
// primes small and large), real and complex, single and double precision,
// 1 to 3 dimensions; the same bits at 1, 2 and 4 threads; no thread of the
// library's own.
#include "exec/kernels/fft.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "exec/executor.h"
#include "exec/parallel.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;
using Wide = std::complex<long double>;
using exec::ArrayShape;

// A transform run through the kernel: `in` holds the operand's bytes.
std::vector<std::byte> RunFft(exec::FftKind kind, const ArrayShape& input,
                              const ArrayShape& output,
                              const std::vector<int64_t>& lengths,
                              std::vector<std::byte>& in) {
  auto kernel = exec::MakeFftKernel(kind, input, output, lengths);
  std::vector<std::byte> out(exec::NumElements(output.dims) *
                             ir::StorageBytes(output.type));
  std::vector<exec::Slot> slots(2);
  slots[0].shape = input;
  slots[1].shape = output;
  exec::RunContext ctx(slots, exec::RunOptions{});
  ctx.set_slot(0, in.data());
  ctx.set_slot(1, out.data());
  exec::Step step;
  step.inputs = {0};
  step.outputs = {1};
  EXPECT_OK(kernel->Run(ctx, step));
  return out;
}

template <typename R>
std::vector<std::byte> Bytes(const std::vector<R>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(R));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename R>
std::vector<R> Values(const std::vector<std::byte>& bytes) {
  std::vector<R> values(bytes.size() / sizeof(R));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// The direct DFT of a row-major array `x` of `dims` over its last
// `rank` dimensions (sign -1 forward, +1 inverse; unscaled).
std::vector<Wide> DirectDft(const std::vector<Wide>& x,
                            const std::vector<int64_t>& dims, int64_t rank,
                            int sign) {
  std::vector<Wide> result = x;
  const int64_t n_dims = static_cast<int64_t>(dims.size());
  for (int64_t d = n_dims - rank; d < n_dims; ++d) {
    int64_t inner = 1;
    for (int64_t e = d + 1; e < n_dims; ++e) inner *= dims[e];
    const int64_t length = dims[d];
    const int64_t outer = static_cast<int64_t>(result.size()) / (length * inner);
    std::vector<Wide> roots(length), next(result.size());
    for (int64_t j = 0; j < length; ++j) {
      roots[j] = std::polar(1.0L, sign * 2 * M_PIl * j / length);
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t k = 0; k < length; ++k) {
          Wide sum = 0;
          for (int64_t t = 0; t < length; ++t) {
            sum += result[(o * length + t) * inner + i] *
                   roots[(k * t) % length];
          }
          next[(o * length + k) * inner + i] = sum;
        }
      }
    }
    result = std::move(next);
  }
  return result;
}

// max |got - want| / max |want|, the FFT's normwise error.
template <typename C>
long double RelativeError(const std::vector<C>& got,
                          const std::vector<Wide>& want) {
  long double error = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    error = std::max(error, std::abs(Wide(got[i]) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return scale == 0 ? error : error / scale;
}

template <typename R>
void CheckEveryKind(const std::vector<int64_t>& dims, int64_t rank) {
  using C = std::complex<R>;
  const bool f64 = sizeof(R) == 8;
  const ElementType real_type = f64 ? ElementType::kF64 : ElementType::kF32;
  const ElementType complex_type = f64 ? ElementType::kC128 : ElementType::kC64;
  // Normwise, an FFT's error grows with log n; 40 eps covers every length
  // here with room, and a wrong twiddle or bin is off by far more.
  const long double tolerance = 40 * std::numeric_limits<R>::epsilon();
  const std::vector<int64_t> lengths(dims.end() - rank, dims.end());
  SCOPED_TRACE(::testing::Message() << (f64 ? "f64 " : "f32 ") << "dims "
                                    << ::testing::PrintToString(dims)
                                    << " rank " << rank);
  std::mt19937 rng(static_cast<uint32_t>(dims.back() * 31 + rank));
  std::normal_distribution<R> normal;
  const int64_t count = exec::NumElements(dims);
  std::vector<C> z(count);
  std::vector<R> r(count);
  for (int64_t i = 0; i < count; ++i) {
    z[i] = C(normal(rng), normal(rng));
    r[i] = normal(rng);
  }
  std::vector<Wide> wide_z(z.begin(), z.end()), wide_r(r.begin(), r.end());
  long double scale = 1;
  for (int64_t n : lengths) scale *= n;

  // FFT and IFFT.
  std::vector<std::byte> z_bytes = Bytes(z);
  ArrayShape complex_shape{complex_type, dims};
  std::vector<C> forward = Values<C>(RunFft(
      exec::FftKind::kFft, complex_shape, complex_shape, lengths, z_bytes));
  EXPECT_LE(RelativeError(forward, DirectDft(wide_z, dims, rank, -1)),
            tolerance)
      << "FFT";
  std::vector<C> inverse = Values<C>(RunFft(
      exec::FftKind::kIfft, complex_shape, complex_shape, lengths, z_bytes));
  std::vector<Wide> want_inverse = DirectDft(wide_z, dims, rank, +1);
  for (Wide& w : want_inverse) w /= scale;
  EXPECT_LE(RelativeError(inverse, want_inverse), tolerance) << "IFFT";

  // RFFT: the first half + 1 bins of the last dimension.
  std::vector<int64_t> half_dims = dims;
  half_dims.back() = dims.back() / 2 + 1;
  std::vector<std::byte> r_bytes = Bytes(r);
  std::vector<C> real_forward = Values<C>(
      RunFft(exec::FftKind::kRfft, ArrayShape{real_type, dims},
             ArrayShape{complex_type, half_dims}, lengths, r_bytes));
  std::vector<Wide> full = DirectDft(wide_r, dims, rank, -1), kept;
  const int64_t rows = count / dims.back();
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t k = 0; k < half_dims.back(); ++k) {
      kept.push_back(full[row * dims.back() + k]);
    }
  }
  EXPECT_LE(RelativeError(real_forward, kept), tolerance) << "RFFT";

  // IRFFT of that spectrum gives the real array back.
  std::vector<C> spectrum(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) spectrum[i] = C(kept[i]);
  std::vector<std::byte> spectrum_bytes = Bytes(spectrum);
  std::vector<R> back = Values<R>(
      RunFft(exec::FftKind::kIrfft, ArrayShape{complex_type, half_dims},
             ArrayShape{real_type, dims}, lengths, spectrum_bytes));
  EXPECT_LE(RelativeError(back, wide_r), tolerance) << "IRFFT";
}

TEST(FftTest, EveryKindOfLengthMatchesADirectDft) {
  // Powers of two, radices 3, 5, 7 and 11 mixed, small and large primes
  // (Bluestein), a line longer than a chunk, batches.
  for (int64_t n : {1, 2, 8, 6, 12, 30, 77, 210, 7, 97}) {
    CheckEveryKind<float>({3, n}, 1);
    CheckEveryKind<double>({3, n}, 1);
  }
  for (int64_t n : {1000, 1009, 4099}) {
    CheckEveryKind<float>({1, n}, 1);
    CheckEveryKind<double>({1, n}, 1);
  }
  CheckEveryKind<double>({2, 6, 10}, 2);
  CheckEveryKind<float>({5, 12}, 2);
  CheckEveryKind<float>({2, 4, 6, 10}, 3);
  CheckEveryKind<double>({3, 7, 8}, 3);
  // Many columns: the second pass splits columns, not rows.
  CheckEveryKind<float>({16, 300}, 2);
}

TEST(FftTest, BitsAreTheSameAtOneTwoAndFourThreads) {
  // Passes of many chunks: lines of 1000 (32 a chunk), and the column pass
  // of a 2-D transform over 2048 columns.
  for (auto [dims, rank] :
       std::vector<std::pair<std::vector<int64_t>, int64_t>>{
           {{512, 1000}, 1}, {{64, 2048}, 2}}) {
    const int64_t count = exec::NumElements(dims);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    std::vector<float> r(count);
    for (float& v : r) v = normal(rng);
    std::vector<std::byte> bytes = Bytes(r);
    std::vector<int64_t> half = dims;
    half.back() = dims.back() / 2 + 1;
    const std::vector<int64_t> lengths(dims.end() - rank, dims.end());
    auto run = [&] {
      return RunFft(exec::FftKind::kRfft, ArrayShape{ElementType::kF32, dims},
                    ArrayShape{ElementType::kC64, half}, lengths, bytes);
    };
    std::vector<std::byte> one;
    {
      exec::SerialScope serial;
      one = run();
    }
    const int before = omp_get_max_threads();
    for (int threads : {2, 4}) {
      omp_set_num_threads(threads);
      EXPECT_EQ(run(), one) << threads << " threads";
    }
    omp_set_num_threads(before);
  }
}

int ThreadsOfThisProcess() {
  int threads = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir)) threads += entry->d_name[0] != '.';
    closedir(dir);
  }
  return threads;
}

TEST(FftTest, StartsNoThreadsOfItsOwn) {
  // On a fresh thread inside a serial scope, as constant folding runs: any
  // thread started now is the library's (DUCC's default starts a pool).
  int before = 0, after = 0;
  std::thread([&] {
    exec::SerialScope serial(/*onednn_too=*/true);
    before = ThreadsOfThisProcess();
    std::vector<std::byte> bytes(4096 * sizeof(std::complex<float>));
    RunFft(exec::FftKind::kFft, ArrayShape{ElementType::kC64, {4, 1024}},
           ArrayShape{ElementType::kC64, {4, 1024}}, {1024}, bytes);
    after = ThreadsOfThisProcess();
  }).join();
  EXPECT_EQ(after, before);
}

}  // namespace
}  // namespace kiln::testing
