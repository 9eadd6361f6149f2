"""Programs exported by JAX for GPUs, run on Kiln.

`jax.export` lowers a function for `cuda` or `rocm` without a GPU; the
exported module holds the custom calls JAX's GPU rules emit (cuSOLVER and
hipSOLVER FFI targets, lu_pivots_to_permutation, threefry2x32). Each test
exports for a GPU platform (with the platform check disabled so that the
module may be called on Kiln), checks that the expected targets are in the
module, calls it on Kiln and compares with the same function jitted on
XLA:CPU (or, for factorizations whose factors are not unique, with the
properties that define them).
"""

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import assert_close, cpu_device, kiln_device

_GPU_PLATFORMS = ("cuda", "rocm")


def _plain(fn):
    """`fn` with named-tuple results (QRResult, SVDResult) as plain tuples,
    which jax.export serializes."""
    def wrapped(*args):
        out = fn(*args)
        return tuple(out) if isinstance(out, tuple) else out
    return wrapped


def _export_for(platform, fn, *args):
    exported = jax.export.export(
        jax.jit(_plain(fn)), platforms=[platform],
        disabled_checks=[jax.export.DisabledSafetyCheck.platform()])(*args)
    text = exported.mlir_module()
    # Through bytes, as a saved export is read back.
    return jax.export.deserialize(exported.serialize()), text


def _call_on_kiln(exported, *args):
    out = exported.call(*[jax.device_put(a, kiln_device()) for a in args])
    return jax.tree.map(np.asarray, out)


def _cpu(fn, *args):
    out = jax.jit(_plain(fn))(*[jax.device_put(a, cpu_device()) for a in args])
    return jax.tree.map(np.asarray, out)


def _matrix(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _prefix(platform):
    return "cusolver" if platform == "cuda" else "hipsolver"


@pytest.mark.parametrize("platform", _GPU_PLATFORMS)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (6, 4)])
def test_lu_export_matches_cpu(platform, shape):
    a = _matrix(shape, np.float32, 1)
    fn = jax.lax.linalg.lu
    exported, text = _export_for(platform, fn, a)
    assert f"{_prefix(platform)}_getrf_ffi" in text
    if len(shape) > 2:
        short = "cu" if platform == "cuda" else "hip"
        assert f"{short}_lu_pivots_to_permutation" in text
    lu, pivots, perm = _call_on_kiln(exported, a)
    lu_c, pivots_c, perm_c = _cpu(fn, a)
    np.testing.assert_array_equal(pivots, pivots_c)
    np.testing.assert_array_equal(perm, perm_c)
    assert_close(lu, lu_c, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("platform", _GPU_PLATFORMS)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3)])
def test_qr_export_factors_a(platform, dtype, shape):
    a = _matrix(shape, dtype, 2)
    exported, text = _export_for(platform, jnp.linalg.qr, a)
    assert f"{_prefix(platform)}_geqrf_ffi" in text
    assert f"{_prefix(platform)}_orgqr_ffi" in text
    q, r = _call_on_kiln(exported, a)
    q_c, r_c = _cpu(jnp.linalg.qr, a)
    # Householder QR gives LAPACK's factors: the same as XLA:CPU's.
    assert_close(q, q_c, rtol=1e-4, atol=1e-5)
    assert_close(r, r_c, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("platform", _GPU_PLATFORMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_export_matches_cpu(platform, dtype):
    b = _matrix((2, 5, 5), dtype, 3)
    a = b @ np.swapaxes(b, -1, -2) + 5 * np.eye(5, dtype=dtype)
    exported, text = _export_for(platform, jnp.linalg.cholesky, a)
    assert f"{_prefix(platform)}_potrf_ffi" in text
    assert_close(_call_on_kiln(exported, a), _cpu(jnp.linalg.cholesky, a),
                 rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-5)


@pytest.mark.parametrize("platform", _GPU_PLATFORMS)
@pytest.mark.parametrize("n", [4, 40])
def test_eigh_export_gives_eigenpairs(platform, n):
    b = _matrix((n, n), np.float32, 4)
    a = (b + b.T) / 2
    exported, text = _export_for(platform, jnp.linalg.eigh, a)
    assert f"{_prefix(platform)}_syevd_ffi" in text
    w, v = _call_on_kiln(exported, a)
    w_c, _ = _cpu(jnp.linalg.eigh, a)
    assert_close(w, w_c, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(a.astype(np.float64) @ v, v * w, atol=1e-4)
    np.testing.assert_allclose(v.T @ v, np.eye(n), atol=1e-5)


@pytest.mark.parametrize("platform", _GPU_PLATFORMS)
@pytest.mark.parametrize("shape,full", [((5, 3), True), ((3, 5), True),
                                        ((40, 34), False), ((2, 4, 4), True)])
def test_svd_export_gives_a_factorization(platform, shape, full):
    a = _matrix(shape, np.float32, 5)
    fn = lambda x: jnp.linalg.svd(x, full_matrices=full)  # noqa: E731
    exported, text = _export_for(platform, fn, a)
    assert f"{_prefix(platform)}_gesvd" in text
    u, s, vt = _call_on_kiln(exported, a)
    _, s_c, _ = _cpu(fn, a)
    assert_close(s, s_c, rtol=1e-4, atol=1e-4)
    k = min(shape[-2:])
    recon = (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :]
    np.testing.assert_allclose(recon, a, atol=1e-4)
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u,
                               np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2]
                                               + (u.shape[-1],) * 2),
                               atol=1e-5)


