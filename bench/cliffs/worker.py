"""One backend's run of one group of cases: a child process of run.py.

    worker.py --backend kiln|cpu --group main|x64|dev8 --cases FILE
              --results FILE --refs DIR [--full] [--seconds S]

Only its own platform is loaded (JAX_PLATFORMS=kiln or cpu): after a
call each backend's idle threads spin for a while, and beside the other
backend they took its cores (bench/suite/op_sweep.py). jax_enable_x64
and the device count are fixed when JAX starts, hence one process per
backend and group.

For each case id in FILE (in order) it appends to the results file a line
{"start": id}, then one with the case's figures or its error; run.py reads
them as they come, and after a crash knows which case was running. The
XLA:CPU run saves each case's results in DIR; the Kiln run, which comes
after it, compares its own with them.
"""

import argparse
import faulthandler
import gc
import json
import os
import sys
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(os.path.dirname(HERE), "suite")


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--backend", choices=["kiln", "cpu"], required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--cases", required=True, help="file of case ids")
    p.add_argument("--results", required=True, help="JSON lines, appended")
    p.add_argument("--refs", required=True, help="XLA:CPU's results")
    p.add_argument("--full", action="store_true")
    p.add_argument("--no-check", action="store_true",
                   help="time only: save and compare no results")
    p.add_argument("--seconds", type=float, default=0.2)
    p.add_argument("--min-repeats", type=int, default=3)
    p.add_argument("--max-repeats", type=int, default=300)
    p.add_argument("--slow", type=float, default=3.0,
                   help="a first call (less compile) slower than this is "
                        "the case's only timed call")
    p.add_argument("--build-dir", required=True)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    suite_run = suite_module("run")  # the suite's environment set-up
    suite_run.set_up_environment(args.build_dir)
    if args.backend == "cpu":  # no Kiln plugin to discover (and log about)
        sys.path.remove(os.path.join(suite_run.REPO, "python"))
    faulthandler.enable()  # a crash leaves its Python stack in the log
    sys.path.insert(0, HERE)  # before the suite's folder: report.py, run.py
    os.environ["JAX_PLATFORMS"] = args.backend
    # XLA:CPU's LAPACK calls (qr, svd, eigh, ...) run in scipy's OpenBLAS,
    # whose threads spun beside XLA's own pool: qr of 256 took 1 s
    # instead of 5 ms on 2 cores. One BLAS thread, unless the caller
    # says otherwise; numpy's own calls here use it too.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    warnings.simplefilter("ignore")  # donation notes, complex casts, ...

    import jax
    import numpy as np

    jax.config.update("jax_enable_compilation_cache", False)
    jax.monitoring.register_event_duration_secs_listener(on_event)
    if "x64" in args.group:
        jax.config.update("jax_enable_x64", True)
    devices_wanted = int(args.group[3:].split("-")[0]) \
        if args.group.startswith("dev") else 1
    if devices_wanted > 1:
        jax.config.update("jax_num_cpu_devices", devices_wanted)

    import registry
    from timing import Budget, run_sampler

    with open(args.cases, encoding="utf-8") as f:
        wanted = [line.rstrip("\n") for line in f if line.strip()]
    cases = {c.id: c for c in registry.all_cases(args.full)}
    results = open(args.results, "a", encoding="utf-8")

    def emit(record):
        results.write(json.dumps(record) + "\n")
        results.flush()

    devices = jax.devices(args.backend)
    emit({"hello": {"backend": args.backend, "group": args.group,
                    "platform_version": " ".join(
                        devices[0].client.platform_version.split()),
                    "devices": len(devices), "pid": os.getpid()}})
    mesh = None
    if devices_wanted > 1:
        if len(devices) < devices_wanted:
            raise SystemExit(f"{args.backend} has {len(devices)} devices, "
                             f"not {devices_wanted}")
        mesh = jax.sharding.Mesh(np.array(devices[:devices_wanted]), ("x",))
    budget = Budget(warmup=0, min_repeats=args.min_repeats,
                    max_repeats=args.max_repeats, seconds=args.seconds)

    for count, case_id in enumerate(wanted):
        emit({"start": case_id})
        record = {"id": case_id, "load_average": os.getloadavg()[0]}
        try:
            record.update(run_case(cases[case_id], jax, np, devices[0], mesh,
                                   budget, run_sampler, args))
        except Exception as error:  # a failure is a finding, not the end
            message = f"{type(error).__name__}: {error}"
            record["error"] = " ".join(message.split())[:600]
            record["traceback"] = traceback.format_exc()[-1500:]
        emit(record)
        if count % 20 == 19:  # not after every case: a collection takes
            jax.clear_caches()  # 0.1 s with JAX loaded
            gc.collect()
    return 0


