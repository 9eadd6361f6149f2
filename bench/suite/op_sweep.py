"""Kiln beside XLA:CPU on single JAX operations: a sweep for performance
cliffs.

The suite's rows (run.py) are whole models; a model that does not use an
operation says nothing of it. This sweep times about forty common JAX
operations (scans, sorts, top_k, gather and scatter, pooling, linear
algebra, FFT, random numbers, loops, ...) at moderate sizes on Kiln and
on XLA:CPU, and prints each with Kiln's time over XLA:CPU's, slowest
first, marking those where Kiln takes more than twice XLA:CPU's time. It
has no goals: it says where to look next.

Each backend is timed in a process of its own (this script again, with
`--backend`), with only its own platform loaded: after a call, each
backend's idle threads spin for a while, and in one process they took
the other backend's cores (XLA:CPU's `jax.random.uniform` measured 1.2 ms
alone and 4.8 ms beside Kiln).

    KILN_SHARED_DIR=../shared .venv/bin/python bench/suite/op_sweep.py \\
        [--only NAME,...] [--seconds S] [--json FILE]

`--probe NAME` runs Kiln alone in one process and times case NAME after
each other case: a program that leaves the process slower shows as a
jump that stays (an argsort run on the caller's thread once made every
later `solve 256` three times slower; docs/exec.md).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run  # noqa: E402  (the suite's environment set-up)


def cases(np, jax, jnp, lax):
    """(name, function, arguments) of every operation swept."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 1024)).astype(np.float32)
    v = rng.standard_normal((1 << 20,)).astype(np.float32)
    idx = rng.integers(0, 1024, (4096,)).astype(np.int32)
    rows = rng.standard_normal((4096, 1024)).astype(np.float32)
    img = rng.standard_normal((16, 64, 64, 32)).astype(np.float32)
    ker = (rng.standard_normal((3, 3, 32, 32)) * 0.1).astype(np.float32)
    sq = rng.standard_normal((256, 256)).astype(np.float32)
    # Without BLAS: numpy's matmul wakes OpenBLAS's threads, which then
    # spin beside the timed calls (Kiln's solve took 0.99 ms so, 0.57
    # without them).
    spd = (np.einsum("ik,jk->ij", sq, sq, optimize=False)
           + 256 * np.eye(256, dtype=np.float32))
    key = jax.random.PRNGKey(0)
    nhwc = ("NHWC", "HWIO", "NHWC")

    def conv(a, k):
        return lax.conv_general_dilated(a, k, (1, 1), "SAME",
                                        dimension_numbers=nhwc)

    def maxpool(a):
        return lax.reduce_window(a, -jnp.inf, lax.max, (1, 3, 3, 1),
                                 (1, 2, 2, 1), "SAME")

    return [
        ("cumsum rows", lambda a: jnp.cumsum(a, axis=1), (x,)),
        ("cumsum columns", lambda a: jnp.cumsum(a, axis=0), (x,)),
        ("cummax rows", lambda a: lax.cummax(a, axis=1), (x,)),
        ("sort rows", lambda a: jnp.sort(a, axis=1), (x,)),
        ("argsort rows", lambda a: jnp.argsort(a, axis=1), (x,)),
        ("top_k 8", lambda a: lax.top_k(a, 8)[0], (x,)),
        ("argmax rows", lambda a: jnp.argmax(a, axis=1), (x,)),
        ("argmin columns", lambda a: jnp.argmin(a, axis=0), (x,)),
        ("searchsorted", lambda a, q: jnp.searchsorted(jnp.sort(a[:65536]), q),
         (v, x[0])),
        ("take rows", lambda a, i: jnp.take(a, i, axis=0), (x, idx % 512)),
        ("gather elements", lambda a, i: a[i], (v, idx)),
        ("scatter-add rows", lambda g, i: jnp.zeros((1024, 1024)).at[i].add(g),
         (rows, idx)),
        ("segment_sum", lambda a, i: jax.ops.segment_sum(
            a[:4096], i, num_segments=1024), (v, idx)),
        ("one_hot", lambda i: jax.nn.one_hot(i, 1024), (idx,)),
        ("logsumexp rows", lambda a: jax.nn.logsumexp(a, axis=1), (x,)),
        ("log_softmax rows", lambda a: jax.nn.log_softmax(a, axis=1), (x,)),
        ("var rows", lambda a: jnp.var(a, axis=1), (x,)),
        ("norm rows", lambda a: jnp.linalg.norm(a, axis=1), (x,)),
        ("mean bf16 rows", lambda a: jnp.mean(a.astype(jnp.bfloat16), axis=1),
         (x,)),
        ("any/all rows", lambda a: jnp.any(a > 3, axis=1) | jnp.all(a < 3, axis=1),
         (x,)),
        ("where + clip", lambda a: jnp.where(a > 0, jnp.clip(a, -1, 1), a * a),
         (x,)),
        ("tanh + exp", lambda a: jnp.tanh(a) + jnp.exp(-a * a), (v,)),
        ("erf", lax.erf, (v,)),
        ("relu", jax.nn.relu, (v,)),
        ("truncated normal 1 Mi", lambda k: jax.random.truncated_normal(
            k, -2.0, 2.0, (1 << 20,)), (key,)),
        ("transpose", lambda a: a.T + 1, (x,)),
        ("concatenate", lambda a: jnp.concatenate([a, a * 2], axis=1), (x,)),
        ("pad", lambda a: jnp.pad(a, ((1, 1), (3, 3))), (x,)),
        ("max pool 3x3/2", maxpool, (img,)),
        ("avg pool 2x2/2", lambda a: lax.reduce_window(
            a, 0., lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4, (img,)),
        ("max pool gradient", lambda a: jax.grad(
            lambda b: jnp.sum(maxpool(b)))(a), (img,)),
        ("conv 3x3", conv, (img, ker)),
        ("conv 3x3 weight gradient", lambda a, k: jax.grad(
            lambda kk: jnp.sum(conv(a, kk) ** 2))(k), (img, ker)),
        ("bf16 matmul 256", lambda a: (a.astype(jnp.bfloat16)
                                       @ a.astype(jnp.bfloat16)).astype(
                                           jnp.float32), (sq,)),
        ("random normal 1 Mi", lambda k: jax.random.normal(k, (1 << 20,)),
         (key,)),
        ("random uniform 1 Mi", lambda k: jax.random.uniform(k, (1 << 20,)),
         (key,)),
        ("cholesky 256", jnp.linalg.cholesky, (spd,)),
        ("solve 256", jnp.linalg.solve, (spd, sq)),
        ("qr 256", lambda a: jnp.linalg.qr(a)[1], (sq,)),
        ("svd 256 (values)", lambda a: jnp.linalg.svd(a, compute_uv=False),
         (sq,)),
        ("eigh 256", lambda a: jnp.linalg.eigh(a)[0], (spd,)),
        ("fft 1 Mi", lambda a: jnp.abs(jnp.fft.fft(a)), (v,)),
        ("rfft2 512x1024", lambda a: jnp.abs(jnp.fft.rfft2(a)), (x,)),
        ("fori_loop 100 steps", lambda a: lax.fori_loop(
            0, 100, lambda i, c: c * 0.99 + 0.01, a), (x,)),
        ("scan 64 steps (RNN 256)", lambda a, w: lax.scan(
            lambda c, xi: (jnp.tanh(c @ w + xi[:256]), None),
            jnp.zeros(256), a[:64])[0], (x, sq * 0.05)),
        ("scan 512 steps, stacked", lambda a, w: lax.scan(
            lambda c, xi: (jnp.tanh(c @ w + xi[:256]),) * 2,
            jnp.zeros(256), a)[1], (x, sq * 0.05)),
    ]


def time_it(function, arguments, device, jax, seconds):
    """Median seconds of one call, after two warm-up calls."""
    placed = [jax.device_put(a, device) for a in arguments]
    for _ in range(2):
        jax.block_until_ready(function(*placed))
    samples = []
    start = time.perf_counter()
    while len(samples) < 5 or (time.perf_counter() - start < seconds
                               and len(samples) < 200):
        t = time.perf_counter()
        jax.block_until_ready(function(*placed))
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def time_backend(args) -> dict:
    """{name: seconds or "error: ..."} for the selected cases on one backend,
    in this process (`--backend`)."""
    run.set_up_environment(args.build_dir)
    os.environ["JAX_PLATFORMS"] = args.backend
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    device = jax.devices(args.backend)[0]
    wanted = args.only.split(",") if args.only else None
    timings = {}
    for name, function, arguments in cases(np, jax, jnp, lax):
        if wanted and not any(w in name for w in wanted):
            continue
        try:
            timings[name] = time_it(jax.jit(function), arguments, device, jax,
                                    args.seconds)
        except Exception as error:  # a failure is a finding too
            timings[name] = (f"error: {type(error).__name__}: "
                             f"{str(error)[:200]}")
    return timings


def probe(args) -> int:
    """Kiln alone, in this process: the case `args.probe` timed first, then
    again after each other case (sweep order). A program that leaves the
    process in a worse state (a second OpenMP team, say) shows as a jump
    that stays."""
    run.set_up_environment(args.build_dir)
    os.environ["JAX_PLATFORMS"] = "kiln"
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    device = jax.devices("kiln")[0]
    every = cases(np, jax, jnp, lax)
    probed = [c for c in every if args.probe in c[0]]
    if not probed:
        raise SystemExit(f"op_sweep: no case named like {args.probe!r}")
    name, function, arguments = probed[0]
    probe_fn = jax.jit(function)
    first = time_it(probe_fn, arguments, device, jax, args.seconds)
    print(f"{name} first: {first * 1e3:.3f} ms", flush=True)
    afters = []
    for other, other_fn, other_args in every:
        if other == name:
            continue
        time_it(jax.jit(other_fn), other_args, device, jax, args.seconds)
        afters.append(time_it(probe_fn, arguments, device, jax, args.seconds))
        print(f"  after {other:26s} {afters[-1] * 1e3:8.3f} ms", flush=True)
    # The first figure comes from a process that has run little yet; the
    # median of the others is the steady state a jump is measured from.
    middle = statistics.median(afters)
    print(f"after each other case: median {middle * 1e3:.3f} ms, slowest "
          f"{max(afters) * 1e3:.3f} ms ({max(afters) / middle:.2f}x the "
          "median)")
    return 0


def time_in_child(backend: str, args) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--backend", backend,
               "--seconds", str(args.seconds), "--build-dir", args.build_dir]
    if args.only:
        command += ["--only", args.only]
    child = subprocess.run(command, capture_output=True, text=True)
    if child.returncode != 0:
        raise SystemExit(f"op_sweep: the {backend} run failed:\n"
                         f"{child.stderr[-2000:]}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated names (substrings)")
    parser.add_argument("--seconds", type=float, default=0.3,
                        help="time budget of one figure (default 0.3)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--build-dir", default=os.path.join(run.REPO, "build"))
    parser.add_argument("--probe", metavar="NAME",
                        help="Kiln only: time case NAME after each other "
                        "case, in one process")
    parser.add_argument("--backend", choices=["kiln", "cpu"],
                        help=argparse.SUPPRESS)  # a child's one backend
    args = parser.parse_args(argv)
    if args.backend:
        print(json.dumps(time_backend(args)))
        return 0
    if args.probe:
        return probe(args)
    kiln = time_in_child("kiln", args)
    cpu = time_in_child("cpu", args)
    results = []
    for name, kiln_s in kiln.items():
        cpu_s = cpu.get(name, "error: not run on XLA:CPU")
        if isinstance(kiln_s, str) or isinstance(cpu_s, str):
            error = kiln_s if isinstance(kiln_s, str) else f"XLA:CPU {cpu_s}"
            results.append({"name": name, "error": error[len("error: "):]
                            if error.startswith("error: ") else error})
            print(f"{name:26s} error: {results[-1]['error']}", flush=True)
            continue
        results.append({"name": name, "kiln_ms": kiln_s * 1e3,
                        "xla_cpu_ms": cpu_s * 1e3,
                        "kiln_over_xla_cpu": kiln_s / cpu_s})
        print(f"{name:26s} {kiln_s * 1e3:10.3f} ms  XLA:CPU "
              f"{cpu_s * 1e3:10.3f} ms", flush=True)
    timed = [r for r in results if "error" not in r]
    timed.sort(key=lambda r: -r["kiln_over_xla_cpu"])
    print("\nslowest first (Kiln's time / XLA:CPU's; * above 2):")
    for r in timed:
        mark = " *" if r["kiln_over_xla_cpu"] > 2 else ""
        print(f"  {r['name']:26s} {r['kiln_over_xla_cpu']:7.2f}{mark}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": run.machine_info(), "results": results}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
