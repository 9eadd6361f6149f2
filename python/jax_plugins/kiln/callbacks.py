"""Host callbacks on Kiln: jax.pure_callback, jax.experimental.io_callback and
jax.debug.print / jax.debug.callback.

On `cpu` JAX lowers a callback to a custom call that XLA's FFI runtime inside
jaxlib serves; a PJRT plugin cannot reach that runtime. For `kiln`, the
callback is lowered to the custom call `kiln_python_callback`, whose
`callback_id` names an entry of this module's registry, and Kiln calls back
through one trampoline per process (a ctypes function whose address reaches
the plugin as the client option `kiln_host_callback_trampoline`). The
trampoline wraps the arguments as numpy arrays, calls the callback, checks
and copies its results into Kiln's buffers, and reports an exception as the
error of the execution.

A registry entry lives as long as the lowered program that refers to it: the
lowering hands JAX a keep-alive object that removes the entry when JAX drops
the compiled program.
"""

import ctypes
import itertools
import threading
import traceback
from typing import Any

import numpy as np

_PLATFORM = "kiln"

# (callback_id, num_args, args, num_results, results, error, error_size,
#  arg_ranks, arg_dims): src/exec/kernels/host_callback.h.
_TRAMPOLINE_TYPE = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_uint64, ctypes.c_int64,
    ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64,
    ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_int64,
    ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64))

_lock = threading.Lock()
_ids = itertools.count(1)
_registry: dict[int, tuple[Any, list, list]] = {}


class _Registration:
    """Keeps a callback registered while JAX keeps the program alive."""

    def __init__(self, callback_id: int):
        self.callback_id = callback_id

    def __del__(self):
        with _lock:
            _registry.pop(self.callback_id, None)


def _register(callback, operand_avals, result_avals) -> _Registration:
    with _lock:
        callback_id = next(_ids)
        _registry[callback_id] = (callback, list(operand_avals), list(result_avals))
    return _Registration(callback_id)


