"""Training programs: grad of an MLP and of a small CNN, and a hand-written
Adam update run for several steps on both backends."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from conftest import assert_close, check, cpu_device, kiln_device, random_array

TOL = dict(rtol=1e-4, atol=1e-5)


def init_mlp(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [{"w": (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
             "b": np.zeros((n,), np.float32)}
            for m, n in zip(sizes[:-1], sizes[1:])]


def mlp(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def cross_entropy(logits, labels):
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) *
                             jax.nn.one_hot(labels, logits.shape[-1]), -1))


def mlp_loss(params, x, y):
    return cross_entropy(mlp(params, x), y)


def init_cnn(seed=0):
    rng = np.random.default_rng(seed)
    return {"conv1": (rng.standard_normal((3, 3, 1, 4)) * 0.3).astype(np.float32),
            "conv2": (rng.standard_normal((3, 3, 4, 8)) * 0.2).astype(np.float32),
            "dense": (rng.standard_normal((2 * 2 * 8, 10)) * 0.1).astype(np.float32),
            "bias": np.zeros((10,), np.float32)}


def cnn(params, x):  # x: (batch, 8, 8, 1)
    dn = ("NHWC", "HWIO", "NHWC")
    x = lax.conv_general_dilated(x, params["conv1"], (1, 1), "SAME",
                                 dimension_numbers=dn)
    x = jax.nn.relu(x)
    x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                          "VALID")
    x = lax.conv_general_dilated(x, params["conv2"], (1, 1), "SAME",
                                 dimension_numbers=dn)
    x = jnp.tanh(x)
    x = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1),
                          "VALID") / 4.0
    return x.reshape(x.shape[0], -1) @ params["dense"] + params["bias"]


def cnn_loss(params, x, y):
    return cross_entropy(cnn(params, x), y)


def adam_init(params):
    zeros = jax.tree.map(jnp.zeros_like, params)
    return {"m": zeros, "v": zeros, "t": jnp.zeros((), jnp.int32)}


def adam_update(grads, state, params, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    t = state["t"] + 1
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
    tf = t.astype(jnp.float32)
    m_hat = jax.tree.map(lambda m: m / (1 - b1 ** tf), m)
    v_hat = jax.tree.map(lambda v: v / (1 - b2 ** tf), v)
    params = jax.tree.map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + eps),
                          params, m_hat, v_hat)
    return params, {"m": m, "v": v, "t": t}


X = random_array((16, 12), np.float32, seed=1)
Y = random_array((16,), np.int32, seed=2, low=0, high=4)
IMAGES = random_array((6, 8, 8, 1), np.float32, seed=3, low=0, high=1)
IMAGE_LABELS = random_array((6,), np.int32, seed=4, low=0, high=9)


def test_mlp_grad():
    params = init_mlp([12, 16, 8, 4])
    check(jax.value_and_grad(mlp_loss), params, X, Y, **TOL)


def test_cnn_grad():
    params = init_cnn()
    check(jax.value_and_grad(cnn_loss), params, IMAGES, IMAGE_LABELS, **TOL)


def test_grad_wrt_inputs_and_higher_order():
    params = init_mlp([12, 6, 4], seed=5)
    check(jax.grad(mlp_loss, argnums=1), params, X, Y, **TOL)
    f = lambda x: jnp.sum(jnp.sin(x) * x ** 3)  # noqa: E731
    v = random_array((5,), np.float32, seed=6)
    check(jax.jacfwd(jax.grad(f)), v, **TOL)
    check(jax.jacrev(lambda x: jnp.tanh(x) @ x[:, None]), v, **TOL)
    check(jax.hessian(lambda x: jnp.sum(jnp.exp(x) * x)), v, **TOL)


def _train(device, loss_fn, params, x, y, steps):
    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        params, opt_state = adam_update(grads, opt_state, params)
        return params, opt_state, loss

    params = jax.device_put(params, device)
    opt_state = jax.device_put(adam_init(params), device)
    x, y = jax.device_put(x, device), jax.device_put(y, device)
    losses = []
    for _ in range(steps):
        params, opt_state, loss = step(params, opt_state, x, y)
        losses.append(loss)
    assert all(leaf.devices() == {device} for leaf in jax.tree.leaves(params))
    return jax.tree.map(np.asarray, params), np.asarray(losses)


def test_adam_training_mlp():
    params = init_mlp([12, 16, 4], seed=7)
    k_params, k_losses = _train(kiln_device(), mlp_loss, params, X, Y, 20)
    c_params, c_losses = _train(cpu_device(), mlp_loss, params, X, Y, 20)
    assert k_losses[-1] < k_losses[0] * 0.7, k_losses
    assert_close(k_losses, c_losses, rtol=2e-4, atol=2e-5)
    assert_close(k_params, c_params, rtol=2e-3, atol=2e-4)


def test_adam_training_cnn():
    params = init_cnn(seed=8)
    k_params, k_losses = _train(kiln_device(), cnn_loss, params, IMAGES,
                                IMAGE_LABELS, 10)
    c_params, c_losses = _train(cpu_device(), cnn_loss, params, IMAGES,
                                IMAGE_LABELS, 10)
    assert k_losses[-1] < k_losses[0], k_losses
    assert_close(k_losses, c_losses, rtol=2e-4, atol=2e-5)
    assert_close(k_params, c_params, rtol=2e-3, atol=2e-4)


def test_custom_vjp_and_stop_gradient():
    @jax.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None),
                     lambda _, g: (jnp.clip(g, -0.1, 0.1),))
    v = random_array((6,), np.float32, seed=9)
    check(jax.grad(lambda x: jnp.sum(clip_grad(x) ** 3 +
                                     lax.stop_gradient(x) * x)), v, **TOL)


def test_remat():
    params = init_mlp([12, 8, 4], seed=10)
    check(jax.grad(jax.checkpoint(mlp_loss)), params, X, Y, **TOL)
