// Lowering of the GPU targets JAX writes into programs exported for `cuda`
// or `rocm`, computed on the CPU with the LAPACK kernels
// (exec/kernels/lapack.h) and the threefry kernel (exec/kernels/rng.h).
//
// The solver FFI targets (jaxlib/gpu/solver_kernels_ffi.cc, lowered by
// jax/_src/lax/linalg.py): {cusolver,hipsolver}_X_ffi with the element type
// taken from the operands, leading batch dimensions (`num_batch_dims` in
// the frontend attributes), column-major matrices as for the LAPACK FFI
// (compile/linalg_call.h), and attributes in mhlo.backend_config as bools
// (`lower`, `full_matrices`, `compute_uv`, `transposed`) or a ui8
// (`algorithm`). Their results are LAPACK's: the same factored forms,
// 1-based pivots and info codes, except that the Jacobi and polar SVDs
// (gesvdj, gesvdp) return V where LAPACK returns V^H.
//
// The legacy targets of jaxlib before the solver FFI (cusolver_getrf,
// cublas_getrf_batched, cusolver_syevj, ... with a packed descriptor in
// backend_config and workspaces as their last results) are read by their
// shapes and the modes in their descriptors; the workspaces are zeros (see
// "The legacy targets" below).
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compile/custom_call.h"
#include "compile/linalg_call.h"
#include "compile/lower_families.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/rng.h"

namespace kiln::compile {
namespace {

bool IsSolverType(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kF64 ||
         type == ElementType::kC64 || type == ElementType::kC128;
}

// The element type of operand 0, which a solver target takes from it.
// The op and its target, for errors: "stablehlo.custom_call at f.mlir:3:3
// @cusolver_potrf_ffi".
std::string Describe(const ir::Operation& op) {
  ir::Attribute target = op.GetAttr("call_target_name");
  return StrCat(op.Describe(), " @",
                target.is(ir::AttrKind::kString)      ? target.string_value()
                : target.is(ir::AttrKind::kSymbolRef) ? target.symbol_root()
                                                      : std::string("?"));
}

StatusOr<ElementType> SolverType(Lowering& lowering, const ir::Operation& op) {
  if (op.num_operands() < 1) {
    return InvalidArgumentError(Describe(op), ": expects a matrix operand");
  }
  ASSIGN_OR_RETURN(SlotId first, lowering.Operand(op, 0));
  ElementType type = lowering.shape(first).type;
  if (!IsSolverType(type)) {
    return InvalidArgumentError(Describe(op), ": element type ",
                                ir::ElementTypeName(type),
                                " is not f32, f64, complex<f32> or "
                                "complex<f64>");
  }
  return type;
}

using SolverLowerFn = Status (*)(LinalgCall&);

// Registers `lower` under the cuda and rocm names of `routine`: library
// "solver" (cusolver_, hipsolver_) or "blas" (cublas_, hipblas_).
void RegisterGpuRoutine(CustomCallRegistry& registry, const char* library,
                        const std::string& routine, SolverLowerFn lower) {
  for (const char* vendor : {"cu", "hip"}) {
    registry.Register(
        StrCat(vendor, library, "_", routine),
        [lower](Lowering& lowering, const ir::Operation& op) -> Status {
          ASSIGN_OR_RETURN(ElementType type, SolverType(lowering, op));
          LinalgCall call(lowering, op, type);
          return lower(call);
        });
  }
}

void RegisterSolver(CustomCallRegistry& registry, const std::string& routine,
                    SolverLowerFn lower) {
  RegisterGpuRoutine(registry, "solver", routine, lower);
}

void RegisterBlas(CustomCallRegistry& registry, const std::string& routine,
                  SolverLowerFn lower) {
  RegisterGpuRoutine(registry, "blas", routine, lower);
}

Status LowerGpuGetrf(LinalgCall& call) { return LowerGetrf(call); }
Status LowerGpuGeqrf(LinalgCall& call) { return LowerGeqrf(call); }
Status LowerGpuOrgqr(LinalgCall& call) { return LowerOrgqr(call); }

Status LowerGpuPotrf(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 2));
  ASSIGN_OR_RETURN(bool lower, call.BoolAttr("lower"));
  return LowerPotrf(call, lower);
}