# JAX's compile events of the case running (jax.monitoring): how much of
# its first call was tracing, lowering and the backend's compile.
COMPILE_EVENTS = []
BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"
TRACE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration",
                "/jax/core/compile/jaxpr_to_mlir_module_duration",
                BACKEND_COMPILE)


def on_event(event, duration, **kwargs):
    if event in TRACE_EVENTS:
        COMPILE_EVENTS.append((event, duration))


def suite_module(name):
    """A module of bench/suite, loaded under another name: run.py and
    report.py are also names of this folder's files."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        f"kiln_suite_{name}", os.path.join(SUITE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def widen(a):
    """What is saved and compared: bf16 and f16 as f32 (np.save keeps no
    ml_dtypes)."""
    import numpy as np
    if a.dtype.name in ("bfloat16", "float16"):
        return a.astype(np.float32)
    if a.dtype.kind == "V" or a.dtype.name.startswith("float8"):
        return a.astype(np.float32)
    return a


def run_case(case, jax, np, device, mesh, budget, run_sampler, args) -> dict:
    import registry

    host_args = case.args(np.random.default_rng(registry.seed_of(case.id)))
    if case.sharded is not None:
        fn, shardings = case.sharded(mesh)
        placed = tuple(jax.device_put(a, s)
                       for a, s in zip(host_args, shardings))
    else:
        fn = case.fn
        placed = tuple(jax.device_put(a, device) for a in host_args)
    del host_args
    jitted = jax.jit(fn, donate_argnums=(0,) if case.step else ())

    COMPILE_EVENTS.clear()
    start = time.perf_counter()
    out = jitted(*placed)
    jax.block_until_ready(out)
    first_call = time.perf_counter() - start
    compile_s = sum(d for e, d in COMPILE_EVENTS if e == BACKEND_COMPILE)
    trace_s = sum(d for e, d in COMPILE_EVENTS if e != BACKEND_COMPILE)
    leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(out)]
    record = {"first_call_s": first_call, "compile_s": compile_s,
              "trace_lower_s": trace_s,
              "out_dtypes": [leaf.dtype.name for leaf in leaves],
              "out_shapes": [list(leaf.shape) for leaf in leaves]}
    record.update(handle_results(case, leaves, args))
    del leaves
    first_run = first_call - compile_s - trace_s
    if first_run > args.slow:
        # Too slow to repeat within the budget: the first call, less its
        # tracing, lowering and compile, is the figure.
        del out
        record.update({"median_s": first_run, "min_s": first_run,
                       "repeats": 1, "timed_by": "first call less compile"})
        return record

    state = [out if case.step else None]
    del out
    rest = placed[1:]

    def call():
        if case.step:
            state[0] = jitted(state[0], *rest)
            jax.block_until_ready(state[0])
        else:
            jax.block_until_ready(jitted(*placed))

    # Warm-up: two calls after the compiling one (one, where a call takes
    # longer than the whole budget).
    start = time.perf_counter()
    call()
    if time.perf_counter() - start < budget.seconds:
        call()
    samples = run_sampler(call)(budget, False)
    samples.sort()
    record.update({"median_s": samples[len(samples) // 2]
                   if len(samples) % 2 else
                   (samples[len(samples) // 2 - 1] +
                    samples[len(samples) // 2]) / 2,
                   "min_s": samples[0], "repeats": len(samples)})
    return record


def handle_results(case, leaves, args) -> dict:
    """XLA:CPU saves its results; Kiln compares its own with them."""
    import numpy as np
    import registry

    if args.no_check:
        return {}
    path = os.path.join(args.refs, f"{registry.seed_of(case.id):08x}.npz")
    names = [leaf.dtype.name for leaf in leaves]
    if args.backend == "cpu":
        if case.check:
            np.savez(path, *[widen(a) for a in leaves],
                     dtypes=np.array(names))
        return {}
    if not case.check:
        return {"checked": False}
    if not os.path.exists(path):
        return {"checked": False, "check_note": "no XLA:CPU result saved"}
    with np.load(path) as saved:
        count = len(saved.files) - 1
        reference = [saved[f"arr_{i}"] for i in range(count)]
        ref_names = [str(n) for n in saved["dtypes"]]
    os.unlink(path)
    if len(reference) != len(leaves):
        return {"checked": True, "mismatch": True,
                "mismatch_detail": f"{len(leaves)} results where XLA:CPU "
                                   f"gives {len(reference)}"}
    details = []
    for i, (ref, got, name, ref_name) in enumerate(
            zip(reference, leaves, names, ref_names)):
        if name != ref_name:
            why = f"type {name} where XLA:CPU gives {ref_name}"
        else:
            why = registry.compare(ref, widen(got), name, case.tolerance)
        if why:
            details.append(f"result {i}: {why}" if len(leaves) > 1 else why)
    return {"checked": True, "mismatch": bool(details),
            "mismatch_detail": "; ".join(details)[:1000] if details else None}


if __name__ == "__main__":
    sys.exit(main())
