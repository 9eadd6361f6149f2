// dot_general, convolution and fft against straightforward double-precision
// references written here (index formulas from the spec, not the kernels'
// loops), on random inputs passed as arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <string>

#include "exec/kernels/dot.h"
#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;

std::vector<float> RandomFloats(size_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = dist(engine);
  return values;
}

TEST(ReferenceTest, DotGeneralWithPermutedBatchAndContractingDims) {
  // lhs [k=3, b=2, m=4], rhs [n=5, k=3, b=2]; result [b, m, n].
  std::vector<float> lhs = RandomFloats(3 * 2 * 4, 1),
                     rhs = RandomFloats(5 * 3 * 2, 2);
  ASSERT_OK_AND_ASSIGN(
      auto out, RunText(R"(
func.func @main(%l: tensor<3x2x4xf32>, %r: tensor<5x3x2xf32>) -> tensor<2x4x5xf32> {
  %d = stablehlo.dot_general %l, %r, batching_dims = [1] x [2], contracting_dims = [0] x [1] : (tensor<3x2x4xf32>, tensor<5x3x2xf32>) -> tensor<2x4x5xf32>
  return %d : tensor<2x4x5xf32>
})",
                        {HostArray::Of(ElementType::kF32, {3, 2, 4}, lhs),
                         HostArray::Of(ElementType::kF32, {5, 3, 2}, rhs)}));
  std::vector<float> got = out[0].As<float>();
  for (int b = 0; b < 2; ++b) {
    for (int m = 0; m < 4; ++m) {
      for (int n = 0; n < 5; ++n) {
        double sum = 0;
        for (int k = 0; k < 3; ++k) {
          sum += double(lhs[(k * 2 + b) * 4 + m]) * rhs[(n * 3 + k) * 2 + b];
        }
        EXPECT_NEAR(got[(b * 4 + m) * 5 + n], sum, 1e-5)
            << b << " " << m << " " << n;
      }
    }
  }
}

TEST(ReferenceTest, ConvolutionWithStridesDilationsPaddingAndGroups) {
  // NHWC input [1, 5, 6, 4], HWIO kernel [2, 3, 2, 6] with 2 feature groups,
  // strides [2, 1], lhs dilation [1, 2], rhs dilation [2, 1], padding
  // [[1, 0], [2, 1]], spatial reversal of dimension 1.
  std::vector<float> input = RandomFloats(1 * 5 * 6 * 4, 3);
  std::vector<float> kernel = RandomFloats(2 * 3 * 2 * 6, 4);
  const int H = 5, W = 6, C = 4, KH = 2, KW = 3, KI = 2, O = 6;
  const int sh = 2, sw = 1, lh = 1, lw = 2, dh = 2, dw = 1, ph = 1, pw = 2;
  // Output sizes from the spec's formula.
  int padded_h = (H - 1) * lh + 1 + ph + 0,
      padded_w = (W - 1) * lw + 1 + pw + 1;
  int win_h = (KH - 1) * dh + 1, win_w = (KW - 1) * dw + 1;
  int OH = (padded_h - win_h) / sh + 1, OW = (padded_w - win_w) / sw + 1;
  std::string text = StrCat(R"(
func.func @main(%x: tensor<1x5x6x4xf32>, %k: tensor<2x3x2x6xf32>) -> tensor<1x)",
                            OH, "x", OW,
                            R"(x6xf32> {
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 0], [2, 1]], lhs_dilate = [1, 2], rhs_dilate = [2, 1], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x5x6x4xf32>, tensor<2x3x2x6xf32>) -> tensor<1x)",
                            OH, "x", OW, R"(x6xf32>
  return %c : tensor<1x)",
                            OH, "x", OW, R"(x6xf32>
})");
  ASSERT_OK_AND_ASSIGN(
      auto out,
      RunText(text, {HostArray::Of(ElementType::kF32, {1, 5, 6, 4}, input),
                     HostArray::Of(ElementType::kF32, {2, 3, 2, 6}, kernel)}));
  std::vector<float> got = out[0].As<float>();
  ASSERT_EQ(got.size(), static_cast<size_t>(OH * OW * O));
  for (int oy = 0; oy < OH; ++oy) {
    for (int ox = 0; ox < OW; ++ox) {
      for (int o = 0; o < O; ++o) {
        int group = o / (O / 2);
        double sum = 0;
        for (int ky = 0; ky < KH; ++ky) {
          for (int kx = 0; kx < KW; ++kx) {
            // Position in the dilated, padded input.
            int y = oy * sh + ky * dh - ph, x = ox * sw + kx * dw - pw;
            if (y < 0 || x < 0 || y % lh || x % lw) continue;
            y /= lh;
            x /= lw;
            if (y >= H || x >= W) continue;
            int kxr = KW - 1 - kx;  // reversed along dimension 1
            for (int i = 0; i < KI; ++i) {
              sum += double(input[(y * W + x) * C + group * KI + i]) *
                     kernel[((ky * KW + kxr) * KI + i) * O + o];
            }
          }
        }
        EXPECT_NEAR(got[(oy * OW + ox) * O + o], sum, 1e-5)
            << oy << " " << ox << " " << o;
      }
    }
  }
}