// syevd_ffi: a -> v, w, info; `algorithm` (default, QR or Jacobi) chooses
// among methods that compute the same decomposition.
Status LowerGpuSyevd(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 3));
  ASSIGN_OR_RETURN(bool lower, call.BoolAttr("lower"));
  return LowerSyevd(call, lower, /*vectors=*/true);
}

Status LowerGpuSytrd(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 5));
  ASSIGN_OR_RETURN(bool lower, call.BoolAttr("lower"));
  return LowerSytrd(call, lower);
}

// gesvd_ffi (and hipsolver's gesdd_ffi): a -> a, s, u, vt, info. With
// `transposed` (JAX's choice for m < n) the arrays are row-major: the
// solver factors a^T, and read back row-major its factors are V^H and U of
// a, which JAX expects as results 2 and 3.
Status LowerGpuGesvd(LinalgCall& call) {
  bool transposed = false;
  ASSIGN_OR_RETURN(bool compute_uv, call.BoolAttr("compute_uv"));
  ASSIGN_OR_RETURN(bool full, call.BoolAttr("full_matrices"));
  StatusOr<bool> transposed_attr = call.BoolAttr("transposed");
  if (transposed_attr.ok()) transposed = *transposed_attr;
  RETURN_IF_ERROR(call.Begin(1, 5, /*matrix_rank=*/2,
                             /*column_major=*/!transposed));
  return transposed ? LowerSvd(call, compute_uv, full, 3, 2)
                    : LowerSvd(call, compute_uv, full, 2, 3);
}

// gesvdj_ffi and gesvdp_ffi: a -> a, s, u [m, m or k], v [n, n or k], info;
// U and V are computed even without `compute_uv` (JAX ignores them then).
Status LowerGesvdj(LinalgCall& call, bool compute_uv, bool full) {
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  const int64_t k = std::min(m, n);
  const int64_t v_cols = full ? n : k;
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId a_out, call.Result(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId s, call.Result(1, call.real_type(), {k}));
  ASSIGN_OR_RETURN(SlotId u, call.Result(2, call.type(), {m, full ? m : k}));
  ASSIGN_OR_RETURN(SlotId v, call.Result(3, call.type(), {n, v_cols}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(4, ElementType::kI32, {}));
  std::vector<int64_t> vt_dims = call.batch_dims();
  vt_dims.push_back(v_cols);
  vt_dims.push_back(n);
  SlotId vt = call.lowering().NewTemp({call.type(), vt_dims});
  call.Emit(
      exec::MakeSvdKernel(call.type(), call.batch(), m, n, compute_uv, full,
                          /*divide_and_conquer=*/true),
      {a}, {a_out, s, u, vt, info});
  call.Emit(exec::MakeAdjointKernel(call.type(), call.batch(), v_cols, n), {vt},
            {v});
  return OkStatus();
}

Status LowerGpuGesvdj(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 5));
  ASSIGN_OR_RETURN(bool compute_uv, call.BoolAttr("compute_uv"));
  ASSIGN_OR_RETURN(bool full, call.BoolAttr("full_matrices"));
  return LowerGesvdj(call, compute_uv, full);
}

// cusparse_gtsv2_ffi: dl, d, du, b -> x (gtsv's solution; its factors and
// info are not results).
Status LowerGpuGtsv2(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(4, 1, /*matrix_rank=*/1));
  ASSIGN_OR_RETURN(std::vector<int64_t> d_dims,
                   call.OperandDims(0, call.type(), 1));
  const int64_t m = d_dims[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> b_dims,
                   call.OperandDims(3, call.type(), 2));
  if (b_dims[0] != m) {
    return call.Error("b has ", b_dims[0], " rows for a system of order ", m);
  }
  std::vector<SlotId> inputs, outputs;
  for (int i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(
        SlotId in,
        call.Operand(i, call.type(), i < 3 ? std::vector<int64_t>{m} : b_dims));
    inputs.push_back(in);
  }
  std::vector<int64_t> vector_dims = call.batch_dims();
  vector_dims.push_back(m);
  for (int i = 0; i < 3; ++i) {
    outputs.push_back(call.lowering().NewTemp({call.type(), vector_dims}));
  }
  ASSIGN_OR_RETURN(SlotId x, call.Result(0, call.type(), b_dims));
  outputs.push_back(x);
  outputs.push_back(
      call.lowering().NewTemp({ElementType::kI32, call.batch_dims()}));
  call.Emit(exec::MakeGtsvKernel(call.type(), call.batch(), m, b_dims[1]),
            inputs, outputs);
  return OkStatus();
}

