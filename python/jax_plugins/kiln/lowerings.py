"""What JAX decides per platform, set for `kiln`: lowering rules and donation.

JAX lowers most primitives with platform-independent rules, but some have
rules only for named platforms (linear-algebra decompositions call LAPACK
through custom calls on `cpu`). For a platform named `kiln` JAX would find
no rule, so Kiln takes the `cpu` rules for those primitives: Kiln implements
the custom-call targets they emit (JAX's LAPACK FFI targets) natively.

Primitives that also have a generic rule keep it: that rule is plain
StableHLO, which Kiln compiles like everything else.
"""

_PLATFORM = "kiln"
_TEMPLATE = "cpu"


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
    template = mlir._platform_specific_lowerings[_TEMPLATE]
    ours = mlir._platform_specific_lowerings[_PLATFORM]
    for primitive, entry in list(template.items()):
        if primitive in mlir._lowerings or primitive in ours:
            continue
        mlir.register_lowering(primitive, entry.rule, platform=_PLATFORM,
                               inline=entry.inline)


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
