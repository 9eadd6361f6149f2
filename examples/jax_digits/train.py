#!/usr/bin/env python3
"""Trains an MLP on scikit-learn's handwritten digits with JAX, on Kiln and on
JAX's CPU backend (XLA:CPU), and compares the two.

The same program runs on every platform named by --platform: the 8x8 images
go to the device once, the parameters and Adam's state stay there and are
donated to each jit-compiled training step, and each step picks its batch on
the device from a shuffled index array sent once per epoch. The script prints
the loss falling, the test accuracy, milliseconds per step on each platform,
and what crossed the PJRT boundary (compiles, executes, transfers) as far as
Python can see it.

    JAX_PLATFORMS=kiln,cpu python examples/jax_digits/train.py
    python examples/jax_digits/train.py --platform kiln --steps 500 --devices 2

KILN_PLUGIN_LIBRARY points jax_plugins.kiln at another build of the plugin.
"""

import argparse
import collections
import logging
import os
import sys
import time
import warnings


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300,
                        help="training steps per platform (default 300)")
    parser.add_argument("--batch", type=int, default=64,
                        help="global batch size (default 64)")
    parser.add_argument("--platform", default="kiln,cpu",
                        help="comma-separated platforms to run on, in order "
                             "(default kiln,cpu)")
    parser.add_argument("--devices", type=int, default=1,
                        help="devices per platform; more than 1 splits each "
                             "batch across them (data parallel, gradients "
                             "averaged on the first device)")
    parser.add_argument("--lr", type=float, default=3e-3,
                        help="Adam learning rate (default 3e-3)")
    parser.add_argument("--hidden", type=int, default=128,
                        help="hidden units (default 128: 64-128-10)")
    parser.add_argument("--log-every", type=int, default=50,
                        help="print the loss every N steps (default 50)")
    parser.add_argument("--time-steps", type=int, default=200,
                        help="steps timed after warm-up (default 200)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the split, the init and the shuffles")
    args = parser.parse_args(argv)
    args.platforms = [p.strip() for p in args.platform.split(",") if p.strip()]
    if not args.platforms:
        parser.error("--platform names no platform")
    if args.devices < 1 or args.batch % args.devices:
        parser.error("--batch must be a multiple of --devices (>= 1)")
    return args


ARGS = parse_args(sys.argv[1:])

# Before jax is imported: the platforms to load, and the device counts.
_loaded = [p for p in os.environ.get("JAX_PLATFORMS", "").split(",") if p]
if not set(ARGS.platforms) <= set(_loaded):
    os.environ["JAX_PLATFORMS"] = ",".join(
        dict.fromkeys(_loaded + ARGS.platforms))
if ARGS.devices > 1:
    os.environ["KILN_CPU_DEVICE_COUNT"] = str(
        max(ARGS.devices, int(os.environ.get("KILN_CPU_DEVICE_COUNT", "1"))))
warnings.filterwarnings("ignore", message="Platform 'kiln' is experimental")


class _QuietExperimental(logging.Filter):
    """Drops JAX's one-line notice that a plugin platform is experimental."""

    def filter(self, record):
        return "is experimental" not in record.getMessage()


logging.getLogger("jax._src.xla_bridge").addFilter(_QuietExperimental())

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

from model import adam, forward, init_adam, loss_fn  # noqa: E402  (beside this file)

if ARGS.devices > 1:
    jax.config.update("jax_num_cpu_devices", ARGS.devices)

COMPILE_EVENTS = {
    "/jax/core/compile/jaxpr_trace_duration": "traces",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lowerings",
    "/jax/core/compile/backend_compile_duration": "compiles",
}


