// Lowering of JAX's LAPACK FFI targets, lapack_{s,d,c,z}<routine>_ffi, the
// custom calls JAX's `cpu` lowering rules emit for linear algebra, to the
// kernels of exec/kernels/lapack.h.
//
// The FFI contract (jaxlib/cpu/lapack_kernels.cc): operands and results in
// a fixed order, attributes in `mhlo.backend_config` (characters as ui8:
// uplo 'L'/'U', mode 'V'/'N', ...), leading batch dimensions, and matrices
// in column-major layout (the arrays of the largest rank carry
// operand/result layout {r-2, r-1, r-3, ..., 0}, the others the default).
// Kiln's arrays are row-major and its kernels read logical elements, so a
// call with exactly those layouts (or none) means what it means to XLA;
// any other layout is refused rather than silently reinterpreted.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compile/custom_call.h"
#include "compile/linalg_call.h"
#include "compile/lower_families.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/linalg.h"

namespace kiln::compile {

Status LowerGetrf(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 3));
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId lu, call.Result(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId ipiv,
                   call.Result(1, ElementType::kI32, {std::min(m, n)}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(2, ElementType::kI32, {}));
  call.Emit(exec::MakeGetrfKernel(call.type(), call.batch(), m, n), {a},
            {lu, ipiv, info});
  return OkStatus();
}

Status LowerGeqrf(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 2));
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId tau, call.Result(1, call.type(), {std::min(m, n)}));
  call.Emit(exec::MakeGeqrfKernel(call.type(), call.batch(), m, n), {a},
            {out, tau});
  return OkStatus();
}

namespace {

Status LowerGeqp3(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(2, 3));
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId jpvt, call.Operand(1, ElementType::kI32, {n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId jpvt_out, call.Result(1, ElementType::kI32, {n}));
  ASSIGN_OR_RETURN(SlotId tau, call.Result(2, call.type(), {std::min(m, n)}));
  call.Emit(exec::MakeGeqp3Kernel(call.type(), call.batch(), m, n), {a, jpvt},
            {out, jpvt_out, tau});
  return OkStatus();
}

}  // namespace

Status LowerOrgqr(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(2, 1));
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  ASSIGN_OR_RETURN(std::vector<int64_t> tau_dims,
                   call.OperandDims(1, call.type(), 1));
  int64_t k = tau_dims[0];
  if (!(m >= n && n >= k)) {
    return call.Error("needs rows >= columns >= reflectors, got ", m, "x", n,
                      " and ", k, " reflectors");
  }
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId tau, call.Operand(1, call.type(), {k}));
  ASSIGN_OR_RETURN(SlotId q, call.Result(0, call.type(), {m, n}));
  call.Emit(exec::MakeOrgqrKernel(call.type(), call.batch(), m, n, k), {a, tau},
            {q});
  return OkStatus();
}

namespace {

Status LowerOrmqr(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(3, 1));
  exec::OrmqrParams p;
  p.type = call.type();
  p.batch = call.batch();
  ASSIGN_OR_RETURN(p.left, call.BoolAttr("left"));
  ASSIGN_OR_RETURN(p.transpose, call.BoolAttr("transpose"));
  ASSIGN_OR_RETURN(auto a_dims, MatrixOperand(call));
  ASSIGN_OR_RETURN(std::vector<int64_t> tau_dims,
                   call.OperandDims(1, call.type(), 1));
  ASSIGN_OR_RETURN(std::vector<int64_t> c_dims,
                   call.OperandDims(2, call.type(), 2));
  p.a_cols = a_dims.second;
  p.k = tau_dims[0];
  p.m = c_dims[0];
  p.n = c_dims[1];
  int64_t q = p.left ? p.m : p.n;
  if (a_dims.first != q || p.k > p.a_cols || p.k > q) {
    return call.Error("reflectors ", a_dims.first, "x", a_dims.second, " with ",
                      p.k, " taus do not apply to ", p.m, "x", p.n,
                      p.left ? " from the left" : " from the right");
  }
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {q, p.a_cols}));
  ASSIGN_OR_RETURN(SlotId tau, call.Operand(1, call.type(), {p.k}));
  ASSIGN_OR_RETURN(SlotId c, call.Operand(2, call.type(), {p.m, p.n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {p.m, p.n}));
  call.Emit(exec::MakeOrmqrKernel(p), {a, tau, c}, {out});
  return OkStatus();
}

}  // namespace

Status LowerPotrf(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 2));
  ASSIGN_OR_RETURN(char uplo, call.CharAttr("uplo", "LU"));
  return LowerPotrf(call, uplo == 'L');
}

