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
    Mat vw(n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) vw(i, j) = v(i, j) * w[j];
    EXPECT_LT(MaxDiff(sym * v, vw), 1e-4);
    EXPECT_LT(MaxDiff(Transpose(v) * v, Identity(n)), 1e-5);
  }
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

}  // namespace
}  // namespace kiln::testing
