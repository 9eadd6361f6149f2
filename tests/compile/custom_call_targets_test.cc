// The well-known custom-call targets beyond the LAPACK FFI: the GPU solver
// and random targets of programs exported for cuda or rocm, written as
// JAX's GPU lowering writes them (column-major layouts, backend_config
// bools), jax.export's shape_assertion, and the top-k targets. Results are
// checked against hand-computed values, published known answers
// (Random123's threefry2x32 test vectors) or the defining property of a
// factorization computed here in double precision (P A = L U, Q^T Q = I
// and Q R = A, L L^T = A, A V = V diag(w), U diag(s) V^T = A).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "exec/kernels/run_time_error.h"
#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;

// A row-major double matrix.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(r * c) {}
  double& operator()(int64_t i, int64_t j) { return v[i * cols + j]; }
  double operator()(int64_t i, int64_t j) const { return v[i * cols + j]; }
};

template <typename T>
Mat MatOf(const std::vector<T>& values, int64_t rows, int64_t cols,
          int64_t offset = 0) {
  Mat m(rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) m.v[i] = values[offset + i];
  return m;
}

Mat operator*(const Mat& a, const Mat& b) {
  Mat c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = 0; k < a.cols; ++k)
      for (int64_t j = 0; j < b.cols; ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}

Mat Transpose(const Mat& a) {
  Mat t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

double MaxDiff(const Mat& a, const Mat& b) {
  double d = 0;
  for (size_t i = 0; i < a.v.size(); ++i) {
    d = std::max(d, std::abs(a.v[i] - b.v[i]));
  }
  return d;
}

Mat Identity(int64_t n) {
  Mat m(n, n);
  for (int64_t i = 0; i < n; ++i) m(i, i) = 1;
  return m;
}

// V's columns are orthonormal eigenvectors of `sym` with eigenvalues w:
// sym V = V diag(w) and V^T V = I.
void ExpectEigenpairs(const Mat& sym, const Mat& v, const std::vector<float>& w) {
  const int64_t n = sym.rows;
  Mat vw(n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) vw(i, j) = v(i, j) * w[j];
  EXPECT_LT(MaxDiff(sym * v, vw), 1e-4);
  EXPECT_LT(MaxDiff(Transpose(v) * v, Identity(n)), 1e-5);
}

// A fixed test matrix of full rank: a(i, j) = sin(7 i + 3 j + 2 i j + 1),
// plus `diagonal` on the diagonal.
std::vector<float> TestMatrix(int64_t rows, int64_t cols, double diagonal = 0) {
  std::vector<float> v(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      v[i * cols + j] =
          static_cast<float>(std::sin(7.0 * i + 3.0 * j + 2.0 * i * j + 1.0) +
                             (i == j ? diagonal : 0.0));
  return v;
}

// --- shape_assertion -----------------------------------------------------

constexpr const char* kShapeAssertionProgram = R"(
func.func @main(%x: tensor<i64>) -> tensor<i64> {
  %one = stablehlo.constant dense<1> : tensor<i64>
  %ok = stablehlo.compare GE, %x, %one, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%ok, %x, %one) {api_version = 2 : i32, error_message = "Expected value >= {1} for dimension variable 'b', got {0}. {2} stays.", has_side_effect = true} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
  return %x : tensor<i64>
}
)";

TEST(ShapeAssertionTest, AHoldingAssertionLetsTheRunFinish) {
  auto results = RunText(kShapeAssertionProgram,
                         {HostArray::Of<int64_t>(ElementType::kI64, {}, {3})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<int64_t>()[0], 3);
}

TEST(ShapeAssertionTest, AFailingAssertionFailsTheRunWithItsMessage) {
  auto results = RunText(kShapeAssertionProgram,
                         {HostArray::Of<int64_t>(ElementType::kI64, {}, {0})});
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(results.status().message().find(
                "Expected value >= 1 for dimension variable 'b', got 0. {2} "
                "stays."),
            std::string::npos)
      << results.status().ToString();
}

TEST(ShapeAssertionTest, FormatsPlaceholdersAndKeepsOtherBraces) {
  EXPECT_EQ(
      exec::FormatShapeAssertionMessage("{0} and {1}, {x} {5} {", {4, -2}),
      "4 and -2, {x} {5} {");
}

TEST(ShapeAssertionTest, APredicateThatIsNotI1IsRefused) {
  auto results = RunText(R"(
func.func @main(%x: tensor<i32>) -> tensor<i32> {
  stablehlo.custom_call @shape_assertion(%x) {error_message = "m", has_side_effect = true} : (tensor<i32>) -> ()
  return %x : tensor<i32>
}
)",
                         {HostArray::Of<int32_t>(ElementType::kI32, {}, {1})});
  ASSERT_FALSE(results.ok());
  EXPECT_NE(results.status().message().find("expected tensor<i1>"),
            std::string::npos)
      << results.status().ToString();
}

// --- threefry2x32 --------------------------------------------------------

// Random123's known answers for threefry2x32 with 20 rounds (kat_vectors):
// (key, counter) -> output.
TEST(Threefry2x32Test, MatchesTheRandom123KnownAnswers) {
  for (const char* target :
       {"cu_threefry2x32_ffi", "hip_threefry2x32_ffi", "cu_threefry2x32"}) {
    std::string program =
        std::string(R"(
func.func @main(%k0: tensor<3xui32>, %k1: tensor<3xui32>, %x0: tensor<3xui32>, %x1: tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>) {
  %r:2 = stablehlo.custom_call @)") +
        target +
        R"((%k0, %k1, %x0, %x1) {mhlo.backend_config = {}} : (tensor<3xui32>, tensor<3xui32>, tensor<3xui32>, tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>)
  return %r#0, %r#1 : tensor<3xui32>, tensor<3xui32>
}
)";
    std::vector<uint32_t> k0 = {0u, 0xffffffffu, 0x13198a2eu};
    std::vector<uint32_t> k1 = {0u, 0xffffffffu, 0x03707344u};
    std::vector<uint32_t> x0 = {0u, 0xffffffffu, 0x243f6a88u};
    std::vector<uint32_t> x1 = {0u, 0xffffffffu, 0x85a308d3u};
    auto results =
        RunText(program, {HostArray::Of(ElementType::kUI32, {3}, k0),
                          HostArray::Of(ElementType::kUI32, {3}, k1),
                          HostArray::Of(ElementType::kUI32, {3}, x0),
                          HostArray::Of(ElementType::kUI32, {3}, x1)});
    ASSERT_TRUE(results.ok()) << target << ": " << results.status().ToString();
    EXPECT_EQ((*results)[0].As<uint32_t>(),
              (std::vector<uint32_t>{0x6b200159u, 0x1cb996fcu, 0xc4923a9cu}))
        << target;
    EXPECT_EQ((*results)[1].As<uint32_t>(),
              (std::vector<uint32_t>{0x99ba4efeu, 0xbb002be7u, 0x483df7a0u}))
        << target;
  }
}

