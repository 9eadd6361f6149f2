"""Program patterns and the workloads users reported, as named cases:
small-network train steps, loops with small bodies, vmap of grad,
donation inside loops, f64 throughout, mixed precision, and sharded
programs with collectives on 8 devices.

Train steps are `step` cases: the state (parameters, optimizer state,
last loss) is donated, and each timed call feeds the state it returned
back in, as a training loop does.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P

from registry import KI, MI, normal, uniform

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "examples", "jax_digits"))
import model as digits_model  # noqa: E402

# The ids of the workloads a user reported (they are in quick mode; run.py
# lists them after the worst ratios).
REPORTED = [
    "program.digits MLP Adam step f32 64-128-10 b64",
    "program.RK4 linear ODE fori_loop f64 1000-dim 1000 steps",
    "jnp.matmul f64 512x1024x1024",
    "linalg.solve f64 256",
    "linalg.cholesky f64 256",
    "program.rfft/irfft convolution f32 256x8192",
    "program.bf16 MLP forward bf16 1024x1024 by 1024x1024",
    "program.vmap(grad) per-example MLP f32 64-128-10 b64",
    "random.normal f32 4Mi",
    "jnp.x ** 3.0 f32 1Mi",
    "jnp.x ** 3.0 f32 16Mi",
    "lax.lgamma f32 1Mi",
    "nn.one_hot i32 4096x1024",
    "fft.rfft2 f32 512x1024",
    "linalg.svd f32 256",
    "linalg.qr f32 256",
    "sharded.psum shard_map f32 32MiB/device",
    "program.gelu(x*a+b) f32 16Mi",
]


# ------------------------------------------------------------------ models

def mlp_params(rng, sizes, dtype="f32"):
    return [{"w": normal(rng, (m, n), dtype, (2.0 / m) ** 0.5),
             "b": np.zeros((n,), normal(rng, (1,), dtype).dtype)}
            for m, n in zip(sizes[:-1], sizes[1:])]


# The main job's model (examples/jax_digits/model.py): the MLP, its loss
# and Adam, so the reported workload is the step the main job runs.
mlp = digits_model.forward
cross_entropy = digits_model.loss_fn
adam = digits_model.adam
adam_state = digits_model.init_adam


def sgd_step(state, x, y, lr=0.05):
    params, _ = state
    loss, grads = jax.value_and_grad(cross_entropy)(params, x, y)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads), loss


def sgd_case(reg, name, sizes, batch, dtype="f32", **kw):
    def args(rng):
        params = mlp_params(rng, sizes, dtype)
        zero = np.zeros((), params[0]["w"].dtype)
        return ((params, zero), normal(rng, (batch, sizes[0]), dtype),
                rng.integers(0, sizes[-1], (batch,), dtype=np.int32))
    label = "-".join(map(str, sizes)) + f" b{batch}"
    reg.add("program", name, dtype, label, sgd_step, args, step=True,
            tags=("train",), **kw)


# ------------------------------------------------------------ train steps

def digits_step(state, x_all, y_all, perm, batch=64):
    """examples/jax_digits/train.py's train_step: the batch picked on the
    device from this epoch's permutation, value_and_grad, Adam."""
    params, opt_state, _ = state
    per_epoch = perm.shape[0] // batch
    start = (opt_state["t"] % per_epoch) * batch
    idx = lax.dynamic_slice(perm, (start,), (batch,))
    loss, grads = jax.value_and_grad(cross_entropy)(params, x_all[idx],
                                                    y_all[idx])
    params, opt_state = adam(params, grads, opt_state)
    return params, opt_state, loss


def digits_args(rng, dtype="f32"):
    params = mlp_params(rng, [64, 128, 10], dtype)
    zero = np.zeros((), params[0]["w"].dtype)
    x_all = uniform(rng, (1437, 64), dtype, 0, 1)  # the digits' train split
    y_all = rng.integers(0, 10, (1437,), dtype=np.int32)
    perm = rng.permutation(1437).astype(np.int32)
    return (params, adam_state(params), zero), x_all, y_all, perm


