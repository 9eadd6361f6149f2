"""The accuracy of JAX's linear algebra on Kiln, on matrices that are hard.

Kiln runs JAX's LAPACK targets through the LAPACK of its BLAS library
(docs/exec.md, "Libraries"). These tests hold each decomposition to what
makes it correct, on random, ill-conditioned, rank-deficient, non-normal
and graded matrices in f32, f64, c64 and c128:

- backward error: |A - QR|, |A - U S V^H|, |A V - V diag(w)|, |A - P L U|,
  |A - L L^H|, |A - Z T Z^H| relative to |A| * eps * n;
- orthogonality of Q, U, V and Z: |Q^H Q - I| relative to eps * n;
- values against SciPy's (computed here in float64 or complex128 from the
  same input): singular values and Hermitian eigenvalues, which perturb by
  at most |dA| and so can be compared on any matrix, to |A| * eps * n;
- NaN: for a matrix that carries a NaN, every result is NaN exactly where
  XLA:CPU's is (in the same process), which is where JAX's info convention
  puts it.

Run with the plugin built:

    KILN_PLUGIN_LIBRARY=build/lib/libpjrt_kiln.so \\
        .venv/bin/python -m pytest python/tests/test_linalg_accuracy.py -q
"""

import os

os.environ["JAX_PLATFORMS"] = "kiln,cpu"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.linalg  # noqa: E402
from jax import lax  # noqa: E402

KILN = jax.devices("kiln")[0]
CPU = jax.devices("cpu")[0]

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
KINDS = ["random", "ill_conditioned", "rank_deficient", "non_normal", "graded"]
N = 24

# Backward errors and orthogonality within this many units of eps * n: a
# backward-stable LAPACK routine sits at a few, a wrong one at 1 / eps.
BOUND = 20


@pytest.fixture(autouse=True)
def x64():
    """64-bit types for these tests only (not the rest of a session)."""
    with jax.enable_x64(True):
        yield


def eps(dtype):
    return float(np.finfo(dtype).eps)


def wide(dtype):
    """The float64 or complex128 type SciPy's references compute in."""
    return np.complex128 if np.issubdtype(dtype, np.complexfloating) \
        else np.float64


