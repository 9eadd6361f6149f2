"""Reductions and scans: sum, max, min, prod, argmax/argmin, any/all, mean,
var, cumulative ops, logsumexp."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from conftest import bfloat16, check, random_array

AXES = [None, 0, 1, (0, 2), -1]
SHAPE = (3, 4, 5)


def _float_reductions(a, axis):
    return {
        "sum": jnp.sum(a, axis=axis),
        "max": jnp.max(a, axis=axis),
        "min": jnp.min(a, axis=axis),
        "prod": jnp.prod(a, axis=axis),
        "mean": jnp.mean(a, axis=axis),
        "var": jnp.var(a, axis=axis),
        "std": jnp.std(a, axis=axis, ddof=1),
        "logsumexp": jax.nn.logsumexp(a, axis=axis),
        "sum_keepdims": jnp.sum(a, axis=axis, keepdims=True),
    }


@pytest.mark.parametrize("axis", AXES, ids=str)
def test_float32_reductions(axis):
    x = random_array(SHAPE, np.float32, seed=1, low=-2, high=2)
    check(_float_reductions, x, axis, static_argnums=1)


@pytest.mark.parametrize("dtype", [np.float16, bfloat16], ids=["f16", "bf16"])
def test_half_reductions(dtype):
    x = random_array(SHAPE, dtype, seed=2, low=0.5, high=1.5)
    check(lambda a: {"sum": jnp.sum(a, axis=1), "max": jnp.max(a, axis=0),
                     "mean": jnp.mean(a), "prod": jnp.prod(a, axis=2)}, x,
          rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.uint32],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [None, 1, (0, 2)], ids=str)
def test_integer_reductions(dtype, axis):
    x = random_array(SHAPE, dtype, seed=3, low=0, high=5)
    check(lambda a: {"sum": jnp.sum(a, axis=axis, dtype=dtype),
                     "max": jnp.max(a, axis=axis),
                     "min": jnp.min(a, axis=axis),
                     "prod": jnp.prod(a, axis=axis, dtype=dtype)}, x)


@pytest.mark.parametrize("axis", [None, 0, 2])
def test_any_all(axis):
    x = random_array(SHAPE, np.bool_, seed=4)
    x[0] = True
    x[1] = False
    check(lambda a: (jnp.any(a, axis=axis), jnp.all(a, axis=axis),
                     jnp.count_nonzero(a, axis=axis)), x)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [None, 0, 1, 2])
def test_argmax_argmin(dtype, axis):
    # Small integers make ties: the first index must win.
    x = random_array(SHAPE, dtype, seed=5, low=0, high=3)
    check(lambda a: (jnp.argmax(a, axis=axis), jnp.argmin(a, axis=axis)), x)


def test_argmax_nan():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, np.nan], [1.0, 1.0, 0.0]],
                 np.float32)
    check(lambda a: (jnp.argmax(a, axis=1), jnp.argmin(a, axis=1),
                     jnp.max(a, axis=1), jnp.min(a, axis=0),
                     jnp.nanmax(a, axis=1), jnp.nansum(a)), x)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_cumulative(axis):
    x = random_array(SHAPE, np.float32, seed=6, low=0.5, high=1.5)
    check(lambda a: {"cumsum": jnp.cumsum(a, axis=axis),
                     "cumprod": jnp.cumprod(a, axis=axis),
                     "cummax": lax.cummax(a, axis=axis),
                     "cummin": lax.cummin(a, axis=axis),
                     "cumlogsumexp": lax.cumlogsumexp(a, axis=axis),
                     "reverse": lax.cumsum(a, axis=axis, reverse=True)}, x)


def test_cumulative_integers():
    x = random_array((64,), np.int32, seed=7, low=-5, high=5)
    check(lambda a: (jnp.cumsum(a), jnp.cumprod(a % 3 + 1),
                     lax.cummax(a, 0)), x)


def test_large_sum():
    # Long reductions: XLA and Kiln may sum in different orders.
    x = random_array((256, 300), np.float32, seed=8, low=0, high=1)
    check(lambda a: (jnp.sum(a), jnp.sum(a, axis=0), jnp.mean(a, axis=1)), x,
          rtol=1e-5, atol=1e-3)


def test_softmax_and_norms():
    x = random_array((4, 10), np.float32, seed=9)
    check(lambda a: (jax.nn.softmax(a, axis=-1), jax.nn.log_softmax(a),
                     jnp.linalg.norm(a, axis=1), jnp.linalg.norm(a)), x)


def test_reduce_multiple_operands():
    # A variadic reduce: (value, index) pairs, as argmax builds it.
    x = random_array((6, 7), np.float32, seed=10)
    idx = np.broadcast_to(np.arange(7, dtype=np.int32), (6, 7)).copy()

    def fn(a, i):
        def body(acc, cur):
            pick = cur[0] > acc[0]
            return (jnp.where(pick, cur[0], acc[0]),
                    jnp.where(pick, cur[1], acc[1]))
        return lax.reduce((a, i), (np.float32(-np.inf), np.int32(0)), body, (1,))

    check(fn, x, idx)


def test_reduce_window():
    x = random_array((2, 9, 9, 3), np.float32, seed=11)
    check(lambda a: {
        "max_pool": lax.reduce_window(a, -jnp.inf, lax.max, (1, 3, 3, 1),
                                      (1, 2, 2, 1), "VALID"),
        "avg_pool_same": lax.reduce_window(a, 0.0, lax.add, (1, 2, 2, 1),
                                           (1, 1, 1, 1), "SAME") / 4.0,
        "min_pad": lax.reduce_window(a, jnp.inf, lax.min, (1, 3, 2, 1),
                                     (1, 2, 3, 1),
                                     ((0, 0), (1, 2), (0, 1), (0, 0))),
        "dilated": lax.reduce_window(a, 0.0, lax.add, (1, 2, 2, 1),
                                     (1, 1, 1, 1), "VALID",
                                     window_dilation=(1, 2, 2, 1)),
    }, x)
