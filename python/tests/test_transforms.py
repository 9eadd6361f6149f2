"""vmap and control flow: while_loop, cond, switch, scan, fori_loop, map."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from conftest import check, random_array

A = random_array((4, 5), np.float32, seed=1)
B = random_array((4, 5, 3), np.float32, seed=2)


def test_vmap():
    check(jax.vmap(lambda x, w: x @ w), A, B)
    check(jax.vmap(jnp.dot, in_axes=(None, 0)), A[0], B)
    check(jax.vmap(lambda x: jnp.sort(x) * jnp.argmax(x)), A)
    check(jax.vmap(jax.vmap(lambda a, b: a * b + 1.0)), A, A[::-1])
    check(jax.vmap(lambda x: x.sum(), in_axes=1), A)
    check(jax.vmap(lambda x, i: x[i], in_axes=(0, 0)), A,
          np.array([0, 3, 2, 4], np.int32))


def test_vmap_of_grad():
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)
    w = random_array((5, 3), np.float32, seed=3)
    check(jax.vmap(jax.grad(loss), in_axes=(None, 0)), w, A, atol=1e-5)


def test_while_loop():
    def collatz_steps(n):
        def cond(state):
            return state[0] != 1

        def body(state):
            value, steps = state
            value = jnp.where(value % 2 == 0, value // 2, 3 * value + 1)
            return value, steps + 1
        return lax.while_loop(cond, body, (n, 0))[1]
    check(jax.vmap(collatz_steps), np.array([1, 6, 7, 27, 97], np.int32))

    def newton_sqrt(x):
        return lax.while_loop(lambda s: jnp.abs(s[0] * s[0] - x) > 1e-5 * x,
                              lambda s: ((s[0] + x / s[0]) / 2, s[1] + 1),
                              (x, 0))
    check(newton_sqrt, np.float32(10.0))


@pytest.mark.parametrize("pred", [True, False])
def test_cond(pred):
    def fn(p, x):
        return lax.cond(p, lambda v: (jnp.sin(v), v.sum()),
                        lambda v: (jnp.cos(v) * 2, -v.max()), x)
    check(fn, np.bool_(pred), A)
    check(lambda x: lax.cond(x.sum() > 0, lambda: x * 2, lambda: -x), A)


@pytest.mark.parametrize("index", [-1, 0, 1, 2, 5])
def test_switch(index):
    branches = [lambda x: x + 1, lambda x: x * x, lambda x: jnp.exp(-x)]
    check(lambda i, x: lax.switch(i, branches, x), np.int32(index), A)


def test_scan():
    def cumulative(carry, x):
        carry = carry * 0.9 + x
        return carry, (carry, jnp.sum(x))
    check(lambda xs: lax.scan(cumulative, jnp.zeros(5), xs), A)
    check(lambda xs: lax.scan(cumulative, jnp.zeros(5), xs, reverse=True), A)
    check(lambda xs: lax.scan(cumulative, jnp.zeros(5), xs, unroll=2), A)
    # A scan with no xs, only a length.
    check(lambda c: lax.scan(lambda c, _: (c * 2.0, c), c, None, length=6),
          np.float32(1.5))


def test_rnn_scan_grad():
    w = random_array((5, 5), np.float32, seed=4, low=-0.5, high=0.5)

    def loss(w, xs):
        def step(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h
        _, hs = lax.scan(step, jnp.zeros(5), xs)
        return jnp.sum(hs ** 2)
    check(jax.value_and_grad(loss), w, A, atol=1e-5)


def test_fori_loop():
    check(lambda x: lax.fori_loop(0, 10, lambda i, v: v * 0.5 + i, x), A)
    check(lambda n, x: lax.fori_loop(0, n, lambda i, v: v + x[i % 4], x[0]),
          np.int32(7), A)


def test_map_and_associative_scan():
    check(lambda xs: lax.map(lambda x: jnp.linalg.norm(x), xs), A)
    check(lambda xs: lax.associative_scan(jnp.add, xs, axis=1), A)
    check(lambda xs: lax.associative_scan(jnp.maximum, xs, reverse=True), A)


def test_nested_control_flow():
    def fn(x):
        def outer(i, acc):
            return lax.cond(i % 2 == 0,
                            lambda a: lax.fori_loop(0, i, lambda j, b: b + j,
                                                    a),
                            lambda a: a * 1.5, acc)
        return lax.fori_loop(0, 6, outer, x)
    check(fn, A)
