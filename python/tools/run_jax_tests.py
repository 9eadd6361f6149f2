#!/usr/bin/env python3
"""Runs JAX's own test modules on JAX's CPU backend and on Kiln, and compares.

Each module runs in its own pytest process, once with JAX_PLATFORMS=cpu and
once with JAX_PLATFORMS=kiln, in the same environment. Per module it prints the
tests run, how many passed on cpu, how many on kiln, and how many passed on cpu
but not on kiln; then a total line. A test that fails on cpu is not counted
against Kiln. `--record FILE` writes the run as JSON: per module the counts,
and every test that passed on cpu but not on kiln with its first error line,
grouped by that line.

    .venv/bin/python python/tools/run_jax_tests.py                # every module
    .venv/bin/python python/tools/run_jax_tests.py lax_test fft_test
    .venv/bin/python python/tools/run_jax_tests.py --set ci --record out.json

XLA:CPU's results depend only on JAX and the test files, not on Kiln, so CI
takes them from a recorded baseline (python/jax_tests_cpu_ci.json) instead
of running cpu each time; a module whose JAX version, file hash, --cases or
--devices differ from the baseline's runs on cpu as before. Rewrite it with
the commands in docs/jax.md ("the cpu baseline").
"""

import argparse
import collections
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

# Modules that need several devices; run with --devices 8 (the issue on many
# devices finishes them). The rest are single-device modules.
MULTI_DEVICE = {"pmap_test", "pjit_test", "shard_map_test", "multi_device_test",
                "memories_test"}

# A subset that fits CI's time beside everything else (docs/jax.md).
# Left out: device_test (under the cpu DUT it checks XLA:CPU's device names)
# and x64_context_test (test_near_singular_inverse presumes XLA:CPU's flushing
# of subnormals to zero, which Kiln does not do: a row scaled by 1e-40 stays
# non-zero in f32, so the inverse stays finite) and
# mutable_array_test (two sharded AOT tests need the SPMD partitioner).
CI_SET = ["api_test", "core_test", "dtypes_test", "fft_test", "jax_jit_test",
          "custom_api_test", "batching_test", "random_test",
          "lax_numpy_reducers_test", "lax_autodiff_test"]

# Tests that check XLA:CPU itself rather than JAX on a backend: not counted
# on either platform (docs/jax.md lists them with these reasons). Exactly
# these ids; everything else in their modules counts.
XLA_CPU_SPECIFIC = {
    "tests.device_test.DeviceTest::test_repr":
        "asserts device.platform == 'cpu' and XLA:CPU's device repr",
    "tests.device_test.DeviceTest::test_str":
        "asserts XLA:CPU's device names ('cpu:0' or 'TFRT_CPU_0')",
    "tests.compilation_cache_test.CompilationCacheTest::test_dump_on_cache_hit":
        "reads XLA's optimized-HLO dumps (xla_dump_to: *after_optimizations.txt, .hlo.pb)",
}


def shared_dir() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("KILN_SHARED_DIR",
                          os.path.join(here, "..", "..", "..", "shared"))


def parse_junit(path: str) -> dict[str, tuple[str, str]]:
    """Maps test id -> (outcome, first line of the failure or skip message)."""
    results: dict[str, tuple[str, str]] = {}
    if not os.path.exists(path):
        return results
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return results
    for case in root.iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                message = (child.get("message") or child.text or "").strip()
                break
            if child.tag == "skipped":
                outcome = "skipped"
                message = (child.get("message") or "").strip()
        results[test_id] = (outcome, message.splitlines()[0][:300] if message else "")
    return results


def module_fingerprint(module: str, args) -> dict:
    """What a cpu run's results depend on: JAX's version, the module's file
    and its parameters. A cpu baseline is used only where all of it matches."""
    path = os.path.join(shared_dir(), "jax-tests", "tests", f"{module}.py")
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"jax": importlib.metadata.version("jax"),
            "jaxlib": importlib.metadata.version("jaxlib"),
            "module_sha256": digest, "cases": args.cases, "devices": args.devices}


def load_cpu_baseline(path: str | None) -> dict:
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f).get("modules", {})


def cpu_results(module: str, args, baseline: dict) -> tuple[dict, float, str, bool]:
    """The module's cpu results: from the baseline where it was recorded
    under the same fingerprint, else from a run. The last value says which."""
    entry = baseline.get(module)
    if entry is not None and entry.get("fingerprint") == module_fingerprint(module, args):
        results = {t: ("passed", "") for t in entry["passed"]}
        results.update({t: ("not passed", "") for t in entry["not_passed"]})
        return results, 0.0, "", True
    results, seconds, tail = run_module(module, "cpu", args)
    return results, seconds, tail, False


