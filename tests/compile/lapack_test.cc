// JAX's LAPACK FFI targets (lapack_*_ffi) as programs: each custom call is
// written as JAX emits it (backend_config attributes, column-major layouts,
// a batch dimension), run on random inputs for f32, f64, c64 and c128, and
// its results checked by the properties that define them (A = P L U, Q
// unitary with Q R = A, A V = V diag(w), U S V^H = A, ...), with the
// products computed here in double precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;
using c128 = std::complex<double>;

// --- Element types -----------------------------------------------------

template <typename T>
struct Lapack;
template <>
struct Lapack<float> {
  static constexpr char kPrefix = 's';
  static constexpr const char* kName = "f32";
  static constexpr const char* kRealName = "f32";
  static constexpr ElementType kType = ElementType::kF32;
  static constexpr bool kComplex = false;
  static constexpr double kTol = 2e-4;
};
template <>
struct Lapack<double> {
  static constexpr char kPrefix = 'd';
  static constexpr const char* kName = "f64";
  static constexpr const char* kRealName = "f64";
  static constexpr ElementType kType = ElementType::kF64;
  static constexpr bool kComplex = false;
  static constexpr double kTol = 1e-11;
};
template <>
struct Lapack<std::complex<float>> {
  static constexpr char kPrefix = 'c';
  static constexpr const char* kName = "complex<f32>";
  static constexpr const char* kRealName = "f32";
  static constexpr ElementType kType = ElementType::kC64;
  static constexpr bool kComplex = true;
  static constexpr double kTol = 2e-4;
};
template <>
struct Lapack<std::complex<double>> {
  static constexpr char kPrefix = 'z';
  static constexpr const char* kName = "complex<f64>";
  static constexpr const char* kRealName = "f64";
  static constexpr ElementType kType = ElementType::kC128;
  static constexpr bool kComplex = true;
  static constexpr double kTol = 1e-11;
};

template <typename T>
struct RealTypeOf {
  using type = T;
};
template <typename R>
struct RealTypeOf<std::complex<R>> {
  using type = R;
};
template <typename T>
using RealOf = typename RealTypeOf<T>::type;
template <typename T>
using ComplexOf = std::complex<RealOf<T>>;

// --- Programs ------------------------------------------------------------

// An array of a program's signature: dims and MLIR element type.
struct Arg {
  std::vector<int64_t> dims;
  std::string element;
};

std::string TensorType(const Arg& arg) {
  std::string text = "tensor<";
  for (int64_t d : arg.dims) text += std::to_string(d) + "x";
  return text + arg.element + ">";
}

// The FFI layout of an array: column-major matrices for the arrays of the
// largest operand rank, row-major for the others.
std::string Layout(int64_t rank, int64_t max_rank) {
  std::vector<int64_t> order;
  if (rank == max_rank && rank >= 2) {
    order = {rank - 2, rank - 1};
    for (int64_t d = rank - 3; d >= 0; --d) order.push_back(d);
  } else {
    for (int64_t d = rank - 1; d >= 0; --d) order.push_back(d);
  }
  std::string text = "dense<";
  if (!order.empty()) {
    text += "[";
    for (size_t i = 0; i < order.size(); ++i) {
      text += (i ? ", " : "") + std::to_string(order[i]);
    }
    text += "]";
  }
  return text + "> : tensor<" + std::to_string(rank) + "xindex>";
}

// `func.func @main(operands) -> results` calling `target` once, with
// `config` as its mhlo.backend_config and the FFI layouts (or `layouts`
// verbatim when given).
std::string CallProgram(const std::string& target,
                        const std::vector<Arg>& operands,
                        const std::vector<Arg>& results,
                        const std::string& config,
                        const std::string& layouts = "") {
  int64_t max_rank = 0;
  for (const Arg& a : operands) {
    max_rank = std::max<int64_t>(max_rank, a.dims.size());
  }
  std::string params, operand_names, operand_types, operand_layouts;
  for (size_t i = 0; i < operands.size(); ++i) {
    std::string sep = i ? ", " : "";
    params += sep + "%a" + std::to_string(i) + ": " + TensorType(operands[i]);
    operand_names += sep + "%a" + std::to_string(i);
    operand_types += sep + TensorType(operands[i]);
    operand_layouts += sep + Layout(operands[i].dims.size(), max_rank);
  }
  std::string result_types, result_layouts, returned;
  for (size_t i = 0; i < results.size(); ++i) {
    std::string sep = i ? ", " : "";
    result_types += sep + TensorType(results[i]);
    result_layouts += sep + Layout(results[i].dims.size(), max_rank);
    returned += sep + (results.size() == 1 ? std::string("%r")
                                           : "%r#" + std::to_string(i));
  }
  std::string attrs = "mhlo.backend_config = {" + config + "}, ";
  attrs += layouts.empty() ? "operand_layouts = [" + operand_layouts +
                                 "], result_layouts = [" + result_layouts + "]"
                           : layouts;
  std::string result_list =
      results.size() == 1 ? result_types : "(" + result_types + ")";
  std::string lhs =
      results.size() == 1 ? "%r" : "%r:" + std::to_string(results.size());
  return "func.func @main(" + params + ") -> " + result_list + " {\n  " + lhs +
         " = stablehlo.custom_call @" + target + "(" + operand_names + ") {" +
         attrs + "} : (" + operand_types + ") -> " + result_list +
         "\n  return " + returned + " : " + result_types + "\n}\n";
}

template <typename T>
std::string Target(const std::string& real_name,
                   const std::string& complex_name = "") {
  return std::string("lapack_") + Lapack<T>::kPrefix +
         (Lapack<T>::kComplex && !complex_name.empty() ? complex_name
                                                       : real_name) +
         "_ffi";
}

std::string Char(const char* name, char value) {
  return std::string(name) + " = " + std::to_string(int(value)) + " : ui8";
}

// --- Matrices (row-major, computed in complex double) -----------------

struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<c128> v;
  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(r * c) {}
  c128& operator()(int64_t i, int64_t j) { return v[i * cols + j]; }
  c128 operator()(int64_t i, int64_t j) const { return v[i * cols + j]; }
};

Mat Identity(int64_t n) {
  Mat m(n, n);
  for (int64_t i = 0; i < n; ++i) m(i, i) = 1;
  return m;
}

Mat operator*(const Mat& a, const Mat& b) {
  Mat c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = 0; k < a.cols; ++k)
      for (int64_t j = 0; j < b.cols; ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}

Mat Adjoint(const Mat& a) {
  Mat c(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) c(j, i) = std::conj(a(i, j));
  return c;
}

double MaxAbs(const Mat& a) {
  double m = 0;
  for (c128 x : a.v) m = std::max(m, std::abs(x));
  return m;
}

// max |a - b| / max(1, max |b|).
double RelativeDiff(const Mat& a, const Mat& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  double d = 0;
  for (size_t i = 0; i < a.v.size(); ++i)
    d = std::max(d, std::abs(a.v[i] - b.v[i]));
  return d / std::max(1.0, MaxAbs(b));
}

// Matrix `index` of a batch of [rows, cols] matrices in a host array.
template <typename T>
Mat MatrixOf(const HostArray& array, int64_t index, int64_t rows,
             int64_t cols) {
  std::vector<T> values = array.As<T>();
  Mat m(rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    m.v[i] = c128(values[index * rows * cols + i]);
  }
  return m;
}