class Seam:
    """What crossed the PJRT boundary while one platform ran.

    Compiles come from jax.monitoring's compile events (JAX reports no
    platform with them; platforms run one after another, so each event
    belongs to the platform running). Executes and transfers are counted
    where this script makes them: every device computation is a call of a
    jitted function on one device (one PJRT execute), and every transfer is
    an explicit jax.device_put / jax.device_get in to_device / to_host. The
    loops run under jax.transfer_guard("disallow"), so an implicit transfer
    (a numpy argument to a jitted call, float() of a device array) would
    have raised rather than gone uncounted.
    """

    current = None

    def __init__(self):
        self.counts = collections.Counter()
        self.seconds = collections.Counter()

    def record(self, kind, count=1, nbytes=0, seconds=0.0):
        self.counts[kind] += count
        self.counts[kind + "_bytes"] += nbytes
        self.seconds[kind] += seconds

    @classmethod
    def on_compile_event(cls, event, duration, **kwargs):
        if cls.current is not None and event in COMPILE_EVENTS:
            cls.current.record(COMPILE_EVENTS[event], seconds=duration)


jax.monitoring.register_event_duration_secs_listener(Seam.on_compile_event)


def tree_bytes(tree):
    return sum(np.asarray(leaf).nbytes if not isinstance(leaf, jax.Array)
               else leaf.nbytes for leaf in jax.tree.leaves(tree))


def to_device(tree, device):
    """jax.device_put, counted: host->device or device->device."""
    on_device = [leaf for leaf in jax.tree.leaves(tree)
                 if isinstance(leaf, jax.Array)]
    kind = "d2d" if on_device else "h2d"
    Seam.current.record(kind, len(jax.tree.leaves(tree)), tree_bytes(tree))
    return jax.device_put(tree, device)


def to_host(tree):
    """jax.device_get, counted."""
    Seam.current.record("d2h", len(jax.tree.leaves(tree)), tree_bytes(tree))
    return jax.device_get(tree)


def counted(fn):
    """A jitted function whose calls are counted as executes."""
    def call(*args):
        Seam.current.record("executes")
        return fn(*args)
    call.jitted = fn
    return call


# ---------------------------------------------------------------- the model

def load_data(seed):
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # (1797, 64) in [0, 1]
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = len(x) // 5
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def init_params(seed, hidden):
    rng = np.random.default_rng(seed + 1)
    sizes = [64, hidden, 10]
    return [{"w": (rng.standard_normal((m, n)) * np.sqrt(2.0 / m)).astype(
                 np.float32),
             "b": np.zeros((n,), np.float32)}
            for m, n in zip(sizes[:-1], sizes[1:])]


def batch_of(x_all, y_all, perm, t, batch, shard, shards):
    """The `shard`-th part of step t's batch, taken from this epoch's perm."""
    per_epoch = perm.shape[0] // batch
    size = batch // shards
    start = (t % per_epoch) * batch + shard * size
    idx = jax.lax.dynamic_slice(perm, (start,), (size,))
    return x_all[idx], y_all[idx]


def make_programs(batch, shards, lr):
    """The jitted programs; the same functions serve every platform."""

    def train_step(params, opt_state, x_all, y_all, perm):
        xb, yb = batch_of(x_all, y_all, perm, opt_state["t"], batch, 0, 1)
        loss, grads = jax.value_and_grad(loss_fn)(params, xb, yb)
        params, opt_state = adam(params, grads, opt_state, lr)
        return params, opt_state, loss

    def shard_grads(params, t, x_all, y_all, perm, shard):
        xb, yb = batch_of(x_all, y_all, perm, t, batch, shard, shards)
        loss, grads = jax.value_and_grad(loss_fn)(params, xb, yb)
        return loss, grads, t + 1

    def apply_grads(params, opt_state, losses, grads):
        mean = jax.tree.map(lambda *g: sum(g) / len(g), *grads)
        params, opt_state = adam(params, mean, opt_state, lr)
        return params, opt_state, sum(losses) / len(losses)

    def correct(params, x, y):
        return jnp.sum(jnp.argmax(forward(params, x), axis=1) == y)

    return {
        # Parameters and Adam's state are donated: updated in place.
        "train_step": counted(jax.jit(train_step, donate_argnums=(0, 1))),
        "shard_grads": counted(jax.jit(shard_grads, static_argnums=5,
                                       donate_argnums=1)),
        "apply_grads": counted(jax.jit(apply_grads, donate_argnums=(0, 1))),
        "correct": counted(jax.jit(correct)),
    }


# ------------------------------------------------------------ the training

