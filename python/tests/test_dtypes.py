"""Every dtype JAX offers with jax_enable_x64 off: transfers keep the bits,
and a small program of each type gives XLA:CPU's results. 64-bit types are in
test_x64.py."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from conftest import (assert_bitwise_equal, assert_close, cpu_device,
                      kiln_device, run_both)

INTEGERS = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]
FLOATS = [ml_dtypes.bfloat16, np.float16, np.float32]
FLOAT8 = [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
          ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz,
          ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e3m4,
          ml_dtypes.float8_e4m3, ml_dtypes.float8_e8m0fnu]
SUB_BYTE = [ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.float4_e2m1fn]
ALL = [np.bool_] + INTEGERS + FLOATS + [np.complex64] + FLOAT8 + SUB_BYTE


def _name(dtype):
    return np.dtype(dtype).name


def sample(dtype, n=24, seed=0):
    """Values of `dtype` that every type represents reasonably: small, mixed
    signs where the type has them, NaN/inf where it has them."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if dtype.kind in "iu" or dtype.name in ("int4", "uint4"):
        info = ml_dtypes.iinfo(dtype) if dtype.name.endswith("int4") \
            else np.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max), n,
                            endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n)).astype(dtype)
    values = rng.uniform(-3, 3, n)
    if dtype.name == "float8_e8m0fnu":  # powers of two only, no sign
        values = 2.0 ** rng.integers(-4, 5, n)
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", ALL, ids=_name)
def test_transfer_round_trip_bitwise(dtype):
    host = sample(dtype)
    on_kiln = jax.device_put(host, kiln_device())
    assert on_kiln.dtype == host.dtype
    assert_bitwise_equal(np.asarray(on_kiln), host, _name(dtype))
    assert_bitwise_equal(np.asarray(jax.device_put(on_kiln, cpu_device())),
                         host, _name(dtype))
    back = jax.device_put(jax.device_put(host, cpu_device()), kiln_device())
    assert_bitwise_equal(np.asarray(back), host, _name(dtype))


@pytest.mark.parametrize("dtype", ALL, ids=_name)
def test_data_movement(dtype):
    # Ops that only move bytes: must be bit-exact for every type.
    host = sample(dtype).reshape(4, 6)
    k, c = run_both(lambda a: {
        "transpose": a.T, "reshape": a.reshape(3, 8), "slice": a[1:3, ::2],
        "concat": jnp.concatenate([a, a[:1]]), "rev": a[::-1],
        "broadcast": jnp.broadcast_to(a[:1], (3, 6)),
        "gather": a[jnp.array([3, 0, 2])],
        "select": jnp.where(jnp.arange(6) % 2 == 0, a, a[::-1]),
        "pad": jax.lax.pad(a, jnp.zeros((), a.dtype), ((1, 0, 0), (0, 1, 1))),
        "dynamic_slice": jax.lax.dynamic_slice(a, (1, 2), (2, 3)),
    }, host)
    assert_bitwise_equal(k, c, _name(dtype))


ARITHMETIC = [np.bool_] + INTEGERS + FLOATS + [np.complex64] + FLOAT8 + \
    [ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.float4_e2m1fn]


@pytest.mark.parametrize("dtype", ARITHMETIC, ids=_name)
def test_arithmetic(dtype):
    a, b = sample(dtype, seed=1), sample(dtype, seed=2)

    def fn(x, y):
        out = {"eq": x == y, "lt": x < y if np.dtype(dtype).kind != "c"
               else x == x, "to_f32": jnp.real(x).astype(jnp.float32)}
        if dtype in (ml_dtypes.int4, ml_dtypes.uint4):
            # JAX allows only basic arithmetic and casts on these.
            out.update(add=x + y, mul=x * y, sub=x - y)
        elif dtype is np.bool_:
            out.update(and_=x & y, or_=x | y, sum=jnp.sum(x, dtype=jnp.int32))
        else:
            out.update(add=x + y, mul=x * y, sub=x - y, neg=-x,
                       abs=jnp.abs(x), sum=jnp.sum(x * x))
            if np.dtype(dtype).kind != "c":
                out.update(max=jnp.maximum(x, y), amax=jnp.max(x))
        return out

    k, c = run_both(fn, a, b)
    assert_close(k, c, err_msg=_name(dtype))


@pytest.mark.parametrize("dtype", FLOATS + FLOAT8 + [ml_dtypes.float4_e2m1fn],
                         ids=_name)
def test_convert_from_float32_rounds_like_xla(dtype):
    # Conversion rounds to nearest (ties to even, or as the format defines):
    # values on and between representable points, and out of range.
    grid = np.linspace(-8, 8, 129, dtype=np.float32)
    # Ties of the formats without mantissa bits, overflow, NaN.
    special = np.array([0.75, 1.5, 3.0, 6.0, 0.3, 1e4, -1e4, 1e-3, 448.0,
                        500.0, 57344.0, 60000.0, np.nan, np.inf, -np.inf],
                       np.float32)
    x = np.concatenate([grid, special])
    k, c = run_both(lambda a: (a.astype(dtype), a.astype(dtype).astype(
        jnp.float32)), x)
    assert_bitwise_equal(k, c, _name(dtype))


@pytest.mark.parametrize("dtype", FLOAT8[:2], ids=_name)
def test_float8_dot(dtype):
    a = sample(dtype, 12, seed=3).reshape(3, 4)
    b = sample(dtype, 8, seed=4).reshape(4, 2)
    k, c = run_both(lambda x, y: jnp.dot(x, y, preferred_element_type=jnp.float32),
                    a, b)
    assert_close(k, c, np.float32)


def test_weak_types_and_promotion():
    x = sample(np.int8)
    y = sample(ml_dtypes.bfloat16)
    k, c = run_both(lambda a, b: (a + 1, a * 2.5, b + 1, b * 2, a + b,
                                  a.astype(jnp.uint8) + jnp.uint16(3)), x, y)
    assert_close(k, c)


def test_x64_off_canonicalizes():
    assert not jax.config.jax_enable_x64
    k, c = run_both(lambda a: (a * 2, jnp.arange(3), a.sum()),
                    np.arange(4, dtype=np.int64))
    assert k[0].dtype == np.int32
    assert_close(k, c)
