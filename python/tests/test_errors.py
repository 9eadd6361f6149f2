"""Errors surface as Python exceptions and the process lives on.

What could crash the process (an allocation far too large, a program Kiln
refuses) runs in a child interpreter, so that a crash fails one test and not
the whole suite; the child then runs a computation to show it survived.
"""

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import KILN_PLATFORM, cpu_device, kiln_device

HERE = os.path.dirname(os.path.abspath(__file__))

PRELUDE = f"""
import os, sys, warnings
sys.path.insert(0, {HERE!r})
import conftest  # sets JAX_PLATFORMS
import jax, jax.numpy as jnp, numpy as np
kiln = conftest.kiln_device()

def survived():
    x = jax.device_put(np.arange(4, dtype=np.float32), kiln)
    y = np.asarray(jax.jit(lambda a: a * 2 + 1)(x))
    assert y.tolist() == [1.0, 3.0, 5.0, 7.0], y
    print("SURVIVED")
"""


def run_child(body: str, timeout: int = 60, env: dict | None = None) -> str:
    code = PRELUDE + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=timeout, cwd=HERE,
                          env=None if env is None else {**os.environ, **env})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, (
        f"child exited with {proc.returncode}:\n{output[-3000:]}")
    assert "SURVIVED" in proc.stdout, output[-3000:]
    return proc.stdout


def test_shape_mismatch_between_args():
    a = jax.device_put(np.ones(3, np.float32), kiln_device())
    b = jax.device_put(np.ones(4, np.float32), kiln_device())
    with pytest.raises((TypeError, ValueError)):
        jax.jit(jnp.add)(a, b)
    with pytest.raises(TypeError):
        jax.jit(jnp.matmul)(a.reshape(1, 3), b.reshape(1, 4))
    with pytest.raises((TypeError, ValueError)):
        jax.jit(lambda x: jax.lax.dynamic_slice(x, (0, 0), (1, 1)))(a)
    # The same jitted function called with a new shape recompiles fine.
    f = jax.jit(lambda x: x.sum())
    assert float(f(a)) == 3.0 and float(f(b)) == 4.0


@pytest.mark.skipif(KILN_PLATFORM != "kiln",
                    reason="needs two platforms; KILN_TESTS_PLATFORM=cpu has one")
def test_committed_to_different_devices():
    a = jax.device_put(np.ones(3, np.float32), kiln_device())
    b = jax.device_put(np.ones(3, np.float32), cpu_device())
    with pytest.raises(ValueError, match="[Dd]evice"):
        jax.jit(jnp.add)(a, b)


def test_allocation_far_too_large():
    out = run_child("""
        import re
        for make in (lambda: jnp.zeros((1 << 45,), jnp.float32),
                     lambda: jax.jit(lambda: jnp.ones((1 << 22, 1 << 22)))()):
            try:
                with jax.default_device(kiln):
                    jax.block_until_ready(make())
                print("NO ERROR")
            except Exception as e:
                print("RAISED", type(e).__name__, str(e).splitlines()[0][:300])
        survived()
    """)
    lines = [line for line in out.splitlines()
             if line.startswith(("RAISED", "NO ERROR"))]
    assert len(lines) == 2 and all(line.startswith("RAISED") for line in lines), out
    for line in lines:
        assert any(word in line for word in
                   ("RESOURCE_EXHAUSTED", "Out of memory", "out of memory",
                    "allocate", "Allocat")), line