// Vector `index` of a batch of vectors.
template <typename T>
std::vector<c128> VectorOf(const HostArray& array, int64_t index,
                           int64_t size) {
  std::vector<T> values = array.As<T>();
  std::vector<c128> v(size);
  for (int64_t i = 0; i < size; ++i) v[i] = c128(values[index * size + i]);
  return v;
}

std::vector<int32_t> Ints(const HostArray& array) {
  return array.As<int32_t>();
}

template <typename T>
std::vector<T> Values(const HostArray& array) {
  return array.As<T>();
}

template <typename T>
std::vector<T> RandomValues(int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> values(count);
  for (T& x : values) {
    if constexpr (Lapack<T>::kComplex) {
      double re = dist(engine), im = dist(engine);
      x = T(re, im);
    } else {
      x = T(dist(engine));
    }
  }
  return values;
}

template <typename T>
HostArray Array(const std::vector<int64_t>& dims, const std::vector<T>& v) {
  return HostArray::Of<T>(Lapack<T>::kType, dims, v);
}

// A batch of Hermitian positive definite matrices B B^H + n I.
template <typename T>
std::vector<T> PositiveDefinite(int64_t batch, int64_t n, uint32_t seed) {
  std::vector<T> b = RandomValues<T>(batch * n * n, seed), out(batch * n * n);
  for (int64_t k = 0; k < batch; ++k)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        c128 sum = i == j ? c128(n) : c128(0);
        for (int64_t l = 0; l < n; ++l) {
          sum += c128(b[(k * n + i) * n + l]) *
                 std::conj(c128(b[(k * n + j) * n + l]));
        }
        if constexpr (Lapack<T>::kComplex) {
          out[(k * n + i) * n + j] = T(sum);
        } else {
          out[(k * n + i) * n + j] = T(sum.real());
        }
      }
  return out;
}

// A batch of Hermitian matrices whose `lower` (else upper) triangle holds
// the data; the other triangle holds garbage that must not be read.
template <typename T>
std::vector<T> HermitianWithGarbage(int64_t batch, int64_t n, bool lower,
                                    uint32_t seed, std::vector<Mat>* dense) {
  std::vector<T> a = RandomValues<T>(batch * n * n, seed);
  for (int64_t k = 0; k < batch; ++k) {
    Mat m(n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        bool stored = lower ? i >= j : i <= j;
        int64_t si = stored ? i : j, sj = stored ? j : i;
        c128 x = c128(a[(k * n + si) * n + sj]);
        if (i == j) x = x.real();
        m(i, j) = stored ? x : std::conj(x);
      }
    dense->push_back(m);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (!(lower ? i >= j : i <= j)) a[(k * n + i) * n + j] = T(99);
      }
    }
  }
  return a;
}

template <typename T>
class LapackTest : public ::testing::Test {};
using Types =
    ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(LapackTest, Types);

// --- getrf ---------------------------------------------------------------

// The larger sizes take the f32 kernel's panels of 32 columns (square,
// tall and wide), and in the last one column 45 is zero: U(45, 45) is
// exactly zero in any order of the sums, so info names it, and the rest
// still factors.
TYPED_TEST(LapackTest, GetrfFactorsPermutedRowsIntoUnitLowerTimesUpper) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 5},
                      {6, 4},
                      {3, 5},
                      {100, 100},
                      {130, 70},
                      {70, 130},
                      {80, 80}}) {
    const int64_t batch = 2, k = std::min(m, n);
    std::vector<T> a = RandomValues<T>(batch * m * n, 1);
    const bool zero_column = m == 80;
    if (zero_column) {
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < m; ++i) a[(b * m + i) * n + 45] = T(0);
    }
    std::string text = CallProgram(
        Target<T>("getrf"), {{{batch, m, n}, e}},
        {{{batch, m, n}, e}, {{batch, k}, "i32"}, {{batch}, "i32"}}, "");
    ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({batch, m, n}, a)}));
    std::vector<int32_t> ipiv = Ints(out[1]), info = Ints(out[2]);
    for (int64_t b = 0; b < batch; ++b) {
      EXPECT_EQ(info[b], zero_column ? 46 : 0) << m << "x" << n;
      Mat lu = MatrixOf<T>(out[0], b, m, n);
      Mat l(m, k), u(k, n),
          pa = MatrixOf<T>(Array<T>({batch, m, n}, a), b, m, n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) {
          l(i, j) = i == j ? c128(1) : i > j ? lu(i, j) : c128(0);
          // Partial pivoting bounds the multipliers: by 1, or by sqrt(2)
          // for complex types (LAPACK picks pivots by |re| + |im|).
          if (i > j) {
            EXPECT_LE(std::abs(l(i, j)),
                      (Lapack<T>::kComplex ? std::sqrt(2.0) : 1.0) + 1e-6);
          }
        }
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = i; j < n; ++j) u(i, j) = lu(i, j);
      for (int64_t i = 0; i < k; ++i) {
        int32_t p = ipiv[b * k + i] - 1;
        ASSERT_GE(p, i);
        ASSERT_LT(p, m);
        for (int64_t j = 0; j < n; ++j) std::swap(pa(i, j), pa(p, j));
      }
      EXPECT_LT(RelativeDiff(l * u, pa), Lapack<T>::kTol) << m << "x" << n;
    }
  }
}

TYPED_TEST(LapackTest, GetrfReportsTheFirstZeroPivot) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  // Columns 0 and 1 are equal: U(1, 1) is exactly zero.
  std::vector<T> a = {T(1), T(1), T(0), T(1), T(1), T(0), T(0), T(0), T(1)};
  std::string text = CallProgram(Target<T>("getrf"), {{{3, 3}, e}},
                                 {{{3, 3}, e}, {{3}, "i32"}, {{}, "i32"}}, "");
  ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({3, 3}, a)}));
  EXPECT_EQ(Ints(out[2])[0], 2);
}

// --- geqrf, orgqr, ormqr, geqp3 ------------------------------------------

// geqrf then orgqr of [batch, m, n]: Q orthonormal, Q R = A.
template <typename T>
void ExpectGeqrfFormsQR(int64_t batch, int64_t m, int64_t n, uint32_t seed) {
  const std::string e = Lapack<T>::kName;
  const int64_t k = std::min(m, n);
  std::vector<T> a = RandomValues<T>(batch * m * n, seed);
  const std::string matrix =
      StrCat("tensor<", batch, "x", m, "x", n, "x", e, ">");
  const std::string taus = StrCat("tensor<", batch, "x", k, "x", e, ">");
  const std::string layouts3 = "dense<[1, 2, 0]> : tensor<3xindex>";
  const std::string layouts2 = "dense<[1, 0]> : tensor<2xindex>";
  std::string text =
      StrCat("func.func @main(%a: ", matrix, ") -> (", matrix, ", ", matrix,
             ") {\n", "  %f:2 = stablehlo.custom_call @", Target<T>("geqrf"),
             "(%a) {mhlo.backend_config = {}, operand_layouts = [", layouts3,
             "], result_layouts = [", layouts3, ", ", layouts2, "]} : (",
             matrix, ") -> (", matrix, ", ", taus, ")\n",
             "  %q = stablehlo.custom_call @", Target<T>("orgqr", "ungqr"),
             "(%f#0, %f#1) {mhlo.backend_config = {}, operand_layouts = [",
             layouts3, ", ", layouts2, "], result_layouts = [", layouts3,
             "]} : (", matrix, ", ", taus, ") -> ", matrix, "\n",
             "  return %f#0, %q : ", matrix, ", ", matrix, "\n}");
  ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({batch, m, n}, a)}));
  for (int64_t b = 0; b < batch; ++b) {
    Mat f = MatrixOf<T>(out[0], b, m, n), q = MatrixOf<T>(out[1], b, m, n);
    Mat r(k, n);
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = i; j < n; ++j) r(i, j) = f(i, j);
      // LAPACK's reflectors leave R's diagonal real.
      EXPECT_EQ(r(i, i).imag(), 0);
    }
    EXPECT_LT(RelativeDiff(Adjoint(q) * q, Identity(n)), Lapack<T>::kTol);
    EXPECT_LT(
        RelativeDiff(q * r, MatrixOf<T>(Array<T>({batch, m, n}, a), b, m, n)),
        Lapack<T>::kTol);
  }
}