TEST(Threefry2x32Test, OperandsOfAnotherTypeFailNamingTheOp) {
  auto results =
      RunText(R"(
func.func @main(%k: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %r:2 = stablehlo.custom_call @cu_threefry2x32_ffi(%k, %k, %k, %k) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %r#0, %r#1 : tensor<2xf32>, tensor<2xf32>
}
)",
              {HostArray::Of<float>(ElementType::kF32, {2}, {1, 2})});
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(results.status().message().find("cu_threefry2x32_ffi"),
            std::string::npos)
      << results.status().ToString();
}

// --- lu_pivots_to_permutation -------------------------------------------

TEST(LuPivotsToPermutationTest, AppliesTheSwapsInOrder) {
  auto results = RunText(
      R"(
func.func @main(%p: tensor<2x3xi32>) -> tensor<2x4xi32> {
  %r = stablehlo.custom_call @cu_lu_pivots_to_permutation(%p) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xi32>) -> tensor<2x4xi32>
  return %r : tensor<2x4xi32>
}
)",
      {HostArray::Of<int32_t>(ElementType::kI32, {2, 3}, {2, 2, 3, 0, 1, 2})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  // [0 1 2 3] -swap(0,2)-> [2 1 0 3] -swap(1,2)-> [2 0 1 3] -swap(2,3)->
  // [2 0 3 1]; the second batch element is the identity.
  EXPECT_EQ((*results)[0].As<int32_t>(),
            (std::vector<int32_t>{2, 0, 3, 1, 0, 1, 2, 3}));
}

// --- cuSOLVER / hipSOLVER FFI targets -------------------------------------

TEST(GpuSolverTest, GetrfGivesPivotsAndFactorsOfThePermutedMatrix) {
  const int64_t n = 4;
  std::vector<float> a = TestMatrix(n, n);
  for (const char* target : {"cusolver_getrf_ffi", "hipsolver_getrf_ffi"}) {
    auto results = RunText(
        std::string(R"(
func.func @main(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xi32>, tensor<i32>) {
  %r:3 = stablehlo.custom_call @)") +
            target +
            R"((%a) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xi32>, tensor<i32>)
  return %r#0, %r#1, %r#2 : tensor<4x4xf32>, tensor<4xi32>, tensor<i32>
}
)",
        {HostArray::Of(ElementType::kF32, {n, n}, a)});
    ASSERT_TRUE(results.ok()) << target << ": " << results.status().ToString();
    Mat lu = MatOf((*results)[0].As<float>(), n, n);
    std::vector<int32_t> ipiv = (*results)[1].As<int32_t>();
    EXPECT_EQ((*results)[2].As<int32_t>()[0], 0);
    Mat l = Identity(n), u(n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) (i > j ? l(i, j) : u(i, j)) = lu(i, j);
    Mat pa = MatOf(a, n, n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_GE(ipiv[i], i + 1);  // 1-based, as LAPACK's
      ASSERT_LE(ipiv[i], n);
      for (int64_t j = 0; j < n; ++j) std::swap(pa(i, j), pa(ipiv[i] - 1, j));
    }
    EXPECT_LT(MaxDiff(l * u, pa), 1e-5) << target;
  }
}

