"""JAX's linear algebra on Kiln against JAX's CPU backend, in one process.

On both backends these lower to JAX's LAPACK FFI custom calls (lapack_*_ffi),
which XLA:CPU and Kiln both run with LAPACK (Kiln calls the LAPACK of its
BLAS library, a build of the same OpenBLAS; each computes a batch's matrices
on its own threads, each matrix on one). Results that
LAPACK defines uniquely (eigenvalues, singular values, LU, Cholesky, the
Householder forms of QR, Hessenberg and tridiagonal reduction) are compared
directly; eigenvectors, singular vectors and Schur vectors, which are unique
only up to sign or phase, are checked by reconstruction.

Run with the plugin built (the default path is ../build/lib/libpjrt_kiln.so):

    KILN_PLUGIN_LIBRARY=build/lib/libpjrt_kiln.so PYTHONPATH=python \
        .venv/bin/python -m pytest python/tests/test_linalg_lapack.py -q
"""

import os

os.environ["JAX_PLATFORMS"] = "kiln,cpu"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from jax import lax  # noqa: E402

KILN = jax.devices("kiln")[0]
CPU = jax.devices("cpu")[0]

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
# Batch shapes: none and one batch dimension of two.
BATCHES = [(), (2,)]


def random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def hermitian(shape, dtype, seed=0):
    a = random(shape, dtype, seed)
    return (a + np.conj(np.swapaxes(a, -1, -2))) / 2


def positive_definite(shape, dtype, seed=0):
    a = random(shape, dtype, seed)
    n = shape[-1]
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n, dtype=dtype)


def run(fn, *args, device):
    """fn jitted on `device`; the results as NumPy arrays (a pytree)."""
    placed = [jax.device_put(a, device) for a in args]
    out = jax.jit(fn)(*placed)
    return jax.tree.map(np.asarray, out)


def both(fn, *args):
    return run(fn, *args, device=KILN), run(fn, *args, device=CPU)


def adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


def assert_close(actual, expected, tol, scale=None):
    actual = np.asarray(actual, dtype=np.complex128)
    expected = np.asarray(expected, dtype=np.complex128)
    assert actual.shape == expected.shape
    if scale is None:
        scale = max(1.0, float(np.max(np.abs(expected), initial=0)))
    err = float(np.max(np.abs(actual - expected), initial=0)) / scale
    assert err < tol, f"relative error {err:.3g} >= {tol:.3g}"


def assert_unitary(q, tol):
    k = q.shape[-1]
    assert_close(adjoint(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] +
                                                 (k, k)), tol)


def tol_of(dtype):
    return 2e-4 if np.dtype(dtype) in (np.dtype(np.float32),
                                       np.dtype(np.complex64)) else 1e-10


@pytest.fixture(autouse=True)
def x64():
    """64-bit types for these tests only (not the rest of a session)."""
    with jax.enable_x64(True):
        yield


@pytest.fixture(params=DTYPES, ids=lambda d: np.dtype(d).name)
def dtype(request):
    return request.param


@pytest.fixture(params=BATCHES, ids=lambda b: f"batch{b}")
def batch(request):
    return request.param


def test_eigh(dtype, batch):
    a = hermitian(batch + (6, 6), dtype, 1)
    (wk, vk), (wc, _) = both(jnp.linalg.eigh, a)
    tol = tol_of(dtype)
    assert_close(wk, wc, tol)
    assert_close(a @ vk, vk * wk[..., None, :], tol)
    assert_unitary(vk, tol)


def test_eig(dtype, batch):
    a = random(batch + (6, 6), dtype, 2)
    (wk, vk), (wc, _) = both(jnp.linalg.eig, a)
    tol = tol_of(dtype)
    assert_close(np.sort_complex(wk), np.sort_complex(wc), tol)
    assert_close(a @ vk, vk * wk[..., None, :], tol)
    # Unit columns, as LAPACK normalizes them.
    assert_close(np.linalg.norm(vk, axis=-2), np.ones(wk.shape), tol)


def test_eig_left_eigenvectors(dtype):
    a = random((5, 5), dtype, 3)

    def eig_left(x):
        return lax.linalg.eig(x, compute_left_eigenvectors=True,
                              compute_right_eigenvectors=False)

    (wk, vlk), (wc, _) = both(eig_left, a)
    tol = tol_of(dtype)
    assert_close(np.sort_complex(wk), np.sort_complex(wc), tol)
    # vl^H a = diag(w) vl^H.
    assert_close(adjoint(vlk) @ a, wk[:, None] * adjoint(vlk), tol)