TEST(ReferenceTest, FftOfEveryTypeMatchesADirectDft) {
  // A 2-D FFT over [3, 5] (Bluestein sizes), RFFT and IRFFT of length 6.
  const double kPi = 3.14159265358979323846;
  std::vector<float> real = RandomFloats(2 * 15, 5);
  std::vector<float> half = RandomFloats(2 * 4 * 2, 6);
  ASSERT_OK_AND_ASSIGN(
      auto out,
      RunText(
          R"(
func.func @main(%c: tensor<3x5xcomplex<f32>>, %r: tensor<6xf64>, %h: tensor<4xcomplex<f32>>) -> (tensor<3x5xcomplex<f32>>, tensor<3x5xcomplex<f32>>, tensor<4xcomplex<f64>>, tensor<6xf32>) {
  %f = stablehlo.fft %c, type = FFT, length = [3, 5] : (tensor<3x5xcomplex<f32>>) -> tensor<3x5xcomplex<f32>>
  %i = stablehlo.fft %f, type = IFFT, length = [3, 5] : (tensor<3x5xcomplex<f32>>) -> tensor<3x5xcomplex<f32>>
  %rf = stablehlo.fft %r, type = RFFT, length = [6] : (tensor<6xf64>) -> tensor<4xcomplex<f64>>
  %ir = stablehlo.fft %h, type = IRFFT, length = [6] : (tensor<4xcomplex<f32>>) -> tensor<6xf32>
  return %f, %i, %rf, %ir : tensor<3x5xcomplex<f32>>, tensor<3x5xcomplex<f32>>, tensor<4xcomplex<f64>>, tensor<6xf32>
})",
          {HostArray::Of(ElementType::kC64, {3, 5}, real),
           HostArray::Of(ElementType::kF64, {6},
                         std::vector<double>(real.begin(), real.begin() + 6)),
           HostArray::Of(ElementType::kC64, {4}, half)}));
  using C = std::complex<double>;
  auto at = [&](int i) { return C(real[2 * i], real[2 * i + 1]); };
  std::vector<std::complex<float>> fft = out[0].As<std::complex<float>>();
  std::vector<std::complex<float>> back = out[1].As<std::complex<float>>();
  for (int u = 0; u < 3; ++u) {
    for (int v = 0; v < 5; ++v) {
      C sum = 0;
      for (int y = 0; y < 3; ++y) {
        for (int x = 0; x < 5; ++x) {
          sum += at(y * 5 + x) *
                 std::polar(1.0,
                            -2 * kPi * (double(u * y) / 3 + double(v * x) / 5));
        }
      }
      EXPECT_NEAR(fft[u * 5 + v].real(), sum.real(), 1e-4);
      EXPECT_NEAR(fft[u * 5 + v].imag(), sum.imag(), 1e-4);
      EXPECT_NEAR(back[u * 5 + v].real(), at(u * 5 + v).real(), 1e-5);
      EXPECT_NEAR(back[u * 5 + v].imag(), at(u * 5 + v).imag(), 1e-5);
    }
  }
  std::vector<std::complex<double>> rfft = out[2].As<std::complex<double>>();
  for (int k = 0; k < 4; ++k) {
    C sum = 0;
    for (int n = 0; n < 6; ++n)
      sum += double(real[n]) * std::polar(1.0, -2 * kPi * k * n / 6);
    EXPECT_NEAR(rfft[k].real(), sum.real(), 1e-12);
    EXPECT_NEAR(rfft[k].imag(), sum.imag(), 1e-12);
  }
  // IRFFT: the Hermitian extension X[6 - k] = conj(X[k]), inverse DFT,
  // real part (imaginary parts of X[0] and X[3] do not contribute).
  std::vector<float> irfft = out[3].As<float>();
  for (int n = 0; n < 6; ++n) {
    C sum = 0;
    for (int k = 0; k < 6; ++k) {
      C x = k < 4 ? C(half[2 * k], half[2 * k + 1])
                  : std::conj(C(half[2 * (6 - k)], half[2 * (6 - k) + 1]));
      sum += x * std::polar(1.0, 2 * kPi * k * n / 6);
    }
    EXPECT_NEAR(irfft[n], sum.real() / 6, 1e-5) << n;
  }
}