Status LowerPotrf(LinalgCall& call, bool lower) {
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(1, ElementType::kI32, {}));
  call.Emit(exec::MakePotrfKernel(call.type(), call.batch(), n, lower), {a},
            {out, info});
  return OkStatus();
}

namespace {

Status LowerTrsm(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(2, 1));
  ASSIGN_OR_RETURN(char side, call.CharAttr("side", "LR"));
  ASSIGN_OR_RETURN(char uplo, call.CharAttr("uplo", "LU"));
  ASSIGN_OR_RETURN(char trans, call.CharAttr("trans_x", "NTC"));
  ASSIGN_OR_RETURN(char diag, call.CharAttr("diag", "NU"));
  return LowerTrsm(call, side == 'L', uplo == 'L',
                   trans == 'N' ? 1 : trans == 'T' ? 2 : 3, diag == 'U');
}

}  // namespace

Status LowerTrsm(LinalgCall& call, bool left_side, bool lower, int transpose,
                 bool unit_diagonal) {
  exec::TriangularSolveParams p;
  p.left_side = left_side;
  p.lower = lower;
  p.unit_diagonal = unit_diagonal;
  p.transpose = transpose;
  ASSIGN_OR_RETURN(int64_t k, SquareOperand(call));
  ASSIGN_OR_RETURN(std::vector<int64_t> b_dims,
                   call.OperandDims(1, call.type(), 2));
  if (k != (p.left_side ? b_dims[0] : b_dims[1])) {
    return call.Error("a is ", k, "x", k, " but b is ", b_dims[0], "x",
                      b_dims[1], " (side ", p.left_side ? "left" : "right",
                      ")");
  }
  p.type = call.type();
  p.batch = call.batch();
  p.m = k;
  p.rows = b_dims[0];
  p.cols = b_dims[1];
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {k, k}));
  ASSIGN_OR_RETURN(SlotId b, call.Operand(1, call.type(), b_dims));
  ASSIGN_OR_RETURN(SlotId x, call.Result(0, call.type(), b_dims));
  call.Emit(exec::MakeTriangularSolveKernel(p), {a, b}, {x});
  return OkStatus();
}

Status LowerSyevd(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 3));
  ASSIGN_OR_RETURN(char uplo, call.CharAttr("uplo", "LU"));
  ASSIGN_OR_RETURN(char mode, call.CharAttr("mode", "NV"));
  return LowerSyevd(call, uplo == 'L', mode == 'V');
}

Status LowerSyevd(LinalgCall& call, bool lower, bool vectors) {
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId v, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId w, call.Result(1, call.real_type(), {n}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(2, ElementType::kI32, {}));
  call.Emit(exec::MakeSyevdKernel(call.type(), call.batch(), n, lower, vectors),
            {a}, {v, w, info});
  return OkStatus();
}

namespace {

Status LowerLapackSvd(LinalgCall& call, bool divide_and_conquer) {
  RETURN_IF_ERROR(call.Begin(1, 5));
  ASSIGN_OR_RETURN(char mode, call.CharAttr("mode", "ASNO"));
  if (mode == 'O') {
    return call.Error("mode 'O' (overwrite a with U) is not supported");
  }
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  bool full = mode == 'A';
  if (mode == 'N') {
    // U and VT are not computed; their shapes say which ones JAX made.
    ASSIGN_OR_RETURN(std::vector<int64_t> u_dims, call.ResultDims(2, 2));
    full = u_dims[1] == mn.first;
  }
  return LowerSvd(call, mode != 'N', full, /*u_result=*/2, /*vt_result=*/3,
                  divide_and_conquer);
}

}  // namespace

Status LowerGesdd(LinalgCall& call) { return LowerLapackSvd(call, true); }

Status LowerGesvd(LinalgCall& call) { return LowerLapackSvd(call, false); }

