"""Device layouts (`jax.experimental.layout`): arrays in an order of their
dimensions other than row-major, and executables that take and give them.

Each test does the same on Kiln and on XLA:CPU and compares what JAX reports
(the layouts of arrays and of compiled functions) and the values. XLA:CPU's
layout assignment is the reference for what `Layout.AUTO` picks where the
answer is not arbitrary: a transpose leaves in the layout that makes it free.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.layout import Format, Layout
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, \
    SingleDeviceSharding

from conftest import KILN_PLATFORM, NUM_DEVICES, assert_close

PLATFORMS = (KILN_PLATFORM, "cpu")


def single(platform):
    return SingleDeviceSharding(jax.devices(platform)[0])


@pytest.mark.parametrize("dtype", [np.float32, np.int8, jnp.bfloat16,
                                   np.complex64, np.bool_])
@pytest.mark.parametrize("shape,major_to_minor", [
    ((8, 128), (1, 0)),
    ((3, 4, 5), (2, 0, 1)),
    ((3, 4, 5), (0, 1, 2)),
])
def test_device_put_in_a_layout(dtype, shape, major_to_minor):
    x = (np.arange(np.prod(shape)) % 7).reshape(shape).astype(dtype)
    formats = []
    for platform in PLATFORMS:
        out = jax.device_put(x, Format(Layout(major_to_minor), single(platform)))
        assert out.format.layout.major_to_minor == major_to_minor
        np.testing.assert_array_equal(np.asarray(out), x)
        # Back to the default layout, and a computation on it.
        back = jax.device_put(out, Format(Layout((2, 1, 0)[-len(shape):]),
                                          single(platform)))
        np.testing.assert_array_equal(np.asarray(back), x)
        formats.append(out.format.layout)
    assert formats[0] == formats[1]


def test_jit_with_layouts_in_and_out():
    shape = (16, 24)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    column_major = Layout(major_to_minor=(1, 0))
    results = []
    for platform in PLATFORMS:
        s = single(platform)
        arr = jax.device_put(x, Format(column_major, s))
        f = jax.jit(lambda a: jnp.sin(a) @ a.T + 1,
                    in_shardings=Format(column_major, s),
                    out_shardings=Format(column_major, s))
        compiled = f.lower(arr).compile()
        assert compiled.input_formats[0][0].layout.major_to_minor == (1, 0)
        assert compiled.output_formats.layout.major_to_minor == (1, 0)
        out = f(arr)
        assert out.format.layout.major_to_minor == (1, 0)
        # An argument in another layout than the jit names is refused by
        # JAX, on either backend.
        with pytest.raises(ValueError, match="does not match the layout"):
            f(jax.device_put(x, s))
        results.append(np.asarray(out))
    assert_close(results[0], results[1])
    assert_close(results[0], np.sin(x) @ x.T + 1)


def test_auto_layouts_make_a_transpose_free():
    # Layout.AUTO: both backends leave x.T in the layout of x's bytes.
    x = np.arange(4 * 6 * 2, dtype=np.int32).reshape(4, 6, 2)
    reported = []
    for platform in PLATFORMS:
        s = single(platform)
        sds = jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s)
        compiled = jax.jit(lambda a: a.T, in_shardings=Format(Layout.AUTO),
                           out_shardings=Format(Layout.AUTO)).lower(sds).compile()
        in_layout = compiled.input_formats[0][0].layout
        out_layout = compiled.output_formats.layout
        out = compiled(jax.device_put(x, compiled.input_formats[0][0]))
        np.testing.assert_array_equal(np.asarray(out), x.T)
        assert out.format.layout == out_layout
        reported.append((in_layout.major_to_minor, out_layout.major_to_minor))
        # Without AUTO, the default layout on both sides.
        plain = jax.jit(lambda a: a.T).lower(sds).compile()
        assert plain.output_formats.layout.major_to_minor == (0, 1, 2)
    assert reported[0] == reported[1] == ((0, 1, 2), (2, 1, 0))


def test_an_array_in_a_layout_compiles_for_it():
    # jit of an array with a layout of its own compiles for that layout.
    x = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    results = []
    for platform in PLATFORMS:
        s = single(platform)
        arr = jax.device_put(x, Format(Layout((0, 1)), s))
        f = jax.jit(lambda a: a @ a.T)
        compiled = f.lower(arr).compile()
        assert compiled.input_formats[0][0].layout.major_to_minor == (0, 1)
        results.append(np.asarray(f(arr)))
    assert_close(results[0], results[1])
    assert_close(results[0], x @ x.T)


def test_donated_argument_in_a_layout():
    x = np.arange(8 * 8, dtype=np.float32).reshape(8, 8)
    layout = Layout((0, 1))
    results = []
    for platform in PLATFORMS:
        s = single(platform)
        arr = jax.device_put(x, Format(layout, s))
        f = jax.jit(lambda a: a * 3 - 1, donate_argnums=0,
                    in_shardings=Format(layout, s),
                    out_shardings=Format(layout, s))
        out = f(arr)
        assert arr.is_deleted()
        assert out.format.layout.major_to_minor == (0, 1)
        results.append(np.asarray(out))
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], x * 3 - 1)


@pytest.mark.skipif(NUM_DEVICES < 4 or len(jax.devices("cpu")) < 4,
                    reason="needs 4 Kiln and 4 XLA:CPU devices")
def test_sharded_arrays_in_a_layout():
    x = np.arange(16 * 128, dtype=np.int32).reshape(16, 128)
    results = []
    for platform in PLATFORMS:
        devices = np.array(jax.devices(platform)[:4]).reshape(2, 2)
        s = NamedSharding(Mesh(devices, ("x", "y")), P("x", "y"))
        arr = jax.device_put(x, Format(Layout((0, 1)), s))
        assert arr.format.layout.major_to_minor == (0, 1)

        @jax.jit
        def f(a):
            return jax.lax.with_sharding_constraint(
                a.T + 1, Format(Layout((0, 1)), NamedSharding(s.mesh, P("x"))))

        out = f(arr)
        assert out.sharding.spec == P("x")
        assert out.format.layout.major_to_minor == (0, 1)
        results.append(np.asarray(out))
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], x.T + 1)