// Transforms large enough to take the kernel's other paths: a batched
// RFFT over [20, 64] (a Bluestein length along columns kept 33 wide, so
// columns are copied in groups that do not divide them) against a direct
// DFT; and one line of 2^17, whose stages split over the cores, checked
// bin by bin on a sample and by its inverse.
TEST(ReferenceTest, LargeAndBatchedFftsMatchADirectDft) {
  const double kPi = 3.14159265358979323846;
  using C = std::complex<double>;
  std::vector<float> planes = RandomFloats(3 * 20 * 64, 8);
  std::vector<float> line = RandomFloats(2 << 17, 9);
  ASSERT_OK_AND_ASSIGN(
      auto out, RunText(R"(
func.func @main(%r: tensor<3x20x64xf32>, %c: tensor<131072xcomplex<f32>>)
    -> (tensor<3x20x33xcomplex<f32>>, tensor<131072xcomplex<f32>>, tensor<131072xcomplex<f32>>) {
  %rf = stablehlo.fft %r, type = RFFT, length = [20, 64] : (tensor<3x20x64xf32>) -> tensor<3x20x33xcomplex<f32>>
  %f = stablehlo.fft %c, type = FFT, length = [131072] : (tensor<131072xcomplex<f32>>) -> tensor<131072xcomplex<f32>>
  %i = stablehlo.fft %f, type = IFFT, length = [131072] : (tensor<131072xcomplex<f32>>) -> tensor<131072xcomplex<f32>>
  return %rf, %f, %i : tensor<3x20x33xcomplex<f32>>, tensor<131072xcomplex<f32>>, tensor<131072xcomplex<f32>>
})",
                        {HostArray::Of(ElementType::kF32, {3, 20, 64}, planes),
                         HostArray::Of(ElementType::kC64, {131072}, line)}));
  std::vector<std::complex<float>> rfft = out[0].As<std::complex<float>>();
  int wrong = 0;
  for (int b = 0; b < 3; ++b) {
    for (int u = 0; u < 20; ++u) {
      for (int v = 0; v < 33; ++v) {
        C sum = 0;
        for (int y = 0; y < 20; ++y) {
          for (int x = 0; x < 64; ++x) {
            sum += static_cast<double>(planes[(b * 20 + y) * 64 + x]) *
                   std::polar(1.0, -2 * kPi * (u * y / 20.0 + v * x / 64.0));
          }
        }
        C got(rfft[(b * 20 + u) * 33 + v]);
        wrong += std::abs(got - sum) > 1e-3;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
  const int64_t n = 131072;
  std::vector<std::complex<float>> fft = out[1].As<std::complex<float>>();
  std::vector<std::complex<float>> back = out[2].As<std::complex<float>>();
  for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{777}, n / 2, n - 3}) {
    C sum = 0;
    for (int64_t t = 0; t < n; ++t) {
      sum += C(line[2 * t], line[2 * t + 1]) *
             std::polar(1.0, -2 * kPi * static_cast<double>((k * t) % n) /
                                 static_cast<double>(n));
    }
    EXPECT_LT(std::abs(C(fft[k]) - sum), 1e-2) << k;
  }
  double error = 0;
  for (int64_t t = 0; t < n; ++t) {
    error =
        std::max(error, std::abs(C(back[t]) - C(line[2 * t], line[2 * t + 1])));
  }
  EXPECT_LT(error, 1e-5);
}