TYPED_TEST(LapackTest, GeqrfReflectorsFormAnOrthonormalQWithQREqualToA) {
  ExpectGeqrfFormsQR<TypeParam>(2, 6, 4, 2);
  // Large enough that the reflections split their columns over the cores.
  ExpectGeqrfFormsQR<TypeParam>(1, 200, 180, 3);
}

TYPED_TEST(LapackTest, OrmqrMultipliesByQOrItsAdjointFromEitherSide) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  const int64_t m = 5, k = 3;
  // The reflectors of a 5x3 QR (from geqrf) and Q from orgqr, in one run.
  std::vector<T> a = RandomValues<T>(m * k, 3);
  std::string factor = CallProgram(Target<T>("geqrf"), {{{m, k}, e}},
                                   {{{m, k}, e}, {{k}, e}}, "");
  ASSERT_OK_AND_ASSIGN(auto f, RunText(factor, {Array<T>({m, k}, a)}));
  // Q (5x5) = H(0) H(1) H(2), built here from the stored reflectors.
  Mat refl = MatrixOf<T>(f[0], 0, m, k);
  std::vector<c128> tau = VectorOf<T>(f[1], 0, k);
  Mat q = Identity(m);
  for (int64_t i = 0; i < k; ++i) {
    Mat v(m, 1);
    v(i, 0) = 1;
    for (int64_t r = i + 1; r < m; ++r) v(r, 0) = refl(r, i);
    Mat h = Identity(m), vvh = v * Adjoint(v);
    for (size_t x = 0; x < h.v.size(); ++x) h.v[x] -= tau[i] * vvh.v[x];
    q = q * h;
  }
  for (bool left : {true, false}) {
    for (bool transpose : {false, true}) {
      const int64_t rows = left ? m : 4, cols = left ? 4 : m;
      std::vector<T> c = RandomValues<T>(rows * cols, 4);
      std::string text = CallProgram(
          Target<T>("ormqr", "unmqr"),
          {{{m, k}, e}, {{k}, e}, {{rows, cols}, e}}, {{{rows, cols}, e}},
          std::string("left = ") + (left ? "true" : "false") +
              ", transpose = " + (transpose ? "true" : "false"));
      ASSERT_OK_AND_ASSIGN(
          auto out, RunText(text, {f[0], f[1], Array<T>({rows, cols}, c)}));
      Mat op = transpose ? Adjoint(q) : q;
      Mat cm = MatrixOf<T>(Array<T>({rows, cols}, c), 0, rows, cols);
      Mat expected = left ? op * cm : cm * op;
      EXPECT_LT(RelativeDiff(MatrixOf<T>(out[0], 0, rows, cols), expected),
                Lapack<T>::kTol)
          << "left " << left << " transpose " << transpose;
    }
  }
}

TYPED_TEST(LapackTest, Geqp3PivotsColumnsByNormAndKeepsFixedOnesFirst) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  const int64_t batch = 2, m = 6, n = 4, k = 4;
  std::vector<T> a = RandomValues<T>(batch * m * n, 5);
  // Batch 0: every column free; batch 1: column 2 fixed in front.
  std::vector<int32_t> jpvt = {0, 0, 0, 0, 0, 0, 1, 0};
  std::string text = CallProgram(
      Target<T>("geqp3"), {{{batch, m, n}, e}, {{batch, n}, "i32"}},
      {{{batch, m, n}, e}, {{batch, n}, "i32"}, {{batch, k}, e}}, "");
  ASSERT_OK_AND_ASSIGN(
      auto out, RunText(text, {Array<T>({batch, m, n}, a),
                               HostArray::Of<int32_t>(ElementType::kI32,
                                                      {batch, n}, jpvt)}));
  std::vector<int32_t> perm = Ints(out[1]);
  EXPECT_EQ(perm[n + 0], 3);  // the fixed column, 1-based
  for (int64_t b = 0; b < batch; ++b) {
    Mat f = MatrixOf<T>(out[0], b, m, n);
    std::vector<c128> tau = VectorOf<T>(out[2], b, k);
    Mat q = Identity(m);
    for (int64_t i = 0; i < k; ++i) {
      Mat v(m, 1);
      v(i, 0) = 1;
      for (int64_t r = i + 1; r < m; ++r) v(r, 0) = f(r, i);
      Mat h = Identity(m), vvh = v * Adjoint(v);
      for (size_t x = 0; x < h.v.size(); ++x) h.v[x] -= tau[i] * vvh.v[x];
      q = q * h;
    }
    Mat r(m, n);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = i; j < n; ++j) r(i, j) = f(i, j);
    Mat orig = MatrixOf<T>(Array<T>({batch, m, n}, a), b, m, n), ap(m, n);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) ap(i, j) = orig(i, perm[b * n + j] - 1);
    EXPECT_LT(RelativeDiff(q * r, ap), Lapack<T>::kTol);
    // Pivoting makes |R(i, i)| non-increasing over the free columns.
    for (int64_t i = b == 0 ? 1 : 2; i < k; ++i) {
      EXPECT_LE(std::abs(r(i, i)), std::abs(r(i - 1, i - 1)) * (1 + 1e-5));
    }
  }
}

// --- potrf, trsm -----------------------------------------------------------

TYPED_TEST(LapackTest, PotrfFactorsEitherTriangleAndLeavesTheOther) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  const int64_t batch = 2, n = 4;
  std::vector<T> a = PositiveDefinite<T>(batch, n, 6);
  for (bool lower : {true, false}) {
    std::string text = CallProgram(Target<T>("potrf"), {{{batch, n, n}, e}},
                                   {{{batch, n, n}, e}, {{batch}, "i32"}},
                                   Char("uplo", lower ? 'L' : 'U'));
    ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({batch, n, n}, a)}));
    for (int64_t b = 0; b < batch; ++b) {
      EXPECT_EQ(Ints(out[1])[b], 0);
      Mat f = MatrixOf<T>(out[0], b, n, n),
          orig = MatrixOf<T>(Array<T>({batch, n, n}, a), b, n, n), t(n, n);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          bool in_factor = lower ? i >= j : i <= j;
          if (in_factor) {
            t(i, j) = f(i, j);
          } else {
            EXPECT_EQ(f(i, j), orig(i, j));  // untouched, as in LAPACK
          }
        }
      Mat product = lower ? t * Adjoint(t) : Adjoint(t) * t;
      EXPECT_LT(RelativeDiff(product, orig), Lapack<T>::kTol);
    }
  }
}

TYPED_TEST(LapackTest, PotrfReportsTheFirstMinorThatIsNotPositive) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  std::vector<T> a = {T(4), T(2), T(0), T(2), T(1), T(0), T(0), T(0), T(1)};
  std::string text = CallProgram(Target<T>("potrf"), {{{3, 3}, e}},
                                 {{{3, 3}, e}, {{}, "i32"}}, Char("uplo", 'L'));
  ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({3, 3}, a)}));
  EXPECT_EQ(Ints(out[1])[0], 2);
}