TEST(GpuSolverTest, GeqrfAndOrgqrGiveAnOrthonormalQWithQTimesREqualToA) {
  const int64_t m = 4, n = 3;
  std::vector<float> a = TestMatrix(m, n);
  auto results = RunText(R"(
func.func @main(%a: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %f:2 = stablehlo.custom_call @cusolver_geqrf_ffi(%a) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
  %q = stablehlo.custom_call @cusolver_orgqr_ffi(%f#0, %f#1) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %f#0, %q : tensor<4x3xf32>, tensor<4x3xf32>
}
)",
                         {HostArray::Of(ElementType::kF32, {m, n}, a)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  Mat factored = MatOf((*results)[0].As<float>(), m, n);
  Mat q = MatOf((*results)[1].As<float>(), m, n);
  Mat r(n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i; j < n; ++j) r(i, j) = factored(i, j);
  EXPECT_LT(MaxDiff(Transpose(q) * q, Identity(n)), 1e-5);
  EXPECT_LT(MaxDiff(q * r, MatOf(a, m, n)), 1e-5);
}

TEST(GpuSolverTest, PotrfGivesTheLowerCholeskyFactor) {
  const int64_t n = 3;
  // A = B B^T + 3 I, symmetric positive definite.
  Mat b = MatOf(TestMatrix(n, n), n, n);
  Mat spd = b * Transpose(b);
  std::vector<double> a(n * n);
  for (int64_t i = 0; i < n * n; ++i) a[i] = spd.v[i] + (i % (n + 1) ? 0 : 3);
  auto results = RunText(R"(
func.func @main(%a: tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<i32>) {
  %r:2 = stablehlo.custom_call @cusolver_potrf_ffi(%a) {mhlo.backend_config = {lower = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<i32>)
  return %r#0, %r#1 : tensor<3x3xf64>, tensor<i32>
}
)",
                         {HostArray::Of(ElementType::kF64, {n, n}, a)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[1].As<int32_t>()[0], 0);
  Mat l = MatOf((*results)[0].As<double>(), n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) l(i, j) = 0;  // the other triangle
  EXPECT_LT(MaxDiff(l * Transpose(l), MatOf(a, n, n)), 1e-12);
}

// The eigendecomposition of a symmetric matrix, by the FFI target and by
// the legacy target with its descriptor and workspace result.
TEST(GpuSolverTest, SyevdAndLegacySyevjGiveEigenpairs) {
  const int64_t n = 4;
  Mat b = MatOf(TestMatrix(n, n), n, n);
  Mat sym(n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) sym(i, j) = b(i, j) + b(j, i);
  std::vector<float> a(sym.v.begin(), sym.v.end());
  const std::string ffi = R"(
func.func @main(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<i32>) {
  %r:3 = stablehlo.custom_call @cusolver_syevd_ffi(%a) {mhlo.backend_config = {algorithm = 0 : ui8, lower = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<i32>)
  return %r#0, %r#1, %r#2 : tensor<4x4xf32>, tensor<4xf32>, tensor<i32>
}
)";
  // jaxlib's packed SyevjDescriptor {type f32 = 0, uplo lower = 0, batch 1,
  // n 4, lwork 8}.
  const std::string legacy = R"(
func.func @main(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<i32>) {
  %r:4 = stablehlo.custom_call @cusolver_syevj(%a) {backend_config = "\00\00\00\00\00\00\00\00\01\00\00\00\04\00\00\00\08\00\00\00", operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<i32>, tensor<8xf32>)
  return %r#0, %r#1, %r#2 : tensor<4x4xf32>, tensor<4xf32>, tensor<i32>
}
)";
  for (const std::string& program : {ffi, legacy}) {
    auto results =
        RunText(program, {HostArray::Of(ElementType::kF32, {n, n}, a)});
    ASSERT_TRUE(results.ok()) << results.status().ToString();
    Mat v = MatOf((*results)[0].As<float>(), n, n);
    std::vector<float> w = (*results)[1].As<float>();
    EXPECT_EQ((*results)[2].As<int32_t>()[0], 0);
    EXPECT_TRUE(std::is_sorted(w.begin(), w.end()));
    ExpectEigenpairs(sym, v, w);
  }
}

// The legacy descriptor's fill mode decides which triangle is read: of
// [[1, 0], [5, 1]] the lower one makes [[1, 5], [5, 1]] (eigenvalues -4
// and 6), the upper one the identity. hipSOLVER writes lower as 122 ('z')
// and upper as 121 ('y'), cuSOLVER 0 and 1.
TEST(GpuSolverTest, LegacySyevdReadsTheTriangleItsFillModeNames) {
  const std::vector<float> a = {1, 0, 5, 1};
  auto run = [&](const std::string& target, char uplo) {
    std::string program = R"(
func.func @main(%a: tensor<2x2xf32>) -> tensor<2xf32> {
  %r:4 = stablehlo.custom_call @TARGET(%a) {backend_config = "\00\00\00\00UPLO\01\00\00\00\02\00\00\00\08\00\00\00", operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>, tensor<8xf32>)
  return %r#1 : tensor<2xf32>
}
)";
    program.replace(program.find("TARGET"), 6, target);
    char hex[16];
    std::snprintf(hex, sizeof(hex), "\\%02X\\00\\00\\00",
                  static_cast<unsigned char>(uplo));
    program.replace(program.find("UPLO"), 4, hex);
    auto results = RunText(program, {HostArray::Of(ElementType::kF32, {2, 2}, a)});
    EXPECT_TRUE(results.ok()) << results.status().ToString();
    return results.ok() ? (*results)[0].As<float>() : std::vector<float>();
  };
  const std::vector<float> lower = {-4, 6}, upper = {1, 1};
  auto near = [](const std::vector<float>& got, const std::vector<float>& want) {
    if (got.size() != want.size()) return false;
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::abs(got[i] - want[i]) > 1e-5) return false;
    }
    return true;
  };
  EXPECT_TRUE(near(run("hipsolver_syevd", 122), lower));
  EXPECT_TRUE(near(run("hipsolver_syevj", 121), upper));
  EXPECT_TRUE(near(run("cusolver_syevd", 0), lower));
  EXPECT_TRUE(near(run("cusolver_syevj", 1), upper));
}

// gesvdj returns V (not V^H): U diag(s) V^T = A.
TEST(GpuSolverTest, GesvdjReturnsVSoThatUSVTransposedIsA) {
  const int64_t m = 4, n = 3;
  std::vector<float> a = TestMatrix(m, n);
  auto results = RunText(R"(
func.func @main(%a: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x4xf32>, tensor<3x3xf32>, tensor<i32>) {
  %r:5 = stablehlo.custom_call @cusolver_gesvdj_ffi(%a) {mhlo.backend_config = {compute_uv = true, full_matrices = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<4x4xf32>, tensor<3x3xf32>, tensor<i32>)
  return %r#1, %r#2, %r#3, %r#4 : tensor<3xf32>, tensor<4x4xf32>, tensor<3x3xf32>, tensor<i32>
}
)",
                         {HostArray::Of(ElementType::kF32, {m, n}, a)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  std::vector<float> s = (*results)[0].As<float>();
  Mat u = MatOf((*results)[1].As<float>(), m, m);
  Mat v = MatOf((*results)[2].As<float>(), n, n);
  EXPECT_EQ((*results)[3].As<int32_t>()[0], 0);
  Mat us(m, n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) us(i, j) = u(i, j) * s[j];
  EXPECT_LT(MaxDiff(us * Transpose(v), MatOf(a, m, n)), 1e-5);
  EXPECT_LT(MaxDiff(Transpose(u) * u, Identity(m)), 1e-5);
}

// gesvd with `transposed` (m < n): row-major arrays, V^H as result 2 and U
// as result 3.
TEST(GpuSolverTest, TransposedGesvdGivesVtThenU) {
  const int64_t m = 2, n = 3;
  std::vector<float> a = TestMatrix(m, n);
  auto results = RunText(R"(
func.func @main(%a: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<i32>) {
  %r:5 = stablehlo.custom_call @cusolver_gesvd_ffi(%a) {mhlo.backend_config = {compute_uv = true, full_matrices = false, transposed = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<i32>)
  return %r#1, %r#2, %r#3, %r#4 : tensor<2xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<i32>
}
)",
                         {HostArray::Of(ElementType::kF32, {m, n}, a)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  std::vector<float> s = (*results)[0].As<float>();
  Mat vt = MatOf((*results)[1].As<float>(), m, n);
  Mat u = MatOf((*results)[2].As<float>(), m, m);
  Mat us(m, m);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) us(i, j) = u(i, j) * s[j];
  EXPECT_LT(MaxDiff(us * vt, MatOf(a, m, n)), 1e-5);
}

TEST(GpuSolverTest, AnUnknownSolverTargetIsUnimplementedAndNamed) {
  auto plan = CompileText(R"(
func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %r = stablehlo.custom_call @cusolver_gelsd_ffi(%a) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
)");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(plan.status().message().find("\"cusolver_gelsd_ffi\""),
            std::string::npos)
      << plan.status().ToString();
}

TEST(GpuSolverTest, AnIntegerMatrixFailsNamingTheOp) {
  auto results = RunText(
      R"(
func.func @main(%a: tensor<2x2xi32>) -> (tensor<2x2xi32>, tensor<i32>) {
  %r:2 = stablehlo.custom_call @cusolver_potrf_ffi(%a) {mhlo.backend_config = {lower = true}} : (tensor<2x2xi32>) -> (tensor<2x2xi32>, tensor<i32>)
  return %r#0, %r#1 : tensor<2x2xi32>, tensor<i32>
}
)",
      {HostArray::Of<int32_t>(ElementType::kI32, {2, 2}, {1, 0, 0, 1})});
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(results.status().message().find("cusolver_potrf_ffi"),
            std::string::npos)
      << results.status().ToString();
}

