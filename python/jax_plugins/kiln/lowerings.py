"""Lowering rules for primitives JAX lowers per platform.

JAX lowers most primitives with platform-independent rules, but some have
rules only for named platforms (linear-algebra decompositions call LAPACK
through custom calls on `cpu`). For a platform named `kiln` JAX would find
no rule, so Kiln takes the `cpu` rules for those primitives.

Kiln implements JAX's LAPACK FFI targets natively (lapack_*_ffi and
tridiagonal_solve_perturbed_ffi, src/compile/lower_lapack.cc), so it also
takes the `cpu` rules of the linear-algebra primitives that do have a
generic rule: the generic ones are slower (QR and LU as loops of small
HLO ops), less accurate (tridiagonal_solve without pivoting) or missing
pieces (geqrf and householder_product emit custom calls of their own that
only XLA's TPU and GPU backends know). Other primitives with a generic rule
keep it: that rule is plain StableHLO, which Kiln compiles like everything
else.
"""

_PLATFORM = "kiln"
_TEMPLATE = "cpu"

# Primitives with a generic rule whose `cpu` rule emits only targets Kiln
# implements: cholesky (potrf), lu (getrf), geqrf, householder_product
# (orgqr / ungqr), ormqr (ormqr / unmqr), svd (gesdd, gesvd),
# triangular_solve (trsm) and tridiagonal_solve (gtsv,
# tridiagonal_solve_perturbed_ffi). The primitives that have only
# per-platform rules (eig, eigh, geqp3, hessenberg, schur, tridiagonal)
# get their `cpu` rule anyway, below.
_NATIVE_LAPACK_PRIMITIVES = (
    "cholesky",
    "geqrf",
    "householder_product",
    "lu",
    "ormqr",
    "svd",
    "triangular_solve",
    "tridiagonal_solve",
)


def register() -> None:
    from jax._src.interpreters import mlir

    template = mlir._platform_specific_lowerings[_TEMPLATE]
    ours = mlir._platform_specific_lowerings[_PLATFORM]
    for primitive, entry in list(template.items()):
        if primitive in ours:
            continue
        if (primitive in mlir._lowerings and
                primitive.name not in _NATIVE_LAPACK_PRIMITIVES):
            continue
        mlir.register_lowering(primitive, entry.rule, platform=_PLATFORM,
                               inline=entry.inline)
