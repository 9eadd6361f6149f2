"""JAX's recorded exports, run on Kiln against the results they recorded.

JAX keeps, for its backward-compatibility tests, serialized programs that it
exported on real CPUs, GPUs (cuda, rocm) and TPUs, with their inputs and the
outputs those machines computed (`jax._src.internal_test_util.
export_back_compat_test_data`, shipped in the jax wheel). They carry the
custom calls real exports use: the LAPACK FFI, cuSOLVER and hipSOLVER (FFI
and legacy descriptor forms), threefry2x32, lu_pivots_to_permutation,
cusparse gtsv2, shape_assertion, the dynamic StableHLO targets, XLA's
ApproxTopK, Qr, ProductOfElementaryHouseholderReflectors, Eigh and
LuDecomposition (XLA's TPU target, which XLA:CPU does not run), and the
sharding markers. Each test calls one recorded program on Kiln (the
platform check disabled, as a user running a GPU export on a CPU would)
and compares with the recorded outputs: an independent reference, computed
by cuSOLVER, rocSOLVER, LAPACK or a TPU when the data was recorded.

Where a decomposition's factors are not unique (eigenvectors, singular
vectors: signs and phases), the test checks what defines them against the
recorded ones: the same eigenvalues or singular values, orthonormal
factors, and the same matrix rebuilt from them.
"""

import importlib
import pkgutil

import numpy as np
import pytest

import jax
from jax import export
from jax._src import core, tree_util
from jax._src.export import _export, shape_poly
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from conftest import KILN_PLATFORM, NUM_DEVICES, cpu_device, kiln_device

try:
    import jax._src.internal_test_util.export_back_compat_test_data as _data
except ImportError:  # pragma: no cover - the pinned jax ships it
    _data = None


def _walk(name, value):
    if isinstance(value, dict) and "testdata_version" in value:
        yield name, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _walk(f"{name}[{key}]", inner)


def _datasets():
    if _data is None:
        return []
    found = []
    for info in pkgutil.iter_modules(_data.__path__):
        if info.ispkg:
            continue
        module = importlib.import_module(f"{_data.__name__}.{info.name}")
        for attr in sorted(dir(module)):
            if attr == "data" or attr.startswith("data_"):
                found.extend(_walk(f"{info.name}/{attr}",
                                   getattr(module, attr)))
    return found


_DATASETS = dict(_datasets())

# The symbolic input shapes the recordings were exported with (JAX's tests
# pass them the same way); the names must be the exporter's.
_POLYMORPHIC = {
    "stablehlo_dynamic_approx_top_k": ("b + 4",),
    "stablehlo_dynamic_rng_bit_generator": (None, "b0, b1"),
    "stablehlo_dynamic_top_k": ("4, b",),
    "tpu_stablehlo_dynamic_reduce_window": ("b, ...", "b, ..."),
}


# Recordings whose outputs depend on the backend that recorded them: the
# reducer is not associative and the init values are not its identities, so
# the result depends on the reduction order (StableHLO leaves it to the
# implementation). These are compared with XLA:CPU instead.
_BACKEND_DEFINED = {
    "tpu_stablehlo_dynamic_reduce_window/data_variadic_2023_06_17",
}


def _leaves(tree):
    return [np.asarray(a) for a in jax.tree.leaves(tree)]


def _exported(name, data):
    inputs = data["inputs"]
    specs = inputs
    poly = _POLYMORPHIC.get(name.split("/")[0])
    if poly is not None:
        specs = shape_poly.symbolic_args_specs(inputs, poly[:len(inputs)])
    to_aval = lambda a: core.ShapedArray(a.shape, a.dtype)
    in_avals, in_tree = tree_util.tree_flatten(
        (tree_util.tree_map(to_aval, specs), {}))
    out_avals, out_tree = tree_util.tree_flatten(
        tree_util.tree_map(lambda a: to_aval(np.asarray(a)),
                           data["expected_outputs"]))
    n_in, n_out = len(in_avals), len(out_avals)
    return _export.Exported(
        fun_name=name, in_tree=in_tree, in_avals=tuple(in_avals),
        out_tree=out_tree, out_avals=tuple(out_avals),
        _has_named_shardings=True,
        _in_named_shardings=(None,) * n_in,
        _out_named_shardings=(None,) * n_out,
        in_shardings_hlo=(None,) * n_in, out_shardings_hlo=(None,) * n_out,
        platforms=(data["platform"],), ordered_effects=(),
        unordered_effects=(),
        disabled_safety_checks=(export.DisabledSafetyCheck.platform(),),
        mlir_module_serialized=data["mlir_module_serialized"],
        calling_convention_version=data["xla_call_module_version"],
        nr_devices=data.get("nr_devices", 1),
        module_kept_var_idx=tuple(range(n_in)),
        uses_global_constants=any(not core.is_constant_shape(a.shape)
                                  for a in in_avals),
        _get_vjp=None)


