"""Sharded programs: jit with NamedSharding, shard_map and pmap over 8 devices.

Each test builds the same mesh over Kiln's devices and over XLA:CPU's (both
have 8 in this suite, see conftest.py), runs one program on each, and
compares the results, the output shardings and the shards each device
holds. XLA:CPU's SPMD partitioner is the reference for what every device
ends up with.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from conftest import KILN_PLATFORM, NUM_DEVICES, assert_close

pytestmark = pytest.mark.skipif(
    NUM_DEVICES < 8 or len(jax.devices("cpu")) < 8,
    reason="needs 8 Kiln and 8 XLA:CPU devices (KILN_CPU_DEVICE_COUNT=8)")


def mesh_of(platform, shape, names):
    devices = np.array(jax.devices(platform)[:int(np.prod(shape))])
    return Mesh(devices.reshape(shape), names)


def on_both(shape, names, build):
    """Runs `build(mesh)` (which returns jax arrays) for Kiln and XLA:CPU."""
    results = []
    for platform in (KILN_PLATFORM, "cpu"):
        results.append(build(mesh_of(platform, shape, names)))
    return results


def shards(array):
    """The shards of `array` as (device position, index, data), sorted."""
    position = {d: i for i, d in enumerate(array.sharding.mesh.devices.flat)} \
        if hasattr(array.sharding, "mesh") else None
    out = []
    for shard in array.addressable_shards:
        key = position[shard.device] if position else shard.device.id
        out.append((key, str(shard.index), np.asarray(shard.data)))
    return sorted(out, key=lambda s: s[0])


def assert_consistent_shards(out):
    """Every shard a device holds is the slice of the whole its index says."""
    whole = np.asarray(out)
    for shard in out.addressable_shards:
        assert_close(np.asarray(shard.data), whole[shard.index],
                     err_msg=f"shard on {shard.device}")


def assert_same_placement(kiln_out, cpu_out):
    """Same values, each device's shard consistent with them, the same
    partition spec and the same shard on each mesh position as XLA:CPU:
    also where JAX lets the compiler choose the output sharding (Kiln's
    choice follows Shardy's propagation through the ops these tests use)."""
    assert_close(np.asarray(kiln_out), np.asarray(cpu_out))
    assert_consistent_shards(kiln_out)
    if isinstance(cpu_out.sharding, NamedSharding):
        assert isinstance(kiln_out.sharding, NamedSharding), kiln_out.sharding
        assert kiln_out.sharding.spec == cpu_out.sharding.spec
    kiln_shards, cpu_shards = shards(kiln_out), shards(cpu_out)
    assert len(kiln_shards) == len(cpu_shards)
    for (kp, ki, kd), (cp, ci, cd) in zip(kiln_shards, cpu_shards):
        assert (kp, ki) == (cp, ci)
        assert_close(kd, cd, err_msg=f"shard {kp} {ki}")


RNG = np.random.default_rng(7)
A = RNG.standard_normal((16, 8)).astype(np.float32)
B = RNG.standard_normal((8, 12)).astype(np.float32)


@pytest.mark.parametrize("shape,names,spec_a,spec_b", [
    ((8,), ("x",), P("x", None), P(None, None)),
    ((8,), ("x",), P(None, "x"), P("x", None)),          # contraction split
    ((4, 2), ("x", "y"), P("x", "y"), P("y", None)),
    ((4, 2), ("x", "y"), P("x", None), P(None, "y")),
    ((2, 4), ("x", "y"), P(("x", "y"), None), P()),      # two axes, one dim
    ((2, 2, 2), ("a", "b", "c"), P("c", "a"), P("a", "b")),
])
def test_jit_with_named_shardings(shape, names, spec_a, spec_b):
    def f(a, b):
        return jnp.tanh(a) @ b + 1.0

    def build(mesh):
        a = jax.device_put(A, NamedSharding(mesh, spec_a))
        b = jax.device_put(B, NamedSharding(mesh, spec_b))
        return jax.jit(f)(a, b)

    kiln_out, cpu_out = on_both(shape, names, build)
    assert_same_placement(kiln_out, cpu_out)



@pytest.mark.parametrize("name,f", [
    ("transpose", lambda a: a.T * 2.0),
    ("reduce", lambda a: jnp.sum(jnp.sin(a), axis=1)),
    ("broadcast", lambda a: jnp.broadcast_to(a[None], (3, 16, 8)) + 1.0),
    ("concatenate", lambda a: jnp.concatenate([a, a * 2.0], axis=1)),
    ("dot_transposed", lambda a: a @ a.T),
    ("reshape_split", lambda a: jnp.cos(a.reshape(4, 4, 8))),
    ("reshape_merge", lambda a: a.reshape(4, 4, 8).reshape(16, 8) - 1.0),
    ("batched_dot", lambda a: jnp.einsum("bij,bkj->bik", a.reshape(4, 4, 8),
                                         a.reshape(4, 4, 8))),
])
def test_output_sharding_the_compiler_chooses(name, f):
    # The same output sharding as XLA:CPU's propagation where the program
    # leaves it open.
    def build(mesh):
        return jax.jit(f)(jax.device_put(A, NamedSharding(mesh, P("x", "y"))))

    kiln_out, cpu_out = on_both((4, 2), ("x", "y"), build)
    assert_same_placement(kiln_out, cpu_out)

def test_explicit_out_shardings_and_constraints():
    def build(mesh):
        def f(a):
            y = jax.lax.with_sharding_constraint(
                a * 2.0, NamedSharding(mesh, P(None, "x")))
            return y.sum(axis=0), y

        a = jax.device_put(A, NamedSharding(mesh, P("x", None)))
        out = jax.jit(f, out_shardings=(NamedSharding(mesh, P("x")),
                                        NamedSharding(mesh, P("x", None))))(a)
        return out

    (k_sum, k_y), (c_sum, c_y) = on_both((8,), ("x",), build)
    assert_same_placement(k_sum, c_sum)
    assert_same_placement(k_y, c_y)


def test_sharded_mlp_training_step():
    """Data parallel over "data", the hidden layer split over "model"."""
    x = RNG.standard_normal((32, 16)).astype(np.float32)
    y = RNG.standard_normal((32, 4)).astype(np.float32)
    w1 = (RNG.standard_normal((16, 32)) * 0.1).astype(np.float32)
    w2 = (RNG.standard_normal((32, 4)) * 0.1).astype(np.float32)

    def loss(params, x, y):
        w1, w2 = params
        h = jax.nn.relu(x @ w1)
        return jnp.mean((h @ w2 - y) ** 2)

    def step(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        params = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
        return params, value

    def build(mesh):
        put = lambda v, spec: jax.device_put(v, NamedSharding(mesh, spec))
        params = (put(w1, P(None, "model")), put(w2, P("model", None)))
        xs, ys = put(x, P("data", None)), put(y, P("data", None))
        jstep = jax.jit(step, donate_argnums=0)
        losses = []
        for _ in range(3):
            params, value = jstep(params, xs, ys)
            losses.append(value)
        return params, losses

    (k_params, k_losses), (c_params, c_losses) = on_both(
        (4, 2), ("data", "model"), build)
    assert_close(np.array(k_losses), np.array(c_losses), rtol=1e-5, atol=1e-6)
    # Donated parameters keep the sharding they came with.
    for k, c in zip(k_params, c_params):
        assert_same_placement(k, c)
    assert k_losses[-1] < k_losses[0]


@pytest.mark.parametrize("collective", [
    "psum", "pmax", "all_gather", "all_gather_tiled", "ppermute",
    "psum_scatter", "all_to_all", "axis_index",
])
def test_shard_map_collectives(collective):
    def body(x):
        if collective == "psum":
            return jax.lax.psum(x, "x")
        if collective == "pmax":
            return jax.lax.pmax(x, ("x", "y"))
        if collective == "all_gather":
            return jax.lax.all_gather(x, "x")[:, :1]
        if collective == "all_gather_tiled":
            return jax.lax.all_gather(x, "y", axis=1, tiled=True)
        if collective == "ppermute":
            n = 4
            return jax.lax.ppermute(x, "x", [(i, (i + 1) % n) for i in range(n)])
        if collective == "psum_scatter":
            return jax.lax.psum_scatter(x, "x", scatter_dimension=0, tiled=True)
        if collective == "all_to_all":
            return jax.lax.all_to_all(x, "x", 0, 0, tiled=True)
        if collective == "axis_index":
            return x + jax.lax.axis_index("x") * 10 + jax.lax.axis_index("y")
        raise AssertionError(collective)

    out_specs = {"psum": P(None, "y"), "pmax": P(), "all_gather": P("x", "y"),
                 "all_gather_tiled": P("x", None)}.get(collective, P("x", "y"))

    def build(mesh):
        a = jax.device_put(A, NamedSharding(mesh, P("x", "y")))
        f = jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"),
                          out_specs=out_specs, check_vma=False)
        return jax.jit(f)(a)

    kiln_out, cpu_out = on_both((4, 2), ("x", "y"), build)
    assert_same_placement(kiln_out, cpu_out)


def test_shard_map_inside_a_loop():
    """A ring of ppermutes in a fori_loop: collectives repeated in a loop."""
    def build(mesh):
        def ring(x):
            def step(_, v):
                return jax.lax.ppermute(v, "x", [(i, (i + 1) % 8)
                                                 for i in range(8)]) * 0.5 + v
            return jax.lax.fori_loop(0, 5, step, x)

        a = jax.device_put(A, NamedSharding(mesh, P("x", None)))
        f = jax.shard_map(ring, mesh=mesh, in_specs=P("x", None),
                          out_specs=P("x", None))
        return jax.jit(f)(a)

    kiln_out, cpu_out = on_both((8,), ("x",), build)
    assert_same_placement(kiln_out, cpu_out)


def test_pmap_with_psum():
    x = RNG.standard_normal((8, 5)).astype(np.float32)

    def f(v):
        return jax.lax.psum(v, "i") - v * jax.lax.axis_index("i")

    outs = []
    for platform in (KILN_PLATFORM, "cpu"):
        outs.append(jax.pmap(f, axis_name="i",
                             devices=jax.devices(platform)[:8])(x))
    assert_close(np.asarray(outs[0]), np.asarray(outs[1]))
    assert {s.device.platform for s in outs[0].addressable_shards} == \
        {jax.devices(KILN_PLATFORM)[0].platform}


def test_output_shardings_of_a_compiled_program():
    """JAX reads output shardings from the executable when it was not told."""
    def build(mesh):
        a = jax.device_put(A, NamedSharding(mesh, P("x", "y")))
        compiled = jax.jit(lambda v: v * 3.0).lower(a).compile()
        return compiled.output_shardings, compiled(a)

    (k_sharding, k_out), (c_sharding, c_out) = on_both((4, 2), ("x", "y"),
                                                       build)
    assert k_sharding.spec == c_sharding.spec
    assert_same_placement(k_out, c_out)


@pytest.mark.parametrize("spec,shape", [
    (P("x", "y"), (4, 2)),
    (P(None, "x"), (4, 2)),
    (P("x"), (8,)),
    (P(), (4, 2)),
])
def test_inspect_array_sharding(spec, shape):
    """The callback hears the sharding the partitioner gives the value."""
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)

    def build(mesh):
        seen = []

        def f(v):
            w = jnp.sin(v) * 2
            jax.debug.inspect_array_sharding(w, callback=seen.append)
            return w + 1

        a = jax.device_put(x, NamedSharding(mesh, spec))
        out = jax.jit(f)(a)
        assert len(seen) == 1, seen
        return seen[0], out

    names = ("x", "y")[:len(shape)]
    (k_seen, k_out), (c_seen, c_out) = on_both(shape, names, build)
    assert len(k_seen.device_set) == len(c_seen.device_set) == int(np.prod(shape))
    assert k_seen.is_equivalent_to(
        NamedSharding(mesh_of(KILN_PLATFORM, shape, names), c_seen.spec), 2)
    assert_close(np.asarray(k_out), np.asarray(c_out))