def attention_loss(p, x):
    """One pre-norm self-attention block and an MLP, summed squares."""
    b, s, d = x.shape
    h = 4

    def norm(z):
        mu = z.mean(-1, keepdims=True)
        return (z - mu) * lax.rsqrt(((z - mu) ** 2).mean(-1, keepdims=True)
                                    + 1e-5)
    q, k, v = (jnp.einsum("bsd,de->bse", norm(x), p[n]).reshape(b, s, h, -1)
               for n in ("q", "k", "v"))
    a = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) / 4.0, axis=-1)
    y = x + jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, s, d) @ p["o"]
    y = y + jax.nn.gelu(norm(y) @ p["w1"]) @ p["w2"]
    return jnp.mean(y ** 2)


def attention_step(state, x):
    params, _ = state
    loss, grads = jax.value_and_grad(attention_loss)(params, x)
    return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads), loss


def train_table(reg):
    reg.add("program", "digits MLP Adam step", "f32", "64-128-10 b64",
            digits_step, digits_args, step=True, tags=("train", "reported"))
    reg.add("program", "digits MLP Adam step", "f64", "64-128-10 b64",
            digits_step, lambda rng: digits_args(rng, "f64"), step=True,
            tags=("train", "f64"))
    sgd_case(reg, "tiny MLP SGD step", [8, 16, 4], 8)
    sgd_case(reg, "MLP SGD step", [784, 256, 10], 128)
    sgd_case(reg, "MLP SGD step", [784, 512, 512, 10], 128)
    sgd_case(reg, "MLP SGD step", [784, 256, 10], 128, dtype="f64")

    def attention_args(rng, d=64):
        params = {n: normal(rng, (d, d), "f32", d ** -0.5)
                  for n in ("q", "k", "v", "o")}
        params["w1"] = normal(rng, (d, 4 * d), "f32", d ** -0.5)
        params["w2"] = normal(rng, (4 * d, d), "f32", (4 * d) ** -0.5)
        return (params, np.zeros((), np.float32)), normal(rng, (8, 64, d),
                                                          "f32")
    reg.add("program", "attention block SGD step", "f32", "b8 s64 d64",
            attention_step, attention_args, step=True, tags=("train",),
            tolerance=1e-3)

    def cnn_loss(p, x, y):
        dn = ("NHWC", "HWIO", "NHWC")
        h = jax.nn.relu(lax.conv_general_dilated(x, p["c1"], (1, 1), "SAME",
                                                 dimension_numbers=dn))
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1),
                              (1, 2, 2, 1), "VALID")
        h = jax.nn.relu(lax.conv_general_dilated(h, p["c2"], (1, 1), "SAME",
                                                 dimension_numbers=dn))
        logits = h.reshape(h.shape[0], -1) @ p["w"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits),
                                             y[:, None], axis=1))

    def cnn_step(state, x, y):
        params, _ = state
        loss, grads = jax.value_and_grad(cnn_loss)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), loss

    def cnn_args(rng):
        params = {"c1": normal(rng, (3, 3, 1, 8), "f32", 1 / 3),
                  "c2": normal(rng, (3, 3, 8, 16), "f32", 1 / 8.5),
                  "w": normal(rng, (14 * 14 * 16, 10), "f32", 1 / 56)}
        return ((params, np.zeros((), np.float32)),
                normal(rng, (32, 28, 28, 1), "f32"),
                rng.integers(0, 10, (32,), dtype=np.int32))
    reg.add("program", "small CNN SGD step", "f32", "b32 28x28", cnn_step,
            cnn_args, step=True, tags=("train",), tolerance=1e-3)

    def logistic_step(state, x, y):
        (w, opt), _ = state

        def loss(w):
            return jnp.mean(jax.nn.softplus(-y * (x @ w)))
        value, g = jax.value_and_grad(loss)(w)
        w, opt = adam(w, g, opt)
        return (w, opt), value

    def logistic_args(rng):
        w = np.zeros((1000,), np.float32)
        return (((w, adam_state(w)), np.zeros((), np.float32)),
                normal(rng, (256, 1000), "f32"),
                np.where(rng.random(256) < 0.5, -1.0, 1.0).astype(np.float32))
    reg.add("program", "logistic regression Adam step", "f32", "1000 b256",
            logistic_step, logistic_args, step=True, tags=("train",))


