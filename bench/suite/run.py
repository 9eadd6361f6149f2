#!/usr/bin/env python3
"""Kiln's benchmark suite: Kiln beside its peers, measured in one run.

    scripts/bench.sh [--quick] [--rows 1,2,mlp_train] [--out DIR] [--no-torch]

(scripts/bench.sh sets up and builds what this needs, then runs this file
with the repository's virtual environment.) Prints a table, writes it as
JSON (`<out>/bench.json`) and draws it (`<out>/bench.png`); `<out>` is
`build/bench` unless `--out` says otherwise. The rows are listed in rows.py
and bench/suite/README.md.

Both backends live in this process (`JAX_PLATFORMS=kiln,cpu`): Kiln from
the build tree (`$KILN_PLUGIN_LIBRARY`, default
`<build>/lib/libpjrt_kiln.so`) and XLA:CPU from jaxlib. JAX's persistent
compilation cache is off and Kiln's client cache path is unset, so every
compile is a real one.
"""

import argparse
import dataclasses
import datetime
import logging
import os
import platform
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        description="Kiln beside XLA:CPU, PyTorch, memcpy and oneDNN.")
    parser.add_argument("--quick", action="store_true",
                        help="fewer repeats and smaller sizes (smoke tests)")
    parser.add_argument("--rows", default="all",
                        help="comma-separated groups (1-6 or gelu, dot, "
                             "models, layers, dispatch, compile) or model "
                             "ids (resnet50_b1, resnet50_b8, chess, "
                             "mlp_train, bert_layer, cnn_train); default all")
    parser.add_argument("--out", default=None,
                        help="folder for bench.json and bench.png "
                             "(default <build>/bench)")
    parser.add_argument("--build-dir", default=os.environ.get(
        "KILN_BUILD_DIR", os.path.join(REPO, "build")),
        help="Kiln's build folder (default $KILN_BUILD_DIR or build/)")
    parser.add_argument("--no-torch", action="store_true",
                        help="leave PyTorch out even where it is installed")
    parser.add_argument("--no-chart", action="store_true",
                        help="write no PNG")
    parser.add_argument("--seconds", type=float, default=None,
                        help="time budget of one figure (default 2 s; "
                             "0.2 s with --quick)")
    parser.add_argument("--profile", action="store_true",
                        help="after timing each row, trace a few of Kiln's "
                             "runs and list its heaviest steps (JSON: "
                             "kiln.profile)")
    return parser.parse_args(argv)


def set_up_environment(build_dir: str) -> None:
    """What must hold before JAX is imported."""
    os.environ["JAX_PLATFORMS"] = "kiln,cpu"
    os.environ["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    os.environ.pop("JAX_COMPILATION_CACHE_DIR", None)
    os.environ.pop("KILN_PERSISTENT_CACHE_PATH", None)
    library = os.path.join(build_dir, "lib", "libpjrt_kiln.so")
    if not os.environ.get("KILN_PLUGIN_LIBRARY") and os.path.isfile(library):
        os.environ["KILN_PLUGIN_LIBRARY"] = library
    # The package's sources (jax_plugins.kiln) from this checkout.
    sys.path.insert(0, os.path.join(REPO, "python"))
    sys.path.insert(0, HERE)
    warnings.filterwarnings("ignore", message="Platform 'kiln' is experimental")
    # JAX logs the same sentence when it loads any plugin.
    logging.getLogger("jax._src.xla_bridge").addFilter(
        lambda record: "is experimental" not in record.getMessage())


def machine_info() -> dict:
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), None)
    except OSError:
        pass
    return {"cpu": model, "cores_available": len(os.sched_getaffinity(0)),
            "load_average": list(os.getloadavg()),
            "python": platform.python_version()}


