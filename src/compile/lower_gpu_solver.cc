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
// The legacy targets of jax before the solver FFI (cusolver_syevj and
// cusolver_syevd with an opaque descriptor in backend_config, and a
// workspace as their last result) are read by their operand and result
// shapes; the workspace is left as zeros.
#include <cstring>
#include <string>
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

// Registers `lower` under the cusolver and hipsolver names of `routine`.
void RegisterSolver(CustomCallRegistry& registry, const std::string& routine,
                    SolverLowerFn lower) {
  for (const char* prefix : {"cusolver_", "hipsolver_"}) {
    registry.Register(
        StrCat(prefix, routine),
        [lower](Lowering& lowering, const ir::Operation& op) -> Status {
          ASSIGN_OR_RETURN(ElementType type, SolverType(lowering, op));
          LinalgCall call(lowering, op, type);
          return lower(call);
        });
  }
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
Status LowerGpuGesvdj(LinalgCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 5));
  ASSIGN_OR_RETURN(bool compute_uv, call.BoolAttr("compute_uv"));
  ASSIGN_OR_RETURN(bool full, call.BoolAttr("full_matrices"));
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
      exec::MakeSvdKernel(call.type(), call.batch(), m, n, compute_uv, full),
      {a}, {a_out, s, u, vt, info});
  call.Emit(exec::MakeAdjointKernel(call.type(), call.batch(), v_cols, n), {vt},
            {v});
  return OkStatus();
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

// {cu,hip}_lu_pivots_to_permutation: pivots [batch, k] (0-based) ->
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

// The fill mode in a legacy syevd/syevj descriptor (jaxlib's packed
// {type, uplo, batch, n, lwork} of 4-byte fields; cuBLAS's lower fill mode
// is 0); lower when the descriptor is not of that form.
bool LegacyDescriptorLower(const ir::Operation& op) {
  ir::Attribute config = op.GetAttr("backend_config");
  if (!config.is(ir::AttrKind::kString)) return true;
  const std::string& bytes = config.string_value();
  if (bytes.size() != 5 * sizeof(int32_t)) return true;
  int32_t uplo;
  std::memcpy(&uplo, bytes.data() + sizeof(int32_t), sizeof(uplo));
  return uplo == 0;
}

// Legacy cusolver_syevd / cusolver_syevj: a (and, with dynamic batch
// dimensions, the batch size) -> v, w, info, workspace.
Status LowerLegacySyevd(LinalgCall& call) {
  const int operands = call.op().num_operands() == 2 ? 2 : 1;
  RETURN_IF_ERROR(call.Begin(operands, 4));
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId v, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId w, call.Result(1, call.real_type(), {n}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(2, ElementType::kI32, {}));
  ASSIGN_OR_RETURN(ArrayShape workspace_shape,
                   call.lowering().ResultShape(call.op(), 3));
  ASSIGN_OR_RETURN(
      SlotId workspace,
      call.lowering().NewSplatConstant(
          workspace_shape,
          std::string(ir::StorageBytes(workspace_shape.type), '\0')));
  call.lowering().Bind(call.op().result(3), workspace);
  call.Emit(exec::MakeSyevdKernel(call.type(), call.batch(), n,
                                  LegacyDescriptorLower(call.op()),
                                  /*vectors=*/true),
            {a}, {v, w, info});
  return OkStatus();
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
  RegisterSolver(registry, "syevd", LowerLegacySyevd);
  RegisterSolver(registry, "syevj", LowerLegacySyevd);
  for (const char* name : {"cusparse_gtsv2_ffi", "hipsparse_gtsv2_ffi"}) {
    registry.Register(
        name, [](Lowering& lowering, const ir::Operation& op) -> Status {
          ASSIGN_OR_RETURN(ElementType type, SolverType(lowering, op));
          LinalgCall call(lowering, op, type);
          return LowerGpuGtsv2(call);
        });
  }
  for (const char* name :
       {"cu_lu_pivots_to_permutation", "hip_lu_pivots_to_permutation"}) {
    registry.Register(name, LowerLuPivotsToPermutation);
  }
  for (const char* name : {"cu_threefry2x32_ffi", "hip_threefry2x32_ffi",
                           "cu_threefry2x32", "hip_threefry2x32"}) {
    registry.Register(name, LowerThreefry2x32);
  }
}

}  // namespace kiln::compile