// {cu,hip,kiln}_lu_pivots_to_permutation: pivots [batch, k] (0-based) ->
// permutation [batch, m], m from the result type; row-major arrays.
Status LowerLuPivotsToPermutation(Lowering& lowering, const ir::Operation& op) {
  LinalgCall call(lowering, op, ElementType::kI32);
  RETURN_IF_ERROR(call.Begin(1, 1, /*matrix_rank=*/1, /*column_major=*/false));
  ASSIGN_OR_RETURN(std::vector<int64_t> pivot_dims,
                   call.OperandDims(0, ElementType::kI32, 1));
  ASSIGN_OR_RETURN(std::vector<int64_t> result_dims, call.ResultDims(0, 1));
  const int64_t k = pivot_dims[0], m = result_dims[0];
  if (m < k) {
    return call.Error("permutation size ", m, " is smaller than the ", k,
                      " pivots");
  }
  ASSIGN_OR_RETURN(SlotId pivots, call.Operand(0, ElementType::kI32, {k}));
  ASSIGN_OR_RETURN(SlotId permutation, call.Result(0, ElementType::kI32, {m}));
  call.Emit(exec::MakeLuPivotsToPermutationKernel(call.batch(), k, m), {pivots},
            {permutation});
  return OkStatus();
}

// {cu,hip}_threefry2x32[_ffi]: key0, key1, x0, x1 (u32, one shape; the
// legacy form may add the element count as a fifth operand) -> y0, y1.
Status LowerThreefry2x32(Lowering& lowering, const ir::Operation& op) {
  if ((op.num_operands() != 4 && op.num_operands() != 5) ||
      op.num_results() != 2) {
    return InvalidArgumentError(Describe(op),
                                ": expects 4 operands (key0, key1, x0, x1) "
                                "and 2 results, got ",
                                op.num_operands(), " and ", op.num_results());
  }
  std::vector<SlotId> inputs;
  ArrayShape shape;
  for (int i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(SlotId slot, lowering.Operand(op, i));
    ArrayShape operand = lowering.shape(slot);
    if (i == 0) shape = operand;
    if (operand.type != ElementType::kUI32 || operand != shape) {
      return InvalidArgumentError(
          Describe(op), ": operand ", i, " is ", operand.ToString(),
          ", expected ", ArrayShape{ElementType::kUI32, shape.dims}.ToString());
    }
    inputs.push_back(slot);
  }
  std::vector<SlotId> outputs;
  for (int i = 0; i < 2; ++i) {
    ASSIGN_OR_RETURN(SlotId slot, lowering.NewResult(op, i, shape.dims));
    if (lowering.shape(slot) != shape) {
      return InvalidArgumentError(Describe(op), ": result ", i, " is ",
                                  lowering.shape(slot).ToString(),
                                  ", expected ", shape.ToString());
    }
    outputs.push_back(slot);
  }
  lowering.Emit(op, exec::MakeThreefry2x32Kernel(shape.num_elements()),
                std::move(inputs), std::move(outputs));
  return OkStatus();
}