@pytest.mark.parametrize("mesh_shape", [(2,), (4,), (2, 2)])
def test_unreduced_dot_leaves_each_devices_partial_product(mesh_shape):
    """A contraction over a sharded dimension with an unreduced result: each
    device keeps its own partial product, as XLA:CPU's partitioner leaves
    it, and resharding sums them."""
    from jax.sharding import AxisType, reshard
    names = ("x", "y")[:len(mesh_shape)]
    x = np.arange(16, dtype=np.int32).reshape(4, 4)
    shards, totals = [], []
    for platform in (KILN_PLATFORM, "cpu"):
        devices = np.array(jax.devices(platform)[:int(np.prod(mesh_shape))])
        mesh = Mesh(devices.reshape(mesh_shape), names,
                    axis_types=(AxisType.Explicit,) * len(names))
        with jax.set_mesh(mesh):
            a = jax.device_put(x, P(None, "x"))
            b = jax.device_put(x, P("x", None))
            out = jax.jit(lambda u, v: jnp.einsum(
                "ab,bc->ac", u, v,
                out_sharding=P(None, None, unreduced={"x"})))(a, b)
            shards.append([np.asarray(s.data) for s in out.addressable_shards])
            totals.append(np.asarray(reshard(out, P(None, None))))
    for k, c in zip(*shards):
        np.testing.assert_array_equal(k, c)
    np.testing.assert_array_equal(totals[0], x @ x)
    np.testing.assert_array_equal(totals[1], x @ x)


