"""Linear algebra: cholesky, triangular_solve, lu, qr, svd, eigh, inv, solve,
det, slogdet.

JAX lowers the decompositions on `cpu` to LAPACK custom calls; Kiln takes the
same lowering and implements those targets. Factors that are unique up to
signs (QR, SVD, eigh) are compared through the identities they satisfy and
through their unique parts; the rest are compared directly.
"""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
from jax import lax

from conftest import assert_close, check, random_array, run_both

F32_TOL = dict(rtol=1e-4, atol=1e-4)


def _spd(n, dtype=np.float32, seed=0):
    a = random_array((n, n), np.float64, seed=seed, low=-1, high=1)
    return (a @ a.T + n * np.eye(n)).astype(dtype)


def _well_conditioned(shape, dtype=np.float32, seed=0):
    a = random_array(shape, np.float64, seed=seed, low=-1, high=1)
    return (a + shape[-1] * np.eye(shape[-1])).astype(dtype)


def test_cholesky():
    a = _spd(5, seed=1)
    check(jnp.linalg.cholesky, a, **F32_TOL)
    check(lambda m: jsl.cholesky(m, lower=False), a, **F32_TOL)
    batch = np.stack([_spd(4, seed=2), _spd(4, seed=3)])
    check(jnp.linalg.cholesky, batch, **F32_TOL)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [False, True])
def test_triangular_solve(left_side, lower, transpose_a):
    a = _well_conditioned((4, 4), seed=4)
    a = np.tril(a) if lower else np.triu(a)
    b = random_array((4, 3) if left_side else (3, 4), np.float32, seed=5)
    check(lambda m, r: lax.linalg.triangular_solve(
        m, r, left_side=left_side, lower=lower, transpose_a=transpose_a),
        a, b, **F32_TOL)


def test_solve_triangular_unit_diagonal():
    a = np.tril(_well_conditioned((5, 5), seed=6))
    b = random_array((5, 2), np.float32, seed=7)
    check(lambda m, r: jsl.solve_triangular(m, r, lower=True,
                                            unit_diagonal=True), a, b,
          **F32_TOL)


def test_lu():
    # Partial pivoting picks a unique permutation when pivots do not tie.
    a = random_array((5, 5), np.float32, seed=8)
    check(lambda m: jsl.lu(m), a, **F32_TOL)
    check(lambda m: lax.linalg.lu(m), a, **F32_TOL)
    check(lambda m: jsl.lu_factor(m), a, **F32_TOL)
    rect = random_array((4, 6), np.float32, seed=9)
    check(lambda m: lax.linalg.lu(m), rect, **F32_TOL)


def test_qr():
    a = random_array((6, 4), np.float32, seed=10)

    def parts(m):
        q, r = jnp.linalg.qr(m)
        return {"q_r": q @ r, "q_t_q": q.T @ q, "abs_r": jnp.abs(r),
                "lower_of_r": jnp.tril(r, -1)}

    check(parts, a, **F32_TOL)
    k, _ = run_both(parts, a)
    np.testing.assert_allclose(k["q_r"], a, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(k["q_t_q"], np.eye(4), atol=1e-5)
    assert not np.any(k["lower_of_r"])
    check(lambda m: jnp.abs(jnp.linalg.qr(m, mode="r")), a, **F32_TOL)
    check(lambda m: jnp.abs(jnp.linalg.qr(m.T, mode="complete")[1]), a,
          **F32_TOL)


def test_svd():
    a = random_array((5, 3), np.float32, seed=11)

    def parts(m):
        u, s, vt = jnp.linalg.svd(m, full_matrices=False)
        return {"s": s, "usv": (u * s) @ vt, "u_t_u": u.T @ u,
                "v_v_t": vt @ vt.T, "s_only": jnp.linalg.svd(m, compute_uv=False)}

    check(parts, a, **F32_TOL)
    k, _ = run_both(parts, a)
    np.testing.assert_allclose(k["usv"], a, rtol=1e-4, atol=1e-4)
    check(lambda m: jnp.linalg.svd(m)[1], a.T, **F32_TOL)  # full matrices, wide


def test_eigh():
    a = _spd(5, seed=12)

    def parts(m):
        w, v = jnp.linalg.eigh(m)
        return {"w": w, "av_minus_vw": m @ v - v * w, "v_t_v": v.T @ v,
                "w_only": jnp.linalg.eigvalsh(m)}

    check(parts, a, **F32_TOL)
    k, _ = run_both(parts, a)
    assert np.max(np.abs(k["av_minus_vw"])) < 1e-4
    # UPLO="U" reads the other triangle.
    check(lambda m: jnp.linalg.eigh(m, UPLO="U")[0], a, **F32_TOL)


def test_inv_solve():
    a = _well_conditioned((4, 4), seed=13)
    b = random_array((4, 2), np.float32, seed=14)
    check(lambda m, r: {"inv": jnp.linalg.inv(m),
                        "solve": jnp.linalg.solve(m, r),
                        "solve_vec": jnp.linalg.solve(m, r[:, 0]),
                        "scipy_solve": jsl.solve(m, r),
                        "cho_solve": jsl.cho_solve(jsl.cho_factor(m @ m.T), r)},
          a, b, **F32_TOL)


def test_det_slogdet():
    a = random_array((4, 4), np.float32, seed=15)
    batch = random_array((3, 3, 3), np.float32, seed=16)
    check(lambda m, bm: {"det": jnp.linalg.det(m),
                         "slogdet": jnp.linalg.slogdet(m),
                         "batch_det": jnp.linalg.det(bm),
                         "singular": jnp.linalg.det(jnp.ones((3, 3)))},
          a, batch, **F32_TOL)


def test_linalg_gradients():
    a = _spd(4, seed=17)
    check(jax.grad(lambda m: jnp.sum(jnp.linalg.cholesky(m))), a, **F32_TOL)
    check(jax.grad(lambda m: jnp.linalg.slogdet(m)[1]), a, **F32_TOL)


def test_linalg_x64():
    with jax.enable_x64(True):
        a = _spd(5, np.float64, seed=18)
        b = random_array((5, 2), np.float64, seed=19)
        k, c = run_both(lambda m, r: {
            "cholesky": jnp.linalg.cholesky(m),
            "solve": jnp.linalg.solve(m, r),
            "eigvalsh": jnp.linalg.eigvalsh(m),
            "svdvals": jnp.linalg.svd(m, compute_uv=False),
            "det": jnp.linalg.det(m)}, a, b)
        assert_close(k, c, rtol=1e-10, atol=1e-10)