// --- The legacy targets ------------------------------------------------------
//
// jaxlib before the solver FFI called cuSOLVER, hipSOLVER, cuBLAS and
// hipBLAS through custom calls (api_version 2) whose backend_config is a
// packed C struct, the descriptor, and whose last results are device
// workspaces. Kiln takes the sizes from the shapes, the modes from the
// descriptor, and binds the workspaces to zeros (ZeroTrailingResults).
// Descriptors (4-byte ints unless noted; `type` 0-3 is f32, f64, c64, c128):
//
//   solver_getrf  {type, batch, m, n, lwork}       a -> a, ipiv, info, work
//   blas_getrf_batched {type, batch, n}            a -> a, ipiv, info, work
//   solver_geqrf  {type, batch, m, n, lwork}       a -> a, tau, info, work
//   blas_geqrf_batched {type, batch, m, n}         a -> a, tau, work, work
//   solver_orgqr  {type, batch, m, n, k, lwork}    a, tau -> a, info, work
//   solver_potrf  {type, uplo, i64 batch, i64 n, lwork}  a -> a, info, work
//   solver_syevd, solver_syevj {type, uplo, batch, n, lwork}
//                                                  a -> v, w, info, work
//   solver_sytrd  {type, uplo, batch, n, lda, lwork}
//                                                  a -> a, d, e, tau, info,
//                                                  work
//   solver_gesvd  {type, batch, m, n, lwork, i8 jobu, i8 jobvt}
//                                                  a -> a, s, u, vt, info, work
//   solver_gesvdj {type, batch, m, n, lwork, jobz, econ}
//                                                  a -> a, s, u, v, info, work
//   blas_trsm_batched {type, batch, m, n, side, uplo, trans, diag}
//                                                  a, b -> b, work, work
//
// with the prefixes cu/cusolver_, cu/cublas_ and hip/hipsolver_,
// hip/hipblas_. Enumerations are cuBLAS's (fill lower 0, upper 1; side
// left 0, right 1; op N 0, T 1, C 2; diag non-unit 0, unit 1) or hipBLAS's
// and rocBLAS's (fill upper 121, lower 122; op 111-113; diag 131, 132;
// side 141, 142). getrf's pivots are 1-based, as cuSOLVER's are.

// The descriptor in backend_config when it has `size` bytes.
std::optional<std::string_view> Descriptor(const ir::Operation& op,
                                           size_t size) {
  ir::Attribute config = op.GetAttr("backend_config");
  if (!config.is(ir::AttrKind::kString) ||
      config.string_value().size() != size) {
    return std::nullopt;
  }
  return std::string_view(config.string_value());
}

int32_t Int32At(std::string_view bytes, size_t offset) {
  int32_t value;
  std::memcpy(&value, bytes.data() + offset, sizeof(value));
  return value;
}

// The descriptor's `type` (its first field) against the operand's.
Status CheckDescriptorType(LinalgCall& call, std::string_view descriptor) {
  static constexpr ElementType kTypes[] = {ElementType::kF32, ElementType::kF64,
                                           ElementType::kC64,
                                           ElementType::kC128};
  const int32_t type = Int32At(descriptor, 0);
  if (type < 0 || type > 3 || kTypes[type] != call.type()) {
    return call.Error("descriptor type ", type, " is not the operands' ",
                      ir::ElementTypeName(call.type()));
  }
  return OkStatus();
}

// A fill mode: lower for cuBLAS's 0 and hipBLAS's 122, upper for 1 and 121.
StatusOr<bool> FillLower(LinalgCall& call, int32_t value) {
  if (value == 0 || value == 122) return true;
  if (value == 1 || value == 121) return false;
  return call.Error("descriptor fill mode ", value,
                    " is neither lower (0, 122) nor upper (1, 121)");
}

// The fill mode of a descriptor of `size` bytes with `uplo` at byte 4;
// lower when backend_config is not such a descriptor (jaxlib's eigh and
// cholesky symmetrize their input, so either triangle gives the result).
StatusOr<bool> LegacyLower(LinalgCall& call, size_t size) {
  std::optional<std::string_view> descriptor = Descriptor(call.op(), size);
  if (!descriptor) return true;
  RETURN_IF_ERROR(CheckDescriptorType(call, *descriptor));
  return FillLower(call, Int32At(*descriptor, 4));
}

// Legacy getrf: {cu,hip}solver_getrf and {cu,hip}blas_getrf_batched.
Status LowerLegacyGetrf(LinalgCall& call) {
  call.ZeroTrailingResults(1);
  return LowerGetrf(call);
}

// Legacy solver geqrf: its info (geqrf cannot fail) and workspace are zeros.
Status LowerLegacyGeqrf(LinalgCall& call) {
  call.ZeroTrailingResults(2);
  return LowerGeqrf(call);
}

Status LowerLegacyOrgqr(LinalgCall& call) {
  call.ZeroTrailingResults(2);
  return LowerOrgqr(call);
}

Status LowerLegacyPotrf(LinalgCall& call) {
  call.ZeroTrailingResults(1);
  RETURN_IF_ERROR(call.Begin(1, 2));
  ASSIGN_OR_RETURN(bool lower, LegacyLower(call, 32));
  return LowerPotrf(call, lower);
}

