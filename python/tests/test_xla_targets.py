"""Custom-call targets that StableHLO and XLA define, and the partitioning of
FFI calls registered as batch partitionable, each compared with XLA:CPU.

- `lax.approx_max_k` / `approx_min_k`: JAX lowers them to XLA's `ApproxTopK`
  (the fallback form) on every platform but TPU; under `vmap` the reduction
  dimension is not the last, and `aggregate_to_topk=False` keeps more than k.
- Exports with symbolic shapes carry `stablehlo.dynamic_reduce_window`,
  `stablehlo.dynamic_rng_bit_generator` and `stablehlo.dynamic_approx_top_k`;
  Kiln refines them when the call's shapes are known.
- A LAPACK FFI call whose operand and result layouts differ from the
  routine's gets the bytes in the declared layout, as XLA gives them.
- `jax.ffi.register_ffi_target_as_batch_partitionable`: the call runs on each
  device's share of a batch-sharded operand, with no all-gather.
"""

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import export, lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from conftest import KILN_PLATFORM, NUM_DEVICES, assert_close, check, \
    cpu_device, kiln_device

X = np.random.default_rng(3).standard_normal((6, 40)).astype(np.float32)


@pytest.mark.parametrize("name,f", [
    ("max_k", lambda x: lax.approx_max_k(x, 5)),
    ("min_k", lambda x: lax.approx_min_k(x, 5)),
    ("max_k_dim0", lambda x: lax.approx_max_k(x, 3, reduction_dimension=0)),
    ("min_k_dim0", lambda x: lax.approx_min_k(x, 2, reduction_dimension=0)),
    ("not_aggregated",
     lambda x: lax.approx_max_k(x, 4, recall_target=0.5,
                                aggregate_to_topk=False)),
    ("vmap_over_last",
     lambda x: jax.vmap(lambda r: lax.approx_max_k(r, 2), in_axes=1,
                        out_axes=1)(x)),
    ("grad", lambda x: jax.grad(
        lambda y: lax.approx_max_k(y, 3)[0].sum())(x)),
])
def test_approx_top_k_matches_cpu(name, f):
    kiln_out, = [check(f, X)]
    # The values are the exact top k: compare with a sort, too.
    if name in ("max_k", "min_k"):
        expected = np.sort(X, axis=1)
        expected = expected[:, ::-1][:, :5] if name == "max_k" \
            else expected[:, :5]
        np.testing.assert_array_equal(kiln_out[0], expected)


def _exported(f, *specs):
    return export.export(jax.jit(f), platforms=["cpu"])(*specs)


def _symbolic(spec):
    shape, dtype = spec
    return jax.ShapeDtypeStruct(export.symbolic_shape(shape), dtype)


def _run_exported(exp, *args):
    outs = []
    for device in (kiln_device(), cpu_device()):
        committed = [jax.device_put(a, device) for a in args]
        outs.append(jax.tree.map(np.asarray, jax.jit(exp.call)(*committed)))
    return outs


def test_dynamic_reduce_window_from_a_symbolic_export():
    # A window whose size is a dimension variable: only then does JAX
    # write the dynamic form.
    def pool(x):
        return lax.reduce_window(x, -np.inf, lax.max, (2, x.shape[0]),
                                 (1, 2), [(0, 1), (1, 1)])

    exp = _exported(pool, _symbolic(("b, 12", np.float32)))
    assert "stablehlo.dynamic_reduce_window" in exp.mlir_module()
    x = np.random.default_rng(0).standard_normal((5, 12)).astype(np.float32)
    kiln_out, cpu_out = _run_exported(exp, x)
    assert_close(kiln_out, cpu_out)


def test_dynamic_rng_bit_generator_from_a_symbolic_export():
    def bits(key, x):
        _, out = lax.rng_bit_generator(key, x.shape, dtype=jnp.uint32)
        return out

    exp = _exported(bits, jax.ShapeDtypeStruct((4,), np.uint32),
                    _symbolic(("b, 4", np.float32)))
    assert "stablehlo.dynamic_rng_bit_generator" in exp.mlir_module()
    key = np.array([1, 2, 3, 4], np.uint32)
    kiln_out, cpu_out = _run_exported(exp, key, np.zeros((3, 4), np.float32))
    np.testing.assert_array_equal(kiln_out, cpu_out)


