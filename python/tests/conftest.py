"""Kiln's JAX suite: every test runs one JAX program on Kiln and on XLA:CPU.

The two backends live in the same process (`JAX_PLATFORMS=kiln,cpu`), so a
test jits a function once, runs it with its inputs committed to a Kiln device
and then to a CPU device, and compares the two results with a tolerance that
depends on the dtype (`assert_close`). XLA:CPU is the reference.

Run from the `python/` folder:

    KILN_PLUGIN_LIBRARY=../build/lib/libpjrt_kiln.so ../.venv/bin/python -m pytest tests -q

`KILN_TESTS_PLATFORM=cpu` runs XLA:CPU on both sides, to check the tests.
"""

import os

# Both platforms must be loaded before jax is imported anywhere.
_platforms = [p.strip() for p in os.environ.get("JAX_PLATFORMS", "").split(",")
              if p.strip()]
if not {"kiln", "cpu"} <= set(_platforms):
    os.environ["JAX_PLATFORMS"] = "kiln,cpu"
# Eight devices on each side: transfers between Kiln devices, and sharded
# programs over 1-D and 2-D meshes (test_sharding.py) beside XLA:CPU with
# the same device count.
os.environ.setdefault("KILN_CPU_DEVICE_COUNT", "8")
NUM_DEVICES = int(os.environ["KILN_CPU_DEVICE_COUNT"])

import warnings  # noqa: E402

warnings.filterwarnings("ignore", message="Platform 'kiln' is experimental")

import jax  # noqa: E402

jax.config.update("jax_num_cpu_devices", NUM_DEVICES)
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