def test_unreduced_values_pass_between_programs_as_each_devices_partial():
    """Unreduced values are each device's own partial value, not a sum split
    again: a shard_map that returns its operand as unreduced, one that sums
    an unreduced argument with psum, one that passes it on unchecked, and a
    contraction's unreduced product summed inside a shard_map (the devices
    must all keep or all drop each all_reduce), and a cut value returned
    unreduced. Every device's shard is compared with XLA:CPU's."""
    from jax.sharding import AxisType
    from jax import shard_map
    x = np.arange(8, dtype=np.float32)
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    b = np.arange(24, dtype=np.float32).reshape(4, 6)
    results = []
    for platform in (KILN_PLATFORM, "cpu"):
        devices = np.array(jax.devices(platform)[:2])
        mesh = Mesh(devices, ("x",), axis_types=(AxisType.Explicit,))
        with jax.set_mesh(mesh):
            to_partial = jax.jit(shard_map(
                lambda v: v, in_specs=P("x"), out_specs=P(unreduced={"x"})))
            summed = jax.jit(shard_map(
                lambda v: jax.lax.psum(v, "x"), in_specs=P(unreduced={"x"}),
                out_specs=P()))
            unchecked = jax.jit(shard_map(
                lambda v: v, in_specs=P(unreduced={"x"}), out_specs=P(),
                check_vma=False))
            partial = to_partial(jax.device_put(x, P("x")))
            psum_of_dot = jax.jit(lambda u, v: summed(jnp.einsum(
                "ab,bc->ac", u, v, out_sharding=P(unreduced={"x"}))).sum())
            # A cut value made unreduced: each device's tile among zeros.
            cut_to_partial = jax.jit(lambda v: v,
                                     out_shardings=P(unreduced={"x"}))
            outs = [partial, summed(partial), unchecked(partial),
                    psum_of_dot(jax.device_put(a, P(None, "x")),
                                jax.device_put(b, P("x", None))),
                    cut_to_partial(jax.device_put(x, P("x")))]
            results.append([[np.asarray(s.data) for s in o.addressable_shards]
                            for o in outs])
    kiln, cpu = results
    for k_out, c_out in zip(kiln, cpu):
        for k, c in zip(k_out, c_out):
            np.testing.assert_array_equal(k, c)
    # Independently of both: device i's partial is its slice of x, the psum
    # adds the slices, and the last program is the sum of a @ b.
    np.testing.assert_array_equal(kiln[0][1], x[4:])
    np.testing.assert_array_equal(kiln[1][0], x[:4] + x[4:])
    np.testing.assert_array_equal(kiln[2][1], x[4:])
    np.testing.assert_array_equal(kiln[3][0], np.sum(a @ b))
    np.testing.assert_array_equal(kiln[4][1], np.concatenate(
        [np.zeros(4, np.float32), x[4:]]))