// Legacy syevd / syevj: a (and, with dynamic batch dimensions, the batch
// size) -> v, w, info, workspace.
Status LowerLegacySyevd(LinalgCall& call) {
  call.ZeroTrailingResults(1);
  RETURN_IF_ERROR(call.Begin(call.op().num_operands() == 2 ? 2 : 1, 3));
  ASSIGN_OR_RETURN(bool lower, LegacyLower(call, 20));
  return LowerSyevd(call, lower, /*vectors=*/true);
}

Status LowerLegacySytrd(LinalgCall& call) {
  call.ZeroTrailingResults(1);
  RETURN_IF_ERROR(call.Begin(1, 5));
  ASSIGN_OR_RETURN(bool lower, LegacyLower(call, 24));
  return LowerSytrd(call, lower);
}

// Legacy gesvd. For m < n jaxlib passed a^T: row-major arrays (the
// declared operand layout says so), V^H as result 2 and U as result 3, as
// the FFI's `transposed` does.
Status LowerLegacyGesvd(LinalgCall& call) {
  bool transposed = false;
  ir::Attribute layouts = call.op().GetAttr("operand_layouts");
  if (layouts.is(ir::AttrKind::kArray) && !layouts.array().empty()) {
    std::optional<std::vector<int64_t>> layout =
        layouts.array()[0].AsIntVector();
    if (layout && layout->size() >= 2) {
      transposed = true;  // row-major: {r-1, ..., 0}
      for (size_t d = 0; d < layout->size(); ++d) {
        transposed &=
            (*layout)[d] == static_cast<int64_t>(layout->size() - 1 - d);
      }
    }
  }
  call.ZeroTrailingResults(1);
  RETURN_IF_ERROR(call.Begin(1, 5, /*matrix_rank=*/2,
                             /*column_major=*/!transposed));
  bool compute_uv = true;
  if (std::optional<std::string_view> descriptor = Descriptor(call.op(), 24)) {
    RETURN_IF_ERROR(CheckDescriptorType(call, *descriptor));
    const char jobu = (*descriptor)[20];
    if (jobu != 'A' && jobu != 'S' && jobu != 'N') {
      return call.Error("descriptor jobu '", std::string(1, jobu),
                        "' is not A, S or N");
    }
    compute_uv = jobu != 'N';
  }
  // Full or economy factors, from the shapes (the same without vectors):
  // U [m, m or k] as result 2, or, transposed (m < n), V^H [n or m, n] as
  // result 2 and U [m, m] as result 3.
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims2, call.ResultDims(2, 2));
  if (transposed) {
    return LowerSvd(call, compute_uv, /*full=*/dims2[0] == mn.second, 3, 2);
  }
  return LowerSvd(call, compute_uv, /*full=*/dims2[1] == mn.first, 2, 3);
}

Status LowerLegacyGesvdj(LinalgCall& call) {
  call.ZeroTrailingResults(1);
  RETURN_IF_ERROR(call.Begin(1, 5));
  bool compute_uv = true;
  if (std::optional<std::string_view> descriptor = Descriptor(call.op(), 28)) {
    RETURN_IF_ERROR(CheckDescriptorType(call, *descriptor));
    compute_uv = Int32At(*descriptor, 20) != 0;  // CUSOLVER_EIG_MODE_VECTOR
  }
  // econ (U m x k, V n x k) or not, from U's shape.
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  ASSIGN_OR_RETURN(std::vector<int64_t> u_dims, call.ResultDims(2, 2));
  return LowerGesvdj(call, compute_uv, /*full=*/u_dims[1] == mn.first);
}

