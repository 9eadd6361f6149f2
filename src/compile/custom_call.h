// The registry of custom-call targets (and of ops of other dialects, by
// their full name), each a lowering function like the built-in ops'.
//
// Kiln's own registry (`Builtin()`) knows the targets a one-device CPU
// plugin must accept: sharding annotations and device placement hints are
// identities; JAX's LAPACK FFI targets (lapack_*_ffi, lower_lapack.cc) and
// the GPU solver and random targets of programs exported for cuda or rocm
// (lower_gpu_solver.cc) run on Kiln's own kernels; shape_assertion and the
// top-k targets are lower_xla_targets.cc. Tools and tests extend it with a
// registry whose fallback is the built-in one (the corpus check targets live in
// tools/, never in the plugin). An unknown target fails compilation.
#ifndef KILN_COMPILE_CUSTOM_CALL_H_
#define KILN_COMPILE_CUSTOM_CALL_H_

#include <map>
#include <string>
#include <string_view>

#include "compile/lowering.h"

namespace kiln::compile {

class CustomCallRegistry {
 public:
  // A registry that consults `fallback` for names it does not hold.
  explicit CustomCallRegistry(const CustomCallRegistry* fallback = nullptr)
      : fallback_(fallback) {}

  void Register(std::string name, LowerFn lower);
  // The lowering for a custom_call target or an op name; null if unknown.
  const LowerFn* Find(std::string_view name) const;

  // Kiln's own targets.
  static const CustomCallRegistry& Builtin();

 private:
  const CustomCallRegistry* fallback_;
  std::map<std::string, LowerFn, std::less<>> entries_;
};

// Registers JAX's LAPACK FFI targets, lapack_{s,d,c,z}<routine>_ffi for
// getrf, geqrf, geqp3, orgqr/ungqr, ormqr/unmqr, potrf, trsm, syevd/heevd,
// gesdd, gesvd, gees, geev, gehrd, sytrd/hetrd and gtsv, and jaxlib's
// tridiagonal_solve_perturbed_ffi (lower_lapack.cc).
void RegisterLapackTargets(CustomCallRegistry& registry);

// Whether `op` is a custom call of XLA's typed FFI (`api_version = 4`, or
// a dictionary `mhlo.backend_config` as JAX writes it).
bool IsFfiCustomCall(const ir::Operation& op);

// Lowers a typed-FFI custom call of `target` to a call of the handler
// registered for it (exec/ffi.h; lower_ffi.cc); UNIMPLEMENTED naming the
// target when none is.
Status LowerFfiCall(Lowering& lowering, const ir::Operation& op,
                    const std::string& target);

// Registers the GPU targets of programs exported for cuda or rocm, run on
// the CPU: the cuSOLVER/hipSOLVER FFI targets ({cu,hip}solver_X_ffi for
// getrf, geqrf, orgqr, potrf, syevd, sytrd, gesvd, gesdd, gesvdj, gesvdp),
// the legacy cusolver_syevd/syevj, {cu,hip}sparse_gtsv2_ffi,
// {cu,hip}_lu_pivots_to_permutation and {cu,hip}_threefry2x32[_ffi]
// (lower_gpu_solver.cc).
void RegisterGpuTargets(CustomCallRegistry& registry);

// Registers the targets StableHLO and XLA define that exporters write:
// shape_assertion (checked when the step runs), stablehlo.dynamic_top_k,
// ApproxTopK and stablehlo.dynamic_approx_top_k (any dimension, max or min
// by their comparator), stablehlo.dynamic_reduce_window and
// stablehlo.dynamic_rng_bit_generator (lower_xla_targets.cc).
void RegisterXlaTargets(CustomCallRegistry& registry);

// Binds every result of `op` to the slot of the operand at the same
// position (for annotations that are identities on one device).
Status LowerAsIdentity(Lowering& lowering, const ir::Operation& op);

}  // namespace kiln::compile

#endif  // KILN_COMPILE_CUSTOM_CALL_H_
