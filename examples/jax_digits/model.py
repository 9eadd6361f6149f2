"""The main job's model: an MLP with ReLU, its cross-entropy loss, and Adam.

train.py trains it; the cliff finder (bench/cliffs/programs.py) times its
training step as one of the workloads users reported.
"""

import jax
import jax.numpy as jnp
import numpy as np


def forward(params, x):
    """Logits of the MLP: params is a list of {"w", "b"} layers."""
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    """Mean cross-entropy of the logits against the integer labels y."""
    log_probs = jax.nn.log_softmax(forward(params, x))
    return -jnp.mean(jnp.take_along_axis(log_probs, y[:, None], axis=1))


def init_adam(params):
    """Adam's state for `params` (any pytree): zero moments, step 0."""
    zeros = jax.tree.map(np.zeros_like, params)
    return {"m": zeros, "v": jax.tree.map(np.copy, zeros),
            "t": np.zeros((), np.int32)}


def adam(params, grads, state, lr=3e-3, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam step: the new parameters and state."""
    t = state["t"] + 1
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
    tf = t.astype(jnp.float32)
    scale = lr * jnp.sqrt(1 - b2 ** tf) / (1 - b1 ** tf)
    params = jax.tree.map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + eps),
                          params, m, v)
    return params, {"m": m, "v": v, "t": t}
