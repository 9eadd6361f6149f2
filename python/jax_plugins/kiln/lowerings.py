"""What JAX decides per platform, set for `kiln`: lowering rules, donation,
cpu exports, per-platform choices (`lax.platform_dependent`) and the
persistent compilation cache.

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
    from jax._src import xla_bridge
    from jax._src.interpreters import mlir

    # JAX_PLATFORMS without kiln: the plugin is not registered, and JAX
    # refuses rules for platforms it does not know.
    if not xla_bridge.is_known_platform(_PLATFORM):
        return

    # JAX emits input/output aliases (donation) only for the platforms it
    # lists; Kiln honours them (`tf.aliasing_output`, `jax.buffer_donor`).
    if _PLATFORM not in mlir._platforms_with_donation:
        mlir._platforms_with_donation.append(_PLATFORM)

    _register_cpu_exports()
    _register_compilation_cache()
    _register_per_platform_choice()
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
    _register_native_pivots_to_permutation()


def _register_native_pivots_to_permutation() -> None:
    """Lowers lu_pivots_to_permutation to one custom call Kiln runs natively.

    The `cpu` rule of `lu` (and so solve, inv, det, slogdet) turns LAPACK's
    pivots into a permutation with the generic rule: a fori_loop of one
    swap per pivot, some 28 scalar steps an iteration. On XLA:CPU that
    loop is compiled code; on Kiln each step is a dispatched kernel, and the
    loop took 1 ms of a 256 x 256 solve. JAX's GPU rule emits the FFI call
    `{prefix}_lu_pivots_to_permutation` (pivots in, permutation out, both
    row-major) instead; with the prefix `kiln` Kiln runs it as one kernel
    (src/compile/lower_gpu_solver.cc).
    """
    import functools

    from jax._src.interpreters import mlir
    from jax._src.lax import linalg

    primitive = getattr(linalg, "lu_pivots_to_permutation_p", None)
    rule = getattr(linalg, "_lu_pivots_to_permutation_gpu_lowering", None)
    if primitive is None or rule is None:
        return  # another JAX: the generic loop stays
    mlir.register_lowering(
        primitive, functools.partial(rule, target_name_prefix=_PLATFORM),
        platform=_PLATFORM)


def _register_cpu_exports() -> None:
    """Lets programs exported for `cpu` (jax.export) run on Kiln.

    An exported function carries the platforms it was lowered for, and JAX
    refuses to call it on any other. Kiln runs what JAX lowers for `cpu`
    (StableHLO, and the LAPACK custom calls of the rules above), so a call
    on `kiln` of a function exported for `cpu` and not for `kiln` uses its
    `cpu` lowering.
    """
    import dataclasses

    from jax._src.export import _export
    from jax._src.interpreters import mlir

    def lower_call_exported(ctx, *args, exported):
        if _PLATFORM not in exported.platforms and _TEMPLATE in exported.platforms:
            platforms = tuple(_PLATFORM if p == _TEMPLATE else p
                              for p in exported.platforms)
            exported = dataclasses.replace(exported, platforms=platforms)
        return _export._call_exported_lowering(ctx, *args, exported=exported)

    mlir.register_lowering(_export.call_exported_p, lower_call_exported,
                           platform=_PLATFORM)


def _register_per_platform_choice() -> None:
    """Makes `lax.platform_dependent` take its `cpu` branch on `kiln` when no
    branch names `kiln`.

    JAX chooses the branch by the lowering platform's name, twice: the
    `platform_index` primitive computes the branch number and `cond`
    prunes the branches the platform cannot take. Kiln is a CPU backend
    that runs what JAX lowers for `cpu` (its custom calls included), so a
    program that asks for the `cpu` behaviour gets it on `kiln` too, rather
    than the default branch or a missing-rule error. Both primitives get a
    `kiln` rule that adds `kiln` beside `cpu` in the branches' platform
    lists, then lowers as JAX does.
    """
    from jax._src.interpreters import mlir
    from jax._src.lax.control_flow import conditionals

    def with_kiln(platforms):
        if platforms is None:
            return None
        if any(ps is not None and _PLATFORM in ps for ps in platforms):
            return platforms
        return tuple(ps + (_PLATFORM,) if ps is not None and _TEMPLATE in ps
                     else ps for ps in platforms)

    index_entry = mlir._lowerings[conditionals.platform_index_p]

    def platform_index_rule(ctx, *args, platforms, **params):
        return index_entry.rule(ctx, *args, platforms=with_kiln(platforms),
                                **params)

    cond_entry = mlir._lowerings[conditionals.cond_p]

    def cond_rule(ctx, *args, **params):
        if params.get("branches_platforms") is not None:
            params["branches_platforms"] = with_kiln(params["branches_platforms"])
        return cond_entry.rule(ctx, *args, **params)

    mlir.register_lowering(conditionals.platform_index_p, platform_index_rule,
                           platform=_PLATFORM, inline=index_entry.inline)
    mlir.register_lowering(conditionals.cond_p, cond_rule, platform=_PLATFORM,
                           inline=cond_entry.inline)


def _register_compilation_cache() -> None:
    """Lets JAX's persistent compilation cache hold Kiln's executables.

    JAX uses the cache only on the platforms it lists, but what it needs is
    executable serialization, which Kiln has (PJRT_Executable_Serialize and
    DeserializeAndLoad). On `kiln` the check is made as JAX makes it for a
    listed platform; for every other backend JAX's own check runs.
    """
    from jax._src import compilation_cache, monitoring

    original = compilation_cache.is_cache_used
    if getattr(original, "_kiln", False):
        return

    def is_cache_used(backend) -> bool:
        if getattr(backend, "platform", None) != _PLATFORM:
            return original(backend)
        with compilation_cache._cache_initialized_mutex:
            if compilation_cache._cache_checked:
                return compilation_cache._cache_used
            compilation_cache._cache_checked = True
            if not compilation_cache._is_cache_enabled():
                monitoring.record_event("/jax/compilation_cache/task_disabled_cache")
            else:
                monitoring.record_event("/jax/compilation_cache/tasks_using_cache")
                compilation_cache._cache_used = True
            return compilation_cache._cache_used

    is_cache_used._kiln = True
    compilation_cache.is_cache_used = is_cache_used