// --- top-k ------------------------------------------------------------------

TEST(TopKTargetsTest, DynamicTopKAndApproxTopKGiveTheExactTopK) {
  const std::vector<float> x = {3, 9, 1, 7, 5, -2, 8, 0};
  auto results = RunText(R"(
func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>, tensor<2x2xf32>, tensor<2x2xi32>) {
  %k = stablehlo.constant dense<2> : tensor<i64>
  %t:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<2x4xf32>, tensor<i64>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
  %iota = stablehlo.iota dim = 1 : tensor<2x4xi32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %init_arg = stablehlo.constant dense<-1> : tensor<i32>
  %a:2 = stablehlo.custom_call @ApproxTopK(%x, %iota, %init, %init_arg) {called_computations = [@top_k_gt_comparator], mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 2 : i64}} : (tensor<2x4xf32>, tensor<2x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
  return %t#0, %t#1, %a#0, %a#1 : tensor<2x2xf32>, tensor<2x2xi32>, tensor<2x2xf32>, tensor<2x2xi32>
}
func.func private @top_k_gt_comparator(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
)",
                         {HostArray::Of(ElementType::kF32, {2, 4}, x)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  for (int i : {0, 2}) {
    EXPECT_EQ((*results)[i].As<float>(), (std::vector<float>{9, 7, 8, 5}));
    EXPECT_EQ((*results)[i + 1].As<int32_t>(),
              (std::vector<int32_t>{1, 3, 2, 0}));
  }
}

TEST(TopKTargetsTest, ApproxMinKAlongTheFirstDimensionCarriesTheIndices) {
  // x is 4x2; the two smallest of each column, with their row indices.
  const std::vector<float> x = {5, -1, 2, 4, 8, 0, -3, 6};
  auto results = RunText(R"(
func.func @main(%x: tensor<4x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>) {
  %iota = stablehlo.iota dim = 0 : tensor<4x2xi32>
  %init = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %init_arg = stablehlo.constant dense<-1> : tensor<i32>
  %a:2 = stablehlo.custom_call @ApproxTopK(%x, %iota, %init, %init_arg) {called_computations = [@top_k_lt_comparator], mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.949999988 : f32, reduction_dim = 0 : i64, reduction_input_size_override = -1 : i64, top_k = 2 : i64}} : (tensor<4x2xf32>, tensor<4x2xi32>, tensor<f32>, tensor<i32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
  return %a#0, %a#1 : tensor<2x2xf32>, tensor<2x2xi32>
}
func.func private @top_k_lt_comparator(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
)",
                         {HostArray::Of(ElementType::kF32, {4, 2}, x)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<float>(), (std::vector<float>{-3, -1, 2, 0}));
  EXPECT_EQ((*results)[1].As<int32_t>(), (std::vector<int32_t>{3, 0, 1, 2}));
}

TEST(TopKTargetsTest, ApproxTopKOfOneOperandWithoutIndices) {
  const std::vector<float> x = {3, 9, 1, 7, 5};
  auto results = RunText(R"(
func.func @main(%x: tensor<5xf32>) -> tensor<3xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %a = stablehlo.custom_call @ApproxTopK(%x, %init) {called_computations = [@gt], mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.949999988 : f32, reduction_dim = 0 : i64, reduction_input_size_override = -1 : i64, top_k = 3 : i64}} : (tensor<5xf32>, tensor<f32>) -> tensor<3xf32>
  return %a : tensor<3xf32>
}
func.func private @gt(%a: tensor<f32>, %b: tensor<f32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
)",
                         {HostArray::Of(ElementType::kF32, {5}, x)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<float>(), (std::vector<float>{9, 7, 5}));
}

// --- dynamic_reduce_window, dynamic_rng_bit_generator ----------------------

TEST(DynamicWindowTargetsTest, DynamicReduceWindowSumsPaddedStridedWindows) {
  // Windows of 2 at stride 2 over [1 2 3 4 5] padded by one zero on the
  // right: 1+2, 3+4, 5+0; the second row likewise.
  const std::vector<float> x = {1, 2, 3, 4, 5, 10, 20, 30, 40, 50};
  auto results = RunText(R"(
func.func @main(%x: tensor<2x5xf32>) -> tensor<2x3xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %dims = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %strides = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %base = stablehlo.constant dense<1> : tensor<2xi64>
  %win = stablehlo.constant dense<1> : tensor<2xi64>
  %pad = stablehlo.constant dense<[[0, 0], [0, 1]]> : tensor<2x2xi64>
  %r = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %init, %dims, %strides, %base, %win, %pad) {called_computations = [@sum]} : (tensor<2x5xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2x2xi64>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
func.func private @sum(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %b : tensor<f32>
  return %0 : tensor<f32>
}
)",
                         {HostArray::Of(ElementType::kF32, {2, 5}, x)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<float>(),
            (std::vector<float>{3, 7, 5, 30, 70, 50}));
}

TEST(DynamicWindowTargetsTest, DynamicReduceWindowNeedsConstantWindowOperands) {
  auto results = RunText(R"(
func.func @main(%x: tensor<4xf32>, %dims: tensor<1xi64>) -> tensor<2xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<1> : tensor<1xi64>
  %pad = stablehlo.constant dense<0> : tensor<1x2xi64>
  %r = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %init, %dims, %one, %one, %one, %pad) {called_computations = [@sum]} : (tensor<4xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1x2xi64>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
func.func private @sum(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %b : tensor<f32>
  return %0 : tensor<f32>
}
)",
                         {HostArray::Of<float>(ElementType::kF32, {4}, {1, 2, 3, 4}),
                          HostArray::Of<int64_t>(ElementType::kI64, {1}, {3})});
  ASSERT_FALSE(results.ok());
  EXPECT_NE(results.status().message().find("window_dimensions"),
            std::string::npos)
      << results.status().ToString();
}

