"""Sharded programs over 8 devices: Kiln beside XLA:CPU in one process.

    KILN_PLUGIN_LIBRARY=build/lib/libpjrt_kiln.so PYTHONPATH=python \
        .venv/bin/python bench/sharded_bench.py [--repeats N]

Both backends get 8 devices (KILN_CPU_DEVICE_COUNT=8 and XLA's
--xla_force_host_platform_device_count=8, set here before jax loads). Each
row jits one program on each backend, runs it once to compile, then prints
the median of N timed calls (block_until_ready) and XLA:CPU's time over
Kiln's (above 1: Kiln is faster):

  reshard   a 64 MiB f32 array computed in P('x', None) and returned in
            P(None, 'x'): what moving one axis between dimensions costs
  cnn_step  a data-parallel step of two 3x3 convolutions (value_and_grad),
            batch 64 of 32x32x16 cut over the 8 devices: convolutions on
            each device's images, weight gradients all-reduced
  cnn_rows  the same step on 8 images of 256x32x16 with the rows cut over
            the 8 devices (spatial parallelism): convolutions on each
            device's rows and the halos its neighbours send
"""

import argparse
import os
import time

os.environ.setdefault("KILN_CPU_DEVICE_COUNT", "8")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "kiln,cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402


def median_ms(function, arguments, repeats):
    jax.block_until_ready(function(*arguments))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(function(*arguments))
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def reshard(mesh):
    x = np.ones((2048, 8192), np.float32)
    a = jax.device_put(x, NamedSharding(mesh, P("x", None)))
    f = jax.jit(lambda v: v + 1,
                out_shardings=NamedSharding(mesh, P(None, "x")))
    return f, (a,)


def cnn_step(mesh, shape=(64, 32, 32, 16), spec=P("x")):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w1 = (rng.standard_normal((3, 3, 16, 32)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((3, 3, 32, 32)) * 0.1).astype(np.float32)
    numbers = ("NHWC", "HWIO", "NHWC")

    def loss(params, images):
        a, b = params
        h = jax.nn.relu(jax.lax.conv_general_dilated(
            images, a, (1, 1), "SAME", dimension_numbers=numbers))
        h = jax.lax.conv_general_dilated(h, b, (1, 1), "SAME",
                                         dimension_numbers=numbers)
        return jnp.mean(h ** 2)

    images = jax.device_put(x, NamedSharding(mesh, spec))
    params = [jax.device_put(w, NamedSharding(mesh, P())) for w in (w1, w2)]
    return jax.jit(jax.value_and_grad(loss)), (params, images)


def cnn_rows(mesh):
    return cnn_step(mesh, (8, 256, 32, 16), P(None, "x"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(f"{'row':10} {'kiln ms':>9} {'xla:cpu ms':>11} {'xla/kiln':>9}")
    for name, build in (("reshard", reshard), ("cnn_step", cnn_step),
                        ("cnn_rows", cnn_rows)):
        times = {}
        for platform in ("kiln", "cpu"):
            mesh = Mesh(np.array(jax.devices(platform)[:8]), ("x",))
            function, arguments = build(mesh)
            times[platform] = median_ms(function, arguments, args.repeats)
        print(f"{name:10} {times['kiln']:9.1f} {times['cpu']:11.1f} "
              f"{times['cpu'] / times['kiln']:8.2f}x", flush=True)


if __name__ == "__main__":
    main()