@pytest.mark.parametrize("mesh_shape,src,dst", [
    ((4,), P("x", None), P(None, "x")),
    ((2, 2), P("x", None), P("x", "y")),
    ((2, 2), P("x", None), P(None, "x")),
    ((2, 2), P(("x", "y"), None), P(None, ("x", "y"))),
    ((2, 4), P(None, "y", "x"), P("y", None, "x")),
    ((2, 2), P("x", "y"), P("y", "x")),
])
def test_resharding_between_cuts(mesh_shape, src, dst):
    """A value computed in one cut and returned in another: Kiln moves it
    with a slice of each device's tile or one all_to_all where one set of
    devices changes dimension (the whole value otherwise); every device's
    shard is compared with XLA:CPU's."""
    names = ("x", "y")[:len(mesh_shape)]
    x = np.arange(8 * 8 * 4, dtype=np.float32).reshape(8, 8, 4)

    def build(mesh):
        a = jax.device_put(x, NamedSharding(mesh, src))
        return jax.jit(lambda v: v + 1,
                       out_shardings=NamedSharding(mesh, dst))(a)

    k_out, c_out = on_both(mesh_shape, names, build)
    np.testing.assert_array_equal(np.asarray(k_out), x + 1)
    assert_same_placement(k_out, c_out)


