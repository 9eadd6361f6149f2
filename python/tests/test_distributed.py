"""JAX on Kiln across processes: jax.distributed on loopback.

Starts 2 or 4 processes of distributed_child.py with JAX_PLATFORMS=kiln and a
coordinator on 127.0.0.1 at a free port; each joins the job through
jax.distributed.initialize, sees the other's devices, and checks a psum
over every global device (jax.jit with a NamedSharding, and shard_map) and
an all_gather and all_to_all through shard_map (1 KiB per device; 64 MiB
with KILN_MULTIPROCESS_LARGE=1).
The processes run under a hard timeout and are killed if they outlive it.
"""

import os
import socket
import subprocess
import sys

import pytest

_CHILD = os.path.join(os.path.dirname(__file__), "distributed_child.py")
_TIMEOUT_S = 180


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_LARGE = int(64 << 20)


@pytest.mark.parametrize("num_processes,size", [
    (2, 1024),
    (4, 1024),
    pytest.param(2, _LARGE, marks=pytest.mark.skipif(
        not os.environ.get("KILN_MULTIPROCESS_LARGE"),
        reason="64 MiB per device: set KILN_MULTIPROCESS_LARGE=1")),
    pytest.param(4, _LARGE, marks=pytest.mark.skipif(
        not os.environ.get("KILN_MULTIPROCESS_LARGE"),
        reason="64 MiB per device: set KILN_MULTIPROCESS_LARGE=1")),
])
def test_collectives_across_processes(num_processes, size):
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "kiln"
    # Two devices per process (groups with members here and elsewhere); one
    # for 64 MiB, where every device's all_gather output is 64 MiB times the
    # global device count.
    env["KILN_CPU_DEVICE_COUNT"] = "1" if size >= _LARGE else "2"
    env["KILN_COLLECTIVE_TIMEOUT_S"] = "60"
    env.pop("XLA_FLAGS", None)
    address = f"127.0.0.1:{_free_port()}"
    children = [
        subprocess.Popen(
            [sys.executable, _CHILD, address, str(num_processes), str(i),
             str(size)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True) for i in range(num_processes)
    ]
    outputs = []
    try:
        for child in children:
            out, _ = child.communicate(timeout=_TIMEOUT_S)
            outputs.append(out)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    for i, (child, out) in enumerate(zip(children, outputs)):
        assert child.returncode == 0, f"process {i}:\n{out}"
        assert "ok" in out.split(), f"process {i}:\n{out}"