def gaussian(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x


def unitary(rng, n, dtype):
    q, _ = np.linalg.qr(gaussian(rng, (n, n), dtype))
    return q


def matrix(kind, dtype, shape=(N, N), seed=0):
    """A test matrix of the given kind, rounded to dtype."""
    rng = np.random.default_rng([seed, KINDS.index(kind)])
    m, n = shape
    k = min(m, n)
    if kind == "random":
        a = gaussian(rng, shape, dtype)
    elif kind in ("ill_conditioned", "rank_deficient"):
        # U diag(s) V^H with singular values over the type's whole range,
        # or half of them zero.
        if kind == "ill_conditioned":
            s = np.logspace(0, np.log10(eps(dtype)) + 1, k)
        else:
            s = np.concatenate([np.linspace(1, 0.5, k - k // 2),
                                np.zeros(k // 2)])
        u = unitary(rng, m, dtype)[:, :k]
        v = unitary(rng, n, dtype)[:, :k]
        a = (u * s) @ v.conj().T
    elif kind == "non_normal":
        # Far from normal: a triangle whose off-diagonal dwarfs its
        # diagonal, turned by a similarity so that it is dense.
        t = np.triu(gaussian(rng, (n, n), dtype) * 100, 1) + np.diag(
            np.arange(1, n + 1) / n)
        q = unitary(rng, n, dtype)
        a = (q @ t @ q.conj().T)[:m, :n]
    else:
        # Rows and columns scaled over twelve orders of magnitude (six for
        # single precision).
        span = 12 if np.finfo(dtype).bits == 64 else 6
        r = np.logspace(0, span / 2, m)
        c = np.logspace(0, -span / 2, n)
        a = r[:, None] * gaussian(rng, shape, dtype) * c[None, :]
    return a.astype(dtype)


def hermitian(kind, dtype, seed=0):
    a = matrix(kind, dtype, seed=seed).astype(wide(dtype))
    return ((a + a.conj().T) / 2).astype(dtype)


def positive_definite(kind, dtype, seed=0):
    a = matrix(kind, dtype, seed=seed).astype(wide(dtype))
    return (a @ a.conj().T + np.eye(N) * eps(dtype) * N *
            np.linalg.norm(a, 2) ** 2).astype(dtype)


def on(device, fn, *args):
    placed = [jax.device_put(a, device) for a in args]
    return jax.tree.map(np.asarray, jax.jit(fn)(*placed))


def kiln(fn, *args):
    return on(KILN, fn, *args)


def norm(x):
    return float(np.linalg.norm(np.asarray(x, dtype=np.complex128)))


def assert_backward(residual, a, dtype, what):
    """|residual| <= BOUND * eps * n * |a| (Frobenius norms)."""
    n = max(a.shape[-2:])
    error = norm(residual) / (max(norm(a), np.finfo(dtype).tiny) * eps(dtype)
                              * n)
    assert error < BOUND, f"{what}: backward error {error:.3g} eps * n * |A|"


def assert_orthonormal_columns(q, dtype, what):
    q = q.astype(np.complex128)
    k = q.shape[-1]
    error = norm(q.conj().T @ q - np.eye(k)) / (eps(dtype) * max(q.shape))
    assert error < BOUND, f"{what}: |Q^H Q - I| is {error:.3g} eps * n"


def assert_values(actual, expected, a, dtype, what):
    """Values that move by at most |dA|: within BOUND * eps * n * |A|."""
    actual = np.asarray(actual, dtype=np.float64)
    scale = norm(a) * eps(dtype) * N
    error = float(np.max(np.abs(actual - expected), initial=0)) / scale
    assert error < BOUND, f"{what}: off SciPy's by {error:.3g} eps * n * |A|"


@pytest.fixture(params=DTYPES, ids=lambda d: np.dtype(d).name)
def dtype(request):
    return request.param


@pytest.fixture(params=KINDS)
def kind(request):
    return request.param


@pytest.mark.parametrize("shape", [(N, N), (N + 8, N), (N, N + 8)])
def test_qr(dtype, kind, shape):
    a = matrix(kind, dtype, shape)
    q, r = kiln(lambda x: jnp.linalg.qr(x), a)
    assert_backward(a - q.astype(np.complex128) @ r, a, dtype, "A - QR")
    assert_orthonormal_columns(q, dtype, "Q")
    assert np.all(np.tril(r, -1) == 0)


def test_qr_pivoted(dtype, kind):
    a = matrix(kind, dtype)
    q, r, p = kiln(lambda x: jsl.qr(x, pivoting=True), a)
    assert_backward(a[:, p] - q.astype(np.complex128) @ r, a, dtype,
                    "A P - QR")
    assert_orthonormal_columns(q, dtype, "Q")
    # Pivoting orders R's diagonal by magnitude (to rounding).
    d = np.abs(np.diag(r))
    assert np.all(d[1:] <= d[:-1] * (1 + 1e3 * eps(dtype)) + norm(a) * eps(
        dtype) * N)


@pytest.mark.parametrize("shape", [(N, N), (N + 8, N), (N, N + 8)])
@pytest.mark.parametrize("algorithm", ["default", "qr"])
def test_svd(dtype, kind, shape, algorithm):
    a = matrix(kind, dtype, shape)
    chosen = (lax.linalg.SvdAlgorithm.QR if algorithm == "qr" else
              lax.linalg.SvdAlgorithm.DEFAULT)
    u, s, vh = kiln(lambda x: lax.linalg.svd(x, full_matrices=False,
                                             algorithm=chosen), a)
    assert_backward(a - (u.astype(np.complex128) * s) @ vh, a, dtype,
                    "A - U S V^H")
    assert_orthonormal_columns(u, dtype, "U")
    assert_orthonormal_columns(vh.conj().T, dtype, "V")
    expected = scipy.linalg.svdvals(a.astype(wide(dtype)))
    assert_values(s, expected, a, dtype, "singular values")
    assert np.all(np.diff(s) <= 0), "singular values not descending"


def test_eigh(dtype, kind):
    a = hermitian(kind, dtype)
    w, v = kiln(jnp.linalg.eigh, a)
    assert_backward(a @ v.astype(np.complex128) - v * w, a, dtype,
                    "A V - V diag(w)")
    assert_orthonormal_columns(v, dtype, "V")
    expected = scipy.linalg.eigvalsh(a.astype(wide(dtype)))
    assert_values(w, expected, a, dtype, "eigenvalues")


def test_eig(dtype, kind):
    a = matrix(kind, dtype)
    w, v = kiln(jnp.linalg.eig, a)
    assert_backward(a @ v - v * w, a, dtype, "A V - V diag(w)")
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1,
                               rtol=10 * N * eps(dtype))
    # The eigenvalues' sum is the trace, however ill-conditioned each is.
    assert abs(np.sum(w.astype(np.complex128)) - np.trace(
        a.astype(np.complex128))) <= BOUND * eps(dtype) * N * norm(a)


def test_schur(dtype, kind):
    a = matrix(kind, dtype)
    t, z = kiln(jsl.schur, a)
    assert_backward(a - z.astype(np.complex128) @ t @ z.conj().T, a, dtype,
                    "A - Z T Z^H")
    assert_orthonormal_columns(z, dtype, "Z")
    assert np.all(np.tril(t, -2) == 0)


def test_hessenberg(dtype, kind):
    a = matrix(kind, dtype)
    h, q = kiln(lambda x: jsl.hessenberg(x, calc_q=True), a)
    assert_backward(a - q.astype(np.complex128) @ h @ q.conj().T, a, dtype,
                    "A - Q H Q^H")
    assert_orthonormal_columns(q, dtype, "Q")
    assert np.all(np.tril(h, -2) == 0)


def test_lu(dtype, kind):
    a = matrix(kind, dtype)
    p, l, u = kiln(jsl.lu, a)
    # Partial pivoting's backward error grows with the pivots' growth
    # factor, |L| |U| / |A|: bounded by it, not by |A| alone.
    growth = norm(np.abs(l) @ np.abs(u)) / norm(a)
    assert_backward((a - p @ l.astype(np.complex128) @ u) / growth, a, dtype,
                    "(A - P L U) / growth")
    # Complex pivots are chosen by |re| + |im| (LAPACK's CABS1), which
    # bounds |l| by sqrt(2) rather than 1.
    bound = np.sqrt(2) if np.issubdtype(dtype, np.complexfloating) else 1
    assert np.all(np.abs(l) <= bound * (1 + eps(dtype))), \
        "a pivot was not the largest"


def test_cholesky(dtype, kind):
    a = positive_definite(kind, dtype)
    l = kiln(jnp.linalg.cholesky, a)
    assert not np.any(np.isnan(l)), "a positive definite matrix failed"
    assert_backward(a - l.astype(np.complex128) @ l.conj().T, a, dtype,
                    "A - L L^H")


def test_solve(dtype, kind):
    a = matrix(kind, dtype) + np.eye(N, dtype=dtype)
    b = matrix("random", dtype, (N, 3), seed=1)
    x = kiln(jnp.linalg.solve, a, b)
    # Backward error of the solution: |b - A x| / (|A| |x|).
    residual = b - a.astype(np.complex128) @ x
    error = norm(residual) / (norm(a) * norm(x) * eps(dtype) * N)
    assert error < BOUND, f"|b - A x| is {error:.3g} eps * n * |A| |x|"


OPS = {
    "qr": lambda x: jnp.linalg.qr(x),
    "svd": lambda x: jnp.linalg.svd(x),
    "svd values": lambda x: jnp.linalg.svd(x, compute_uv=False),
    "eigh": lambda x: jnp.linalg.eigh(x + x.conj().T),
    "eig": jnp.linalg.eig,
    "eigvals": jnp.linalg.eigvals,
    "schur": jsl.schur,
    "lu": jsl.lu,
    "cholesky": lambda x: jnp.linalg.cholesky(x @ x.conj().T),
    "solve": lambda x: jnp.linalg.solve(x, x[:, :2]),
    "hessenberg": lambda x: jsl.hessenberg(x, calc_q=True),
}


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("where", ["corner", "all"])
def test_nan_is_where_xla_cpu_puts_it(dtype, op, where):
    a = matrix("random", dtype, (6, 6))
    if where == "all":
        a[:] = np.nan
    else:
        a[-1, 0] = np.nan
    on_kiln = jax.tree.leaves(kiln(OPS[op], a))
    on_cpu = jax.tree.leaves(on(CPU, OPS[op], a))
    for k, c in zip(on_kiln, on_cpu):
        np.testing.assert_array_equal(np.isnan(k), np.isnan(c),
                                      err_msg=f"{op}: NaN elements differ")
    assert any(np.isnan(k).any() for k in on_kiln), f"{op}: no NaN out"