Status LowerSvd(LinalgCall& call, bool compute_uv, bool full, int u_result,
                int vt_result, bool divide_and_conquer) {
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  const int64_t k = std::min(m, n);
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId a_out, call.Result(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId s, call.Result(1, call.real_type(), {k}));
  ASSIGN_OR_RETURN(SlotId u,
                   call.Result(u_result, call.type(), {m, full ? m : k}));
  ASSIGN_OR_RETURN(SlotId vt,
                   call.Result(vt_result, call.type(), {full ? n : k, n}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(4, ElementType::kI32, {}));
  call.Emit(
      exec::MakeSvdKernel(call.type(), call.batch(), m, n, compute_uv, full,
                          divide_and_conquer),
      {a}, {a_out, s, u, vt, info});
  return OkStatus();
}

namespace {

Status LowerGees(LinalgCall& call) {
  const bool complex = call.is_complex();
  RETURN_IF_ERROR(call.Begin(1, complex ? 5 : 6));
  ASSIGN_OR_RETURN(char mode, call.CharAttr("mode", "NV"));
  ASSIGN_OR_RETURN(char sort, call.CharAttr("sort", "NS"));
  if (sort != 'N') {
    return call.Error("sorting eigenvalues (sort = 'S') is not supported");
  }
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  std::vector<SlotId> outputs;
  ASSIGN_OR_RETURN(SlotId t, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId z, call.Result(1, call.type(), {n, n}));
  outputs = {t, z};
  const int eigenvalue_results = complex ? 1 : 2;
  for (int i = 0; i < eigenvalue_results; ++i) {
    ASSIGN_OR_RETURN(SlotId w, call.Result(2 + i, call.type(), {n}));
    outputs.push_back(w);
  }
  for (int i = 0; i < 2; ++i) {
    ASSIGN_OR_RETURN(SlotId x, call.Result(2 + eigenvalue_results + i,
                                           ElementType::kI32, {}));
    outputs.push_back(x);
  }
  call.Emit(exec::MakeGeesKernel(call.type(), call.batch(), n, mode == 'V'),
            {a}, outputs);
  return OkStatus();
}

}  // namespace

namespace {

Status LowerGeev(LinalgCall& call) {
  const bool complex = call.is_complex();
  RETURN_IF_ERROR(call.Begin(1, complex ? 4 : 5));
  ASSIGN_OR_RETURN(char left, call.CharAttr("compute_left", "NV"));
  ASSIGN_OR_RETURN(char right, call.CharAttr("compute_right", "NV"));
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  std::vector<SlotId> outputs;
  const int eigenvalue_results = complex ? 1 : 2;
  for (int i = 0; i < eigenvalue_results; ++i) {
    ASSIGN_OR_RETURN(SlotId w, call.Result(i, call.type(), {n}));
    outputs.push_back(w);
  }
  for (int i = 0; i < 2; ++i) {
    ASSIGN_OR_RETURN(SlotId v, call.Result(eigenvalue_results + i,
                                           call.complex_type(), {n, n}));
    outputs.push_back(v);
  }
  ASSIGN_OR_RETURN(SlotId info,
                   call.Result(eigenvalue_results + 2, ElementType::kI32, {}));
  outputs.push_back(info);
  call.Emit(exec::MakeGeevKernel(call.type(), call.batch(), n, left == 'V',
                                 right == 'V'),
            {a}, outputs);
  return OkStatus();
}

}  // namespace

namespace {

Status LowerGehrd(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 3));
  ASSIGN_OR_RETURN(int64_t low, call.IntAttr("low"));
  ASSIGN_OR_RETURN(int64_t high, call.IntAttr("high"));
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  bool valid =
      n == 0 ? (low == 1 && high <= 1) : (1 <= low && low <= high && high <= n);
  if (!valid) {
    return call.Error("low = ", low, " and high = ", high,
                      " do not satisfy 1 <= low <= high <= ", n);
  }
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId tau, call.Result(1, call.type(), {Minus1(n)}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(2, ElementType::kI32, {}));
  call.Emit(exec::MakeGehrdKernel(call.type(), call.batch(), n, low, high), {a},
            {out, tau, info});
  return OkStatus();
}

}  // namespace

Status LowerSytrd(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 5));
  ASSIGN_OR_RETURN(char uplo, call.CharAttr("uplo", "LU"));
  return LowerSytrd(call, uplo == 'L');
}

Status LowerSytrd(LinalgCall& call, bool lower) {
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId d, call.Result(1, call.real_type(), {n}));
  ASSIGN_OR_RETURN(SlotId e, call.Result(2, call.real_type(), {Minus1(n)}));
  ASSIGN_OR_RETURN(SlotId tau, call.Result(3, call.type(), {Minus1(n)}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(4, ElementType::kI32, {}));
  call.Emit(exec::MakeSytrdKernel(call.type(), call.batch(), n, lower), {a},
            {out, d, e, tau, info});
  return OkStatus();
}

