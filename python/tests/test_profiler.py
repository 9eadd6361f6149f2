"""jax.profiler on Kiln: a trace around Kiln work holds Kiln's executes and
the steps they ran (PJRT's profiler extension, src/pjrt/profiler.cc), read
back from the `.xplane.pb` JAX writes with jaxlib's own XSpace reader."""

import glob
import os

import jax
import jax.numpy as jnp
import numpy as np

from jax._src.lib import _profile_data


def _events_by_plane(path):
    data = _profile_data.ProfileData.from_file(path)
    planes = {}
    for plane in data.planes:
        names = []
        for line in plane.lines:
            for event in line.events:
                names.append((line.name, event.name, event.duration_ns))
        planes[plane.name] = names
    return planes


def test_trace_shows_kiln_executes_and_kernels(kiln, tmp_path):
    @jax.jit
    def profiled_step(x):
        return jnp.tanh(x @ x.T) + 1

    x = jax.device_put(np.ones((32, 32), np.float32), kiln)
    profiled_step(x).block_until_ready()  # compiled outside the trace
    with jax.profiler.trace(str(tmp_path)):
        for _ in range(3):
            profiled_step(x).block_until_ready()
    files = glob.glob(os.path.join(tmp_path, "**", "*.xplane.pb"),
                      recursive=True)
    assert len(files) == 1, files
    planes = _events_by_plane(files[0])
    device_plane = f"/device:CUSTOM:{kiln.id}"
    assert device_plane in planes, sorted(planes)
    events = planes[device_plane]
    executes = [name for line, name, _ in events if line == "XLA Modules"]
    steps = [name for line, name, _ in events if line == "XLA Ops"]
    assert executes == ["jit_profiled_step"] * 3
    assert any("stablehlo.dot_general" in name for name in steps), steps
    assert any("tanh" in name for name in steps), steps
    assert all(duration >= 0 for _, _, duration in events)


def test_no_trace_no_events_after_stop(kiln, tmp_path):
    x = jax.device_put(np.arange(4, dtype=np.float32), kiln)
    with jax.profiler.trace(str(tmp_path)):
        pass
    (x + 1).block_until_ready()  # after the session: not recorded
    files = glob.glob(os.path.join(tmp_path, "**", "*.xplane.pb"),
                      recursive=True)
    assert len(files) == 1
    planes = _events_by_plane(files[0])
    assert not planes.get(f"/device:CUSTOM:{kiln.id}")


def test_gelu_runs_one_erfc_rebuilt_from_jax_expansion(kiln, tmp_path):
    # JAX sends chlo.erfc expanded into ~70 ops (a portable artifact holds
    # no CHLO); Kiln compiles the expansion as one erfc
    # (src/compile/recover_erfc.h). The trace's steps name the ops they
    # run: the rebuilt chlo.erfc, and none of the expansion's exponentials.
    @jax.jit
    def gelu(x):
        return jax.nn.gelu(x, approximate=False)

    x = jax.device_put(np.linspace(-4, 4, 4096, dtype=np.float32), kiln)
    gelu(x).block_until_ready()
    with jax.profiler.trace(str(tmp_path)):
        gelu(x).block_until_ready()
    files = glob.glob(os.path.join(tmp_path, "**", "*.xplane.pb"),
                      recursive=True)
    steps = [name for line, name, _ in
             _events_by_plane(files[0])[f"/device:CUSTOM:{kiln.id}"]
             if line == "XLA Ops"]
    assert any("chlo.erfc" in name for name in steps), steps
    assert not any("stablehlo.exponential" in name for name in steps), steps