// At 150 the f32 kernel substitutes in three blocks of rows or columns,
// each taking the earlier blocks' terms through sgemm.
TYPED_TEST(LapackTest, TrsmSolvesEverySideTransposeAndTriangle) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  for (const int64_t k : {4, 150}) {
    const int64_t batch = 2, other = 3;
    std::vector<T> a = RandomValues<T>(batch * k * k, 7);
    // A strong diagonal, and off the diagonal small enough that a unit
    // one is strong too, keep the triangles well conditioned.
    if (k >= 16) {
      for (T& v : a) v *= T(1.0 / static_cast<double>(k));
    }
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < k; ++i) a[(b * k + i) * k + i] += T(3);
    for (char side : {'L', 'R'}) {
      for (char trans : {'N', 'T', 'C'}) {
        for (char uplo : {'L', 'U'}) {
          for (char diag : {'N', 'U'}) {
            const int64_t rows = side == 'L' ? k : other,
                          cols = side == 'L' ? other : k;
            std::vector<T> bv = RandomValues<T>(batch * rows * cols, 8);
            std::string text = CallProgram(
                Target<T>("trsm"),
                {{{batch, k, k}, e}, {{batch, rows, cols}, e}},
                {{{batch, rows, cols}, e}},
                Char("side", side) + ", " + Char("uplo", uplo) + ", " +
                    Char("trans_x", trans) + ", " + Char("diag", diag));
            ASSERT_OK_AND_ASSIGN(
                auto out, RunText(text, {Array<T>({batch, k, k}, a),
                                         Array<T>({batch, rows, cols}, bv)}));
            for (int64_t b = 0; b < batch; ++b) {
              Mat full = MatrixOf<T>(Array<T>({batch, k, k}, a), b, k, k),
                  t(k, k);
              for (int64_t i = 0; i < k; ++i)
                for (int64_t j = 0; j < k; ++j) {
                  if (i == j && diag == 'U') {
                    t(i, j) = 1;
                  } else if (uplo == 'L' ? i >= j : i <= j) {
                    t(i, j) = full(i, j);
                  }
                }
              Mat op = t;
              if (trans != 'N') {
                op = Adjoint(t);
                if (trans == 'T') {
                  for (c128& x : op.v) x = std::conj(x);
                }
              }
              Mat x = MatrixOf<T>(out[0], b, rows, cols);
              Mat lhs = side == 'L' ? op * x : x * op;
              EXPECT_LT(RelativeDiff(
                            lhs, MatrixOf<T>(Array<T>({batch, rows, cols}, bv),
                                             b, rows, cols)),
                        Lapack<T>::kTol)
                  << side << trans << uplo << diag << " " << k;
            }
          }
        }
      }
    }
  }
}

// Sizes at which the kernels split their work: trsm's columns (left side)
// and rows (right side) over the cores, potrf's columns updated a column at
// a time. The products must give back the inputs.
TYPED_TEST(LapackTest, TrsmAndPotrfOfLargerMatricesSplitTheirWork) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  const int64_t n = 70, wide = 200;
  std::vector<T> spd = PositiveDefinite<T>(1, n, 11);
  ASSERT_OK_AND_ASSIGN(
      auto factor,
      RunText(CallProgram(Target<T>("potrf"), {{{n, n}, e}},
                          {{{n, n}, e}, {{}, "i32"}}, Char("uplo", 'L')),
              {Array<T>({n, n}, spd)}));
  EXPECT_EQ(Ints(factor[1])[0], 0);
  Mat l = MatrixOf<T>(factor[0], 0, n, n), orig(n, n);
  orig = MatrixOf<T>(Array<T>({n, n}, spd), 0, n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      EXPECT_EQ(l(i, j), orig(i, j));  // untouched, as in LAPACK
      l(i, j) = 0;
    }
  // The minor of order 51 (in the f32 kernel's second panel) is not
  // positive definite once A(50, 50) is far below zero.
  std::vector<T> indefinite = spd;
  indefinite[50 * n + 50] = T(-1e6);
  ASSERT_OK_AND_ASSIGN(
      auto failed,
      RunText(CallProgram(Target<T>("potrf"), {{{n, n}, e}},
                          {{{n, n}, e}, {{}, "i32"}}, Char("uplo", 'L')),
              {Array<T>({n, n}, indefinite)}));
  EXPECT_EQ(Ints(failed[1])[0], 51);
  EXPECT_LT(RelativeDiff(l * Adjoint(l), orig), Lapack<T>::kTol);
  for (char side : {'L', 'R'}) {
    const int64_t rows = side == 'L' ? n : wide, cols = side == 'L' ? wide : n;
    std::vector<T> bv = RandomValues<T>(rows * cols, 12);
    ASSERT_OK_AND_ASSIGN(
        auto out,
        RunText(
            CallProgram(Target<T>("trsm"), {{{n, n}, e}, {{rows, cols}, e}},
                        {{{rows, cols}, e}},
                        Char("side", side) + ", " + Char("uplo", 'L') + ", " +
                            Char("trans_x", 'N') + ", " + Char("diag", 'N')),
            {factor[0], Array<T>({rows, cols}, bv)}));
    Mat x = MatrixOf<T>(out[0], 0, rows, cols);
    Mat lhs = side == 'L' ? l * x : x * l;
    EXPECT_LT(RelativeDiff(
                  lhs, MatrixOf<T>(Array<T>({rows, cols}, bv), 0, rows, cols)),
              Lapack<T>::kTol)
        << side;
  }
}

// --- syevd, sytrd ----------------------------------------------------------

// syevd of [batch, n, n] from either triangle: A V = V W, V orthonormal,
// W ascending.
template <typename T>
void ExpectSyevdDecomposes(int64_t batch, int64_t n) {
  using R = RealOf<T>;
  const std::string e = Lapack<T>::kName;
  for (bool lower : {true, false}) {
    std::vector<Mat> dense;
    std::vector<T> a = HermitianWithGarbage<T>(batch, n, lower, 9, &dense);
    std::string text =
        CallProgram(Target<T>("syevd", "heevd"), {{{batch, n, n}, e}},
                    {{{batch, n, n}, e},
                     {{batch, n}, Lapack<T>::kRealName},
                     {{batch}, "i32"}},
                    Char("mode", 'V') + ", " + Char("uplo", lower ? 'L' : 'U'));
    ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({batch, n, n}, a)}));
    for (int64_t b = 0; b < batch; ++b) {
      EXPECT_EQ(Ints(out[2])[b], 0);
      Mat v = MatrixOf<T>(out[0], b, n, n);
      std::vector<c128> w = VectorOf<R>(out[1], b, n);
      Mat vw = v;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) vw(i, j) *= w[j];
      EXPECT_LT(RelativeDiff(dense[b] * v, vw), Lapack<T>::kTol);
      EXPECT_LT(RelativeDiff(Adjoint(v) * v, Identity(n)), Lapack<T>::kTol);
      for (int64_t j = 1; j < n; ++j) EXPECT_LE(w[j - 1].real(), w[j].real());
    }
  }
}

TYPED_TEST(LapackTest, SyevdGivesAscendingEigenvaluesAndOrthonormalVectors) {
  ExpectSyevdDecomposes<TypeParam>(2, 6);
  // Long enough columns for the tridiagonal reduction's split dot products.
  ExpectSyevdDecomposes<TypeParam>(1, 40);
}