// Power-of-two lengths from 1 to 1024 in double, batched over 3 lines,
// forward and inverse, against a direct DFT in long double: the radix-2
// stages' vector paths (blocks of 1, 2 and more complex numbers) and
// their scalar remainders, to double precision.
TEST(ReferenceTest, PowerOfTwoComplexFftsMatchADirectDftInDouble) {
  using C = std::complex<long double>;
  const long double kPi = 3.141592653589793238462643383279502884L;
  for (int64_t n : {1, 2, 4, 8, 16, 32, 64, 1024}) {
    const std::string t = "tensor<3x" + std::to_string(n) + "xcomplex<f64>>";
    std::vector<float> random = RandomFloats(2 * 3 * n, 11 + n);
    std::vector<double> values(random.begin(), random.end());
    ASSERT_OK_AND_ASSIGN(
        auto out,
        RunText("func.func @main(%c: " + t + ") -> (" + t + ", " + t +
                    ") {\n  %f = stablehlo.fft %c, type = FFT, length = [" +
                    std::to_string(n) + "] : (" + t + ") -> " + t +
                    "\n  %i = stablehlo.fft %c, type = IFFT, length = [" +
                    std::to_string(n) + "] : (" + t + ") -> " + t +
                    "\n  return %f, %i : " + t + ", " + t + "\n}",
                {HostArray::Of(ElementType::kC128, {3, n}, values)}));
    std::vector<std::complex<double>> forward =
        out[0].As<std::complex<double>>();
    std::vector<std::complex<double>> inverse =
        out[1].As<std::complex<double>>();
    double worst = 0;
    for (int64_t line = 0; line < 3; ++line) {
      for (int64_t k = 0; k < n; ++k) {
        C sum_forward = 0, sum_inverse = 0;
        for (int64_t x = 0; x < n; ++x) {
          C value(values[2 * (line * n + x)], values[2 * (line * n + x) + 1]);
          long double angle = 2 * kPi * static_cast<long double>((k * x) % n) /
                              static_cast<long double>(n);
          sum_forward += value * std::polar(1.0L, -angle);
          sum_inverse += value * std::polar(1.0L, angle);
        }
        sum_inverse /= static_cast<long double>(n);
        std::complex<double> f = forward[line * n + k];
        std::complex<double> i = inverse[line * n + k];
        worst = std::max<double>(worst,
                                 std::abs(C(f.real(), f.imag()) - sum_forward));
        worst = std::max<double>(
            worst, std::abs(C(i.real(), i.imag()) - sum_inverse) * n);
      }
    }
    // Inputs of about 2 in magnitude: sums of n terms, rounding errors
    // of about log2(n) ulps of sqrt(n) times that.
    EXPECT_LT(worst, 1e-12 * std::max<int64_t>(n, 1)) << "length " << n;
  }
}

// RFFT of power-of-two lengths from 2 to 2048, in double against a direct
// DFT in long double, batched over 3 lines: the columns the result keeps
// of each line's transform.
TEST(ReferenceTest, PowerOfTwoRfftsMatchADirectDftInDouble) {
  using C = std::complex<long double>;
  const long double kPi = 3.141592653589793238462643383279502884L;
  for (int64_t n : {2, 4, 8, 16, 64, 2048}) {
    const int64_t half = n / 2 + 1;
    const std::string in = "tensor<3x" + std::to_string(n) + "xf64>";
    const std::string out =
        "tensor<3x" + std::to_string(half) + "xcomplex<f64>>";
    std::vector<float> random = RandomFloats(3 * n, 21 + n);
    std::vector<double> values(random.begin(), random.end());
    ASSERT_OK_AND_ASSIGN(
        auto result,
        RunText("func.func @main(%x: " + in + ") -> " + out +
                    " {\n  %f = stablehlo.fft %x, type = RFFT, length = [" +
                    std::to_string(n) + "] : (" + in + ") -> " + out +
                    "\n  return %f : " + out + "\n}",
                {HostArray::Of(ElementType::kF64, {3, n}, values)}));
    std::vector<std::complex<double>> got =
        result[0].As<std::complex<double>>();
    double worst = 0;
    for (int64_t line = 0; line < 3; ++line) {
      for (int64_t k = 0; k < half; ++k) {
        C sum = 0;
        for (int64_t x = 0; x < n; ++x) {
          long double angle = 2 * kPi * static_cast<long double>((k * x) % n) /
                              static_cast<long double>(n);
          sum += static_cast<long double>(values[line * n + x]) *
                 std::polar(1.0L, -angle);
        }
        std::complex<double> g = got[line * half + k];
        worst = std::max<double>(worst, std::abs(C(g.real(), g.imag()) - sum));
      }
    }
    EXPECT_LT(worst, 1e-12 * n) << "length " << n;
  }
}