# ---------------------------------------------------------------- patterns

def loops_table(reg):
    def add(op, dtype, size, fn, args, **kw):
        reg.add("program", op, dtype, size, fn, args,
                tags=("loop",) + kw.pop("tags", ()), **kw)

    add("while_loop scalar counter", "i32", "10000 iterations",
        lambda n: lax.while_loop(lambda c: c[0] < n,
                                 lambda c: (c[0] + 1, c[1] * 3 + 1),
                                 (jnp.int32(0), jnp.int32(1))),
        lambda rng: (np.int32(10000),))
    add("fori_loop small vector", "f32", "16 x 10000 steps",
        lambda x: lax.fori_loop(0, 10000,
                                lambda i, c: c * 0.99 + jnp.sin(c) * 0.01, x),
        lambda rng: (normal(rng, (16,), "f32"),))
    add("fori_loop matvec tanh", "f32", "256 x 1000 steps",
        lambda w, x: lax.fori_loop(0, 1000, lambda i, c: jnp.tanh(w @ c), x),
        lambda rng: (normal(rng, (256, 256), "f32", 1 / 16),
                     normal(rng, (256,), "f32")))
    add("fori_loop nested", "f32", "100x100 steps",
        lambda x: lax.fori_loop(0, 100, lambda i, c: lax.fori_loop(
            0, 100, lambda j, d: d * 0.999 + 0.001 * j, c), x),
        lambda rng: (normal(rng, (8,), "f32"),))
    add("fori_loop with cond", "f32", "1000 steps",
        lambda x: lax.fori_loop(0, 1000, lambda i, c: lax.cond(
            i % 2 == 0, lambda z: z * 1.001, lambda z: z - 0.001, c), x),
        lambda rng: (normal(rng, (64,), "f32"),))
    add("scan RNN stacked", "f32", "h64 x 1000 steps",
        lambda w, u, xs: lax.scan(
            lambda h, x: ((t := jnp.tanh(h @ w + x @ u)), t),
            jnp.zeros(64), xs)[1],
        lambda rng: (normal(rng, (64, 64), "f32", 1 / 8),
                     normal(rng, (32, 64), "f32", 1 / 6),
                     normal(rng, (1000, 32), "f32")))

    def lstm(params, xs):
        def cell(carry, x):
            h, c = carry
            z = x @ params["wx"] + h @ params["wh"] + params["b"]
            i, f, g, o = jnp.split(z, 4)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        return lax.scan(cell, (jnp.zeros(128), jnp.zeros(128)), xs)
    add("scan LSTM", "f32", "h128 x 200 steps", lstm,
        lambda rng: ({"wx": normal(rng, (64, 512), "f32", 1 / 8),
                      "wh": normal(rng, (128, 512), "f32", 1 / 11),
                      "b": np.zeros(512, np.float32)},
                     normal(rng, (200, 64), "f32")))
    add("scan LSTM gradient", "f32", "h128 x 200 steps",
        lambda p, xs: jax.grad(lambda q: jnp.sum(lstm(q, xs)[1] ** 2))(p),
        lambda rng: ({"wx": normal(rng, (64, 512), "f32", 1 / 8),
                      "wh": normal(rng, (128, 512), "f32", 1 / 11),
                      "b": np.zeros(512, np.float32)},
                     normal(rng, (200, 64), "f32")), tolerance=1e-3)
    add("while_loop Newton sqrt", "f32", "1024 until converged",
        lambda a: lax.while_loop(
            lambda c: jnp.max(jnp.abs(c[0] * c[0] - a)) > 1e-3 * jnp.max(a),
            lambda c: ((c[0] + a / c[0]) * 0.5, c[1] + 1), (a, 0)),
        lambda rng: (uniform(rng, (1024,), "f32", 1, 1000),))
    add("lax.map small function", "f32", "1000 x 16",
        lambda x: lax.map(lambda r: jnp.sum(jnp.sin(r) ** 2), x),
        lambda rng: (normal(rng, (1000, 16), "f32"),))
    add("associative_scan add", "f32", "1Mi",
        lambda x: lax.associative_scan(jnp.add, x),
        lambda rng: (normal(rng, (MI,), "f32"),), tolerance=1e-3)
    add("switch in fori_loop", "f32", "1000 steps",
        lambda x: lax.fori_loop(0, 1000, lambda i, c: lax.switch(
            i % 3, [jnp.sin, jnp.cos, lambda z: z * 0.5], c), x),
        lambda rng: (normal(rng, (64,), "f32"),))