def assert_cnn_step_matches(x_shape, mesh_shape, x_spec, w_spec, features):
    """Loss and weight gradients of a two-convolution classifier (3x3 SAME,
    then 3x3 SAME with stride 2) on Kiln and on XLA:CPU, images cut by
    `x_spec` and weights by `w_spec` over a 1-D mesh of `mesh_shape`."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(x_shape).astype(np.float32)
    channels = x_shape[-1]
    w1 = (rng.standard_normal((3, 3, channels, features)) * 0.3).astype(
        np.float32)
    w2 = (rng.standard_normal((3, 3, features, features)) * 0.3).astype(
        np.float32)
    dn = ("NHWC", "HWIO", "NHWC")

    def loss(params, x):
        a, b = params
        h = jax.nn.relu(jax.lax.conv_general_dilated(
            x, a, (1, 1), "SAME", dimension_numbers=dn))
        h = jax.lax.conv_general_dilated(h, b, (2, 2), "SAME",
                                         dimension_numbers=dn)
        return jnp.mean(h ** 2)

    results = []
    for platform in (KILN_PLATFORM, "cpu"):
        mesh = mesh_of(platform, mesh_shape, ("x",))
        xa = jax.device_put(x, NamedSharding(mesh, x_spec))
        wa = [jax.device_put(w, NamedSharding(mesh, w_spec)) for w in (w1, w2)]
        value, grads = jax.jit(jax.value_and_grad(loss))(wa, xa)
        results.append((np.asarray(value), [np.asarray(g) for g in grads]))
    (k_value, k_grads), (c_value, c_grads) = results
    assert_close(k_value, c_value)
    for k, c in zip(k_grads, c_grads):
        np.testing.assert_allclose(k, c, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("x_spec,w_spec", [
    (P("x"), P()),                                   # data parallel
    (P(None, None, None, "x"), P(None, None, "x", None)),  # input channels
    (P(), P(None, None, None, "x")),                 # output channels
])
def test_convolution_training_step_on_tiles(x_spec, w_spec):
    """A small CNN's loss and weight gradients with the batch, the input
    channels or the output channels cut over 4 devices: Kiln runs the
    convolutions on tiles (weight gradients summed by all_reduce) and must
    agree with XLA:CPU."""
    assert_cnn_step_matches((8, 12, 12, 4), (4,), x_spec, w_spec, 8)


HALO_CASES = [
    # (kernel, strides, padding, rhs dilation, transposed)
    ((3, 3), (1, 1), "SAME", (1, 1), False),
    ((5, 5), (1, 1), "SAME", (1, 1), False),
    ((3, 3), (2, 2), "SAME", (1, 1), False),
    ((3, 3), (1, 1), "SAME", (2, 2), False),
    ((1, 1), (2, 2), "VALID", (1, 1), False),  # stride past the window
    ((4, 4), (4, 4), "VALID", (1, 1), False),  # windows side by side
    ((3, 3), (2, 2), "SAME", (1, 1), True),    # input dilated by 2
    ((4, 4), (2, 2), "SAME", (1, 1), True),
]


@pytest.mark.parametrize("mesh_shape,names,spec", [
    ((4,), ("x",), P(None, "x")),                  # rows over 4 devices
    ((8,), ("x",), P(None, None, "x")),            # columns over 8
    ((2, 2), ("x", "y"), P(None, "x", "y")),       # both: corners too
])
@pytest.mark.parametrize("case", HALO_CASES, ids=str)
def test_convolution_of_a_spatially_cut_image_exchanges_halos(
        mesh_shape, names, spec, case):
    """An NHWC image cut along its height and/or width: Kiln convolves each
    device's tile with the rows and columns its neighbours send (a
    collective_permute each way), and must give XLA:CPU's values and output
    sharding."""
    kernel, strides, padding, dilation, transposed = case
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 16, 16, 4)).astype(np.float32)
    w = rng.standard_normal(kernel + (4, 6)).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")

    def conv(x, w):
        if transposed:
            return jax.lax.conv_transpose(x, w, strides, padding,
                                          dimension_numbers=dn)
        return jax.lax.conv_general_dilated(x, w, strides, padding,
                                            rhs_dilation=dilation,
                                            dimension_numbers=dn)

    def build(mesh):
        return jax.jit(conv)(jax.device_put(x, NamedSharding(mesh, spec)), w)

    kiln_out, cpu_out = on_both(mesh_shape, names, build)
    np.testing.assert_allclose(np.asarray(kiln_out), np.asarray(cpu_out),
                               rtol=1e-5, atol=2e-5)
    assert_consistent_shards(kiln_out)
    assert kiln_out.sharding.spec == cpu_out.sharding.spec


def test_training_step_on_a_spatially_cut_image():
    """The same classifier with the images' rows cut over 8 devices: the
    forward convolutions exchange halos, the input gradient of the strided
    one runs on its dilated tiles, and the weight gradients add each
    device's part."""
    assert_cnn_step_matches((4, 32, 32, 3), (8,), P(None, "x"), P(), 8)