TEST(DynamicWindowTargetsTest, DynamicRngBitGeneratorEqualsTheStaticOp) {
  // The same state through the op with a static shape and through the
  // custom call with the shape an operand: the same bits and new state.
  auto results = RunText(R"(
func.func @main(%key: tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>, tensor<2xui64>, tensor<3x4xui32>) {
  %shape = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
  %d:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%key, %shape) {rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (tensor<2xui64>, tensor<2xi64>) -> (tensor<2xui64>, tensor<3x4xui32>)
  %s:2 = stablehlo.rng_bit_generator %key, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>)
  return %d#0, %d#1, %s#0, %s#1 : tensor<2xui64>, tensor<3x4xui32>, tensor<2xui64>, tensor<3x4xui32>
}
)",
                         {HostArray::Of<uint64_t>(ElementType::kUI64, {2},
                                                  {1234, 5678})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<uint64_t>(), (*results)[2].As<uint64_t>());
  EXPECT_EQ((*results)[1].As<uint32_t>(), (*results)[3].As<uint32_t>());
  // Not all zero: the bits were generated.
  const std::vector<uint32_t> bits = (*results)[1].As<uint32_t>();
  EXPECT_NE(std::count(bits.begin(), bits.end(), 0u), 12);
}

// --- legacy descriptor targets --------------------------------------------
//
// jaxlib's descriptor-based targets, as its gpu_solver.py wrote them
// (column-major layouts, workspaces last). Each is run beside the FFI
// target of the same routine (checked above against the defining
// properties) on the same input: the factors must be equal, and the
// workspaces and fixed infos zeros.

// A descriptor as an MLIR string body: `fields` as 4-byte little-endian
// ints (a negative entry -k inserts k zero bytes: padding or the high half
// of an int64).
std::string DescriptorText(const std::vector<int64_t>& fields) {
  std::string bytes;
  for (int64_t f : fields) {
    if (f < 0) {
      bytes.append(static_cast<size_t>(-f), '\0');
      continue;
    }
    const int32_t v = static_cast<int32_t>(f);
    bytes.append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  std::string text;
  char hex[4];
  for (unsigned char c : bytes) {
    std::snprintf(hex, sizeof(hex), "\\%02X", c);
    text += hex;
  }
  return text;
}

std::string Substitute(std::string text, const std::string& key,
                       const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos;
       at = text.find(key, at + value.size())) {
    text.replace(at, key.size(), value);
  }
  return text;
}