TYPED_TEST(LapackTest, SytrdReflectorsReduceToTheTridiagonalDE) {
  using T = TypeParam;
  using R = RealOf<T>;
  const std::string e = Lapack<T>::kName, re = Lapack<T>::kRealName;
  const int64_t batch = 2, n = 5;
  for (bool lower : {true, false}) {
    std::vector<Mat> dense;
    std::vector<T> a = HermitianWithGarbage<T>(batch, n, lower, 10, &dense);
    std::string text =
        CallProgram(Target<T>("sytrd", "hetrd"), {{{batch, n, n}, e}},
                    {{{batch, n, n}, e},
                     {{batch, n}, re},
                     {{batch, n - 1}, re},
                     {{batch, n - 1}, e},
                     {{batch}, "i32"}},
                    Char("uplo", lower ? 'L' : 'U'));
    ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({batch, n, n}, a)}));
    for (int64_t b = 0; b < batch; ++b) {
      Mat f = MatrixOf<T>(out[0], b, n, n);
      std::vector<c128> d = VectorOf<R>(out[1], b, n),
                        off = VectorOf<R>(out[2], b, n - 1),
                        tau = VectorOf<T>(out[3], b, n - 1);
      Mat t(n, n);
      for (int64_t i = 0; i < n; ++i) t(i, i) = d[i];
      for (int64_t i = 0; i + 1 < n; ++i) t(i, i + 1) = t(i + 1, i) = off[i];
      // lower: Q = H(0) ... H(n-2), v(i+1) = 1, v(i+2:) below the
      // subdiagonal; upper: Q = H(n-2) ... H(0), v(i) = 1, v(:i) above.
      Mat q = Identity(n);
      for (int64_t step = 0; step + 1 < n; ++step) {
        int64_t i = lower ? step : n - 2 - step;
        Mat v(n, 1);
        if (lower) {
          v(i + 1, 0) = 1;
          for (int64_t r = i + 2; r < n; ++r) v(r, 0) = f(r, i);
        } else {
          v(i, 0) = 1;
          for (int64_t r = 0; r < i; ++r) v(r, 0) = f(r, i + 1);
        }
        Mat h = Identity(n), vvh = v * Adjoint(v);
        for (size_t x = 0; x < h.v.size(); ++x) h.v[x] -= tau[i] * vvh.v[x];
        q = q * h;
      }
      EXPECT_LT(RelativeDiff(q * t * Adjoint(q), dense[b]), Lapack<T>::kTol);
    }
  }
}

// --- gehrd, gees, geev ------------------------------------------------------

TYPED_TEST(LapackTest, GehrdReflectorsReduceToTheHessenbergForm) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  const int64_t batch = 2, n = 5;
  std::vector<T> a = RandomValues<T>(batch * n * n, 11);
  std::string text =
      CallProgram(Target<T>("gehrd"), {{{batch, n, n}, e}},
                  {{{batch, n, n}, e}, {{batch, n - 1}, e}, {{batch}, "i32"}},
                  "high = 5 : i32, low = 1 : i32");
  ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({batch, n, n}, a)}));
  for (int64_t b = 0; b < batch; ++b) {
    Mat f = MatrixOf<T>(out[0], b, n, n), h(n, n);
    std::vector<c128> tau = VectorOf<T>(out[1], b, n - 1);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = std::max<int64_t>(0, i - 1); j < n; ++j)
        h(i, j) = f(i, j);
    Mat q = Identity(n);
    for (int64_t i = 0; i + 1 < n; ++i) {
      Mat v(n, 1);
      v(i + 1, 0) = 1;
      for (int64_t r = i + 2; r < n; ++r) v(r, 0) = f(r, i);
      Mat hh = Identity(n), vvh = v * Adjoint(v);
      for (size_t x = 0; x < hh.v.size(); ++x) hh.v[x] -= tau[i] * vvh.v[x];
      q = q * hh;
    }
    EXPECT_LT(RelativeDiff(q * h * Adjoint(q),
                           MatrixOf<T>(Array<T>({batch, n, n}, a), b, n, n)),
              Lapack<T>::kTol);
  }
}

TYPED_TEST(LapackTest, GeesGivesAStandardSchurFormAndUnitaryVectors) {
  using T = TypeParam;
  using R = RealOf<T>;
  const std::string e = Lapack<T>::kName;
  const bool complex = Lapack<T>::kComplex;
  const int64_t batch = 2, n = 7;
  std::vector<T> a = RandomValues<T>(batch * n * n, 12);
  std::vector<Arg> results = {
      {{batch, n, n}, e}, {{batch, n, n}, e}, {{batch, n}, e}};
  if (!complex) results.push_back({{batch, n}, e});
  results.push_back({{batch}, "i32"});
  results.push_back({{batch}, "i32"});
  std::string text =
      CallProgram(Target<T>("gees"), {{{batch, n, n}, e}}, results,
                  Char("mode", 'V') + ", " + Char("sort", 'N'));
  ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({batch, n, n}, a)}));
  for (int64_t b = 0; b < batch; ++b) {
    EXPECT_EQ(Ints(out.back())[b], 0);
    Mat t = MatrixOf<T>(out[0], b, n, n), z = MatrixOf<T>(out[1], b, n, n);
    EXPECT_LT(RelativeDiff(z * t * Adjoint(z),
                           MatrixOf<T>(Array<T>({batch, n, n}, a), b, n, n)),
              Lapack<T>::kTol);
    EXPECT_LT(RelativeDiff(Adjoint(z) * z, Identity(n)), Lapack<T>::kTol);
    std::vector<c128> w;
    if (complex) {
      w = VectorOf<T>(out[2], b, n);
    } else {
      std::vector<c128> wr = VectorOf<R>(out[2], b, n),
                        wi = VectorOf<R>(out[3], b, n);
      for (int64_t i = 0; i < n; ++i) w.push_back({wr[i].real(), wi[i].real()});
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j + 1 < i; ++j) EXPECT_EQ(t(i, j), c128(0));
      if (i + 1 < n && t(i + 1, i) != c128(0)) {
        // A 2x2 block of a real Schur form: equal diagonal, b c < 0, and
        // the eigenvalues a +- i sqrt(-b c), the positive one first.
        ASSERT_FALSE(complex);
        EXPECT_EQ(t(i, i), t(i + 1, i + 1));
        EXPECT_LT((t(i, i + 1) * t(i + 1, i)).real(), 0);
        double im = std::sqrt(-(t(i, i + 1) * t(i + 1, i)).real());
        EXPECT_NEAR(w[i].imag(), im, 1e-4 * (1 + im));
        EXPECT_NEAR(w[i + 1].imag(), -im, 1e-4 * (1 + im));
        ++i;
      } else {
        EXPECT_EQ(w[i], t(i, i));
      }
    }
  }
}