def _run(name, data, platform):
    devices = data.get("nr_devices", 1)
    if devices == 1:
        device = kiln_device() if platform == KILN_PLATFORM else cpu_device()
        place = lambda a: jax.device_put(a, device)
    else:
        mesh = Mesh(np.array(jax.devices(platform)[:devices]), ("a",))
        place = lambda a: jax.device_put(a, NamedSharding(mesh, P()))
    args = [place(np.asarray(a)) for a in data["inputs"]]
    return _leaves(jax.jit(_exported(name, data).call)(*args))


def _uses_x64(data):
    arrays = _leaves(data["inputs"]) + _leaves(data["expected_outputs"])
    return any(a.dtype.itemsize == 8 and a.dtype.kind in "fiu" or
               a.dtype == np.complex128 for a in arrays)


def _tolerance(dtype):
    # Relative to the largest magnitude of the recorded array.
    return 1e-10 if dtype in (np.float64, np.complex128) else 1e-4


def _assert_close(got, want, what):
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if not np.issubdtype(want.dtype, np.inexact):
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1.0)
    np.testing.assert_allclose(got, want, rtol=0,
                               atol=_tolerance(want.dtype) * scale,
                               err_msg=what)


def _adjoint(m):
    return np.conj(np.swapaxes(m, -1, -2))


def _check_eigh(got, want):
    (v, w), (v_rec, w_rec) = got, want
    n = w.shape[-1]
    _assert_close(w, w_rec, "eigenvalues")
    eye = np.broadcast_to(np.eye(n), v.shape)
    _assert_close(_adjoint(v) @ v, eye.astype(v.dtype), "V^H V = I")
    # The matrix both decompositions are of: V diag(w) V^H.
    rebuild = lambda v, w: (v * w[..., None, :]) @ _adjoint(v)
    _assert_close(rebuild(v, w), rebuild(v_rec, w_rec).astype(v.dtype),
                  "V diag(w) V^H")


def _check_svd(got, want, a):
    (u, s, vt), (_, s_rec, _) = got, want
    _assert_close(s, s_rec, "singular values")
    k = s.shape[-1]
    _assert_close(_adjoint(u[..., :k]) @ u[..., :k],
                  np.broadcast_to(np.eye(k), s.shape[:-1] + (k, k))
                  .astype(u.dtype), "U^H U = I")
    _assert_close(vt[..., :k, :] @ _adjoint(vt[..., :k, :]),
                  np.broadcast_to(np.eye(k), s.shape[:-1] + (k, k))
                  .astype(vt.dtype), "Vt Vt^H = I")
    rebuilt = (u[..., :k] * s[..., None, :].astype(u.dtype)) @ vt[..., :k, :]
    _assert_close(rebuilt, np.asarray(a).astype(rebuilt.dtype),
                  "U diag(s) Vt = A")