# (rtol, atol) per dtype name. Integers and booleans compare exactly. Complex
# types use the tolerance of their component type.
_TOLERANCES = {
    "float64": (1e-12, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
    # Float8 types: two ulps at 1.0 (3 or 2 mantissa bits).
    "float8_e4m3fn": (0.25, 0.25),
    "float8_e4m3fnuz": (0.25, 0.25),
    "float8_e4m3b11fnuz": (0.25, 0.25),
    "float8_e4m3": (0.25, 0.25),
    "float8_e3m4": (0.125, 0.125),
    "float8_e5m2": (0.5, 0.5),
    "float8_e5m2fnuz": (0.5, 0.5),
    "float8_e8m0fnu": (1.0, 0.0),
    "float4_e2m1fn": (1.0, 0.5),
    "complex64": (1e-5, 1e-6),
    "complex128": (1e-12, 1e-12),
}


# KILN_TESTS_PLATFORM=cpu puts XLA:CPU on both sides: a check of the tests
# themselves (a test that fails that way is wrong, not Kiln).
KILN_PLATFORM = os.environ.get("KILN_TESTS_PLATFORM", "kiln")


SUB_BYTE_TYPES = ("int4", "uint4", "int2", "uint2", "float4_e2m1fn")


def kiln_device(index: int = 0):
    return jax.devices(KILN_PLATFORM)[index]


def cpu_device():
    return jax.devices("cpu")[0]


@pytest.fixture(scope="session")
def kiln():
    """The first Kiln device."""
    return kiln_device()


@pytest.fixture(scope="session")
def cpu():
    """XLA:CPU's first device, the reference."""
    return cpu_device()


def tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for results of `dtype`; (0, 0) for exact types."""
    return _TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))


def is_exact(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype == np.bool_ or np.issubdtype(dtype, np.integer) or \
        dtype.name in SUB_BYTE_TYPES[:4]


def _to_numpy(x):
    if isinstance(x, jax.Array) and jax.dtypes.issubdtype(
            x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x)


def _wide(x: np.ndarray) -> np.ndarray:
    """Widens float types numpy cannot compare (bf16, float8) to float64."""
    if np.iscomplexobj(x):
        return x.astype(np.complex128)
    return x.astype(np.float64)


def assert_close(kiln_result, cpu_result, dtype=None, *, rtol=None, atol=None,
                 err_msg=""):
    """Asserts that Kiln's results (a pytree of arrays) match XLA:CPU's.

    Shapes and dtypes must be equal. Integers and booleans must be equal;
    floats and complex numbers must agree within the tolerance of `dtype`
    (default: each leaf's own dtype), NaN matching NaN.
    """
    kiln_leaves, kiln_tree = jax.tree.flatten(kiln_result)
    cpu_leaves, cpu_tree = jax.tree.flatten(cpu_result)
    assert kiln_tree == cpu_tree, f"{err_msg}: {kiln_tree} != {cpu_tree}"
    paths = [jax.tree_util.keystr(path) for path, _ in
             jax.tree_util.tree_flatten_with_path(cpu_result)[0]]
    for path, k, c in zip(paths, kiln_leaves, cpu_leaves):
        k, c = np.asarray(k), np.asarray(c)
        where = f"{err_msg}{path}"
        assert k.shape == c.shape, f"{where}: shape {k.shape} != {c.shape}"
        assert k.dtype == c.dtype, f"{where}: dtype {k.dtype} != {c.dtype}"
        leaf_dtype = np.dtype(dtype) if dtype is not None else c.dtype
        if is_exact(c.dtype):
            np.testing.assert_array_equal(k, c, err_msg=where)
            continue
        default_rtol, default_atol = tolerance(leaf_dtype)
        np.testing.assert_allclose(
            _wide(k), _wide(c),
            rtol=default_rtol if rtol is None else rtol,
            atol=default_atol if atol is None else atol,
            equal_nan=True, err_msg=where)


def assert_bitwise_equal(kiln_result, cpu_result, err_msg=""):
    """Asserts equal bits, leaf by leaf (floats included; NaN payloads too)."""
    kiln_leaves, kiln_tree = jax.tree.flatten(kiln_result)
    cpu_leaves, cpu_tree = jax.tree.flatten(cpu_result)
    assert kiln_tree == cpu_tree
    for k, c in zip(kiln_leaves, cpu_leaves):
        k, c = np.asarray(k), np.asarray(c)
        assert k.shape == c.shape and k.dtype == c.dtype, err_msg
        if c.dtype.name in SUB_BYTE_TYPES:
            # One byte per element on the host, and only the low bits carry
            # the value: compare values (the spare bits are not observable).
            wide = np.float32 if c.dtype.name.startswith("float") else np.int8
            np.testing.assert_array_equal(k.astype(wide), c.astype(wide),
                                          err_msg=err_msg)
            continue
        unsigned = np.dtype(f"uint{8 * c.dtype.itemsize}") \
            if c.dtype.itemsize in (1, 2, 4, 8) else None
        if unsigned is None or c.dtype == np.bool_:
            np.testing.assert_array_equal(k, c, err_msg=err_msg)
        else:
            np.testing.assert_array_equal(k.view(unsigned), c.view(unsigned),
                                          err_msg=err_msg)


def _static_positions(jit_kwargs, nargs):
    static = jit_kwargs.get("static_argnums", ())
    if isinstance(static, int):
        static = (static,)
    return {i % nargs for i in static} if nargs else set()


def run_on(device, fn, *args, **jit_kwargs):
    """Jits `fn`, runs it with its array arguments committed to `device`.

    Returns the results as numpy arrays (typed PRNG keys as their key data)
    and checks that every result array lives on `device`.
    """
    jitted = fn if hasattr(fn, "lower") else jax.jit(fn, **jit_kwargs)
    static = _static_positions(jit_kwargs, len(args))
    placed = [a if i in static else jax.device_put(a, device)
              for i, a in enumerate(args)]
    out = jitted(*placed)
    for leaf in jax.tree.leaves(out):
        if isinstance(leaf, jax.Array):
            assert leaf.devices() == {device}, (
                f"result on {leaf.devices()}, expected {device}")
    return jax.tree.map(_to_numpy, out)


def run_both(fn, *args, **jit_kwargs):
    """Jits `fn` once and runs it on Kiln and on XLA:CPU.

    Array arguments (numpy arrays, jax arrays, scalars, pytrees) are committed
    with `jax.device_put(x, device)`; arguments named by `static_argnums` are
    passed as they are. Returns `(kiln_results, cpu_results)` as numpy pytrees.
    """
    jitted = jax.jit(fn, **jit_kwargs)
    kiln_out = run_on(kiln_device(), jitted, *args, **jit_kwargs)
    cpu_out = run_on(cpu_device(), jitted, *args, **jit_kwargs)
    return kiln_out, cpu_out


def check(fn, *args, dtype=None, rtol=None, atol=None, **jit_kwargs):
    """run_both + assert_close in one call; returns the Kiln results."""
    kiln_out, cpu_out = run_both(fn, *args, **jit_kwargs)
    assert_close(kiln_out, cpu_out, dtype, rtol=rtol, atol=atol,
                 err_msg=getattr(fn, "__name__", ""))
    return kiln_out


def random_array(shape, dtype, seed=0, low=-3.0, high=3.0):
    """Deterministic host data of `dtype` (any numpy or ml_dtypes type)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        lo = max(int(low), info.min) if low is not None else info.min
        hi = min(int(high), info.max) if high is not None else info.max
        return rng.integers(lo, hi, shape, dtype=dtype, endpoint=True)
    if np.issubdtype(dtype, np.complexfloating):
        real = rng.uniform(low, high, shape)
        imag = rng.uniform(low, high, shape)
        return (real + 1j * imag).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


# Names every test module uses.
bfloat16 = ml_dtypes.bfloat16