TEST(ReferenceTest, RngBitGeneratorMatchesPublishedKnownAnswers) {
  // Random123's known-answer vectors: threefry2x32_20 with zero key and
  // counter gives (0x6b200159, 0x99ba4efe); philox4x32_10 gives
  // (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8). XLA takes the key
  // from state[0] and the counter from the rest.
  ASSERT_OK_AND_ASSIGN(auto out, RunText(R"(
func.func @main() -> (tensor<2xui64>, tensor<ui64>, tensor<3xui64>, tensor<4xui32>) {
  %s = stablehlo.constant dense<0> : tensor<2xui64>
  %ns, %bits = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<ui64>)
  %p = stablehlo.constant dense<0> : tensor<3xui64>
  %np, %pbits = stablehlo.rng_bit_generator %p, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)
  return %ns, %bits, %np, %pbits : tensor<2xui64>, tensor<ui64>, tensor<3xui64>, tensor<4xui32>
})"));
  EXPECT_EQ(out[0].As<uint64_t>(), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(out[1].As<uint64_t>(),
            (std::vector<uint64_t>{0x99ba4efe6b200159ull}));
  EXPECT_EQ(out[2].As<uint64_t>(), (std::vector<uint64_t>{0, 1, 0}));
  EXPECT_EQ(out[3].As<uint32_t>(),
            (std::vector<uint32_t>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu,
                                   0x9b00dbd8u}));
}

TEST(ReferenceTest, TriangularSolveAndCholeskyReconstruct) {
  // A = L L^T for a random lower L with a strong diagonal; cholesky(A)
  // must give L back, and solving L x = b must satisfy the equations.
  const int n = 4;
  std::vector<double> l(n * n, 0.0);
  std::vector<float> noise = RandomFloats(n * n, 7);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j)
      l[i * n + j] = i == j ? 2.0 + noise[i * n + j] : noise[i * n + j];
  }
  std::vector<double> a(n * n, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) a[i * n + j] += l[i * n + k] * l[j * n + k];
    }
  }
  std::vector<double> b = {1, -2, 3, 0.5};
  ASSERT_OK_AND_ASSIGN(auto out,
                       RunText(R"(
func.func @main(%a: tensor<4x4xf64>, %l: tensor<4x4xf64>, %b: tensor<4x1xf64>) -> (tensor<4x4xf64>, tensor<4x1xf64>) {
  %c = stablehlo.cholesky %a, lower = true : tensor<4x4xf64>
  %x = "stablehlo.triangular_solve"(%l, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<4x4xf64>, tensor<4x1xf64>) -> tensor<4x1xf64>
  return %c, %x : tensor<4x4xf64>, tensor<4x1xf64>
})",
                               {HostArray::Of(ElementType::kF64, {4, 4}, a),
                                HostArray::Of(ElementType::kF64, {4, 4}, l),
                                HostArray::Of(ElementType::kF64, {4, 1}, b)}));
  std::vector<double> chol = out[0].As<double>(), x = out[1].As<double>();
  for (int i = 0; i < n * n; ++i) EXPECT_NEAR(chol[i], l[i], 1e-12) << i;
  for (int i = 0; i < n; ++i) {
    double lhs = 0;
    for (int j = 0; j <= i; ++j) lhs += l[i * n + j] * x[j];
    EXPECT_NEAR(lhs, b[i], 1e-12);
  }
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