TYPED_TEST(LapackTest, GeevGivesNormalizedLeftAndRightEigenvectors) {
  using T = TypeParam;
  using R = RealOf<T>;
  using C = ComplexOf<T>;
  const std::string e = Lapack<T>::kName;
  const std::string ce = Lapack<C>::kName;
  const bool complex = Lapack<T>::kComplex;
  const int64_t batch = 2, n = 6;
  std::vector<T> a = RandomValues<T>(batch * n * n, 13);
  std::vector<Arg> results = {{{batch, n}, e}};
  if (!complex) results.push_back({{batch, n}, e});
  results.push_back({{batch, n, n}, ce});
  results.push_back({{batch, n, n}, ce});
  results.push_back({{batch}, "i32"});
  std::string text = CallProgram(
      Target<T>("geev"), {{{batch, n, n}, e}}, results,
      Char("compute_left", 'V') + ", " + Char("compute_right", 'V'));
  ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({batch, n, n}, a)}));
  const int first = complex ? 1 : 2;
  for (int64_t b = 0; b < batch; ++b) {
    EXPECT_EQ(Ints(out.back())[b], 0);
    Mat am = MatrixOf<T>(Array<T>({batch, n, n}, a), b, n, n);
    std::vector<c128> w;
    if (complex) {
      w = VectorOf<T>(out[0], b, n);
    } else {
      std::vector<c128> wr = VectorOf<R>(out[0], b, n),
                        wi = VectorOf<R>(out[1], b, n);
      for (int64_t i = 0; i < n; ++i) w.push_back({wr[i].real(), wi[i].real()});
    }
    Mat vl = MatrixOf<C>(out[first], b, n, n),
        vr = MatrixOf<C>(out[first + 1], b, n, n);
    Mat vrw = vr, vlw = vl;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        vrw(i, j) *= w[j];
        vlw(i, j) *= std::conj(w[j]);
      }
    EXPECT_LT(RelativeDiff(am * vr, vrw), Lapack<T>::kTol);
    EXPECT_LT(RelativeDiff(Adjoint(am) * vl, vlw), Lapack<T>::kTol);
    for (const Mat* v : {&vl, &vr}) {
      for (int64_t j = 0; j < n; ++j) {
        double norm = 0, largest = 0;
        c128 pivot;
        for (int64_t i = 0; i < n; ++i) {
          norm += std::norm((*v)(i, j));
          if (std::abs((*v)(i, j)) > largest + 1e-6) {
            largest = std::abs((*v)(i, j));
            pivot = (*v)(i, j);
          }
        }
        EXPECT_NEAR(norm, 1, Lapack<T>::kTol);
        EXPECT_EQ(pivot.imag(), 0) << "column " << j;
      }
    }
    if (!complex) {
      for (int64_t i = 0; i < n; ++i) {
        if (w[i].imag() > 0) {
          EXPECT_EQ(w[i + 1], std::conj(w[i]));
          ++i;
        } else {
          EXPECT_EQ(w[i].imag(), 0);
        }
      }
    }
  }
}

TYPED_TEST(LapackTest, GeevReportsNonFiniteInput) {
  using T = TypeParam;
  using C = ComplexOf<T>;
  const std::string e = Lapack<T>::kName;
  std::vector<T> a = {T(1), T(std::numeric_limits<RealOf<T>>::infinity()), T(0),
                      T(1)};
  std::vector<Arg> results = {{{2}, e}};
  if (!Lapack<T>::kComplex) results.push_back({{2}, e});
  results.push_back({{2, 2}, Lapack<C>::kName});
  results.push_back({{2, 2}, Lapack<C>::kName});
  results.push_back({{}, "i32"});
  std::string text = CallProgram(
      Target<T>("geev"), {{{2, 2}, e}}, results,
      Char("compute_left", 'N') + ", " + Char("compute_right", 'V'));
  ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({2, 2}, a)}));
  EXPECT_EQ(Ints(out.back())[0], -4);
}

// --- gesdd, gesvd -----------------------------------------------------------

TYPED_TEST(LapackTest, SvdReconstructsWithOrthonormalVectorsInEveryMode) {
  using T = TypeParam;
  using R = RealOf<T>;
  const std::string e = Lapack<T>::kName;
  const int64_t batch = 2;
  for (std::string routine : {"gesdd", "gesvd"}) {
    for (auto [m, n] : {std::pair<int64_t, int64_t>{6, 4}, {3, 5}, {4, 4}}) {
      const int64_t k = std::min(m, n);
      std::vector<T> a = RandomValues<T>(batch * m * n, 14);
      if (m == n) {
        // Rank deficient: row 3 = row 0 + row 1 (a zero singular value).
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t j = 0; j < n; ++j)
            a[(b * m + 3) * n + j] =
                a[(b * m) * n + j] + a[(b * m + 1) * n + j];
      }
      std::vector<double> singular_values;
      for (char mode : {'A', 'S', 'N'}) {
        bool full = mode != 'S';
        int64_t u_cols = full ? m : k, vt_rows = full ? n : k;
        std::string text = CallProgram(Target<T>(routine), {{{batch, m, n}, e}},
                                       {{{batch, m, n}, e},
                                        {{batch, k}, Lapack<T>::kRealName},
                                        {{batch, m, u_cols}, e},
                                        {{batch, vt_rows, n}, e},
                                        {{batch}, "i32"}},
                                       Char("mode", mode));
        ASSERT_OK_AND_ASSIGN(auto out,
                             RunText(text, {Array<T>({batch, m, n}, a)}));
        for (int64_t b = 0; b < batch; ++b) {
          EXPECT_EQ(Ints(out[4])[b], 0);
          std::vector<c128> s = VectorOf<R>(out[1], b, k);
          for (int64_t i = 0; i < k; ++i) {
            EXPECT_GE(s[i].real(), 0);
            if (i > 0) {
              EXPECT_LE(s[i].real(), s[i - 1].real());
            }
            if (mode == 'A') {
              singular_values.push_back(s[i].real());
            } else {
              EXPECT_NEAR(s[i].real(), singular_values[b * k + i],
                          Lapack<T>::kTol);
            }
          }
          if (mode == 'N') continue;
          Mat u = MatrixOf<T>(out[2], b, m, u_cols),
              vt = MatrixOf<T>(out[3], b, vt_rows, n), sigma(u_cols, vt_rows);
          for (int64_t i = 0; i < k; ++i) sigma(i, i) = s[i];
          EXPECT_LT(
              RelativeDiff(u * sigma * vt,
                           MatrixOf<T>(Array<T>({batch, m, n}, a), b, m, n)),
              Lapack<T>::kTol)
              << routine << " " << m << "x" << n << " " << mode;
          EXPECT_LT(RelativeDiff(Adjoint(u) * u, Identity(u_cols)),
                    Lapack<T>::kTol);
          EXPECT_LT(RelativeDiff(vt * Adjoint(vt), Identity(vt_rows)),
                    Lapack<T>::kTol);
        }
      }
    }
  }
}

TYPED_TEST(LapackTest, HugeAndTinyMatricesKeepTheirAccuracy) {
  using T = TypeParam;
  using R = RealOf<T>;
  const std::string e = Lapack<T>::kName, re = Lapack<T>::kRealName;
  const int64_t n = 4;
  // Powers of two beyond the range where sums of squares stay finite.
  const int exponent = std::is_same_v<R, float> ? 64 : 520;
  std::vector<T> a = PositiveDefinite<T>(1, n, 19);
  std::string svd = CallProgram(
      Target<T>("gesdd"), {{{n, n}, e}},
      {{{n, n}, e}, {{n}, re}, {{n, n}, e}, {{n, n}, e}, {{}, "i32"}},
      Char("mode", 'N'));
  std::string eigh = CallProgram(Target<T>("syevd", "heevd"), {{{n, n}, e}},
                                 {{{n, n}, e}, {{n}, re}, {{}, "i32"}},
                                 Char("mode", 'V') + ", " + Char("uplo", 'L'));
  for (const std::string& text : {svd, eigh}) {
    const int values = 1;  // s of gesdd, w of syevd
    ASSERT_OK_AND_ASSIGN(auto base, RunText(text, {Array<T>({n, n}, a)}));
    std::vector<c128> expected = VectorOf<R>(base[values], 0, n);
    for (int sign : {1, -1}) {
      const R factor = std::ldexp(R(1), sign * exponent);
      std::vector<T> scaled = a;
      for (T& x : scaled) x *= factor;
      ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({n, n}, scaled)}));
      std::vector<c128> got = VectorOf<R>(out[values], 0, n);
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_NEAR(got[i].real() / double(factor), expected[i].real(),
                    Lapack<T>::kTol * std::abs(expected[i].real()));
      }
    }
  }
}

