"""Times ResNet-50 inference (batch 1, 224x224, NHWC / HWIO, f32) under jax.jit
on Kiln and on XLA:CPU, the model written with jax.lax alone (batch norm
folded into a scale and a bias, as an inference graph has it).

    .venv/bin/python python/tools/resnet50_bench.py [--runs 10] [--platforms kiln,cpu]

with the kiln-pjrt wheel installed (KILN_PLUGIN_LIBRARY=build/lib/libpjrt_kiln.so
points it at another build of the library).
"""

import argparse
import os
import time

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "kiln,cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

NHWC = ("NHWC", "HWIO", "NHWC")
# (blocks, bottleneck width, stride of the first block) per stage.
STAGES = [(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)]


def conv_bn(rng, x_features, out_features, window, stride):
    w = rng.standard_normal((window, window, x_features, out_features))
    w *= np.sqrt(2.0 / (window * window * x_features))
    return {"w": w.astype(np.float32),
            "scale": np.ones(out_features, np.float32),
            "bias": np.zeros(out_features, np.float32),
            "stride": stride}


def make_params(seed=0):
    rng = np.random.default_rng(seed)
    params = {"stem": conv_bn(rng, 3, 64, 7, 2), "blocks": []}
    features = 64
    for blocks, width, stride in STAGES:
        for b in range(blocks):
            s = stride if b == 0 else 1
            block = {"a": conv_bn(rng, features, width, 1, 1),
                     "b": conv_bn(rng, width, width, 3, s),
                     "c": conv_bn(rng, width, 4 * width, 1, 1)}
            if b == 0:
                block["shortcut"] = conv_bn(rng, features, 4 * width, 1, s)
            params["blocks"].append(block)
            features = 4 * width
    params["fc"] = (rng.standard_normal((features, 1000)) * 0.01).astype(
        np.float32)
    return params


def apply_conv_bn(p, x, relu=True):
    stride = p["stride"]
    y = lax.conv_general_dilated(x, p["w"], (stride, stride), "SAME",
                                 dimension_numbers=NHWC)
    y = y * p["scale"] + p["bias"]
    return jnp.maximum(y, 0) if relu else y


def resnet50(params, x):
    x = apply_conv_bn(params["stem"], x)
    x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                          "SAME")
    for block in params["blocks"]:
        y = apply_conv_bn(block["a"], x)
        y = apply_conv_bn(block["b"], y)
        y = apply_conv_bn(block["c"], y, relu=False)
        shortcut = (apply_conv_bn(block["shortcut"], x, relu=False)
                    if "shortcut" in block else x)
        x = jnp.maximum(y + shortcut, 0)
    x = jnp.mean(x, axis=(1, 2))
    return x @ params["fc"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--platforms", default="kiln,cpu")
    args = parser.parse_args()
    params = make_params()
    image = np.random.default_rng(1).standard_normal(
        (1, 224, 224, 3)).astype(np.float32)
    results = {}
    for platform in args.platforms.split(","):
        device = jax.devices(platform)[0]
        # Strides are Python ints: close over them, pass the arrays.
        arrays = jax.tree_util.tree_map(
            lambda v: jax.device_put(v, device) if isinstance(v, np.ndarray)
            else v, params)
        leaves, tree = jax.tree_util.tree_flatten(
            arrays, is_leaf=lambda v: isinstance(v, int))
        is_array = [not isinstance(v, int) for v in leaves]

        def forward(array_leaves, x):
            it = iter(array_leaves)
            full = [next(it) if a else v for v, a in zip(leaves, is_array)]
            return resnet50(jax.tree_util.tree_unflatten(tree, full), x)

        array_leaves = [v for v, a in zip(leaves, is_array) if a]
        x = jax.device_put(image, device)
        run = jax.jit(forward)
        start = time.perf_counter()
        out = run(array_leaves, x).block_until_ready()
        compile_s = time.perf_counter() - start
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            run(array_leaves, x).block_until_ready()
            times.append(time.perf_counter() - start)
        results[platform] = np.asarray(out)
        print(f"{platform}: first call (compile + run) {compile_s * 1e3:.0f} ms, "
              f"run median {np.median(times) * 1e3:.1f} ms, "
              f"min {np.min(times) * 1e3:.1f} ms over {args.runs}")
    if len(results) == 2:
        a, b = results.values()
        print(f"max |difference| {np.max(np.abs(a - b)):.3g} "
              f"(max |logit| {np.max(np.abs(b)):.3g})")


if __name__ == "__main__":
    main()