@pytest.mark.skipif(KILN_PLATFORM != "kiln", reason="a create option of Kiln's")
def test_memory_limit_from_jax_create_options():
    # JAX passes JAX_PJRT_CLIENT_CREATE_OPTIONS as strings; the limit is the
    # client's, across all its buffers.
    limit = 8_000_000
    out = run_child(f"""
        print("LIMIT", kiln.memory_stats()["bytes_limit"])
        # Outputs Kiln allocates (host arrays JAX lends zero-copy are the
        # host's memory, not counted).
        with jax.default_device(kiln):
            a = jax.jit(lambda: jnp.ones(1_000_000, jnp.float32))()  # 4 MB
            try:
                b = jax.jit(lambda: jnp.ones(1_250_000, jnp.float32))()  # 5 MB more
                jax.block_until_ready(b)
                print("NO ERROR")
            except Exception as e:
                print("RAISED", str(e).splitlines()[0][:400])
            a.delete()
            b = jax.jit(lambda: jnp.ones(1_250_000, jnp.float32))()
            print("AFTER", float(jnp.sum(b)))
        survived()
    """, env={"JAX_PJRT_CLIENT_CREATE_OPTIONS": f"memory_limit_bytes:{limit}"})
    assert f"LIMIT {limit}" in out, out
    raised = [line for line in out.splitlines() if line.startswith("RAISED")]
    assert raised, out
    assert "RESOURCE_EXHAUSTED" in raised[0] and "memory_limit_bytes" in raised[0], out
    assert "f32[1250000]" in raised[0], out
    assert "AFTER 1250000.0" in out, out


BAD_CUSTOM_CALL = """
module @bad {
  func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @kiln_test_no_such_target(%a) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


def test_bad_program_through_the_client():
    # A module that parses and verifies but names a custom-call target no one
    # implements: the backend must refuse it when compiling.
    out = run_child(f"""
        from jax._src.lib import _jax
        client = kiln.client
        devices = _jax.DeviceList((kiln,))
        good = {BAD_CUSTOM_CALL!r}.replace(
            "stablehlo.custom_call @kiln_test_no_such_target(%a) : "
            "(tensor<4xf32>) -> tensor<4xf32>",
            "stablehlo.add %a, %a : tensor<4xf32>")
        exe = client.compile_and_load(good, devices, _jax.CompileOptions())
        x = jax.device_put(np.arange(4, dtype=np.float32), kiln)
        print("GOOD", np.asarray(exe.execute([x])[0]).tolist())
        for text in ({BAD_CUSTOM_CALL!r}, "module {{ func.func @main( }}"):
            try:
                client.compile_and_load(text, devices, _jax.CompileOptions())
                print("NO ERROR")
            except Exception as e:
                print("RAISED", type(e).__name__, str(e).splitlines()[0][:300])
        survived()
    """)
    assert "GOOD [0.0, 2.0, 4.0, 6.0]" in out, out
    raised = [line for line in out.splitlines() if line.startswith("RAISED")]
    assert len(raised) == 2, out
    assert "kiln_test_no_such_target" in raised[0], raised[0]


def test_bad_program_through_jit():
    # The same refusal reached from jax.jit, via an FFI call to a missing
    # target.
    out = run_child("""
        def fn(x):
            return jax.ffi.ffi_call("kiln_test_no_such_target",
                                    jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
        try:
            jax.jit(fn)(jax.device_put(np.ones(4, np.float32), kiln))
            print("NO ERROR")
        except Exception as e:
            print("RAISED", type(e).__name__, str(e).splitlines()[0][:300])
        survived()
    """)
    assert "RAISED" in out and "kiln_test_no_such_target" in out, out


def test_error_in_one_call_leaves_others_working():
    # Invalid arguments at call time, then correct calls on the same function.
    f = jax.jit(lambda x, i: jax.lax.dynamic_slice_in_dim(x, i, 2))
    x = jax.device_put(np.arange(6, dtype=np.float32), kiln_device())
    with pytest.raises(TypeError):
        f(x, np.float32(1.5))  # index must be an integer
    np.testing.assert_array_equal(np.asarray(f(x, np.int32(2))), [2.0, 3.0])


def test_deleted_buffer_refused():
    x = jax.device_put(np.ones(3, np.float32), kiln_device())
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)
    with pytest.raises((RuntimeError, ValueError), match="deleted"):
        jax.jit(lambda a: a + 1)(x)