Status LowerGtsv(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(4, 5, /*matrix_rank=*/1));
  ASSIGN_OR_RETURN(std::vector<int64_t> d_dims,
                   call.OperandDims(0, call.type(), 1));
  int64_t m = d_dims[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> b_dims,
                   call.OperandDims(3, call.type(), 2));
  if (b_dims[0] != m) {
    return call.Error("b has ", b_dims[0], " rows for a system of order ", m);
  }
  int64_t nrhs = b_dims[1];
  std::vector<SlotId> inputs, outputs;
  for (int i = 0; i < 4; ++i) {
    std::vector<int64_t> dims =
        i < 3 ? std::vector<int64_t>{m} : std::vector<int64_t>{m, nrhs};
    ASSIGN_OR_RETURN(SlotId in, call.Operand(i, call.type(), dims));
    ASSIGN_OR_RETURN(SlotId out, call.Result(i, call.type(), dims));
    inputs.push_back(in);
    outputs.push_back(out);
  }
  ASSIGN_OR_RETURN(SlotId info, call.Result(4, ElementType::kI32, {}));
  outputs.push_back(info);
  call.Emit(exec::MakeGtsvKernel(call.type(), call.batch(), m, nrhs), inputs,
            outputs);
  return OkStatus();
}

namespace {

// jaxlib's own tridiagonal_solve_perturbed_ffi (no type prefix: the
// operands' element type): dl, d, du, b -> x.
Status LowerTridiagonalSolvePerturbed(Lowering& lowering,
                                      const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId first, lowering.Operand(op, 0));
  ElementType type = lowering.shape(first).type;
  if (type != ElementType::kF32 && type != ElementType::kF64 &&
      type != ElementType::kC64 && type != ElementType::kC128) {
    return UnsupportedType(op, type);
  }
  LinalgCall call(lowering, op, type);
  RETURN_IF_ERROR(call.Begin(4, 1, /*matrix_rank=*/1));
  ASSIGN_OR_RETURN(std::vector<int64_t> d_dims, call.OperandDims(0, type, 1));
  int64_t m = d_dims[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> b_dims, call.OperandDims(3, type, 2));
  if (b_dims[0] != m) {
    return call.Error("b has ", b_dims[0], " rows for a system of order ", m);
  }
  std::vector<SlotId> inputs;
  for (int i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(
        SlotId in,
        call.Operand(i, type, i < 3 ? std::vector<int64_t>{m} : b_dims));
    inputs.push_back(in);
  }
  ASSIGN_OR_RETURN(SlotId x, call.Result(0, type, b_dims));
  call.Emit(exec::MakeTridiagonalSolvePerturbedKernel(type, call.batch(), m,
                                                      b_dims[1]),
            inputs, {x});
  return OkStatus();
}

}  // namespace

namespace {

// The routines by name (real name, complex name: LAPACK's orgqr is ungqr
// for complex types, and so on).
struct Routine {
  const char* real_name;
  const char* complex_name;
  Status (*lower)(LinalgCall&);
};

constexpr Routine kRoutines[] = {
    {"getrf", "getrf", LowerGetrf}, {"geqrf", "geqrf", LowerGeqrf},
    {"geqp3", "geqp3", LowerGeqp3}, {"orgqr", "ungqr", LowerOrgqr},
    {"ormqr", "unmqr", LowerOrmqr}, {"potrf", "potrf", LowerPotrf},
    {"trsm", "trsm", LowerTrsm},    {"syevd", "heevd", LowerSyevd},
    {"gesdd", "gesdd", LowerGesdd}, {"gesvd", "gesvd", LowerGesvd},
    {"gees", "gees", LowerGees},    {"geev", "geev", LowerGeev},
    {"gehrd", "gehrd", LowerGehrd}, {"sytrd", "hetrd", LowerSytrd},
    {"gtsv", "gtsv", LowerGtsv},
};

}  // namespace

void RegisterLapackTargets(CustomCallRegistry& registry) {
  const std::pair<char, ElementType> kPrefixes[] = {
      {'s', ElementType::kF32},
      {'d', ElementType::kF64},
      {'c', ElementType::kC64},
      {'z', ElementType::kC128},
  };
  for (const Routine& routine : kRoutines) {
    for (const auto& entry : kPrefixes) {
      // Not a structured binding: Clang before 16 cannot capture one.
      const char prefix = entry.first;
      const ElementType type = entry.second;
      const char* name =
          ir::IsComplex(type) ? routine.complex_name : routine.real_name;
      auto lower = routine.lower;
      registry.Register(
          StrCat("lapack_", std::string(1, prefix), name, "_ffi"),
          [type, lower](Lowering& lowering, const ir::Operation& op) {
            LinalgCall call(lowering, op, type);
            return lower(call);
          });
    }
  }
  registry.Register("tridiagonal_solve_perturbed_ffi",
                    LowerTridiagonalSolvePerturbed);
}

}  // namespace kiln::compile
