"""Runs fixed programs on Kiln alone and prints a digest of each result.

test_bits.py runs this script with OMP_NUM_THREADS=1, 2 and 4 (the threads
Kiln's kernels and oneDNN's primitives run on) and compares the digests:
Kiln promises the same bits for the same program on the same machine at any
thread count (docs/exec.md, "Bits").
"""

import hashlib
import os
import warnings

os.environ["JAX_PLATFORMS"] = "kiln"
os.environ["KILN_CPU_DEVICE_COUNT"] = "1"
warnings.filterwarnings("ignore", message="Platform 'kiln' is experimental")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)


def programs():
    """(name, function, arguments) of each program whose bits are compared."""
    rng = np.random.default_rng(0)

    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def conv_loss(kernel, images):
        y = jax.lax.conv_general_dilated(
            images, kernel, (1, 1), "SAME",
            dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.sum(jnp.tanh(y))

    def attention(q):
        weights = jax.nn.softmax(q @ q.transpose(0, 2, 1) / 8.0, axis=-1)
        return weights @ q

    def mlp_loss(params, x, y):
        h = jax.nn.gelu(x @ params[0] + params[1])
        h = jax.nn.relu(h @ params[2] + params[3])
        return jnp.mean((h @ params[4] - y) ** 2)

    a64 = rng.standard_normal((300, 400))
    b64 = rng.standard_normal((400, 500))
    spd = a64[:, :300] @ a64[:, :300].T + 300 * np.eye(300)
    z = (rng.standard_normal((512, 512)) + 1j * rng.standard_normal(
        (512, 512))).astype(np.complex64)
    wide = [f32(256, 512, scale=0.1), f32(512, scale=0.1),
            f32(512, 512, scale=0.1), f32(512, scale=0.1)]
    return [
        ("conv_grad", jax.grad(conv_loss),
         (f32(3, 3, 16, 32, scale=0.1), f32(8, 32, 32, 16))),
        ("attention", attention, (f32(4, 128, 64),)),
        ("f64_matmul", jnp.matmul, (a64, b64)),
        ("f64_solve", jnp.linalg.solve, (spd, b64[:300])),
        ("c64_product", lambda u, v: u * v + u, (z, z.T)),
        ("rfft2", jnp.fft.rfft2, (f32(256, 512),)),
        ("reductions", lambda v: (jnp.sum(v), jnp.sum(v, axis=0),
                                  jnp.cumsum(v, axis=1)), (f32(1000, 1000),)),
        # Gradients through oneDNN's f32 products, whose sums it may split
        # over threads (test_bits.py).
        ("mlp_grad_wide", jax.grad(
            lambda p, x: jnp.mean(jax.nn.relu(jax.nn.gelu(x @ p[0] + p[1])
                                              @ p[2] + p[3]) ** 2)),
         (wide, f32(128, 256))),
        ("mlp_grad_narrow", jax.grad(mlp_loss),
         (wide + [f32(512, 64, scale=0.1)], f32(128, 256), f32(128, 64))),
    ]


def main():
    for name, fn, args in programs():
        result = jax.jit(fn)(*args)
        digest = hashlib.sha256(b"".join(
            np.asarray(leaf).tobytes() for leaf in jax.tree.leaves(result)))
        print(name, digest.hexdigest(), flush=True)


if __name__ == "__main__":
    main()
