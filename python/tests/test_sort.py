"""sort, argsort, lax.sort with several operands, top_k, searchsorted."""

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from conftest import bfloat16, check, random_array


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, bfloat16,
                                   np.float16, np.int8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [0, -1])
def test_sort_argsort(dtype, axis):
    x = random_array((6, 9), dtype, seed=1, low=-4, high=4)
    check(lambda a: {"sort": jnp.sort(a, axis=axis),
                     "argsort": jnp.argsort(a, axis=axis, stable=True),
                     "descending": jnp.sort(a, axis=axis, descending=True),
                     "argsort_desc": jnp.argsort(a, axis=axis, stable=True,
                                                 descending=True)}, x)


def test_sort_nan_and_signed_zero():
    # JAX's total order: -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN.
    x = np.array([3.0, np.nan, -0.0, 0.0, -np.inf, 1.0, np.inf, -1.0, np.nan],
                 np.float32)
    k = check(lambda a: (jnp.sort(a), jnp.argsort(a, stable=True)), x)
    assert np.signbit(k[0][2]) and not np.signbit(k[0][3]), k[0]


def test_lax_sort_multiple_operands():
    keys = random_array((12,), np.int32, seed=2, low=0, high=3)
    vals = random_array((12,), np.float32, seed=3)
    other = np.arange(12, dtype=np.int32)
    check(lambda k, v, o: lax.sort((k, v, o), num_keys=1, is_stable=True),
          keys, vals, other)
    check(lambda k, v, o: lax.sort((k, v, o), num_keys=2), keys, vals, other)


def test_sort_large():
    x = random_array((3, 1000), np.float32, seed=4)
    check(lambda a: (jnp.sort(a, axis=1), jnp.argsort(a, axis=1)), x)


@pytest.mark.parametrize("k", [1, 3, 8])
def test_top_k(k):
    x = random_array((4, 8), np.float32, seed=5)
    check(lambda a: lax.top_k(a, k), x)
    ints = random_array((3, 8), np.int32, seed=6, low=0, high=4)  # ties
    check(lambda a: lax.top_k(a, k), ints)


def test_top_k_3d():
    x = random_array((2, 3, 10), np.float32, seed=7)
    check(lambda a: lax.top_k(a, 4), x)


def test_searchsorted_unique_median():
    sorted_x = np.sort(random_array((20,), np.float32, seed=8))
    queries = random_array((7,), np.float32, seed=9)
    check(lambda s, q: (jnp.searchsorted(s, q),
                        jnp.searchsorted(s, q, side="right"),
                        jnp.median(s), jnp.quantile(s, 0.25),
                        jnp.unique(jnp.round(s), size=8, fill_value=0.0)),
          sorted_x, queries)