// Legacy batched trsm: the descriptor holds every mode; b -> x.
Status LowerLegacyTrsm(LinalgCall& call) {
  call.ZeroTrailingResults(2);
  RETURN_IF_ERROR(call.Begin(2, 1));
  std::optional<std::string_view> descriptor = Descriptor(call.op(), 32);
  if (!descriptor) {
    return call.Error(
        "expects jaxlib's 32-byte trsm descriptor {type, batch, "
        "m, n, side, uplo, trans, diag} as backend_config");
  }
  RETURN_IF_ERROR(CheckDescriptorType(call, *descriptor));
  const int32_t side = Int32At(*descriptor, 16);
  const int32_t trans = Int32At(*descriptor, 24);
  const int32_t diag = Int32At(*descriptor, 28);
  ASSIGN_OR_RETURN(bool lower, FillLower(call, Int32At(*descriptor, 20)));
  if (side != 0 && side != 1 && side != 141 && side != 142) {
    return call.Error("descriptor side ", side, " is not left or right");
  }
  if (!(trans >= 0 && trans <= 2) && !(trans >= 111 && trans <= 113)) {
    return call.Error("descriptor operation ", trans, " is not N, T or C");
  }
  if (diag != 0 && diag != 1 && diag != 131 && diag != 132) {
    return call.Error("descriptor diag ", diag, " is not unit or non-unit");
  }
  const int transpose = 1 + (trans >= 111 ? trans - 111 : trans);
  return LowerTrsm(call, /*left_side=*/side == 0 || side == 141, lower,
                   transpose, /*unit_diagonal=*/diag == 1 || diag == 132);
}

}  // namespace

void RegisterGpuTargets(CustomCallRegistry& registry) {
  RegisterSolver(registry, "getrf_ffi", LowerGpuGetrf);
  RegisterSolver(registry, "geqrf_ffi", LowerGpuGeqrf);
  RegisterSolver(registry, "orgqr_ffi", LowerGpuOrgqr);
  RegisterSolver(registry, "potrf_ffi", LowerGpuPotrf);
  RegisterSolver(registry, "syevd_ffi", LowerGpuSyevd);
  RegisterSolver(registry, "sytrd_ffi", LowerGpuSytrd);
  RegisterSolver(registry, "gesvd_ffi", LowerGpuGesvd);
  RegisterSolver(registry, "gesdd_ffi", LowerGpuGesvd);
  RegisterSolver(registry, "gesvdj_ffi", LowerGpuGesvdj);
  RegisterSolver(registry, "gesvdp_ffi", LowerGpuGesvdj);
  RegisterSolver(registry, "getrf", LowerLegacyGetrf);
  RegisterSolver(registry, "geqrf", LowerLegacyGeqrf);
  RegisterSolver(registry, "orgqr", LowerLegacyOrgqr);
  RegisterSolver(registry, "potrf", LowerLegacyPotrf);
  RegisterSolver(registry, "syevd", LowerLegacySyevd);
  RegisterSolver(registry, "syevj", LowerLegacySyevd);
  RegisterSolver(registry, "sytrd", LowerLegacySytrd);
  RegisterSolver(registry, "gesvd", LowerLegacyGesvd);
  RegisterSolver(registry, "gesvdj", LowerLegacyGesvdj);
  RegisterBlas(registry, "getrf_batched", LowerLegacyGetrf);
  RegisterBlas(registry, "geqrf_batched", [](LinalgCall& call) {
    // No info: a -> a, tau and two workspaces.
    call.ZeroTrailingResults(2);
    return LowerGeqrf(call);
  });
  RegisterBlas(registry, "trsm_batched", LowerLegacyTrsm);
  for (const char* name : {"cusparse_gtsv2_ffi", "hipsparse_gtsv2_ffi"}) {
    registry.Register(
        name, [](Lowering& lowering, const ir::Operation& op) -> Status {
          ASSIGN_OR_RETURN(ElementType type, SolverType(lowering, op));
          LinalgCall call(lowering, op, type);
          return LowerGpuGtsv2(call);
        });
  }
  // kiln_...: what Kiln's JAX plugin lowers lu_pivots_to_permutation to
  // (python/jax_plugins/kiln/lowerings.py), JAX's GPU rule with its prefix.
  for (const char* name :
       {"cu_lu_pivots_to_permutation", "hip_lu_pivots_to_permutation",
        "kiln_lu_pivots_to_permutation"}) {
    registry.Register(name, LowerLuPivotsToPermutation);
  }
  for (const char* name : {"cu_threefry2x32_ffi", "hip_threefry2x32_ffi",
                           "cu_threefry2x32", "hip_threefry2x32"}) {
    registry.Register(name, LowerThreefry2x32);
  }
}

}  // namespace kiln::compile