def test_eigvals(dtype, batch):
    a = random(batch + (7, 7), dtype, 4)
    wk, wc = both(jnp.linalg.eigvals, a)
    assert_close(np.sort_complex(wk), np.sort_complex(wc), tol_of(dtype))
    # Eigenvalues alone are those eig gives with vectors, in the same order.
    wk_with_vectors = run(lambda x: jnp.linalg.eig(x)[0], a, device=KILN)
    np.testing.assert_array_equal(wk, wk_with_vectors)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd(dtype, batch, shape, full_matrices):
    a = random(batch + shape, dtype, 5)

    def svd(x):
        return jnp.linalg.svd(x, full_matrices=full_matrices)

    (uk, sk, vhk), (_, sc, _) = both(svd, a)
    tol = tol_of(dtype)
    assert_close(sk, sc, tol)
    k = min(shape)
    recon = (uk[..., :, :k] * sk[..., None, :]) @ vhk[..., :k, :]
    assert_close(recon, a, tol)
    assert_unitary(uk, tol)
    assert_unitary(adjoint(vhk), tol)
    s_only, _ = both(lambda x: jnp.linalg.svd(x, compute_uv=False), a)
    assert_close(s_only, sc, tol)


def test_svd_qr_algorithm(dtype):
    a = random((5, 3), dtype, 6)

    def svd(x):
        return lax.linalg.svd(x, algorithm=lax.linalg.SvdAlgorithm.QR)

    (uk, sk, vhk), (_, sc, _) = both(svd, a)
    tol = tol_of(dtype)
    assert_close(sk, sc, tol)
    assert_close((uk[:, :3] * sk) @ vhk, a, tol)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "raw"])
def test_qr(dtype, batch, shape, mode):
    a = random(batch + shape, dtype, 7)

    def qr(x):
        return jnp.linalg.qr(x, mode=mode)

    kiln, cpu = both(qr, a)
    tol = tol_of(dtype)
    if mode == "raw":
        # LAPACK's geqrf form is unique: compare it as is.
        assert_close(kiln[0], cpu[0], tol)
        assert_close(kiln[1], cpu[1], tol)
        return
    (qk, rk), (qc, rc) = kiln, cpu
    assert_close(qk @ rk, a, tol)
    assert_unitary(qk, tol)
    assert_close(rk, rc, tol)
    assert_close(qk, qc, tol)


def test_qr_pivoting(dtype):
    a = random((6, 4), dtype, 8)

    def qr(x):
        return jsl.qr(x, pivoting=True, mode="economic")

    (qk, rk, pk), (_, rc, pc) = both(qr, a)
    tol = tol_of(dtype)
    np.testing.assert_array_equal(pk, pc)
    assert_close(qk @ rk, a[:, pk], tol)
    assert_close(rk, rc, tol)


def test_cholesky(dtype, batch):
    a = positive_definite(batch + (5, 5), dtype, 9)
    lk, lc = both(jnp.linalg.cholesky, a)
    tol = tol_of(dtype)
    assert_close(lk, lc, tol)
    assert_close(lk @ adjoint(lk), a, tol)


def test_cholesky_of_indefinite_matrix_is_nan(dtype):
    a = -np.eye(3, dtype=dtype)
    lk, lc = both(jnp.linalg.cholesky, a)
    # info > 0 makes JAX replace the factor with NaNs (then take its tril).
    assert np.all(np.isnan(np.tril(lk).real[np.tril_indices(3)]))
    np.testing.assert_array_equal(np.isnan(lk), np.isnan(lc))


def test_lu(dtype, batch):
    a = random(batch + (5, 5), dtype, 10)
    # jax.scipy.linalg.lu takes one matrix; vmap makes the batch.
    kiln, cpu = both(jax.vmap(jsl.lu) if batch else jsl.lu, a)
    tol = tol_of(dtype)
    for k, c in zip(kiln, cpu):
        assert_close(k, c, tol)
    p, l, u = kiln
    assert_close(p @ l @ u, a, tol)


