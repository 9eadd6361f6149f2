"""With jax_enable_x64 on: int64, uint64, float64 and complex128 programs,
conversions to and from them, and x64 PRNG streams."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from conftest import (assert_bitwise_equal, assert_close, check, kiln_device,
                      random_array, run_both)


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


WIDE = [np.int64, np.uint64, np.float64, np.complex128]
BIG = np.array([2 ** 40 + 3, -(2 ** 62), 2 ** 63 - 1, -(2 ** 63), 7, -1],
               np.int64)


def test_int64_arithmetic():
    y = np.array([3, 2 ** 33, -1, 5, -7, 2], np.int64)
    check(lambda a, b: {"add": a + b, "mul": a * b, "sub": a - b,
                        "div": lax.div(a, b), "rem": lax.rem(a, b),
                        "floor_div": a // b, "max": jnp.maximum(a, b),
                        "abs": jnp.abs(a), "shl": a << 3,
                        "sar": lax.shift_right_arithmetic(a, np.int64(40)),
                        "shr": lax.shift_right_logical(a, np.int64(40)),
                        "popcnt": lax.population_count(a), "clz": lax.clz(a),
                        "xor": a ^ b, "sum": jnp.sum(a), "cumsum": jnp.cumsum(a),
                        "argmax": jnp.argmax(a), "sort": jnp.sort(a),
                        "lt": a < b}, BIG, y)


def test_uint64_arithmetic():
    x = np.array([2 ** 64 - 1, 2 ** 63, 12345678901234567, 1, 0], np.uint64)
    y = np.array([3, 2 ** 40, 7, 2 ** 64 - 1, 9], np.uint64)
    check(lambda a, b: {"add": a + b, "mul": a * b, "sub": a - b,
                        "div": a // b, "rem": a % b, "max": jnp.maximum(a, b),
                        "shr": a >> np.uint64(17), "shl": a << np.uint64(60),
                        "lt": a < b, "sort": jnp.sort(a),
                        "to_f64": a.astype(jnp.float64),
                        "to_i64": a.astype(jnp.int64)}, x, y)


def test_float64_math():
    x = random_array((40,), np.float64, seed=1, low=0.1, high=3)
    y = random_array((40,), np.float64, seed=2, low=-2, high=2)
    check(lambda a, b: {"exp": jnp.exp(b), "log": jnp.log(a), "sin": jnp.sin(b),
                        "tanh": jnp.tanh(b), "sqrt": jnp.sqrt(a),
                        "pow": a ** b, "atan2": jnp.arctan2(a, b),
                        "erf": lax.erf(b), "lgamma": lax.lgamma(a),
                        "logistic": jax.nn.sigmoid(b), "div": b / a,
                        "expm1": jnp.expm1(b), "log1p": jnp.log1p(a),
                        "cbrt": jnp.cbrt(b), "rem": jnp.fmod(b, a),
                        "sum": jnp.sum(a * b), "cumprod": jnp.cumprod(a),
                        "logsumexp": jax.nn.logsumexp(b)}, x, y,
          rtol=1e-12, atol=1e-12)


def test_float64_precision_is_kept():
    # 1 + 1e-12 survives only in float64.
    x = np.array([1.0, 1e-12, 2.0 ** 53, 1e300, 5e-324], np.float64)
    k = check(lambda a: (a + 1e-12, a * a, a[2] + 1.0, a.astype(jnp.float32)),
              x)
    assert k[0][0] != 1.0 and k[0].dtype == np.float64


def test_complex128():
    x = random_array((20,), np.complex128, seed=3)
    y = random_array((20,), np.complex128, seed=4)
    check(lambda a, b: {"mul": a * b, "div": a / b, "abs": jnp.abs(a),
                        "exp": jnp.exp(a), "log": jnp.log(a), "sqrt": jnp.sqrt(a),
                        "conj": jnp.conj(a), "angle": jnp.angle(a),
                        "real": jnp.real(a), "sum": jnp.sum(a),
                        "dot": jnp.vdot(a, b), "eq": a == b,
                        "fft": jnp.fft.fft(a), "ifft": jnp.fft.ifft(b)}, x, y,
          rtol=1e-11, atol=1e-11)


def test_float64_dot_conv_reduce():
    a = random_array((6, 9), np.float64, seed=5)
    b = random_array((9, 4), np.float64, seed=6)
    img = random_array((1, 2, 6, 6), np.float64, seed=7)
    ker = random_array((3, 2, 3, 3), np.float64, seed=8)
    check(lambda x, y, i, k: (x @ y, jnp.einsum("ij,jk->ki", x, y),
                              lax.conv_general_dilated(i, k, (1, 1), "SAME"),
                              jnp.var(x, axis=0), jnp.fft.rfft(x[0])),
          a, b, img, ker, rtol=1e-12, atol=1e-12)


CONVERT = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint32,
           np.uint64, np.float16, np.float32, np.float64, np.complex64,
           np.complex128]


@pytest.mark.parametrize("src", CONVERT, ids=lambda d: np.dtype(d).name)
def test_convert_with_64_bit_types(src):
    src = np.dtype(src)
    values = np.array([0, 1, 2, 7, 100, 127, 3, 250])
    if src.kind in "fc":
        values = np.concatenate([values, [0.5, 2.5, 99.75]])
    x = values.astype(src)

    def convert_all(a):
        out = {}
        for dst in CONVERT:
            dst = np.dtype(dst)
            value = jnp.real(a) if src.kind == "c" and dst.kind != "c" else a
            out[dst.name] = lax.convert_element_type(value, dst)
        return out

    k, c = run_both(convert_all, x)
    assert_close(k, c, rtol=0, atol=0)


def test_large_int64_conversions():
    check(lambda a: (a.astype(jnp.float64), a.astype(jnp.int32),
                     a.astype(jnp.uint64), a.astype(jnp.float32),
                     a.astype(jnp.int8)), BIG)
    f = np.array([1e18, -1e18, 2.0 ** 62, 123456789.75, -0.5], np.float64)
    check(lambda a: (a.astype(jnp.int64), a.astype(jnp.int32)), f)


def test_x64_defaults():
    k, c = run_both(lambda a: (jnp.arange(5), a * 1.5, jnp.argmax(a),
                               jnp.zeros(2), a.sum()),
                    np.arange(4, dtype=np.int64))
    assert k[0].dtype == np.int64 and k[1].dtype == np.float64
    assert_close(k, c)


def test_x64_random():
    def fn(s):
        key = jax.random.key(s)
        return {"bits64": jax.random.bits(key, (16,), dtype=jnp.uint64),
                "uniform64": jax.random.uniform(key, (16,), dtype=jnp.float64),
                "randint64": jax.random.randint(key, (16,), -2 ** 40, 2 ** 40,
                                                dtype=jnp.int64),
                "key": jax.random.split(jax.random.key(s))[0]}
    k, c = run_both(fn, np.int64(9))
    assert_bitwise_equal(k, c)


def test_x64_transfers():
    for dtype in (np.int64, np.uint64, np.float64, np.complex128):
        host = random_array((33,), dtype, seed=10, low=None, high=None) \
            if np.dtype(dtype).kind in "iu" else random_array((33,), dtype,
                                                              seed=10)
        on_kiln = jax.device_put(host, kiln_device())
        assert on_kiln.dtype == host.dtype
        assert_bitwise_equal(np.asarray(on_kiln), host)


def test_x64_while_and_scan():
    check(lambda n: lax.while_loop(lambda s: s[0] < n,
                                   lambda s: (s[0] + 1, s[1] * 3 + s[0]),
                                   (jnp.int64(0), jnp.int64(1))),
          np.int64(30))
    check(lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs),
          random_array((10,), np.float64, seed=11), rtol=1e-12, atol=1e-12)
