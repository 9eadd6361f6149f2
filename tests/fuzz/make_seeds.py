#!/usr/bin/env python3
"""Writes the fuzz targets' own seed inputs into tests/fuzz/seeds/<target>/.

Run with the repository's virtual environment (jax, jaxlib and numpy):
    .venv/bin/python tests/fuzz/make_seeds.py
The seeds are small and committed: the replay tests run them on every test
run, and scripts/fuzz.sh starts each target's corpus from them (with the
shared corpus where it has inputs for the target).
"""
import io
import pathlib
import random

import numpy as np

SEEDS = pathlib.Path(__file__).resolve().parent / "seeds"


def write(target, name, data):
    folder = SEEDS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def npy_seeds():
    arrays = {
        "f32_2x3": np.arange(6, dtype=np.float32).reshape(2, 3),
        "scalar_f64": np.array(3.5),
        "bool_4": np.array([True, False, True, True]),
        "i8_empty": np.zeros((0, 3), dtype=np.int8),
        "u64_2x2x2": np.arange(8, dtype=np.uint64).reshape(2, 2, 2),
        "c64_3": np.array([1 + 2j, 3 - 4j, 0], dtype=np.complex64),
        "f16_5": np.linspace(-1, 1, 5).astype(np.float16),
        "fortran_2x3": np.asfortranarray(np.ones((2, 3), np.float32)),
    }
    for name, array in arrays.items():
        out = io.BytesIO()
        np.save(out, array)
        write("npy_fuzzer", name + ".npy", out.getvalue())


def compile_options_seeds():
    from jax._src.lib import xla_client

    def options(replicas=1, partitions=1, portable=False, spmd=False):
        o = xla_client.CompileOptions()
        build = o.executable_build_options
        build.num_replicas = replicas
        build.num_partitions = partitions
        build.use_spmd_partitioning = spmd
        if not portable:
            assignment = xla_client.DeviceAssignment.create(
                np.arange(replicas * partitions).reshape(replicas, partitions))
            build.device_assignment = assignment
        o.compile_portable_executable = portable
        return o.SerializeAsString()

    write("compile_options_fuzzer", "default", options())
    write("compile_options_fuzzer", "replicas_2", options(replicas=2))
    write("compile_options_fuzzer", "spmd_2x2", options(2, 2, spmd=True))
    write("compile_options_fuzzer", "portable", options(portable=True))


def hlo_seeds():
    import jax
    import jax.numpy as jnp

    def module(f, *args):
        lowered = jax.jit(f).lower(*args)
        return lowered.compiler_ir("hlo").as_serialized_hlo_module_proto()

    x = jnp.ones((4, 3), jnp.float32)
    write("hlo_reader_fuzzer", "add", module(lambda a: a + 1, x))
    write("hlo_reader_fuzzer", "dot_tanh",
          module(lambda a: jnp.tanh(a @ a.T), x))
    write("hlo_reader_fuzzer", "reduce_max",
          module(lambda a: jnp.max(a, axis=1), x))
    write("hlo_reader_fuzzer", "while",
          module(lambda a: jax.lax.fori_loop(0, 3, lambda i, v: v * 2, a), x))
    write("hlo_reader_fuzzer", "tuple_out",
          module(lambda a: (a.sum(), a.astype(jnp.int32)), x))


def byte_seeds():
    rng = random.Random(20261202)
    for i in range(12):
        size = rng.choice([8, 32, 128, 512])
        write("capi_fuzzer", f"random_{i:02d}",
              bytes(rng.randrange(256) for _ in range(size)))
    # The executable fuzzer edits a valid serialized executable when the
    # first byte is odd; an even second byte truncates it.
    write("executable_fuzzer", "valid", b"\x01\x01")
    write("executable_fuzzer", "truncated_half", b"\x01\x80")
    write("executable_fuzzer", "not_kiln", b"\x00KILNEXEC?")
    for i in range(6):
        edits = bytes(rng.randrange(256) for _ in range(3 * (i + 1)))
        write("executable_fuzzer", f"edits_{i}", b"\x01\x01" + edits)


if __name__ == "__main__":
    npy_seeds()
    compile_options_seeds()
    hlo_seeds()
    byte_seeds()
    print("seeds written to", SEEDS)