def test_dynamic_approx_top_k_from_a_symbolic_export():
    exp = _exported(lambda x: lax.approx_max_k(x, x.shape[1] // 2),
                    _symbolic(("3, 2*k", np.float32)))
    assert "stablehlo.dynamic_approx_top_k" in exp.mlir_module()
    kiln_out, cpu_out = _run_exported(exp, X[:3, :10])
    assert_close(kiln_out, cpu_out)


@pytest.fixture(scope="module")
def lapack_ready():
    from jax._src.lib import lapack
    lapack._lapack.initialize()


@pytest.mark.parametrize("layout", [(2, 1, 0), (1, 2, 0), (0, 2, 1)])
def test_lapack_call_with_a_declared_layout(lapack_ready, layout):
    # geqrf through a raw FFI call: the routine reads each matrix
    # column-major ((1, 2, 0)); other layouts reorder its input bytes.
    def qr_raw(x):
        return jax.ffi.ffi_call(
            "lapack_sgeqrf_ffi",
            (jax.ShapeDtypeStruct(x.shape, x.dtype),
             jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)),
            input_layouts=[layout], output_layouts=[layout, (1, 0)])(x)

    x = np.random.default_rng(1).standard_normal((3, 4, 4)).astype(np.float32)
    check(qr_raw, x)


def _batch_partitionable_primitive(target):
    # What jax.ffi users write for a batch-partitionable target: a primitive
    # whose lowering names the number of leading batch dimensions in the
    # call's frontend attributes.
    from jax._src import core, dispatch
    from jax._src.interpreters import mlir

    prim = core.Primitive("kiln_test_batch_partitionable")
    prim.multiple_results = True
    dispatch.simple_impl(prim)
    prim.def_abstract_eval(
        lambda x: (x, core.ShapedArray(x.shape[:-1], x.dtype)))

    def lowering(ctx, x):
        aval, = ctx.avals_in
        attrs = mlir.ir_attribute({"num_batch_dims": str(len(aval.shape) - 2)})
        return jax.ffi.ffi_lowering(
            target, extra_attributes={"mhlo.frontend_attributes": attrs})(
                ctx, x)

    for platform in ("cpu", KILN_PLATFORM):
        mlir.register_lowering(prim, lowering, platform=platform)
    return prim


@pytest.mark.skipif(NUM_DEVICES < 8 or len(jax.devices("cpu")) < 8,
                    reason="needs 8 Kiln and 8 XLA:CPU devices")
def test_batch_partitionable_call_runs_on_each_share(lapack_ready):
    target = "lapack_sgeqrf_ffi"
    jax.ffi.register_ffi_target_as_batch_partitionable(target)
    prim = _batch_partitionable_primitive(target)

    x = np.random.default_rng(2).standard_normal((8, 4, 5)).astype(np.float32)
    outs, texts = [], []
    for platform in (KILN_PLATFORM, "cpu"):
        mesh = Mesh(np.array(jax.devices(platform)[:8]), ("i",))
        sharding = NamedSharding(mesh, P("i"))
        f = jax.jit(prim.bind, out_shardings=sharding)
        xs = jax.device_put(x, sharding)
        outs.append(f(xs))
        texts.append(f.lower(xs).compile().as_text())
    for kiln_part, cpu_part in zip(*outs):
        assert kiln_part.sharding.spec == cpu_part.sharding.spec
        assert_close(np.asarray(kiln_part), np.asarray(cpu_part))
    assert "all-gather" not in texts[1]
    assert "all-gather" not in texts[0], texts[0]


@pytest.mark.skipif(NUM_DEVICES < 8 or len(jax.devices("cpu")) < 8,
                    reason="needs 8 Kiln and 8 XLA:CPU devices")
@pytest.mark.parametrize("name,f", [
    ("cholesky", lambda x: jnp.linalg.cholesky(
        x @ jnp.swapaxes(x, -1, -2) + 4 * jnp.eye(4))),
    ("qr", lambda x: jnp.linalg.qr(x)[1]),
    ("lu", lambda x: jax.scipy.linalg.lu_factor(x)[0]),
    ("eigvalsh", lambda x: jnp.linalg.eigvalsh(x + jnp.swapaxes(x, -1, -2))),
    ("svdvals", lambda x: jnp.linalg.svd(x, compute_uv=False)),
])
def test_batch_sharded_linalg_runs_on_each_share(name, f):
    # jaxlib registers its LAPACK targets as batch partitionable at start-up
    # (through the extension, for every plugin): a batch-sharded
    # decomposition runs on each device's matrices, as on XLA:CPU.
    x = np.random.default_rng(4).standard_normal((8, 4, 4)).astype(np.float32)
    outs, texts = [], []
    for platform in (KILN_PLATFORM, "cpu"):
        mesh = Mesh(np.array(jax.devices(platform)[:8]), ("i",))
        sharding = NamedSharding(mesh, P("i"))
        g = jax.jit(f, out_shardings=sharding)
        xs = jax.device_put(x, sharding)
        outs.append(g(xs))
        texts.append(g.lower(xs).compile().as_text())
    assert outs[0].sharding.spec == outs[1].sharding.spec
    assert_close(np.asarray(outs[0]), np.asarray(outs[1]), rtol=1e-4,
                 atol=1e-4)
    assert "all-gather" not in texts[1], name
    assert "all-gather" not in texts[0], (name, texts[0])