TYPED_TEST(LapackTest, SvdOfZeroIdentityAndNilpotentMatrices) {
  using T = TypeParam;
  using R = RealOf<T>;
  const std::string e = Lapack<T>::kName;
  const int64_t n = 5;
  std::vector<std::vector<T>> cases(4, std::vector<T>(n * n, T(0)));
  for (int64_t i = 0; i < n; ++i) {
    cases[1][i * n + i] = T(1);                     // identity
    if (i + 1 < n) cases[2][i * n + i + 1] = T(1);  // shift: zero diagonal
    cases[3][i * n + (n - 1 - i)] = T(R(i + 1));    // anti-diagonal
  }
  const std::vector<std::vector<double>> expected = {
      {0, 0, 0, 0, 0}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 0}, {5, 4, 3, 2, 1}};
  std::string text = CallProgram(Target<T>("gesdd"), {{{n, n}, e}},
                                 {{{n, n}, e},
                                  {{n}, Lapack<T>::kRealName},
                                  {{n, n}, e},
                                  {{n, n}, e},
                                  {{}, "i32"}},
                                 Char("mode", 'A'));
  for (size_t c = 0; c < cases.size(); ++c) {
    ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<T>({n, n}, cases[c])}));
    EXPECT_EQ(Ints(out[4])[0], 0);
    std::vector<c128> s = VectorOf<R>(out[1], 0, n);
    Mat u = MatrixOf<T>(out[2], 0, n, n), vt = MatrixOf<T>(out[3], 0, n, n),
        sigma(n, n);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(s[i].real(), expected[c][i], Lapack<T>::kTol) << c;
      sigma(i, i) = s[i];
    }
    EXPECT_LT(RelativeDiff(u * sigma * vt,
                           MatrixOf<T>(Array<T>({n, n}, cases[c]), 0, n, n)),
              Lapack<T>::kTol);
    EXPECT_LT(RelativeDiff(Adjoint(u) * u, Identity(n)), Lapack<T>::kTol);
    EXPECT_LT(RelativeDiff(vt * Adjoint(vt), Identity(n)), Lapack<T>::kTol);
  }
}

// --- gtsv, tridiagonal_solve_perturbed ---------------------------------------

TYPED_TEST(LapackTest, TridiagonalSolversSolveSystemsThatNeedPivoting) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  const int64_t batch = 2, m = 5, nrhs = 2;
  std::vector<T> dl = RandomValues<T>(batch * m, 15),
                 d = RandomValues<T>(batch * m, 16),
                 du = RandomValues<T>(batch * m, 17),
                 b = RandomValues<T>(batch * m * nrhs, 18);
  d[1] = T(0);  // row 1 must swap with row 2
  std::vector<HostArray> inputs = {
      Array<T>({batch, m}, dl), Array<T>({batch, m}, d),
      Array<T>({batch, m}, du), Array<T>({batch, m, nrhs}, b)};
  std::vector<Arg> operands = {
      {{batch, m}, e}, {{batch, m}, e}, {{batch, m}, e}, {{batch, m, nrhs}, e}};
  std::string gtsv = CallProgram(Target<T>("gtsv"), operands,
                                 {{{batch, m}, e},
                                  {{batch, m}, e},
                                  {{batch, m}, e},
                                  {{batch, m, nrhs}, e},
                                  {{batch}, "i32"}},
                                 "");
  std::string perturbed = CallProgram("tridiagonal_solve_perturbed_ffi",
                                      operands, {{{batch, m, nrhs}, e}}, "");
  ASSERT_OK_AND_ASSIGN(auto out_gtsv, RunText(gtsv, inputs));
  ASSERT_OK_AND_ASSIGN(auto out_perturbed, RunText(perturbed, inputs));
  for (int64_t k = 0; k < batch; ++k) {
    EXPECT_EQ(Ints(out_gtsv[4])[k], 0);
    Mat a(m, m);
    for (int64_t i = 0; i < m; ++i) {
      a(i, i) = c128(d[k * m + i]);
      if (i > 0) a(i, i - 1) = c128(dl[k * m + i]);
      if (i + 1 < m) a(i, i + 1) = c128(du[k * m + i]);
    }
    Mat rhs = MatrixOf<T>(inputs[3], k, m, nrhs);
    EXPECT_LT(RelativeDiff(a * MatrixOf<T>(out_gtsv[3], k, m, nrhs), rhs),
              Lapack<T>::kTol * 10);
    EXPECT_LT(RelativeDiff(a * MatrixOf<T>(out_perturbed[0], k, m, nrhs), rhs),
              Lapack<T>::kTol * 10);
  }
}

TYPED_TEST(LapackTest, PerturbedTridiagonalSolveOfASingularSystemIsFinite) {
  using T = TypeParam;
  const std::string e = Lapack<T>::kName;
  std::vector<T> zero(3, T(0)), b(3, T(1));
  std::vector<Arg> operands = {{{3}, e}, {{3}, e}, {{3}, e}, {{3, 1}, e}};
  std::string perturbed = CallProgram("tridiagonal_solve_perturbed_ffi",
                                      operands, {{{3, 1}, e}}, "");
  ASSERT_OK_AND_ASSIGN(
      auto out, RunText(perturbed, {Array<T>({3}, zero), Array<T>({3}, zero),
                                    Array<T>({3}, zero), Array<T>({3, 1}, b)}));
  for (T x : Values<T>(out[0])) {
    EXPECT_TRUE(std::isfinite(std::abs(x)));
    EXPECT_GT(std::abs(x), 1e6);
  }
  std::string gtsv =
      CallProgram(Target<T>("gtsv"), operands,
                  {{{3}, e}, {{3}, e}, {{3}, e}, {{3, 1}, e}, {{}, "i32"}}, "");
  ASSERT_OK_AND_ASSIGN(
      auto singular, RunText(gtsv, {Array<T>({3}, zero), Array<T>({3}, zero),
                                    Array<T>({3}, zero), Array<T>({3, 1}, b)}));
  EXPECT_EQ(Ints(singular[4])[0], 1);
}

// --- Errors
// -------------------------------------------------------------------

TEST(LapackErrorTest, UnknownLapackTargetIsUnimplementedAndNamed) {
  std::string text = CallProgram("lapack_sgelsd_ffi", {{{3, 3}, "f32"}},
                                 {{{3, 3}, "f32"}}, "");
  auto plan = CompileText(text);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(plan.status().message().find("lapack_sgelsd_ffi"),
            std::string::npos);
}