def test_embedding_training_step_with_the_batch_cut():
    """Data parallelism over token ids: the lookup gathers each device's
    rows of the whole table, and the table's gradient (a scatter-add of
    each device's rows) is added up by an all_reduce. Values, gradients and
    the lookup's sharding as on XLA:CPU."""
    rng = np.random.default_rng(11)
    table = rng.standard_normal((50, 16)).astype(np.float32)
    ids = rng.integers(0, 50, (16, 12)).astype(np.int32)
    w = rng.standard_normal((16, 4)).astype(np.float32)

    def loss(params, ids):
        t, w = params
        return jnp.mean(jnp.tanh(jnp.take(t, ids, axis=0) @ w) ** 2)

    results = []
    for platform in (KILN_PLATFORM, "cpu"):
        mesh = mesh_of(platform, (8,), ("x",))
        ia = jax.device_put(ids, NamedSharding(mesh, P("x")))
        value, grads = jax.jit(jax.value_and_grad(loss))([table, w], ia)
        rows = jax.jit(lambda t, i: jnp.take(t, i, axis=0))(table, ia)
        results.append((value, grads, rows))
    (k_value, k_grads, k_rows), (c_value, c_grads, c_rows) = results
    assert_close(np.asarray(k_value), np.asarray(c_value))
    for k, c in zip(k_grads, c_grads):
        np.testing.assert_allclose(np.asarray(k), np.asarray(c),
                                   rtol=1e-5, atol=1e-7)
    assert_same_placement(k_rows, c_rows)


def test_segment_reductions_with_the_segment_ids_cut():
    """segment_sum, segment_max and bincount (scatters with add and max)
    over values and ids cut over 8 devices, against XLA:CPU."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((64,)).astype(np.float32)
    ids = rng.integers(0, 20, (64,)).astype(np.int32)

    def segments(x, ids):
        return (jax.ops.segment_sum(x, ids, num_segments=20),
                jax.ops.segment_max(x, ids, num_segments=20),
                jnp.bincount(ids, length=20))

    outs = []
    for platform in (KILN_PLATFORM, "cpu"):
        mesh = mesh_of(platform, (8,), ("x",))
        put = lambda a: jax.device_put(a, NamedSharding(mesh, P("x")))
        outs.append([np.asarray(o) for o in jax.jit(segments)(put(x),
                                                              put(ids))])
    (k_sum, k_max, k_count), (c_sum, c_max, c_count) = outs
    np.testing.assert_allclose(k_sum, c_sum, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(k_max, c_max)  # empty segments: -inf
    np.testing.assert_array_equal(k_count, c_count)
    np.testing.assert_array_equal(k_count, np.bincount(ids, minlength=20))


@pytest.mark.parametrize("in_spec,constraint", [
    (P("x"), P("x", "y")),      # a finer cut: a slice of each tile
    (P("x"), P(None, "x")),     # the cut moves to the other dimension
    (P("x", "y"), P()),         # replicated: the whole value
    (P(), P("y", "x")),         # from whole to tiles
])
def test_sharding_constraint_sets_the_layout_of_its_value(in_spec, constraint):
    """with_sharding_constraint on the value a jit returns: the result
    leaves in the constraint's sharding, as on XLA:CPU, whatever the
    argument's."""
    x = np.arange(8 * 8, dtype=np.float32).reshape(8, 8)

    def build(mesh):
        with jax.set_mesh(mesh):
            f = jax.jit(lambda v: jax.lax.with_sharding_constraint(
                v * 2, constraint))
            return f(jax.device_put(x, NamedSharding(mesh, in_spec)))

    kiln_out, cpu_out = on_both((2, 2), ("x", "y"), build)
    assert_same_placement(kiln_out, cpu_out)
    assert_close(np.asarray(kiln_out), x * 2)