// Kiln's own f32/f64 matmul (the reference tier and fallback of the oneDNN
// path; f64 products of 4096 multiply-adds or more go to the BLAS library
// instead, tests/exec/library_blas_test.cc) blocks rows and columns, uses the widest vectors the CPU has and
// splits rows over threads; none of that may change a bit of
// the result: every element is the plain k-ordered sum from zero. Shapes
// cover whole blocks, leftover rows and columns, and a product large enough
// to be split over threads.
template <typename T>
void ExpectMatmulBitwiseEqualsPlainLoop(int64_t batch, int64_t m, int64_t k,
                                        int64_t n) {
  const bool f64 = sizeof(T) == 8;
  ElementType element = f64 ? ElementType::kF64 : ElementType::kF32;
  std::vector<float> lhs_f = RandomFloats(batch * m * k, 7);
  std::vector<float> rhs_f = RandomFloats(batch * k * n, 8);
  std::vector<T> lhs(lhs_f.begin(), lhs_f.end()),
      rhs(rhs_f.begin(), rhs_f.end());
  std::vector<T> got(batch * m * n);
  // The kernel itself over a slot table of its own: programs lower
  // dot_general to oneDNN where it implements the case.
  std::vector<exec::Slot> slots(3);
  slots[0].shape = {element, {batch, m, k}};
  slots[1].shape = {element, {batch, k, n}};
  slots[2].shape = {element, {batch, m, n}};
  exec::RunContext ctx(slots, exec::RunOptions{});
  ctx.set_slot(0, reinterpret_cast<std::byte*>(lhs.data()));
  ctx.set_slot(1, reinterpret_cast<std::byte*>(rhs.data()));
  ctx.set_slot(2, reinterpret_cast<std::byte*>(got.data()));
  exec::Step step;
  step.kernel = exec::MakeMatmulKernel(element, batch, m, k, n);
  step.inputs = {0, 1};
  step.outputs = {2};
  ASSERT_OK(step.kernel->Run(ctx, step));
  int64_t differing = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += lhs[(b * m + i) * k + p] * rhs[(b * k + p) * n + j];
        }
        differing += got[(b * m + i) * n + j] != sum;
      }
    }
  }
  EXPECT_EQ(differing, 0) << (f64 ? "f64 " : "f32 ") << batch << "x" << m << "x"
                          << k << "x" << n;
}

TEST(ReferenceTest, MatmulIsBitwiseThePlainKOrderedSum) {
  ExpectMatmulBitwiseEqualsPlainLoop<float>(1, 4, 3, 16);
  ExpectMatmulBitwiseEqualsPlainLoop<float>(2, 7, 5, 21);
  ExpectMatmulBitwiseEqualsPlainLoop<float>(3, 65, 33, 70);
  ExpectMatmulBitwiseEqualsPlainLoop<float>(1, 130, 96, 100);  // threaded
  ExpectMatmulBitwiseEqualsPlainLoop<double>(1, 4, 3, 8);
  ExpectMatmulBitwiseEqualsPlainLoop<double>(2, 9, 17, 13);
  // Results narrower than a block of columns: one vector of columns and
  // the last few (a classifier's 10 logits), or only the last few.
  ExpectMatmulBitwiseEqualsPlainLoop<float>(1, 128, 512, 10);
  ExpectMatmulBitwiseEqualsPlainLoop<float>(2, 7, 9, 12);
  ExpectMatmulBitwiseEqualsPlainLoop<float>(1, 5, 4, 3);
  ExpectMatmulBitwiseEqualsPlainLoop<float>(1, 9, 6, 27);
  ExpectMatmulBitwiseEqualsPlainLoop<double>(1, 6, 7, 6);
  ExpectMatmulBitwiseEqualsPlainLoop<double>(3, 5, 11, 3);
  // Rows left over from the blocks of four run one at a time, eight
  // vectors of columns at a time: a vector times a matrix (a scan's RNN
  // step), and three rows over wide and narrow column remainders.
  ExpectMatmulBitwiseEqualsPlainLoop<float>(1, 1, 256, 256);
  ExpectMatmulBitwiseEqualsPlainLoop<float>(2, 3, 33, 150);
}

}  // namespace
}  // namespace kiln::testing