@pytest.mark.parametrize("platform", ["cuda"])
def test_svd_without_vectors_export(platform):
    a = _matrix((6, 4), np.float32, 6)
    fn = lambda x: jnp.linalg.svd(x, compute_uv=False)  # noqa: E731
    exported, text = _export_for(platform, fn, a)
    assert "cusolver_gesvdj_ffi" in text
    assert_close(_call_on_kiln(exported, a), _cpu(fn, a), rtol=1e-4,
                 atol=1e-4)


@pytest.mark.parametrize("platform", _GPU_PLATFORMS)
def test_tridiagonal_export_matches_cpu(platform):
    b = _matrix((5, 5), np.float32, 7)
    a = b + b.T
    fn = jax.lax.linalg.tridiagonal
    exported, text = _export_for(platform, fn, a)
    assert f"{_prefix(platform)}_sytrd_ffi" in text
    assert_close(_call_on_kiln(exported, a), _cpu(fn, a), rtol=1e-4,
                 atol=1e-5)


@contextlib.contextmanager
def _threefry_gpu_kernel():
    previous = jax.config.jax_threefry_gpu_kernel_lowering
    jax.config.update("jax_threefry_gpu_kernel_lowering", True)
    try:
        yield
    finally:
        jax.config.update("jax_threefry_gpu_kernel_lowering", previous)


@pytest.mark.parametrize("platform", _GPU_PLATFORMS)
def test_threefry_export_is_bitwise_cpu_random(platform):
    def fn(seed):
        key = jax.random.key(seed)
        k1, k2 = jax.random.split(key)
        return (jax.random.bits(k1, (3, 7)), jax.random.uniform(k2, (5,)),
                jax.random.normal(key, (2, 2)))
    seed = np.uint32(1234)
    with _threefry_gpu_kernel():
        exported, text = _export_for(platform, fn, seed)
    short = "cu" if platform == "cuda" else "hip"
    assert f"{short}_threefry2x32_ffi" in text
    got = _call_on_kiln(exported, seed)
    want = _cpu(fn, seed)
    # The random bits (and the uniform floats made from them) are exact;
    # the normals go through erf_inv, whose last bit may differ.
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert_close(got[2], want[2])


def test_exported_shape_assertions_hold_on_kiln():
    b, = jax.export.symbolic_shape("b")
    fn = lambda x: x[:, :1].sum() * x.shape[0]  # noqa: E731
    exported = jax.export.export(jax.jit(fn), platforms=["cuda"],
        disabled_checks=[jax.export.DisabledSafetyCheck.platform()])(
            jax.ShapeDtypeStruct((2 * b, 4), np.float32))
    assert "shape_assertion" in exported.mlir_module()
    x = np.ones((6, 4), np.float32)
    np.testing.assert_allclose(_call_on_kiln(exported, x), 36.0)