class Trainer:
    """One platform's run: data and state on its devices, steps, eval."""

    def __init__(self, platform, devices, data, programs, args):
        self.platform, self.devices, self.args = platform, devices, args
        self.programs = programs
        x_train, y_train, x_test, y_test = data
        self.n_train = len(x_train)
        self.rng = np.random.default_rng(args.seed + 2)
        self.epoch_steps = self.n_train // args.batch
        first = devices[0]
        host_params = init_params(args.seed, args.hidden)
        self.params = to_device(host_params, first)
        self.opt_state = to_device(init_adam(host_params), first)
        self.replicas = [(d, to_device((x_train, y_train), d))
                         for d in devices]
        self.test = to_device((x_test, y_test), first)
        self.steps_done = 0
        self.perms = None
        # Data parallel: each device counts steps to find its batch.
        self.counters = [to_device(np.zeros((), np.int32), d)
                         for d in devices] if len(devices) > 1 else []
        self.donation_honored = None

    def _new_epoch(self):
        perm = self.rng.permutation(self.n_train).astype(np.int32)
        self.perms = [to_device(perm, d) for d in self.devices]

    def step(self):
        """One training step; returns the loss (on the first device)."""
        if self.steps_done % self.epoch_steps == 0:
            self._new_epoch()
        old = self.params
        if len(self.devices) == 1:
            (x_all, y_all), perm = self.replicas[0][1], self.perms[0]
            self.params, self.opt_state, loss = self.programs["train_step"](
                self.params, self.opt_state, x_all, y_all, perm)
        else:
            loss = self._data_parallel_step()
        if self.donation_honored is None:
            self.donation_honored = all(leaf.is_deleted()
                                        for leaf in jax.tree.leaves(old))
        self.steps_done += 1
        return loss

    def _data_parallel_step(self):
        """Each device takes its part of the batch; the first averages."""
        first = self.devices[0]
        copies = [self.params] + [to_device(self.params, d)
                                  for d in self.devices[1:]]
        losses, grads = [], []
        for shard in range(len(self.devices)):
            x_all, y_all = self.replicas[shard][1]
            loss, shard_grads, self.counters[shard] = \
                self.programs["shard_grads"](copies[shard],
                                             self.counters[shard], x_all,
                                             y_all, self.perms[shard], shard)
            if shard:
                loss, shard_grads = to_device((loss, shard_grads), first)
            losses.append(loss)
            grads.append(shard_grads)
        self.params, self.opt_state, loss = self.programs["apply_grads"](
            self.params, self.opt_state, losses, grads)
        return loss

    def accuracy(self):
        x_test, y_test = self.test
        correct = int(to_host(self.programs["correct"](self.params, x_test,
                                                       y_test)))
        return correct, len(y_test)


def run_platform(platform, data, programs, args):
    devices = jax.devices(platform)[:args.devices]
    if len(devices) < args.devices:
        raise SystemExit(f"{platform} has {len(devices)} devices, "
                         f"--devices asks for {args.devices}")
    seam = Seam()
    Seam.current = seam
    result = {"seam": seam, "devices": devices}
    with jax.transfer_guard("disallow"):
        trainer = Trainer(platform, devices, data, programs, args)
        losses = []
        start = time.perf_counter()
        for step in range(args.steps):
            loss = trainer.step()
            if step % args.log_every == 0 or step == args.steps - 1:
                value = float(to_host(loss))
                losses.append((step, value))
                print(f"[{platform}] step {step:4d}  loss {value:.4f}",
                      flush=True)
        result["train_seconds"] = time.perf_counter() - start
        result["losses"] = losses
        result["accuracy"] = trainer.accuracy()
        result["donation_honored"] = trainer.donation_honored

        # Timing: the same step, compiled and warm, many times back to back.
        for _ in range(5):
            loss = trainer.step()
        jax.block_until_ready((trainer.params, loss))
        start = time.perf_counter()
        for _ in range(args.time_steps):
            loss = trainer.step()
        jax.block_until_ready((trainer.params, loss))
        result["ms_per_step"] = (time.perf_counter() - start) * 1e3 / max(
            1, args.time_steps)
    live = [a for a in jax.live_arrays(platform)
            if not a.is_deleted() and a.devices() <= set(devices)]
    result["live"] = (len(live), sum(a.nbytes for a in live))
    Seam.current = None
    del trainer
    return result