def main(argv=None) -> int:
    args = parse_arguments(argv)
    set_up_environment(args.build_dir)
    started = time.perf_counter()

    import jax
    jax.config.update("jax_enable_compilation_cache", False)
    import jaxlib
    import numpy as np

    import report
    import rows
    import torch_programs
    from timing import Budget

    try:
        kiln_devices = jax.devices("kiln")
        kiln_version = " ".join(
            kiln_devices[0].client.platform_version.split())
    except RuntimeError as e:
        print(f"bench: Kiln's platform is not available ({e}); build it "
              "(scripts/bench.sh does) or set KILN_PLUGIN_LIBRARY",
              file=sys.stderr)
        return 2
    try:
        groups, model_ids = rows.parse_selection(args.rows, args.quick)
    except ValueError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    torch_version = None if args.no_torch else torch_programs.available()
    torch_reason = None
    if args.no_torch:
        torch_reason = "left out (--no-torch)"
    elif torch_version is None:
        torch_reason = ("PyTorch not installed (scripts/bench.sh "
                        "--with-torch installs it)")
    budget = Budget.quick() if args.quick else Budget.default()
    if args.seconds is not None:
        budget = dataclasses.replace(budget, seconds=args.seconds)
    compile_budget = (Budget(warmup=0, min_repeats=1, max_repeats=1,
                             seconds=0.0) if args.quick else
                      Budget(warmup=0, min_repeats=2, max_repeats=5,
                             seconds=1.0))
    suite = rows.Suite(repo_root=REPO,
                       bin_dir=os.path.join(args.build_dir, "bin"),
                       budget=budget, compile_budget=compile_budget,
                       quick=args.quick, torch_reason=torch_reason,
                       profile=args.profile)
    machine = machine_info()
    cores = machine["cores_available"]
    print(f"[bench] {kiln_version} beside "
          f"XLA:CPU (jaxlib {jaxlib.__version__}), {cores} cores, "
          f"PyTorch: {torch_version or torch_reason}", flush=True)

    def log(message):
        print(message, flush=True)

    measured = rows.run_selection(suite, groups, model_ids, log)

    threads = {
        "cores_available": cores,
        "kiln": cores,  # its pool: one thread per core it may run on
        "xla_cpu": cores,  # its intra-op pool: the same rule
        "memcpy": [1, cores],
    }
    for row in measured:
        for name, figure in row.peers.items():
            if name == rows.ONEDNN and "threads" in figure.details:
                threads["onednn_sgemm"] = figure.details["threads"]
            if name == rows.TORCH and "threads" in figure.details:
                threads["torch"] = figure.details["threads"]
    date = datetime.datetime.now(datetime.timezone.utc)
    machine["load_average_end"] = list(os.getloadavg())
    document = {
        "suite": "kiln-bench",
        "format": 1,
        "date": date.isoformat(timespec="seconds"),
        "command": "scripts/bench.sh " + " ".join(argv if argv is not None
                                                  else sys.argv[1:]),
        "quick": args.quick,
        "rows_selected": args.rows,
        "ratio": "Kiln's speed / the peer's (peer time / Kiln time, or "
                 "Kiln rate / peer rate); above 1 Kiln is faster",
        "timing": {"budget": vars(budget),
                   "compile_budget": vars(compile_budget),
                   "figure": "median of the timed runs (best: their "
                             "minimum)"},
        "machine": machine,
        "threads": threads,
        "versions": {"kiln": kiln_version,
                     "jax": jax.__version__, "jaxlib": jaxlib.__version__,
                     "numpy": np.__version__, "torch": torch_version},
        "elapsed_s": None,
        "rows": [row.to_json() for row in measured],
    }
    out_dir = args.out or os.path.join(args.build_dir, "bench")
    json_path = os.path.join(out_dir, "bench.json")
    png_path = os.path.join(out_dir, "bench.png")
    print()
    print(report.table(measured))
    print()
    print(f"threads: Kiln {cores}, XLA:CPU {cores}, oneDNN "
          f"{threads.get('onednn_sgemm', 'n/a')}, PyTorch "
          f"{threads.get('torch', 'n/a')}, memcpy 1 and {cores} (the faster "
          f"is the peer); ratios are Kiln's speed / the peer's, medians of "
          f"the same run")
    print(f"goals: {report.summary(measured)}")
    if args.profile:
        print()
        print(report.profiles(measured))
    document["elapsed_s"] = round(time.perf_counter() - started, 1)
    report.write_json(json_path, document)
    print(f"json: {json_path}")
    if not args.no_chart:
        title = (f"Kiln beside its peers, {date:%Y-%m-%d}, {cores} cores"
                 f"{' (quick)' if args.quick else ''}")
        why_not = report.write_chart(png_path, measured, title)
        print(f"chart: {why_not or png_path}")
    print(f"[bench] done in {document['elapsed_s']} s")
    return 1 if any(row.error for row in measured) else 0


if __name__ == "__main__":
    sys.exit(main())