def test_lu_rectangular(dtype):
    a = random((6, 4), dtype, 11)
    kiln, cpu = both(lax.linalg.lu, a)
    tol = tol_of(dtype)
    assert_close(kiln[0], cpu[0], tol)
    np.testing.assert_array_equal(kiln[1], cpu[1])
    np.testing.assert_array_equal(kiln[2], cpu[2])


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (40, 40)])
def test_lu_permutation_is_one_native_call(shape):
    # Kiln's plugin lowers lu_pivots_to_permutation to one custom call (not
    # JAX's generic loop of one swap per pivot); the permutation is
    # XLA:CPU's, and it is the one the pivots' swaps make.
    a = random((3,) + shape, np.float32, 15)
    fn = jax.vmap(lax.linalg.lu)
    text = jax.jit(fn).lower(jax.device_put(a, KILN)).as_text()
    assert "kiln_lu_pivots_to_permutation" in text
    assert "stablehlo.while" not in text
    (_, pk, permk), (_, pc, permc) = both(fn, a)
    np.testing.assert_array_equal(pk, pc)
    np.testing.assert_array_equal(permk, permc)
    for pivots, perm in zip(pk, permk):
        want = np.arange(shape[0])
        for i, p in enumerate(pivots):
            want[[i, p]] = want[[p, i]]
        np.testing.assert_array_equal(perm, want)


def test_solve_inv_det_slogdet(dtype, batch):
    a = random(batch + (5, 5), dtype, 12) + 3 * np.eye(5, dtype=dtype)
    b = random(batch + (5, 2), dtype, 13)
    tol = tol_of(dtype)
    xk, xc = both(jnp.linalg.solve, a, b)
    assert_close(xk, xc, tol)
    assert_close(a @ xk, b, tol)
    ik, ic = both(jnp.linalg.inv, a)
    assert_close(ik, ic, tol)
    dk, dc = both(jnp.linalg.det, a)
    assert_close(dk, dc, tol, scale=max(1.0, float(np.max(np.abs(dc)))))
    (sk, lk), (sc, lc) = both(jnp.linalg.slogdet, a)
    assert_close(sk, sc, tol)
    assert_close(lk, lc, tol)


def test_solve_triangular(dtype):
    a = np.tril(random((5, 5), dtype, 14)) + 3 * np.eye(5, dtype=dtype)
    b = random((5, 3), dtype, 15)
    tol = tol_of(dtype)
    for trans in (0, 1, 2):
        def solve(x, y):
            return jsl.solve_triangular(x, y, lower=True, trans=trans)
        xk, xc = both(solve, a, b)
        assert_close(xk, xc, tol)


def test_schur(dtype, batch):
    a = random(batch + (6, 6), dtype, 16)
    (tk, zk), (tc, _) = both(lambda x: lax.linalg.schur(x), a)
    tol = tol_of(dtype)
    assert_close(zk @ tk @ adjoint(zk), a, tol)
    assert_unitary(zk, tol)
    # Triangular (real types: quasi-triangular, 2x2 blocks for complex pairs).
    assert np.all(np.tril(tk, -2) == 0)
    if np.issubdtype(dtype, np.complexfloating):
        assert np.all(np.tril(tk, -1) == 0)

    def eigenvalues(t):
        return np.sort_complex(np.linalg.eigvals(t).ravel())

    assert_close(eigenvalues(tk), eigenvalues(tc), tol)


def test_scipy_schur(dtype):
    a = random((5, 5), dtype, 17)
    (tk, zk), _ = both(jsl.schur, a)
    tol = tol_of(dtype)
    assert_close(zk @ tk @ adjoint(zk), a, tol)


@pytest.mark.parametrize("calc_q", [False, True])
def test_hessenberg(dtype, calc_q):
    a = random((6, 6), dtype, 18)
    kiln, cpu = both(lambda x: jsl.hessenberg(x, calc_q=calc_q), a)
    tol = tol_of(dtype)
    for k, c in zip(jax.tree.leaves(kiln), jax.tree.leaves(cpu)):
        assert_close(k, c, tol)
    if calc_q:
        h, q = kiln
        assert_close(q @ h @ adjoint(q), a, tol)


@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal(dtype, batch, lower):
    a = hermitian(batch + (6, 6), dtype, 19)
    kiln, cpu = both(lambda x: lax.linalg.tridiagonal(x, lower=lower), a)
    tol = tol_of(dtype)
    for k, c in zip(kiln, cpu):
        assert_close(k, c, tol)


@pytest.mark.parametrize("perturb_singular", [False, True])
def test_tridiagonal_solve(dtype, perturb_singular):
    n = 6
    dl, d, du = (random((n,), dtype, s) for s in (20, 21, 22))
    d = d + 3
    b = random((n, 2), dtype, 23)

    def solve(dl, d, du, b):
        return lax.linalg.tridiagonal_solve(dl, d, du, b,
                                            perturb_singular=perturb_singular)

    xk, xc = both(solve, dl, d, du, b)
    assert_close(xk, xc, tol_of(dtype))