def run_module(module: str, platform: str, args) -> tuple[dict, float, str]:
    tests_dir = os.path.join(shared_dir(), "jax-tests")
    env = dict(os.environ)
    # Kiln runs beside JAX's CPU backend, as a user would run it: tests that
    # move data between platforms need both, and Kiln is the default.
    env["JAX_PLATFORMS"] = "kiln,cpu" if platform == "kiln" else platform
    plugin_args = []
    if platform == "kiln" and args.dut == "cpu":
        here = os.path.dirname(os.path.abspath(__file__))
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (here, env.get("PYTHONPATH", "")) if p)
        plugin_args = ["-p", "jax_test_dut_cpu"]
    env["JAX_NUM_GENERATED_CASES"] = str(args.cases)
    if args.devices > 1:
        if platform == "cpu":
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                                f" --xla_force_host_platform_device_count={args.devices}")
        else:
            env["KILN_CPU_DEVICE_COUNT"] = str(args.devices)
    with tempfile.TemporaryDirectory() as tmp:
        junit = os.path.join(tmp, "junit.xml")
        command = [sys.executable, "-m", "pytest",
                   os.path.join(tests_dir, "tests", f"{module}.py"),
                   "-q", "--tb=no", "-p", "no:cacheprovider",
                   f"--junitxml={junit}", "-o", "junit_family=xunit1",
                   "--rootdir", tests_dir] + plugin_args
        if args.jobs > 1:
            command += ["-n", str(args.jobs)]
        start = time.monotonic()
        try:
            proc = subprocess.run(command, env=env, cwd=tmp, capture_output=True,
                                  text=True, timeout=args.timeout)
            tail = (proc.stdout + proc.stderr)[-2000:]
            if proc.returncode not in (0, 1):
                tail = f"pytest exited {proc.returncode}\n" + tail
        except subprocess.TimeoutExpired as e:
            tail = f"timed out after {args.timeout} s"
        seconds = time.monotonic() - start
        return parse_junit(junit), seconds, tail


def cause_of(message: str) -> str:
    """A message with numbers and quoted names blurred, to group failures."""
    text = re.sub(r"0x[0-9a-f]+", "ADDR", message)
    text = re.sub(r"\d+", "N", text)
    return text[:160]


def print_markdown(path: str) -> None:
    """A recorded run as a table: per module, the counts and the main cause."""
    with open(path) as f:
        record = json.load(f)
    print("| module | tests | pass on cpu | pass on kiln | cpu, not kiln | kiln/cpu | main cause of the rest |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for module, r in sorted(record["modules"].items()):
        causes = r["failures_by_cause"]
        cause = max(causes, key=lambda c: len(causes[c])) if causes else ""
        name = module + (" (multi-device)" if r["multi_device"] else "")
        print(f"| {name} | {r['tests']} | {r['passed_cpu']} | {r['passed_kiln']} | "
              f"{r['passed_cpu_not_kiln']} | {100 * r['kiln_over_cpu']:.2f}% | "
              f"{cause[:90].replace('|', '/')} |")
    t = record["total"] if "total" in record else None
    if t:
        print(f"| **total** | {t['tests']} | {t['cpu']} | {t['kiln']} | {t['lost']} | "
              f"{100 * t['kiln_over_cpu']:.2f}% | |")


def plugin_in_use() -> str:
    """The plugin library the test processes will load, and how it was
    chosen: KILN_PLUGIN_LIBRARY, else the kiln_pjrt package this Python
    imports (an installed wheel may be older than the build)."""
    override = os.environ.get("KILN_PLUGIN_LIBRARY")
    if override:
        return f"{os.path.abspath(override)} (KILN_PLUGIN_LIBRARY)"
    try:
        import kiln_pjrt
    except ImportError:
        return "none found (no KILN_PLUGIN_LIBRARY, no kiln_pjrt package)"
    path = kiln_pjrt.library_path()
    built = (time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(path)))
             if os.path.exists(path) else "missing")
    return f"{path} (package kiln_pjrt, built {built})"


def stage_plugin():
    """Points KILN_PLUGIN_LIBRARY at a copy of the library (and of the
    libraries beside it) for the run: a
    rebuild during a long run would otherwise replace it under the test
    processes that start afterwards, which then fail to load it (a whole
    module reads as failed). Returns the directory holding the copy (None
    without an override); the copy goes when it does."""
    override = os.environ.get("KILN_PLUGIN_LIBRARY")
    if not override or not os.path.isfile(override):
        return None
    staging = tempfile.TemporaryDirectory(prefix="kiln-plugin-")
    # The libraries beside it too: the plugin finds the ones it bundles
    # (OpenBLAS) in its own directory ($ORIGIN).
    folder = os.path.dirname(os.path.abspath(override))
    for name in os.listdir(folder):
        if ".so" in name and os.path.isfile(os.path.join(folder, name)):
            shutil.copy2(os.path.join(folder, name), staging.name)
    os.environ["KILN_PLUGIN_LIBRARY"] = os.path.join(
        staging.name, os.path.basename(override))
    return staging