def _as_array(address: int, aval, shape) -> np.ndarray:
    dtype = np.dtype(aval.dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0 or not address:
        return np.zeros(shape, dtype)
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    # A copy: Kiln's buffer is only valid during the call.
    return np.frombuffer(raw, dtype=dtype, count=count).reshape(shape).copy()


def _shapes(num_args, ranks, dims) -> list[tuple[int, ...]]:
    """The arguments' dimensions as Kiln passes them: a partitioned
    callback's are those of the device's shards, not the lowered ones."""
    shapes, at = [], 0
    for i in range(num_args):
        rank = ranks[i]
        shapes.append(tuple(dims[at + d] for d in range(rank)))
        at += rank
    return shapes


def _trampoline(callback_id, num_args, args, num_results, results, error,
                error_size, arg_ranks, arg_dims):
    try:
        with _lock:
            entry = _registry.get(callback_id)
        if entry is None:
            raise RuntimeError(f"host callback {callback_id} is no longer registered")
        callback, operand_avals, result_avals = entry
        if num_args != len(operand_avals) or num_results != len(result_avals):
            raise RuntimeError(
                f"host callback {callback_id} got {num_args} arguments and "
                f"{num_results} results; it takes {len(operand_avals)} and "
                f"returns {len(result_avals)}")
        shapes = _shapes(num_args, arg_ranks, arg_dims)
        values = [_as_array(args[i], aval, shapes[i])
                  for i, aval in enumerate(operand_avals)]
        outputs = callback(*values)
        for i, (out, aval) in enumerate(zip(outputs, result_avals)):
            out = np.ascontiguousarray(out)
            count = int(np.prod(aval.shape, dtype=np.int64))
            if count and results[i]:
                ctypes.memmove(results[i], out.ctypes.data, out.nbytes)
        return 0
    except BaseException as e:  # reported as the execution's error
        message = "".join(traceback.format_exception_only(type(e), e)).strip()
        encoded = message.encode("utf-8", "replace")[: max(error_size - 1, 0)]
        if error and error_size > 0:
            ctypes.memmove(error, encoded + b"\0", len(encoded) + 1)
        return 1


_trampoline_function = _TRAMPOLINE_TYPE(_trampoline)


def trampoline_address() -> int:
    """The address Kiln calls back through (a client create option)."""
    return ctypes.cast(_trampoline_function, ctypes.c_void_p).value


def register() -> None:
    """Lowers JAX's host callbacks on `kiln` to Kiln's callback custom call."""
    import dataclasses

    from jax._src import callback as jax_callback
    from jax._src import core, dtypes, ffi
    from jax._src.interpreters import mlir
    from jax._src.sharding_impls import SdyArray, SdyArrayList

    original = jax_callback.emit_python_callback
    if getattr(original, "_kiln", False):
        return

    def emit_python_callback(ctx, callback, token, operands, operand_avals,
                             result_avals, *, has_side_effect,
                             returns_token=True, partitioned=False,
                             sharding=None):
        platforms = ctx.module_context.platforms
        if len(platforms) != 1 or platforms[0] != _PLATFORM:
            return original(ctx, callback, token, operands, operand_avals,
                            result_avals, has_side_effect=has_side_effect,
                            returns_token=returns_token, partitioned=partitioned,
                            sharding=sharding)

        def checked(*args):
            # The checks JAX makes of a callback's results on every platform.
            outs = callback(*args)
            if len(outs) != len(result_avals):
                raise RuntimeError(
                    "Mismatched number of outputs from callback. "
                    f"Expected: {len(result_avals)}, Actual: {len(outs)}")
            checked_outs = []
            for i, (out, aval) in enumerate(zip(outs, result_avals)):
                out = dtypes.canonicalize_value(np.asarray(out))
                if out.shape != aval.shape:
                    raise RuntimeError(
                        f"Incorrect output shape for return value #{i}: "
                        f"Expected: {aval.shape}, Actual: {out.shape}")
                if out.dtype != aval.dtype:
                    raise RuntimeError(
                        f"Incorrect output dtype for return value #{i}: "
                        f"Expected: {aval.dtype}, Actual: {out.dtype}")
                checked_outs.append(out)
            return checked_outs

        registration = _register(checked, operand_avals, result_avals)
        ctx.module_context.add_keepalive(registration)
        # Marks the program as calling the host, as JAX's own lowering does:
        # JAX then waits on the execution's completion event in
        # effects_barrier, which raises a callback's error.
        ctx.module_context.add_host_callback(checked)
        if token:
            operands = [token, *operands]
            if (sharding is not None and len(ctx.avals_out) > 0 and
                    isinstance(sharding, SdyArrayList)):
                # The token gets a sharding of its own, as on cpu.
                sharding = SdyArrayList((
                    SdyArray(mesh_shape=(), dim_shardings=(),
                             logical_device_ids=sharding.shardings[0].logical_device_ids),
                    *sharding.shardings))
            ctx = dataclasses.replace(
                ctx, avals_in=[core.abstract_token, *ctx.avals_in],
                avals_out=[core.abstract_token, *ctx.avals_out])
        # `partitioned=True` (jax.debug.print's, say) runs on every device
        # with its shards, as on cpu: Kiln's partitioner gives the call each
        # partition's tiles and the trampoline their dimensions. The
        # one-device placement JAX may ask for does not apply then.
        attributes = dict(callback_id=np.uint64(registration.callback_id))
        if partitioned:
            attributes["partitioned"] = True
        result = ffi.build_ffi_lowering_function(
            "kiln_python_callback", has_side_effect=has_side_effect,
        )(ctx, *operands, **attributes)
        if sharding is not None and not partitioned:
            mlir.set_sharding(ctx.module_context, result, sharding)
        results = list(result.results)
        new_token = None
        if token:
            new_token, *results = results
        return results, new_token, None

    emit_python_callback._kiln = True
    jax_callback.emit_python_callback = emit_python_callback
