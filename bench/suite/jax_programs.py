"""The JAX programs the suite runs, each the same jitted function on Kiln and
on XLA:CPU.

Every program is a function and the NumPy values of its arguments (weights
included, made from a fixed seed), so that each backend gets the same
inputs. `prepare_jax` commits the arguments to one device, lowers and
compiles there (timing it, with JAX's caches cleared first) and returns a
call that runs the compiled program once and waits for its results.
"""

import dataclasses
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


@dataclasses.dataclass
class JaxProgram:
    function: Callable[..., Any]
    arguments: tuple  # NumPy arrays or pytrees of them
    donate_argnums: tuple[int, ...] = ()
    # A training step returns its new state first; the next call takes it
    # in place of argument 0 (which is donated).
    carries_state: bool = False


@dataclasses.dataclass
class Prepared:
    """A program compiled for one device, its inputs already there."""
    compile_seconds: float  # wall time of lower + compile
    lower_seconds: float
    run: Callable[[], Any]  # one execution, blocking until it is done
    finite: Callable[[], bool]  # whether the last results are all finite


def _all_finite(tree) -> bool:
    return all(bool(np.all(np.isfinite(np.asarray(leaf))))
               for leaf in jax.tree_util.tree_leaves(tree)
               if jnp.issubdtype(leaf.dtype, jnp.floating))


def prepare_jax(program: JaxProgram, device) -> Prepared:
    arguments = jax.device_put(program.arguments, device)
    jax.block_until_ready(arguments)
    # Nothing JAX keeps in memory (traces, lowerings, executables) may
    # serve this compile; the persistent cache is off for the whole run.
    jax.clear_caches()
    jitted = jax.jit(program.function, donate_argnums=program.donate_argnums)
    start = time.perf_counter()
    lowered = jitted.lower(*arguments)
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    compile_seconds = time.perf_counter() - start
    state = {"arguments": list(arguments), "results": None}

    def run():
        results = compiled(*state["arguments"])
        jax.block_until_ready(results)
        if program.carries_state:
            state["arguments"][0] = results[0]
        state["results"] = results
        return results

    return Prepared(compile_seconds=compile_seconds,
                    lower_seconds=lowered_at - start, run=run,
                    finite=lambda: _all_finite(state["results"]))


# --- Elementwise and matmul ---------------------------------------------

