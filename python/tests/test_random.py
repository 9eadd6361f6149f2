"""jax.random on Kiln.

threefry2x32 (JAX's default) is computed from plain integer ops, so Kiln must
give XLA:CPU's bits exactly: keys, raw bits, uniform floats in [0, 1) and
every integer-valued sample. Samples that go on through float arithmetic
(normal, exponential, a scaled uniform) are compared within a few ulps:
XLA:CPU contracts `a * b + c` into one fused multiply-add and uses its own
approximations of log, where StableHLO asks for two rounded ops.
`rbg` and `unsafe_rbg` draw their bits from
`rng_bit_generator`, whose stream StableHLO leaves to the implementation:
their keys (threefry-derived for `rbg`) must still match, and their samples
must be deterministic and well distributed.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import (assert_bitwise_equal, assert_close, kiln_device,
                      run_both, run_on)


def _samples(key):
    k1, k2, k3, k4, k5, k6 = jax.random.split(key, 6)
    return {
        "bits": jax.random.bits(k1, (64,)),
        "bits8": jax.random.bits(k1, (16,), dtype=jnp.uint8),
        "uniform": jax.random.uniform(k2, (3, 50)),
        "uniform_range": jax.random.uniform(k2, (10,), minval=-2.0, maxval=5.0),
        "uniform_bf16": jax.random.uniform(k2, (10,), dtype=jnp.bfloat16),
        "normal": jax.random.normal(k3, (200,)),
        "normal_f16": jax.random.normal(k3, (20,), dtype=jnp.float16),
        "bernoulli": jax.random.bernoulli(k4, 0.3, (100,)),
        "randint": jax.random.randint(k5, (100,), -5, 17),
        "randint_u8": jax.random.randint(k5, (20,), 0, 255, dtype=jnp.uint8),
        "permutation": jax.random.permutation(k6, 20),
        "permutation_array": jax.random.permutation(k6, jnp.arange(12) * 3),
        "choice": jax.random.choice(k6, 50, (5,), replace=False),
        "gumbel": jax.random.gumbel(k1, (10,)),
        "categorical": jax.random.categorical(k2, jnp.log(jnp.arange(1.0, 6.0)),
                                              shape=(30,)),
        "truncated_normal": jax.random.truncated_normal(k3, -1.0, 1.5, (10,)),
        "exponential": jax.random.exponential(k4, (10,)),
    }


def test_threefry_keys_bitwise():
    def keys(seed):
        key = jax.random.key(seed, impl="threefry2x32")
        return {"key": key, "split": jax.random.split(key, 5),
                "fold_in": jax.random.fold_in(key, 77),
                "nested": jax.random.split(jax.random.split(key)[1], 3),
                "raw": jax.random.PRNGKey(seed)}
    for seed in (0, 1, 2 ** 31 - 1):
        assert_bitwise_equal(*run_both(keys, np.int32(seed)))


# Samples computed through float arithmetic after the bits.
FLOAT_SAMPLES = {"uniform_range", "normal", "normal_f16", "gumbel",
                 "truncated_normal", "exponential"}


@pytest.mark.parametrize("name", sorted(_samples(jax.random.key(0)).keys()))
def test_threefry_samples(name):
    k, c = run_both(lambda s: _samples(jax.random.key(s, impl="threefry2x32"))[name],
                    np.uint32(42))
    if name in FLOAT_SAMPLES:
        assert_close(k, c, rtol=1e-6 if k.dtype == np.float32 else 2e-3,
                     atol=1e-6, err_msg=name)
    else:
        assert_bitwise_equal(k, c, err_msg=name)


def test_default_impl_is_reproducible():
    # Whatever jax_default_prng_impl is, the key API must match XLA:CPU when
    # that impl is threefry, and be deterministic on Kiln in any case.
    impl = jax.config.jax_default_prng_impl

    def fn(s):
        key = jax.random.key(s)
        return jax.random.uniform(key, (32,)), jax.random.normal(key, (8,))
    k, c = run_both(fn, np.int32(3))
    if impl == "threefry2x32":
        assert_bitwise_equal(k[0], c[0])
        assert_close(k[1], c[1], rtol=1e-6, atol=1e-6)
    again = run_on(kiln_device(), fn, np.int32(3))
    assert_bitwise_equal(k, again)


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_rbg_impls(impl):
    def fn(s):
        key = jax.random.key(s, impl=impl)
        k1, k2 = jax.random.split(key)
        return {"key": key, "k1": k1,
                "uniform": jax.random.uniform(k1, (4000,)),
                "normal": jax.random.normal(k2, (4000,)),
                "randint": jax.random.randint(k2, (4000,), 0, 10),
                "permutation": jax.random.permutation(k1, 50)}
    k, c = run_both(fn, np.int32(5))
    assert_bitwise_equal(k["key"], c["key"])
    if impl == "rbg":  # rbg splits with threefry
        assert_bitwise_equal(k["k1"], c["k1"])
    again = run_on(kiln_device(), fn, np.int32(5))
    assert_bitwise_equal(k, again)
    u, n, r = k["uniform"], k["normal"], k["randint"]
    assert 0.0 <= u.min() and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.03 and abs(u.std() - 0.2887) < 0.02
    assert abs(n.mean()) < 0.08 and abs(n.std() - 1.0) < 0.05
    assert set(np.unique(r)) == set(range(10))
    assert sorted(k["permutation"]) == list(range(50))


def test_rng_bit_generator_state_advances():
    def fn(key):
        state, a = jax.lax.rng_bit_generator(key, (8,), dtype=jnp.uint32)
        _, b = jax.lax.rng_bit_generator(state, (8,), dtype=jnp.uint32)
        return a, b
    key = np.array([1, 2, 3, 4], np.uint32)
    a, b = run_on(kiln_device(), fn, key)
    assert not np.array_equal(a, b)