TEST(LegacyGpuTargetsTest, GetrfGeqrfAndOrgqrEqualTheFfiTargets) {
  const std::vector<float> a = TestMatrix(4, 4, 1.0);
  std::string program = R"mlir(
func.func @main(%a: tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xi32>, tensor<2xi32>, tensor<5xf32>, tensor<2x4x4xf32>, tensor<2x4xi32>, tensor<2x4x4xf32>, tensor<2x4xi32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2xi32>, tensor<2x4x4xf32>, tensor<2xi32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<16xi8>) {
  %l:4 = stablehlo.custom_call @cusolver_getrf(%a) {api_version = 2 : i32, backend_config = "GETRF", operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xi32>, tensor<2xi32>, tensor<5xf32>)
  %b:4 = stablehlo.custom_call @cublas_getrf_batched(%a) {api_version = 2 : i32, backend_config = "BATCHED", operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xi32>, tensor<2xi32>, tensor<16xi8>)
  %f:3 = stablehlo.custom_call @cusolver_getrf_ffi(%a) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xi32>, tensor<2xi32>)
  %q:4 = stablehlo.custom_call @hipsolver_geqrf(%a) {api_version = 2 : i32, backend_config = "GEQRF", operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2xi32>, tensor<5xf32>)
  %o:3 = stablehlo.custom_call @hipsolver_orgqr(%q#0, %q#1) {api_version = 2 : i32, backend_config = "ORGQR", operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4x4xf32>, tensor<2x4xf32>) -> (tensor<2x4x4xf32>, tensor<2xi32>, tensor<5xf32>)
  %g:2 = stablehlo.custom_call @cusolver_geqrf_ffi(%a) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>)
  %go = stablehlo.custom_call @cusolver_orgqr_ffi(%g#0, %g#1) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]} : (tensor<2x4x4xf32>, tensor<2x4xf32>) -> tensor<2x4x4xf32>
  %bq:4 = stablehlo.custom_call @hipblas_geqrf_batched(%a) {api_version = 2 : i32, backend_config = "BGEQRF", operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<16xi8>, tensor<16xi8>)
  return %l#0, %l#1, %l#2, %l#3, %b#0, %b#1, %f#0, %f#1, %q#0, %q#1, %q#2, %o#0, %o#1, %g#0, %g#1, %go, %bq#0, %bq#1, %bq#3 : tensor<2x4x4xf32>, tensor<2x4xi32>, tensor<2xi32>, tensor<5xf32>, tensor<2x4x4xf32>, tensor<2x4xi32>, tensor<2x4x4xf32>, tensor<2x4xi32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2xi32>, tensor<2x4x4xf32>, tensor<2xi32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<16xi8>
}
)mlir";
  program = Substitute(program, "\"GETRF\"",
                       "\"" + DescriptorText({0, 2, 4, 4, 5}) + "\"");
  program = Substitute(program, "\"BATCHED\"",
                       "\"" + DescriptorText({0, 2, 4}) + "\"");
  program = Substitute(program, "\"GEQRF\"",
                       "\"" + DescriptorText({0, 2, 4, 4, 5}) + "\"");
  program = Substitute(program, "\"ORGQR\"",
                       "\"" + DescriptorText({0, 2, 4, 4, 4, 5}) + "\"");
  program = Substitute(program, "\"BGEQRF\"",
                       "\"" + DescriptorText({0, 2, 4, 4}) + "\"");
  std::vector<float> batch(a);
  batch.insert(batch.end(), a.rbegin(), a.rend());
  auto r = RunText(program, {HostArray::Of(ElementType::kF32, {2, 4, 4}, batch)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& out = *r;
  // getrf: legacy solver, legacy batched and FFI agree; info and work 0.
  for (int legacy : {0, 4}) {
    EXPECT_EQ(out[legacy].As<float>(), out[6].As<float>()) << legacy;
    EXPECT_EQ(out[legacy + 1].As<int32_t>(), out[7].As<int32_t>()) << legacy;
  }
  EXPECT_EQ(out[2].As<int32_t>(), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(out[3].As<float>(), std::vector<float>(5, 0.0f));
  // geqrf and orgqr: equal to the FFI's; their infos 0.
  EXPECT_EQ(out[8].As<float>(), out[13].As<float>());
  EXPECT_EQ(out[9].As<float>(), out[14].As<float>());
  EXPECT_EQ(out[11].As<float>(), out[15].As<float>());
  EXPECT_EQ(out[10].As<int32_t>(), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(out[12].As<int32_t>(), (std::vector<int32_t>{0, 0}));
  // The batched geqrf: the same factors, zero workspaces.
  EXPECT_EQ(out[16].As<float>(), out[13].As<float>());
  EXPECT_EQ(out[17].As<float>(), out[14].As<float>());
  EXPECT_EQ(out[18].As<int8_t>(), std::vector<int8_t>(16, 0));
}

TEST(LegacyGpuTargetsTest, PotrfAndSytrdReadTheirFillModes) {
  const int64_t n = 3;
  // Symmetric positive definite: B + B^T + 6 I.
  Mat b = MatOf(TestMatrix(n, n), n, n);
  std::vector<float> a(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      a[i * n + j] = static_cast<float>(b(i, j) + b(j, i) + (i == j ? 6 : 0));
  std::string program = R"mlir(
func.func @main(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>) {
  %p:3 = stablehlo.custom_call @hipsolver_potrf(%a) {api_version = 2 : i32, backend_config = "POTRF", operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>, tensor<8xi8>)
  %f:2 = stablehlo.custom_call @cusolver_potrf_ffi(%a) {mhlo.backend_config = {lower = false}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  %t:6 = stablehlo.custom_call @cusolver_sytrd(%a) {api_version = 2 : i32, backend_config = "SYTRD", operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i32>, tensor<4xf32>)
  %s:5 = stablehlo.custom_call @cusolver_sytrd_ffi(%a) {mhlo.backend_config = {lower = false}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i32>)
  return %p#0, %p#1, %f#0, %t#0, %t#1, %t#2, %s#0, %s#1, %s#2 : tensor<3x3xf32>, tensor<i32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2xf32>
}
)mlir";
  // PotrfDescriptor {type f32, uplo upper (hipSOLVER 121), i64 batch 1,
  // i64 n 3, lwork 8, padding}; SytrdDescriptor {f32, upper (cuBLAS 1),
  // batch 1, n 3, lda 3, lwork 4}.
  program = Substitute(program, "\"POTRF\"",
                       "\"" + DescriptorText({0, 121, 1, -4, 3, -4, 8, -4}) +
                           "\"");
  program = Substitute(program, "\"SYTRD\"",
                       "\"" + DescriptorText({0, 1, 1, 3, 3, 4}) + "\"");
  auto r = RunText(program, {HostArray::Of(ElementType::kF32, {n, n}, a)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& out = *r;
  EXPECT_EQ(out[0].As<float>(), out[2].As<float>());
  EXPECT_EQ(out[1].As<int32_t>(), std::vector<int32_t>{0});
  // The upper factor: U^T U = A.
  Mat u = MatOf(out[0].As<float>(), n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j) u(i, j) = 0;
  EXPECT_LT(MaxDiff(Transpose(u) * u, MatOf(a, n, n)), 1e-4);
  EXPECT_EQ(out[3].As<float>(), out[6].As<float>());
  EXPECT_EQ(out[4].As<float>(), out[7].As<float>());
  EXPECT_EQ(out[5].As<float>(), out[8].As<float>());
}

// gesvd as jaxlib wrote it for m < n: a^T in row-major layouts, V^H as
// result 2 and U as result 3; and gesvdj with econ. Both rebuild A.
TEST(LegacyGpuTargetsTest, GesvdTransposedAndGesvdjRebuildA) {
  const int64_t m = 2, n = 3;
  const std::vector<float> a = TestMatrix(m, n);
  std::string program = R"mlir(
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x3xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2x2xf32>) {
  %r:6 = stablehlo.custom_call @cusolver_gesvd(%a) {api_version = 2 : i32, backend_config = "GESVD", operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>, tensor<3x3xf32>, tensor<2x2xf32>, tensor<i32>, tensor<6xf32>)
  %j:6 = stablehlo.custom_call @cusolver_gesvdj(%b) {api_version = 2 : i32, backend_config = "GESVDJ", operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2x2xf32>, tensor<i32>, tensor<6xf32>)
  return %r#1, %r#2, %r#3, %j#1, %j#2, %j#3 : tensor<2xf32>, tensor<3x3xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2x2xf32>
}
)mlir";
  // GesvdDescriptor {f32, batch 1, m 3, n 2 (of a^T), lwork 6, 'A', 'A',
  // padding}; GesvdjDescriptor {f32, batch 1, 3, 2, lwork 6, jobz vector,
  // econ 1}.
  program = Substitute(
      program, "\"GESVD\"",
      "\"" + DescriptorText({0, 1, 3, 2, 6, 'A' | ('A' << 8)}) + "\"");
  program = Substitute(program, "\"GESVDJ\"",
                       "\"" + DescriptorText({0, 1, 3, 2, 6, 1, 1}) + "\"");
  Mat am = MatOf(a, m, n);
  Mat at = Transpose(am);
  std::vector<float> b(at.v.begin(), at.v.end());
  auto r = RunText(program, {HostArray::Of(ElementType::kF32, {m, n}, a),
                             HostArray::Of(ElementType::kF32, {n, m}, b)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& out = *r;
  // U S V^H with the k = 2 leading singular triplets.
  std::vector<float> s = out[0].As<float>();
  Mat vt = MatOf(out[1].As<float>(), n, n);
  Mat u = MatOf(out[2].As<float>(), m, m);
  Mat us(m, n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) us(i, j) = u(i, j) * s[j];
  EXPECT_LT(MaxDiff(us * vt, am), 1e-5);
  // gesvdj of a^T (3x2, econ): U is 3x2, V 2x2, U S V^T = a^T.
  std::vector<float> sj = out[3].As<float>();
  Mat uj = MatOf(out[4].As<float>(), n, m);
  Mat vj = MatOf(out[5].As<float>(), m, m);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) uj(i, j) *= sj[j];
  EXPECT_LT(MaxDiff(uj * Transpose(vj), at), 1e-5);
  EXPECT_LT(std::abs(s[0] - sj[0]) + std::abs(s[1] - sj[1]), 1e-5);
}

// hipblas_trsm_batched with hipBLAS's enumerations (side left 141, fill
// lower 122, op T 112, diag non-unit 131) solves a^T x = b, as
// lapack_strsm_ffi does with side L, uplo L, trans_x T, diag N.
TEST(LegacyGpuTargetsTest, TrsmBatchedReadsEveryModeFromItsDescriptor) {
  std::vector<float> a = TestMatrix(3, 3, 3.0);
  std::vector<float> b = TestMatrix(3, 2);
  std::string program = R"mlir(
func.func @main(%a: tensor<1x3x3xf32>, %b: tensor<1x3x2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>) {
  %t:3 = stablehlo.custom_call @hipblas_trsm_batched(%a, %b) {api_version = 2 : i32, backend_config = "TRSM", operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<1x3x3xf32>, tensor<1x3x2xf32>) -> (tensor<1x3x2xf32>, tensor<8xi8>, tensor<8xi8>)
  %f = stablehlo.custom_call @lapack_strsm_ffi(%a, %b) {mhlo.backend_config = {side = 76 : ui8, uplo = 76 : ui8, trans_x = 84 : ui8, diag = 78 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]} : (tensor<1x3x3xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  return %t#0, %f : tensor<1x3x2xf32>, tensor<1x3x2xf32>
}
)mlir";
  program = Substitute(
      program, "\"TRSM\"",
      "\"" + DescriptorText({0, 1, 3, 2, 141, 122, 112, 131}) + "\"");
  auto r = RunText(program, {HostArray::Of(ElementType::kF32, {1, 3, 3}, a),
                             HostArray::Of(ElementType::kF32, {1, 3, 2}, b)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].As<float>(), (*r)[1].As<float>());
  // Independently: L^T x = b with L the lower triangle of a.
  Mat l = MatOf(a, 3, 3);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = i + 1; j < 3; ++j) l(i, j) = 0;
  EXPECT_LT(MaxDiff(Transpose(l) * MatOf((*r)[0].As<float>(), 3, 2),
                    MatOf(b, 3, 2)),
            1e-5);
}

TEST(LegacyGpuTargetsTest, ADescriptorOfAnotherTypeFailsNamingIt) {
  std::string program = R"mlir(
func.func @main(%a: tensor<1x2x2xf32>, %b: tensor<1x2x2xf32>) -> tensor<1x2x2xf32> {
  %t:3 = stablehlo.custom_call @cublas_trsm_batched(%a, %b) {api_version = 2 : i32, backend_config = "TRSM", operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> (tensor<1x2x2xf32>, tensor<8xi8>, tensor<8xi8>)
  return %t#0 : tensor<1x2x2xf32>
}
)mlir";
  // type 1 (f64) for f32 operands.
  program = Substitute(program, "\"TRSM\"",
                       "\"" + DescriptorText({1, 1, 2, 2, 0, 0, 0, 0}) + "\"");
  auto r = RunText(program,
                   {HostArray::Of<float>(ElementType::kF32, {1, 2, 2}, {1, 0, 0, 1}),
                    HostArray::Of<float>(ElementType::kF32, {1, 2, 2}, {1, 2, 3, 4})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("descriptor type 1"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("cublas_trsm_batched"), std::string::npos)
      << r.status().ToString();
}

// --- XLA's linear-algebra targets -------------------------------------------

// Qr then ProductOfElementaryHouseholderReflectors, as a TPU export writes
// them (tuple result): Q is orthonormal, R upper triangular and Q R = A.
TEST(XlaLinalgTargetsTest, QrAndHouseholderProductFactorA) {
  const int64_t n = 3;
  const std::vector<float> a = TestMatrix(n, n, 2.0);
  auto results = RunText(R"mlir(
func.func @main(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %t = stablehlo.custom_call @Qr(%a) {xla_shape = "(f32[3,3]{1,0}, f32[3]{0})"} : (tensor<3x3xf32>) -> tuple<tensor<3x3xf32>, tensor<3xf32>>
  %r = stablehlo.get_tuple_element %t[0] : (tuple<tensor<3x3xf32>, tensor<3xf32>>) -> tensor<3x3xf32>
  %taus = stablehlo.get_tuple_element %t[1] : (tuple<tensor<3x3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  %q = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%r, %taus) : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return %q, %r : tensor<3x3xf32>, tensor<3x3xf32>
}
)mlir",
                         {HostArray::Of(ElementType::kF32, {n, n}, a)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  Mat q = MatOf((*results)[0].As<float>(), n, n);
  Mat r = MatOf((*results)[1].As<float>(), n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j) r(i, j) = 0;  // the reflectors
  EXPECT_LT(MaxDiff(Transpose(q) * q, Identity(n)), 1e-5);
  EXPECT_LT(MaxDiff(q * r, MatOf(a, n, n)), 1e-5);
}

TEST(XlaLinalgTargetsTest, EighGivesEigenpairsOfTheLowerTriangle) {
  const int64_t n = 4;
  Mat b = MatOf(TestMatrix(n, n), n, n);
  // The upper triangle holds garbage: backend_config "1,..." reads the lower.
  Mat sym(n, n), input(n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      sym(i, j) = i >= j ? b(i, j) : b(j, i);
      input(i, j) = i >= j ? b(i, j) : 100.0 + i + j;
    }
  std::vector<float> a(input.v.begin(), input.v.end());
  auto results = RunText(R"mlir(
func.func @main(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>) {
  %t = stablehlo.custom_call @Eigh(%a) {backend_config = "1,1,15,0.000010", xla_shape = "(f32[4,4]{1,0}, f32[4]{0})"} : (tensor<4x4xf32>) -> tuple<tensor<4x4xf32>, tensor<4xf32>>
  %v = stablehlo.get_tuple_element %t[0] : (tuple<tensor<4x4xf32>, tensor<4xf32>>) -> tensor<4x4xf32>
  %w = stablehlo.get_tuple_element %t[1] : (tuple<tensor<4x4xf32>, tensor<4xf32>>) -> tensor<4xf32>
  return %v, %w : tensor<4x4xf32>, tensor<4xf32>
}
)mlir",
                         {HostArray::Of(ElementType::kF32, {n, n}, a)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  Mat v = MatOf((*results)[0].As<float>(), n, n);
  std::vector<float> w = (*results)[1].As<float>();
  EXPECT_TRUE(std::is_sorted(w.begin(), w.end()));
  ExpectEigenpairs(sym, v, w);
}

// LuDecomposition: L U = P A with P the rows `permutation` of A, and the
// permutation the 0-based pivots' swaps applied in order.
TEST(XlaLinalgTargetsTest, LuDecompositionGivesZeroBasedPivotsAndPermutation) {
  const int64_t n = 4;
  const std::vector<float> a = TestMatrix(n, n);
  auto results = RunText(R"mlir(
func.func @main(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>) {
  %t = stablehlo.custom_call @LuDecomposition(%a) {xla_shape = "(f32[4,4]{1,0}, s32[4]{0}, s32[4]{0})"} : (tensor<4x4xf32>) -> tuple<tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>>
  %lu = stablehlo.get_tuple_element %t[0] : (tuple<tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>>) -> tensor<4x4xf32>
  %piv = stablehlo.get_tuple_element %t[1] : (tuple<tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>>) -> tensor<4xi32>
  %perm = stablehlo.get_tuple_element %t[2] : (tuple<tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>>) -> tensor<4xi32>
  return %lu, %piv, %perm : tensor<4x4xf32>, tensor<4xi32>, tensor<4xi32>
}
)mlir",
                         {HostArray::Of(ElementType::kF32, {n, n}, a)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  Mat lu = MatOf((*results)[0].As<float>(), n, n);
  std::vector<int32_t> pivots = (*results)[1].As<int32_t>();
  std::vector<int32_t> permutation = (*results)[2].As<int32_t>();
  std::vector<int32_t> expected(n);
  for (int32_t i = 0; i < n; ++i) expected[i] = i;
  for (int32_t i = 0; i < n; ++i) {
    ASSERT_GE(pivots[i], i);
    ASSERT_LT(pivots[i], n);
    std::swap(expected[i], expected[pivots[i]]);
  }
  EXPECT_EQ(permutation, expected);
  Mat l = Identity(n), u(n, n), pa(n, n);
  Mat am = MatOf(a, n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      (j < i ? l(i, j) : u(i, j)) = lu(i, j);
      pa(i, j) = am(permutation[i], j);
    }
  EXPECT_LT(MaxDiff(l * u, pa), 1e-5);
}

TEST(XlaLinalgTargetsTest, DeclaredResultTypesMustMatch) {
  auto results = RunText(R"mlir(
func.func @main(%a: tensor<3x3xf32>) -> tensor<2xf32> {
  %t = stablehlo.custom_call @Qr(%a) : (tensor<3x3xf32>) -> tuple<tensor<3x3xf32>, tensor<2xf32>>
  %taus = stablehlo.get_tuple_element %t[1] : (tuple<tensor<3x3xf32>, tensor<2xf32>>) -> tensor<2xf32>
  return %taus : tensor<2xf32>
}
)mlir",
                         {HostArray::Of(ElementType::kF32, {3, 3},
                                        TestMatrix(3, 3))});
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(results.status().message().find("tensor<3xf32>"),
            std::string::npos)
      << results.status().ToString();
}

// --- annotations --------------------------------------------------------------

TEST(AnnotationTargetsTest, ShardingForwardsItsOperandOfTheSameType) {
  auto ok = RunText(R"(
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{replicated}"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}
)",
                    {HostArray::Of<float>(ElementType::kF32, {2, 3},
                                          {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)[0].As<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // A result of another shape would read the operand's bytes wrongly.
  auto bad = RunText(R"(
func.func @main(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %s = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{replicated}"} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}
)",
                     {HostArray::Of<float>(ElementType::kF32, {2, 3},
                                           {1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("tensor<4x3xf32>"), std::string::npos)
      << bad.status().ToString();
}

}  // namespace
}  // namespace kiln::testing