@pytest.mark.parametrize("in_spec,out_spec", [
    (P("x", "y"), P("y", "x")),            # mesh axes swapped: a permute
    (P(("x", "y")), P(("y", "x"))),        # one dimension, axes reordered
    (P("x"), P("y")),                      # another axis on the same cut
    (P("x", "y"), P("y", None)),           # one cut dropped, one moved
    (P("x", "y"), P(None, "x")),
    (P("x", "y"), P("y", None, "x")),
])
def test_resharding_of_several_axes(in_spec, out_spec):
    """A value computed in one 2-D layout and returned in another, where
    more than one mesh axis moves: Kiln's tiles as XLA:CPU's."""
    x = np.arange(8 * 8 * 4, dtype=np.float32).reshape(8, 8, 4)

    def build(mesh):
        f = jax.jit(lambda v: v + 1,
                    out_shardings=NamedSharding(mesh, out_spec))
        return f(jax.device_put(x, NamedSharding(mesh, in_spec)))

    kiln_out, cpu_out = on_both((2, 2), ("x", "y"), build)
    assert_same_placement(kiln_out, cpu_out)
    assert_close(np.asarray(kiln_out), x + 1)


@pytest.mark.parametrize("table_spec", [P("x", None), P("x", "y")])
def test_lookup_and_update_of_a_table_with_its_rows_cut(table_spec):
    """A vocabulary-parallel table (rows cut over x, columns over y or
    whole): lookups at whole ids add each device's masked rows, and
    .at[ids].add/max/set update each device's own rows. Values and
    shardings as on XLA:CPU."""
    rng = np.random.default_rng(13)
    table = rng.standard_normal((16, 8)).astype(np.float32)
    ids = rng.integers(0, 16, (5, 6)).astype(np.int32)
    flat = ids.reshape(-1)[:10]
    updates = rng.standard_normal((10, 8)).astype(np.float32)

    def build(mesh):
        t = jax.device_put(table, NamedSharding(mesh, table_spec))
        rows = jax.jit(lambda t, i: jnp.take(t, i, axis=0))(t, ids)
        updated = jax.jit(lambda t, i, u: (
            t.at[i].add(u), t.at[i].max(u), t.at[i].set(u)))(t, flat, updates)
        return [rows, *updated]

    kiln_outs, cpu_outs = on_both((2, 2), ("x", "y"), build)
    for k, c in zip(kiln_outs, cpu_outs):
        assert_same_placement(k, c)


def test_exported_call_keeps_the_shardings_of_its_results():
    """jax.export's call of a sharded function: the results leave sharded as
    the exported function gave them, on both backends."""
    from jax import export
    x = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    specs = []
    for platform in (KILN_PLATFORM, "cpu"):
        mesh = mesh_of(platform, (2,), ("x",))
        abstract = jax.sharding.AbstractMesh((2,), ("x",))

        @jax.jit
        def f(a, b):
            return (jax.lax.with_sharding_constraint(
                        a @ a.T, NamedSharding(abstract, P(None, "x"))), b)

        exp = export.export(f, platforms=(platform,))(
            jax.ShapeDtypeStruct((16, 16), np.float32,
                                 sharding=NamedSharding(abstract, P("x", None))),
            jax.ShapeDtypeStruct((16, 16), np.float32,
                                 sharding=NamedSharding(abstract, P("x", None))))
        a = jax.device_put(x, NamedSharding(mesh, P("x", None)))
        outs = exp.call(a, a)
        specs.append([o.sharding.spec for o in outs])
        assert_close(np.asarray(outs[0]), x @ x.T)
    assert specs[0] == specs[1]
