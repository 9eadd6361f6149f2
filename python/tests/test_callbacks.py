"""Host callbacks on Kiln (pure_callback, io_callback, debug.print), beside XLA:CPU."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback

from jax._src import dispatch

from conftest import assert_close, run_both


@pytest.fixture(autouse=True)
def clear_runtime_tokens():
    # A failed callback leaves its error in JAX's runtime tokens, which JAX
    # waits on again at exit; JAX's own callback tests clear them the same way.
    yield
    dispatch.runtime_tokens.clear()


def test_pure_callback_result_matches_cpu():
    def f(x):
        y = jax.pure_callback(lambda a: np.cos(a) * 3,
                              jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return y * x + 1

    kiln, cpu = run_both(f, np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
    assert_close(kiln, cpu, np.float32)


def test_ordered_io_callbacks_run_in_program_order(kiln):
    seen = []

    @jax.jit
    def f(x):
        for i in range(3):
            io_callback(lambda v, i=i: seen.append((i, int(v))), None, x + i,
                        ordered=True)
        return x

    f(jax.device_put(jnp.int32(10), kiln)).block_until_ready()
    jax.effects_barrier()
    assert seen == [(0, 10), (1, 11), (2, 12)]


def test_debug_print_inside_a_loop(kiln, capsys):
    @jax.jit
    def f(x):
        def body(i, c):
            jax.debug.print("step {i} carry {c}", i=i, c=c, ordered=True)
            return c * 2
        return jax.lax.fori_loop(0, 3, body, x)

    out = f(jax.device_put(jnp.int32(1), kiln))
    jax.effects_barrier()
    assert int(out) == 8
    assert capsys.readouterr().out.splitlines() == [
        "step 0 carry 1", "step 1 carry 2", "step 2 carry 4"]


def test_an_exception_in_a_callback_is_a_python_error(kiln):
    def bad(a):
        raise ValueError("no such value")

    @jax.jit
    def f(x):
        return jax.pure_callback(bad, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    with pytest.raises(RuntimeError, match="no such value"):
        f(jax.device_put(jnp.ones(3), kiln)).block_until_ready()


def test_a_callback_of_the_wrong_shape_is_refused(kiln):
    @jax.jit
    def f(x):
        return jax.pure_callback(lambda a: np.ones(5, np.float32),
                                 jax.ShapeDtypeStruct((3,), np.float32), x)

    with pytest.raises(RuntimeError, match="Incorrect output shape"):
        f(jax.device_put(jnp.ones(3), kiln)).block_until_ready()


@pytest.mark.parametrize("spec", [("x", None), (None, "x"), ("x", "y"), ()])
def test_partitioned_debug_callback_sees_each_shard(spec):
    """`partitioned=True`: the callback runs on every device with its shard,
    the same shards on Kiln as on XLA:CPU."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from conftest import KILN_PLATFORM, NUM_DEVICES
    if NUM_DEVICES < 4 or len(jax.devices("cpu")) < 4:
        pytest.skip("needs 4 Kiln and 4 XLA:CPU devices")
    x = np.arange(8 * 6, dtype=np.int32).reshape(8, 6)
    seen = {}
    for platform in (KILN_PLATFORM, "cpu"):
        shards = []
        mesh = Mesh(np.array(jax.devices(platform)[:4]).reshape(2, 2), ("x", "y"))

        def f(v):
            jax.debug.callback(lambda s: shards.append(np.asarray(s)), v * 2,
                               partitioned=True)
            return v + 1

        out = jax.jit(f)(jax.device_put(x, NamedSharding(mesh, P(*spec))))
        jax.effects_barrier()
        np.testing.assert_array_equal(np.asarray(out), x + 1)
        seen[platform] = sorted((s.shape, s.tobytes()) for s in shards)
    assert seen[KILN_PLATFORM] == seen["cpu"]
    assert len(seen["cpu"]) >= 1