def _check_eig(got, want):
    # The recorded module decomposes a constant: arange(n * n) as an n x n
    # matrix, as JAX's own compatibility test builds it. It has rank 2, so
    # zero is an eigenvalue of multiplicity n - 2 and any orthonormal-ish
    # basis of the null space is an answer: XLA:CPU today gives another one
    # than the recording (in the same process, Kiln gives XLA:CPU's bits).
    # What defines the vectors is checked instead.
    (w, vl, vr), (w_rec, _, _) = got, want
    n = w.shape[-1]
    _assert_close(w, w_rec, "eigenvalues")
    a = np.arange(n * n, dtype=np.float64).reshape(n, n).astype(vr.dtype)
    _assert_close(a @ vr, vr * w[None, :], "A vr = vr diag(w)")
    _assert_close(_adjoint(vl) @ a, w[:, None] * _adjoint(vl),
                  "vl^H A = diag(w) vl^H")
    for v, what in ((vl, "vl"), (vr, "vr")):
        _assert_close(np.linalg.norm(v, axis=0).astype(w_rec.real.dtype),
                      np.ones(n, w_rec.real.dtype), f"unit columns of {what}")


def _check_schur(got, want):
    # The same constant matrix as _check_eig's, whose null space makes the
    # Schur vectors past the first two a choice (XLA:CPU's differ from the
    # recording too): checks A = Z T Z^H, Z unitary, T quasi-triangular,
    # and T's eigenvalues against the recorded T's.
    (t, z), (t_rec, _) = got, want
    n = t.shape[-1]
    a = np.arange(n * n, dtype=np.float64).reshape(n, n).astype(z.dtype)
    _assert_close(z @ t @ _adjoint(z), a, "Z T Z^H = A")
    _assert_close(_adjoint(z) @ z, np.eye(n, dtype=z.dtype), "Z^H Z = I")
    assert not np.any(np.tril(t, -2)), "T is not quasi-triangular"
    # In double, compared at T's own precision's tolerance.
    complex_type = np.result_type(t.dtype, np.complex64)
    eigenvalues = lambda m: np.sort_complex(np.linalg.eigvals(
        m.astype(np.complex128))).astype(complex_type)
    _assert_close(eigenvalues(t), eigenvalues(t_rec), "eigenvalues of T")


def _family(name):
    module = name.split("/")[0]
    if module == "cpu_schur_lapack_gees":
        return "schur"
    if module == "cpu_eig_lapack_geev":
        return "eig"
    if "eigh" in module or module == "tpu_Eigh":
        return "eigh"
    if "svd" in module:
        return "svd"
    return "exact"


@pytest.mark.skipif(_data is None, reason="this jax has no recorded exports")
@pytest.mark.parametrize("name", sorted(_DATASETS))
def test_recorded_export_gives_the_recorded_results(name):
    data = _DATASETS[name]
    if data.get("nr_devices", 1) > NUM_DEVICES:
        pytest.skip(f"recorded for {data['nr_devices']} devices, "
                    f"this run has {NUM_DEVICES}")
    with jax.enable_x64(_uses_x64(data)):
        got = _run(name, data, KILN_PLATFORM)
        if name in _BACKEND_DEFINED:
            want = _run(name, data, "cpu")
        else:
            want = _leaves(data["expected_outputs"])
    assert len(got) == len(want), name
    family = _family(name)
    if family == "eigh":
        _check_eigh(got, want)
    elif family == "eig":
        _check_eig(got, want)
    elif family == "schur":
        _check_schur(got, want)
    elif family == "svd":
        _check_svd(got, want, data["inputs"][0])
    else:
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_close(g, w, f"{name} output {i}")


def test_the_recordings_cover_the_gpu_and_xla_targets():
    # The set this module runs: a jax upgrade that drops or renames them
    # should be seen, not silently test less.
    targets = set()
    for data in _DATASETS.values():
        targets.update(data["custom_call_targets"])
    for target in ("cusolver_getrf_ffi", "cusolver_syevd_ffi",
                   "cusolver_gesvdj_ffi", "hipsolver_syevj",
                   "cu_threefry2x32_ffi", "cu_lu_pivots_to_permutation",
                   "cusparse_gtsv2_ffi", "ApproxTopK", "Qr", "Eigh",
                   "LuDecomposition",
                   "stablehlo.dynamic_top_k", "stablehlo.dynamic_approx_top_k",
                   "stablehlo.dynamic_rng_bit_generator",
                   "stablehlo.dynamic_reduce_window", "shape_assertion",
                   "annotate_device_placement", "Sharding"):
        assert target in targets, target
    assert len(_DATASETS) >= 130, len(_DATASETS)