def gelu_program(elements: int) -> JaxProgram:
    """gelu(x * a + b) in its erf form: reads x once, writes once."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(elements).astype(np.float32)
    return JaxProgram(
        function=lambda x, a, b: jax.nn.gelu(x * a + b, approximate=False),
        arguments=(x, np.float32(1.5), np.float32(0.25)))


def matmul_program(n: int) -> JaxProgram:
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    return JaxProgram(function=lambda a, b: jnp.matmul(a, b),
                      arguments=(a, b))


def tiny_add_program() -> JaxProgram:
    return JaxProgram(function=lambda x, y: x + y,
                      arguments=(np.arange(4, dtype=np.float32),
                                 np.ones(4, np.float32)))


# --- Shared layers -------------------------------------------------------

def _normal(rng, shape, fan_in):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(
        np.float32)


def _conv(x, w, stride=1, padding=0):
    """NHWC convolution with an HWIO kernel."""
    return lax.conv_general_dilated(
        x, w, window_strides=(stride, stride),
        padding=((padding, padding), (padding, padding)),
        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _softmax_cross_entropy(logits, labels):
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))


def _sgd(params, grads, learning_rate):
    return jax.tree_util.tree_map(lambda p, g: p - learning_rate * g,
                                  params, grads)


def _train_step(loss):
    """A step of plain SGD on `loss(params, x, labels)`: new params, loss."""

    def step(params, x, labels):
        value, grads = jax.value_and_grad(loss)(params, x, labels)
        return _sgd(params, grads, 0.01), value

    return step


# --- ResNet-50 (NHWC), as the corpus's Flax export computes it -----------

# (bottleneck width, blocks, stride of the stage's first block)
RESNET50_STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))


def _batch_norm_params(rng, channels):
    # scale, shift, mean, variance; variance kept positive.
    return [rng.uniform(0.5, 1.5, channels).astype(np.float32)
            for _ in range(4)]


def _batch_norm(x, params, epsilon=1e-5):
    scale, shift, mean, variance = params
    return (x - mean) * (scale * lax.rsqrt(variance + epsilon)) + shift


def resnet50_params(rng) -> dict:
    params = {"stem": [_normal(rng, (7, 7, 3, 64), 7 * 7 * 3),
                       _batch_norm_params(rng, 64)],
              "stages": []}
    channels = 64
    for width, blocks, _ in RESNET50_STAGES:
        stage = []
        for block in range(blocks):
            out = width * 4
            layers = {
                "conv1": [_normal(rng, (1, 1, channels, width), channels),
                          _batch_norm_params(rng, width)],
                "conv2": [_normal(rng, (3, 3, width, width), 9 * width),
                          _batch_norm_params(rng, width)],
                "conv3": [_normal(rng, (1, 1, width, out), width),
                          _batch_norm_params(rng, out)],
            }
            if block == 0:
                layers["shortcut"] = [
                    _normal(rng, (1, 1, channels, out), channels),
                    _batch_norm_params(rng, out)]
            stage.append(layers)
            channels = out
        params["stages"].append(stage)
    return params


def resnet50_forward(params, images):
    """ResNet-50 v1.5 features: NHWC images in, pooled 2048 features out."""
    w, bn = params["stem"]
    y = jax.nn.relu(_batch_norm(_conv(images, w, 2, 3), bn))
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                          ((0, 0), (1, 1), (1, 1), (0, 0)))
    for (_, _, stage_stride), stage in zip(RESNET50_STAGES, params["stages"]):
        for index, block in enumerate(stage):
            stride = stage_stride if index == 0 else 1
            h = jax.nn.relu(_batch_norm(_conv(y, block["conv1"][0]),
                                        block["conv1"][1]))
            h = jax.nn.relu(_batch_norm(
                _conv(h, block["conv2"][0], stride, 1), block["conv2"][1]))
            h = _batch_norm(_conv(h, block["conv3"][0]), block["conv3"][1])
            if "shortcut" in block:
                y = _batch_norm(_conv(y, block["shortcut"][0], stride),
                                block["shortcut"][1])
            y = jax.nn.relu(h + y)
    return jnp.mean(y, axis=(1, 2))


def resnet50_program(batch: int) -> JaxProgram:
    rng = np.random.default_rng(3)
    params = resnet50_params(rng)
    images = rng.standard_normal((batch, 224, 224, 3)).astype(np.float32)
    return JaxProgram(function=resnet50_forward, arguments=(params, images))


# --- MLP training step ----------------------------------------------------

def mlp_train_program(batch: int = 128,
                      sizes: tuple[int, ...] = (784, 512, 512, 10)
                      ) -> JaxProgram:
    """One SGD step of a ReLU MLP with softmax cross-entropy."""
    rng = np.random.default_rng(4)
    params = [(_normal(rng, (m, n), m), np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]

    def loss(params, x, labels):
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = params[-1]
        return _softmax_cross_entropy(x @ w + b, labels)

    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], batch).astype(np.int32)
    return JaxProgram(function=_train_step(loss), arguments=(params, x, labels),
                      donate_argnums=(0,), carries_state=True)


# --- Small CNN training step ----------------------------------------------

def cnn_train_program(batch: int = 64) -> JaxProgram:
    """One SGD step of a 3-convolution classifier on 28x28x1 images."""
    rng = np.random.default_rng(5)
    params = {
        "conv1": (_normal(rng, (3, 3, 1, 32), 9), np.zeros(32, np.float32)),
        "conv2": (_normal(rng, (3, 3, 32, 64), 9 * 32),
                  np.zeros(64, np.float32)),
        "conv3": (_normal(rng, (3, 3, 64, 64), 9 * 64),
                  np.zeros(64, np.float32)),
        "dense": (_normal(rng, (7 * 7 * 64, 10), 7 * 7 * 64),
                  np.zeros(10, np.float32)),
    }

    def loss(params, images, labels):
        y = jax.nn.relu(_conv(images, params["conv1"][0], 1, 1) +
                        params["conv1"][1])
        y = jax.nn.relu(_conv(y, params["conv2"][0], 2, 1) +
                        params["conv2"][1])
        y = jax.nn.relu(_conv(y, params["conv3"][0], 2, 1) +
                        params["conv3"][1])
        w, b = params["dense"]
        return _softmax_cross_entropy(y.reshape(y.shape[0], -1) @ w + b,
                                      labels)

    images = rng.standard_normal((batch, 28, 28, 1)).astype(np.float32)
    labels = rng.integers(0, 10, batch).astype(np.int32)
    return JaxProgram(function=_train_step(loss),
                      arguments=(params, images, labels),
                      donate_argnums=(0,), carries_state=True)


# --- BERT-base encoder layer ------------------------------------------------

def _layer_norm(x, scale, shift, epsilon=1e-12):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    variance = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(variance + epsilon) * scale + shift


def bert_layer_program(batch: int = 8, sequence: int = 128,
                       hidden: int = 768, heads: int = 12,
                       ffn: int = 3072) -> JaxProgram:
    """BERT's post-norm encoder layer (inference): self-attention without a
    mask, then the erf-GELU feed-forward block, each with its residual and
    layer norm."""
    rng = np.random.default_rng(6)

    def dense(m, n):
        return (_normal(rng, (m, n), m) * 0.5, np.zeros(n, np.float32))

    params = {
        "query": dense(hidden, hidden), "key": dense(hidden, hidden),
        "value": dense(hidden, hidden), "output": dense(hidden, hidden),
        "norm1": (np.ones(hidden, np.float32), np.zeros(hidden, np.float32)),
        "ffn_in": dense(hidden, ffn), "ffn_out": dense(ffn, hidden),
        "norm2": (np.ones(hidden, np.float32), np.zeros(hidden, np.float32)),
    }
    head_dim = hidden // heads

    def layer(params, x):
        def project(name, y):
            w, b = params[name]
            return y @ w + b

        def split(y):  # [B, S, H] -> [B, heads, S, head_dim]
            return y.reshape(batch, sequence, heads, head_dim).transpose(
                0, 2, 1, 3)

        q, k, v = (split(project(n, x)) for n in ("query", "key", "value"))
        scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(head_dim)
        context = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores), v)
        context = context.transpose(0, 2, 1, 3).reshape(batch, sequence,
                                                        hidden)
        h = _layer_norm(x + project("output", context), *params["norm1"])
        f = project("ffn_out",
                    jax.nn.gelu(project("ffn_in", h), approximate=False))
        return _layer_norm(h + f, *params["norm2"])

    x = rng.standard_normal((batch, sequence, hidden)).astype(np.float32)
    return JaxProgram(function=layer, arguments=(params, x))