def write_cpu_baseline(path: str, modules: list[str], args) -> int:
    """Runs `modules` on cpu and records, per module, which tests passed and
    which did not, with the fingerprint of what the results depend on."""
    baseline = {"modules": load_cpu_baseline(path)}
    status = 0
    for module in modules:
        results, seconds, tail = run_module(module, "cpu", args)
        if not results:
            print(f"{module}: no results on cpu, not recorded: "
                  f"{tail.strip().splitlines()[-1:]}", flush=True)
            status = 1
            continue
        passed = sorted(t for t, (outcome, _) in results.items() if outcome == "passed")
        baseline["modules"][module] = {
            "fingerprint": module_fingerprint(module, args),
            "passed": passed,
            "not_passed": sorted(set(results) - set(passed)),
        }
        print(f"{module:28} {len(results):6} tests, {len(passed)} pass on cpu "
              f"({seconds:.0f}s)", flush=True)
        with open(path, "w") as f:  # after every module
            json.dump(baseline, f, indent=0, sort_keys=True)
            f.write("\n")
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", help="module names (default: all)")
    parser.add_argument("--set", choices=["all", "ci", "single", "multi"], default=None)
    parser.add_argument("--cases", type=int, default=10,
                        help="JAX_NUM_GENERATED_CASES (default 10)")
    parser.add_argument("--devices", type=int, default=1,
                        help="devices on both backends (multi-device modules need 8)")
    parser.add_argument("--jobs", type=int, default=1, help="pytest-xdist workers")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per module run")
    parser.add_argument("--record", help="write the run as JSON to this file")
    parser.add_argument("--dut", choices=["cpu", "platform"], default="cpu",
                        help="what JAX's harness is told the kiln run's device is: "
                             "cpu (default; same tests and tolerances as the cpu run, "
                             "see jax_test_dut_cpu.py) or the platform's own name")
    parser.add_argument("--update", action="store_true",
                        help="keep the --record file's other modules (same --cases and --devices)")
    parser.add_argument("--min-multi-ratio", type=float, default=None,
                        help="exit 1 if a multi-device module's kiln/cpu ratio is "
                             "below this (e.g. 0.95)")
    parser.add_argument("--min-ratio", type=float, default=None,
                        help="exit 1 if a single-device module's kiln/cpu "
                             "ratio is below this (e.g. 0.99)")
    parser.add_argument("--cpu-baseline", metavar="FILE",
                        help="take each module's cpu results from FILE where it "
                             "holds them for the same JAX, module file, --cases and "
                             "--devices (else run cpu); see --write-cpu-baseline")
    parser.add_argument("--write-cpu-baseline", metavar="FILE",
                        help="run the modules on cpu only and write their results "
                             "to FILE (kept: its other modules)")
    parser.add_argument("--markdown", metavar="RECORD",
                        help="print a recorded run as a Markdown table and exit")
    args = parser.parse_args()
    if args.markdown:
        print_markdown(args.markdown)
        return 0

    tests_dir = os.path.join(shared_dir(), "jax-tests", "tests")
    if not os.path.isdir(tests_dir):
        print(f"skipped: JAX's tests are not at {tests_dir} (set KILN_SHARED_DIR)")
        return 0
    every = sorted(f[:-3] for f in os.listdir(tests_dir) if f.endswith("_test.py"))
    modules = args.modules
    if not modules:
        chosen = args.set or "all"
        modules = {"all": every, "ci": CI_SET,
                   "single": [m for m in every if m not in MULTI_DEVICE],
                   "multi": [m for m in every if m in MULTI_DEVICE]}[chosen]

    if args.write_cpu_baseline:
        return write_cpu_baseline(args.write_cpu_baseline, modules, args)
    baseline = load_cpu_baseline(args.cpu_baseline)

    record = {"cases": args.cases, "devices": args.devices, "dut": args.dut,
              "modules": {}}
    if args.update and args.record and os.path.exists(args.record):
        # Re-run some modules of a recorded run and keep the others.
        with open(args.record) as f:
            previous = json.load(f)
        if previous.get("cases") == args.cases and previous.get("devices") == args.devices:
            record["modules"] = {m: r for m, r in previous["modules"].items()
                                 if m not in modules}
    print(f"kiln plugin: {plugin_in_use()}", flush=True)
    staging = stage_plugin()  # noqa: F841 (removed when main returns)
    header = f"{'module':28} {'tests':>6} {'cpu':>6} {'kiln':>6} {'cpu!kiln':>8} {'kiln/cpu':>9}  time cpu/kiln"
    print(header, flush=True)
    for module in modules:
        cpu, cpu_s, cpu_tail, from_baseline = cpu_results(module, args, baseline)
        kiln, kiln_s, kiln_tail = run_module(module, "kiln", args)
        excluded = sorted(t for t in XLA_CPU_SPECIFIC if t in cpu or t in kiln)
        for t in excluded:
            cpu.pop(t, None)
            kiln.pop(t, None)
        ids = set(cpu) | set(kiln)
        passed_cpu = {t for t in ids if cpu.get(t, ("missing",))[0] == "passed"}
        passed_kiln = {t for t in ids if kiln.get(t, ("missing",))[0] == "passed"}
        lost = sorted(passed_cpu - passed_kiln)
        ratio = len(passed_cpu & passed_kiln) / len(passed_cpu) if passed_cpu else 1.0
        print(f"{module:28} {len(ids):6} {len(passed_cpu):6} {len(passed_kiln):6} "
              f"{len(lost):8} {100 * ratio:8.2f}%  "
              f"{'baseline' if from_baseline else f'{cpu_s:.0f}s'}/{kiln_s:.0f}s", flush=True)
        if excluded:
            print(f"  not counted (XLA:CPU-specific, docs/jax.md): {len(excluded)}", flush=True)
        if not cpu and not kiln and not excluded:
            print(f"  no results: {cpu_tail.strip().splitlines()[-1:]}"
                  f" / {kiln_tail.strip().splitlines()[-1:]}", flush=True)
        causes = collections.defaultdict(list)
        for t in lost:
            outcome, message = kiln.get(t, ("missing", "no result on kiln: not generated there (JAX samples parameterized cases per run) or the run crashed or timed out"))
            causes[cause_of(message or outcome)].append(t)
        record["modules"][module] = {
            "tests": len(ids), "passed_cpu": len(passed_cpu),
            "passed_kiln": len(passed_kiln), "passed_cpu_not_kiln": len(lost),
            "kiln_over_cpu": round(ratio, 4), "seconds_cpu": round(cpu_s, 1),
            "seconds_kiln": round(kiln_s, 1), "multi_device": module in MULTI_DEVICE,
            "cpu_from_baseline": from_baseline,
            "excluded_xla_cpu_specific": {t: XLA_CPU_SPECIFIC[t] for t in excluded},
            "failures_by_cause": {c: sorted(ts) for c, ts in
                                  sorted(causes.items(), key=lambda kv: -len(kv[1]))},
        }
        if not kiln and kiln_tail:
            record["modules"][module]["kiln_output_tail"] = kiln_tail
        if args.record:  # after every module: a long run keeps what it did
            with open(args.record, "w") as f:
                json.dump(record, f, indent=1, sort_keys=True)
                f.write("\n")
    totals = collections.Counter()
    worst_single = None
    for module, r in record["modules"].items():
        totals.update(tests=r["tests"], cpu=r["passed_cpu"], kiln=r["passed_kiln"],
                      lost=r["passed_cpu_not_kiln"])
        if not r["multi_device"] and (worst_single is None or
                                      r["kiln_over_cpu"] < worst_single[1]):
            worst_single = (module, r["kiln_over_cpu"])
    total_ratio = ((totals["cpu"] - totals["lost"]) / totals["cpu"]) if totals["cpu"] else 1.0
    print(f"{'total' + (' (with the record)' if args.update else ''):28} {totals['tests']:6} {totals['cpu']:6} {totals['kiln']:6} "
          f"{totals['lost']:8} {100 * total_ratio:8.2f}%")
    if worst_single:
        print(f"lowest single-device module: {worst_single[0]} {100 * worst_single[1]:.2f}%")
    record["total"] = dict(totals, kiln_over_cpu=round(total_ratio, 4))
    if args.record:
        with open(args.record, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
    failed = False
    if args.min_multi_ratio is not None:
        below_multi = [m for m, r in record["modules"].items()
                       if r["multi_device"] and r["kiln_over_cpu"] < args.min_multi_ratio]
        if below_multi:
            print(f"below {100 * args.min_multi_ratio:.0f}% of cpu (multi-device): "
                  f"{', '.join(below_multi)}")
            failed = True
    if args.min_ratio is not None:
        below = [m for m, r in record["modules"].items()
                 if not r["multi_device"] and r["kiln_over_cpu"] < args.min_ratio]
        if below:
            print(f"below {100 * args.min_ratio:.0f}% of cpu: {', '.join(below)}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