def rk4(a, y0, steps=1000, h=1e-3):
    def body(_, y):
        k1 = a @ y
        k2 = a @ (y + h / 2 * k1)
        k3 = a @ (y + h / 2 * k2)
        k4 = a @ (y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return lax.fori_loop(0, steps, body, y0)


def patterns_table(reg):
    # vmap of grad.
    def per_example(params, x, y):
        return jax.vmap(jax.grad(cross_entropy), in_axes=(None, 0, 0))(
            params, x[:, None], y[:, None])
    reg.add("program", "vmap(grad) per-example MLP", "f32", "64-128-10 b64",
            per_example,
            lambda rng: (mlp_params(rng, [64, 128, 10]),
                         normal(rng, (64, 64), "f32"),
                         rng.integers(0, 10, (64,), dtype=np.int32)),
            tags=("vmap", "reported"), tolerance=1e-3)
    reg.add("program", "vmap(grad) scalar function", "f32", "64Ki",
            jax.vmap(jax.grad(lambda x: jnp.tanh(x) ** 2 * jnp.exp(-x))),
            lambda rng: (normal(rng, (64 * KI,), "f32"),), tags=("vmap",))
    reg.add("program", "vmap(jacfwd) small", "f32", "1024 x 8->8",
            jax.vmap(jax.jacfwd(lambda x: jnp.sin(x) * jnp.roll(x, 1))),
            lambda rng: (normal(rng, (1024, 8), "f32"),), tags=("vmap",))

    # Donation: the state is updated in place call after call, and buffers
    # updated inside loops.
    reg.add("program", "donated update x*0.5+1", "f32", "16Mi",
            lambda x: x * 0.5 + 1,
            lambda rng: (normal(rng, (16 * MI,), "f32"),), step=True,
            tags=("donation",))
    reg.add("program", "donated Adam update", "f32", "1Mi params",
            lambda s, g: adam(s[0], g, s[1]),
            lambda rng: ((normal(rng, (MI,), "f32"),
                          adam_state(np.zeros(MI, np.float32))),
                         normal(rng, (MI,), "f32")), step=True,
            tags=("donation",))
    reg.add("program", "fori_loop dynamic_update_slice rows", "f32",
            "1024x1024, 1024 steps",
            lambda buf, row: lax.fori_loop(
                0, 1024, lambda i, b: lax.dynamic_update_slice(
                    b, (row * i)[None], (i, 0)), buf),
            lambda rng: (np.zeros((1024, 1024), np.float32),
                         normal(rng, (1024,), "f32")), step=False,
            tags=("donation", "loop"))
    reg.add("program", "fori_loop .at[i].set donated", "f32",
            "1Mi, 10000 steps",
            lambda buf: lax.fori_loop(
                0, 10000, lambda i, b: b.at[i * 97].set(b[i] + 1.0), buf),
            lambda rng: (normal(rng, (MI,), "f32"),), step=True,
            tags=("donation", "loop"))

    # f64 throughout (jax_enable_x64).
    reg.add("program", "RK4 linear ODE fori_loop", "f64",
            "1000-dim 1000 steps", rk4,
            lambda rng: (normal(rng, (1000, 1000), "f64", 0.5 / 1000 ** 0.5)
                         - np.eye(1000), normal(rng, (1000,), "f64")),
            tags=("loop", "f64", "reported"))
    reg.add("jnp", "matmul", "f64", "512x1024x1024", jnp.matmul,
            lambda rng: (normal(rng, (512, 1024), "f64", 1 / 32),
                         normal(rng, (1024, 1024), "f64")),
            tags=("matmul", "f64", "reported"))
    reg.add("program", "while_loop Newton sqrt", "f64",
            "1024 until converged",
            lambda a: lax.while_loop(
                lambda c: jnp.max(jnp.abs(c[0] * c[0] - a)) > 1e-9 * jnp.max(a),
                lambda c: ((c[0] + a / c[0]) * 0.5, c[1] + 1), (a, 0)),
            lambda rng: (uniform(rng, (1024,), "f64", 1, 1000),),
            tags=("loop", "f64"))
    reg.add("program", "scan cumulative product-sum", "f64", "100000 steps",
            lambda xs: lax.scan(lambda c, x: (c * 0.999 + x, c), 0.0, xs)[1],
            lambda rng: (normal(rng, (100000,), "f64"),), tags=("loop", "f64"))

    # Mixed precision.
    def bf16_mlp(w1, b1, w2, b2, x):
        h = jax.nn.gelu(x @ w1 + b1)
        return h @ w2 + b2
    reg.add("program", "bf16 MLP forward", "bf16", "1024x1024 by 1024x1024",
            bf16_mlp,
            lambda rng: (normal(rng, (1024, 1024), "bf16", 1 / 32),
                         normal(rng, (1024,), "bf16", 0.1),
                         normal(rng, (1024, 1024), "bf16", 1 / 32),
                         normal(rng, (1024,), "bf16", 0.1),
                         normal(rng, (1024, 1024), "bf16")),
            tags=("mixed", "reported"))

    def mixed_step(state, x, y):
        params, _ = state  # f32 master weights, bf16 compute, f32 loss

        def loss(p):
            low = jax.tree.map(lambda a: a.astype(jnp.bfloat16), p)
            logits = mlp(low, x.astype(jnp.bfloat16)).astype(jnp.float32)
            lp = jax.nn.log_softmax(logits)
            return -jnp.mean(jnp.take_along_axis(lp, y[:, None], axis=1))
        value, grads = jax.value_and_grad(loss)(params)
        return jax.tree.map(lambda p, g: p - 0.05 * g, params, grads), value
    reg.add("program", "bf16 compute f32 master SGD step", "bf16/f32",
            "784-512-512-10 b128", mixed_step,
            lambda rng: ((mlp_params(rng, [784, 512, 512, 10]),
                          np.zeros((), np.float32)),
                         normal(rng, (128, 784), "f32"),
                         rng.integers(0, 10, (128,), dtype=np.int32)),
            step=True, tags=("mixed", "train"), tolerance=3e-2)
    reg.add("program", "f16 loss-scaled gradient", "f16/f32", "784-256-10 b64",
            lambda p, x, y: jax.tree.map(
                lambda g: g.astype(jnp.float32) / 1024.0,
                jax.grad(lambda q: cross_entropy(q, x, y).astype(jnp.float16)
                         * 1024)(p)),
            lambda rng: (mlp_params(rng, [784, 256, 10], "f16"),
                         normal(rng, (64, 784), "f16"),
                         rng.integers(0, 10, (64,), dtype=np.int32)),
            tags=("mixed",), tolerance=3e-2)

    # The reported single workloads that are programs of several ops.
    reg.add("program", "rfft/irfft convolution", "f32", "256x8192",
            lambda x, k: jnp.fft.irfft(jnp.fft.rfft(x, axis=-1) *
                                       jnp.fft.rfft(k), n=8192, axis=-1),
            lambda rng: (normal(rng, (256, 8192), "f32"),
                         normal(rng, (8192,), "f32", 1 / 90)),
            tags=("fft", "reported"), tolerance=1e-3)
    reg.add("program", "gelu(x*a+b)", "f32", "16Mi",
            lambda x, a, b: jax.nn.gelu(x * a + b, approximate=False),
            lambda rng: (normal(rng, (16 * MI,), "f32"), np.float32(1.5),
                         np.float32(0.25)), tags=("elementwise", "reported"))
    reg.add("nn", "one_hot", "i32", "4096x1024",
            lambda i: jax.nn.one_hot(i, 1024),
            lambda rng: (rng.integers(0, 1024, (4096,), dtype=np.int32),),
            tags=("movement", "reported"))


# ----------------------------------------------------------------- sharded

def sharded_table(reg):
    """8 devices (jax_num_cpu_devices=8 on both backends): shard_map with
    each collective, and jit over NamedShardings (the partitioner's
    collectives)."""

    def add(op, dtype, size, build, args, **kw):
        reg.add("sharded", op, dtype, size, None, args, sharded=build,
                devices=8, tags=("sharded",) + kw.pop("tags", ()), **kw)

    def shard_map(mesh, f, in_specs, out_specs):
        return jax.shard_map(f, mesh=mesh, in_specs=in_specs,
                             out_specs=out_specs, check_vma=False)

    def mesh1(mesh):
        return NamedSharding(mesh, P("x"))

    per_device = 8 * MI  # 32 MiB of f32
    add("psum shard_map", "f32", "32MiB/device",
        lambda mesh: (shard_map(mesh, lambda a: lax.psum(a, "x"), P("x"),
                                P()), (mesh1(mesh),)),
        lambda rng: (normal(rng, (8, per_device), "f32"),),
        tags=("reported",), tolerance=1e-3)
    add("psum shard_map", "f32", "32B/device",
        lambda mesh: (shard_map(mesh, lambda a: lax.psum(a, "x"), P("x"),
                                P()), (mesh1(mesh),)),
        lambda rng: (normal(rng, (8, 8), "f32"),))
    add("all_gather shard_map", "f32", "4MiB/device",
        lambda mesh: (shard_map(mesh, lambda a: lax.all_gather(
            a, "x", tiled=True), P("x"), P()), (mesh1(mesh),)),
        lambda rng: (normal(rng, (8 * MI,), "f32"),))
    add("psum_scatter shard_map", "f32", "32MiB/device",
        lambda mesh: (shard_map(mesh, lambda a: lax.psum_scatter(
            a[0], "x", tiled=True), P("x"), P("x")), (mesh1(mesh),)),
        lambda rng: (normal(rng, (8, per_device), "f32"),), tolerance=1e-3)
    add("ppermute ring shard_map", "f32", "8MiB/device",
        lambda mesh: (shard_map(mesh, lambda a: lax.ppermute(
            a, "x", [(i, (i + 1) % 8) for i in range(8)]), P("x"), P("x")),
            (mesh1(mesh),)),
        lambda rng: (normal(rng, (8 * 2 * MI,), "f32"),))
    add("all_to_all shard_map", "f32", "8MiB/device",
        lambda mesh: (shard_map(mesh, lambda a: lax.all_to_all(
            a, "x", 0, 0, tiled=True), P("x"), P("x")), (mesh1(mesh),)),
        lambda rng: (normal(rng, (8 * 2 * MI,), "f32"),))
    add("gelu jit sharded", "f32", "16Mi",
        lambda mesh: (lambda x: jax.nn.gelu(x), (mesh1(mesh),)),
        lambda rng: (normal(rng, (16 * MI,), "f32"),))
    add("matmul jit sharded contracting", "f32", "2048",
        lambda mesh: (lambda a, b: a @ b,
                      (NamedSharding(mesh, P(None, "x")),
                       NamedSharding(mesh, P("x", None)))),
        lambda rng: (normal(rng, (2048, 2048), "f32", 1 / 45),
                     normal(rng, (2048, 2048), "f32")), tolerance=1e-3)

    def dp_build(mesh):
        rep = NamedSharding(mesh, P())
        return sgd_step, ((rep, rep), mesh1(mesh), mesh1(mesh))

    def dp_args(rng):
        params = mlp_params(rng, [784, 512, 10])
        return ((params, np.zeros((), np.float32)),
                normal(rng, (1024, 784), "f32"),
                rng.integers(0, 10, (1024,), dtype=np.int32))
    add("data-parallel MLP SGD step", "f32", "784-512-10 b1024", dp_build,
        dp_args, step=True, tags=("train",), tolerance=1e-3)


TABLES = [train_table, loops_table, patterns_table, sharded_table]