// A call its target cannot take compiles, as on XLA (which decodes FFI
// arguments when the call runs), and fails with INVALID_ARGUMENT naming the
// call when it runs.
void ExpectInvalid(const std::string& text, const std::string& fragment) {
  auto plan = CompileText(text);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::vector<exec::AlignedBuffer> inputs;
  std::vector<const void*> pointers;
  for (const exec::ValueSpec& spec : (*plan)->arguments()) {
    inputs.emplace_back(std::max<int64_t>(spec.byte_size(), 1));
    std::memset(inputs.back().data(), 0, inputs.back().size());
    pointers.push_back(inputs.back().data());
  }
  exec::OwningOutputAllocator outputs;
  StatusOr<std::vector<void*>> run = exec::Execute(**plan, pointers, outputs);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kInvalidArgument)
      << run.status().ToString();
  // The op is named once (the executor names a failing step's op).
  const std::string message(run.status().message());
  const size_t first = message.find("stablehlo.custom_call");
  EXPECT_NE(first, std::string::npos) << run.status().ToString();
  EXPECT_EQ(message.find("stablehlo.custom_call", first + 1), std::string::npos)
      << run.status().ToString();
  EXPECT_NE(run.status().message().find(fragment), std::string::npos)
      << run.status().ToString();
}

TEST(LapackErrorTest, BadAttributesShapesTypesAndLayoutsFailWhenTheCallRuns) {
  // uplo must be 'L' or 'U'.
  ExpectInvalid(CallProgram("lapack_spotrf_ffi", {{{3, 3}, "f32"}},
                            {{{3, 3}, "f32"}, {{}, "i32"}}, Char("uplo", 'X')),
                "uplo");
  // A missing attribute.
  ExpectInvalid(CallProgram("lapack_dsyevd_ffi", {{{3, 3}, "f64"}},
                            {{{3, 3}, "f64"}, {{3}, "f64"}, {{}, "i32"}},
                            Char("uplo", 'L')),
                "mode");
  // Cholesky of a non-square matrix.
  ExpectInvalid(CallProgram("lapack_spotrf_ffi", {{{3, 4}, "f32"}},
                            {{{3, 4}, "f32"}, {{}, "i32"}}, Char("uplo", 'L')),
                "square");
  // The target's letter says f32; the operand is f64.
  ExpectInvalid(CallProgram("lapack_sgetrf_ffi", {{{3, 3}, "f64"}},
                            {{{3, 3}, "f64"}, {{3}, "i32"}, {{}, "i32"}}, ""),
                "operand 0");
  // A result of the wrong shape.
  ExpectInvalid(CallProgram("lapack_sgetrf_ffi", {{{3, 3}, "f32"}},
                            {{{3, 3}, "f32"}, {{2}, "i32"}, {{}, "i32"}}, ""),
                "tensor<2xi32>");
  // A layout that is not a permutation of the dimensions: the op verifier
  // refuses it when the program compiles.
  auto bad_layout = CompileText(
      CallProgram("lapack_sgeqrf_ffi", {{{3, 3}, "f32"}},
                  {{{3, 3}, "f32"}, {{3}, "f32"}}, "",
                  "operand_layouts = [dense<[1, 1]> : tensor<2xindex>], "
                  "result_layouts = [dense<[0, 1]> : tensor<2xindex>, "
                  "dense<[0]> : tensor<1xindex>]"));
  ASSERT_FALSE(bad_layout.ok());
  EXPECT_EQ(bad_layout.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_layout.status().message().find("permutation"),
            std::string::npos)
      << bad_layout.status().ToString();
  // The wrong number of results.
  ExpectInvalid(CallProgram("lapack_sgeqrf_ffi", {{{3, 3}, "f32"}},
                            {{{3, 3}, "f32"}}, ""),
                "results");
  // Sorted Schur forms are not supported.
  ExpectInvalid(CallProgram("lapack_zgees_ffi", {{{3, 3}, "complex<f64>"}},
                            {{{3, 3}, "complex<f64>"},
                             {{3, 3}, "complex<f64>"},
                             {{3}, "complex<f64>"},
                             {{}, "i32"},
                             {{}, "i32"}},
                            Char("mode", 'V') + ", " + Char("sort", 'S')),
                "sort");
}

// A call that declares row-major layouts gets what XLA gives the handler:
// the routine reads the row-major bytes of A as a column-major matrix (A^T)
// and its column-major factor's bytes are read back row-major. For the
// symmetric A = [[4, 2], [2, 5]] the lower factor is L = [[2, 0], [1, 2]],
// so the logical result is L^T; the default layouts give L itself.
TEST(LapackLayoutTest, DeclaredRowMajorLayoutsReorderTheBytesAsXlaGivesThem) {
  const std::vector<float> a = {4, 2, 2, 5};
  const std::string row_major =
      "operand_layouts = [dense<[1, 0]> : tensor<2xindex>], "
      "result_layouts = [dense<[1, 0]> : tensor<2xindex>, "
      "dense<> : tensor<0xindex>]";
  for (bool declared : {false, true}) {
    std::string text = CallProgram(
        "lapack_spotrf_ffi", {{{2, 2}, "f32"}}, {{{2, 2}, "f32"}, {{}, "i32"}},
        Char("uplo", 'L'), declared ? row_major : "");
    ASSERT_OK_AND_ASSIGN(auto out, RunText(text, {Array<float>({2, 2}, a)}));
    // potrf leaves the other triangle as it was: A's 2 there.
    const std::vector<float> expected = declared
                                            ? std::vector<float>{2, 1, 2, 2}
                                            : std::vector<float>{2, 2, 1, 2};
    EXPECT_EQ(out[0].As<float>(), expected) << (declared ? "row-major" : "");
    EXPECT_EQ(out[1].As<int32_t>(), std::vector<int32_t>{0});
  }
}

// A batch-minor layout {0, 2, 1} on the operand and the factors: element
// (b, i, j) sits at byte offset b + 2 j + 4 i, which the routine reads as
// its column-major (b', i', j') at 4 b' + 2 j' + i', so b' = i, i' = b,
// j' = j. The call therefore means a plain call on X with its first two
// dimensions swapped, whose factors come back swapped the same way; tau
// (rank 2, its default layout declared) is the plain call's as it is.
TEST(LapackLayoutTest, ABatchMinorLayoutSwapsTheBatchAndRowDimensions) {
  const std::vector<float> x = {3, 0, 4, 5, 1, 2, 6, 7};
  auto swap01 = [](const std::vector<float>& v) {
    std::vector<float> t(8);
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) t[i * 4 + b * 2 + j] = v[b * 4 + i * 2 + j];
    return t;
  };
  const std::string layouts =
      "operand_layouts = [dense<[0, 2, 1]> : tensor<3xindex>], "
      "result_layouts = [dense<[0, 2, 1]> : tensor<3xindex>, "
      "dense<[1, 0]> : tensor<2xindex>]";
  const std::vector<Arg> operands = {{{2, 2, 2}, "f32"}};
  const std::vector<Arg> results = {{{2, 2, 2}, "f32"}, {{2, 2}, "f32"}};
  ASSERT_OK_AND_ASSIGN(
      auto declared,
      RunText(CallProgram("lapack_sgeqrf_ffi", operands, results, "", layouts),
              {Array<float>({2, 2, 2}, x)}));
  ASSERT_OK_AND_ASSIGN(
      auto plain,
      RunText(CallProgram("lapack_sgeqrf_ffi", operands, results, ""),
              {Array<float>({2, 2, 2}, swap01(x))}));
  EXPECT_EQ(declared[0].As<float>(), swap01(plain[0].As<float>()));
  EXPECT_EQ(declared[1].As<float>(), plain[1].As<float>());
}

}  // namespace
}  // namespace kiln::testing