def print_report(args, results):
    platforms = list(results)
    print()
    print("test accuracy")
    for p in platforms:
        correct, total = results[p]["accuracy"]
        print(f"  {p:6s} {100.0 * correct / total:5.1f}%  ({correct}/{total})"
              f"  final loss {results[p]['losses'][-1][1]:.4f}")
    if len(platforms) > 1:
        first = results[platforms[0]]["losses"]
        for p in platforms[1:]:
            diff = max(abs(a[1] - b[1]) for a, b in
                       zip(first, results[p]["losses"]))
            print(f"  largest difference of the logged losses, "
                  f"{platforms[0]} vs {p}: {diff:.2e}")

    print()
    print(f"milliseconds per training step ({args.time_steps} steps after "
          f"warm-up, block_until_ready at the end; batch {args.batch}, "
          f"{args.devices} device{'s' if args.devices > 1 else ''})")
    for p in platforms:
        print(f"  {p:6s} {results[p]['ms_per_step']:8.3f} ms")
    if len(platforms) > 1:
        base = results[platforms[-1]]["ms_per_step"]
        for p in platforms[:-1]:
            print(f"  {p} / {platforms[-1]}: "
                  f"{results[p]['ms_per_step'] / base:.2f}x")

    print()
    print("seam metrics: what crossed the PJRT boundary, seen from Python")
    print("  (JAX has no API for a plugin's own metrics. compiles: "
          "jax.monitoring compile events;")
    print("   executes and transfers: counted at this script's jitted calls "
          "and jax.device_put/device_get,")
    print("   under jax.transfer_guard('disallow'), which refuses implicit "
          "transfers)")
    header = "  " + " " * 34 + "".join(f"{p:>16s}" for p in platforms)
    print(header)

    def row(label, fn):
        print(f"  {label:34s}" + "".join(f"{fn(results[p]):>16s}"
                                         for p in platforms))

    def count(kind, with_bytes=False):
        def fn(r):
            c = r["seam"].counts
            text = str(c[kind])
            if with_bytes:
                text += f" / {human(c[kind + '_bytes'])}"
            return text
        return fn

    row("jaxpr traces", count("traces"))
    row("lowerings to StableHLO", count("lowerings"))
    row("backend compiles", count("compiles"))
    row("backend compile time (s)",
        lambda r: f"{r['seam'].seconds['compiles']:.3f}")
    row("executes", count("executes"))
    row("host->device transfers / bytes", count("h2d", True))
    row("device->device transfers / bytes", count("d2d", True))
    row("device->host transfers / bytes", count("d2h", True))
    row("donated params deleted by step 1",
        lambda r: "yes" if r["donation_honored"] else "NO")
    row("live arrays on device at end / bytes",
        lambda r: f"{r['live'][0]} / {human(r['live'][1])}")
    print("  (traces happen once per program: a platform that runs second "
          "reuses the first one's)")


def human(nbytes):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if nbytes < 1024 or unit == "GiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else \
                f"{nbytes:.1f} {unit}"
        nbytes /= 1024


def main():
    args = ARGS
    data = load_data(args.seed)
    programs = make_programs(args.batch, args.devices, args.lr)
    print(f"JAX {jax.__version__}; platforms: " + ", ".join(
        f"{p} ({len(jax.devices(p))} device"
        f"{'s' if len(jax.devices(p)) > 1 else ''}, {jax.devices(p)[0]})"
        for p in args.platforms))
    print(f"digits: {len(data[0])} train / {len(data[2])} test images, 8x8; "
          f"MLP 64-{args.hidden}-10, Adam lr {args.lr}, batch {args.batch}, "
          f"{args.steps} steps, {args.devices} device(s) per platform")
    results = {}
    for platform in args.platforms:
        print()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results[platform] = run_platform(platform, data, programs, args)
        for w in {str(w.message).splitlines()[0] for w in caught}:
            print(f"[{platform}] warning: {w}")
    print_report(args, results)
    low = [p for p in results
           if results[p]["accuracy"][0] < 0.9 * results[p]["accuracy"][1]]
    if low:
        print(f"test accuracy under 90% on {', '.join(low)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
