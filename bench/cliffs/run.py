#!/usr/bin/env python3
"""The cliff finder: every case on Kiln and on XLA:CPU in one run, the
worst ratios of Kiln's time to XLA:CPU's first.

    .venv/bin/python bench/cliffs/run.py            # quick mode
    .venv/bin/python bench/cliffs/run.py --full     # every size and type
    .venv/bin/python bench/cliffs/run.py --only lax.exp,linalg --worst 10

The cases (registry.py, ops.py, programs.py) are single operations of
lax, jnp, jax.nn, jax.random, jnp.fft, jnp.linalg and jax.scipy.special
across element types and sizes, program patterns (train steps, loops,
vmap of grad, donation, f64, mixed precision, 8-device programs) and the
workloads users reported. Each backend runs in processes of its own
(worker.py), one per group of cases (x64 and 8-device cases need theirs):
XLA:CPU first, saving its results, then Kiln, comparing its results with
them. Prints the worst ratios, their geometric mean, the reported
workloads, mismatches and errors; writes every case to a JSON file and
the worst to a chart. bench/cliffs/README.md says how to read them.
"""

import argparse
import collections
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import report  # noqa: E402
import worker  # noqa: E402  (only its stdlib-level helpers)


def parse_arguments(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--full", action="store_true",
                   help="every size and element type of every table "
                        "(hours); default: quick mode (minutes)")
    p.add_argument("--only", metavar="SUBSTR[,SUBSTR...]",
                   help="only cases whose id contains one of these, e.g. "
                        "'lax.exp,linalg,program.' (--list shows the ids)")
    p.add_argument("--json", default=os.path.join(REPO, "build",
                                                  "cliffs.json"),
                   help="every case as JSON (default build/cliffs.json)")
    p.add_argument("--chart", default=os.path.join(REPO, "build",
                                                   "cliffs.png"),
                   help="the worst ratios drawn (default build/cliffs.png; "
                        "'' for none)")
    p.add_argument("--worst", type=int, default=30,
                   help="how many of the worst ratios to list (default 30)")
    p.add_argument("--seconds", type=float, default=None,
                   help="time budget of one case on one backend (default "
                        "0.2 s; 0.5 s with --full)")
    p.add_argument("--min-repeats", type=int, default=None,
                   help="timed calls at least (default 3; 5 with --full)")
    p.add_argument("--case-timeout", type=float, default=None,
                   help="seconds after which a case still running is "
                        "killed; its ratio is then a lower bound (default "
                        "30; 300 with --full)")
    p.add_argument("--build-dir", default=os.environ.get(
        "KILN_BUILD_DIR", os.path.join(REPO, "build")),
        help="Kiln's build folder (default $KILN_BUILD_DIR or build/)")
    p.add_argument("--no-confirm", action="store_true",
                   help="skip the second timing of the worst cases")
    p.add_argument("--xla-only", action="store_true",
                   help="run XLA:CPU alone (checks the cases without a "
                        "Kiln build)")
    p.add_argument("--list", action="store_true",
                   help="list the selected case ids by group and exit")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="a line per case as it completes")
    return p.parse_args(argv)


def plugin_library(build_dir):
    """Where the workers will find Kiln (bench/suite/run.py's rule)."""
    return os.environ.get("KILN_PLUGIN_LIBRARY") or os.path.join(
        build_dir, "lib", "libpjrt_kiln.so")


LIVE = set()  # the workers running: ended with this process


def end_workers(*_):
    """On SIGTERM or ^C: the workers go too (they are this process's
    children), and the scratch folder."""
    for child in list(LIVE):
        child.kill()
        child.wait()
    LIVE.clear()


class Backend:
    """Runs one backend's worker over one group's cases, restarting it
    after a crash or a hang with the cases left, and collects its lines."""

    NAMES = {"kiln": "Kiln", "cpu": "XLA:CPU"}

    def __init__(self, backend, group, args, scratch, log, again=False):
        self.backend, self.group, self.args = backend, group, args
        self.scratch, self.log = scratch, log
        self.again = again  # the confirming pass: timing only
        self.results = {}  # id -> record
        self.hello = None
        self.restarts = 0

    def run(self, ids):
        remaining = list(ids)
        started = time.perf_counter()
        while remaining:
            remaining = self._one_process(remaining)
            if remaining:
                self.restarts += 1
        self.log(f"[{self.group}{' again' if self.again else ''}] "
                 f"{self.NAMES[self.backend]}: {len(ids)} "
                 f"cases in {time.perf_counter() - started:.0f} s, "
                 f"{sum('error' in r for r in self.results.values())} "
                 f"errors" + (f", {self.restarts} restarts" if self.restarts
                              else ""))
        return self.results

    def _one_process(self, ids):
        """Runs a worker over `ids`; returns the ids it did not reach."""
        tag = (f"{self.backend}-{self.group}-{self.restarts}"
               f"{'-again' if self.again else ''}")
        cases_file = os.path.join(self.scratch, f"{tag}.cases")
        results_file = os.path.join(self.scratch, f"{tag}.jsonl")
        log_file = os.path.join(self.scratch, f"{tag}.log")
        with open(cases_file, "w", encoding="utf-8") as f:
            f.write("\n".join(ids) + "\n")
        open(results_file, "w").close()
        a = self.args
        command = [sys.executable, os.path.join(HERE, "worker.py"),
                   "--backend", self.backend, "--group", self.group,
                   "--cases", cases_file, "--results", results_file,
                   "--refs", self.scratch, "--seconds", str(a.seconds),
                   "--min-repeats", str(a.min_repeats),
                   "--max-repeats", str(a.max_repeats),
                   "--slow", str(a.slow),
                   "--build-dir", a.build_dir] + (
                       ["--full"] if a.full else []) + (
                       ["--no-check"] if self.again else [])
        with open(log_file, "w", encoding="utf-8") as log:
            child = subprocess.Popen(command, stdout=log,
                                     stderr=subprocess.STDOUT)
            LIVE.add(child)
            running, since, done_here = None, time.monotonic(), 0
            last_report = time.monotonic()
            offset = 0
            killed = None
            while True:
                exited = child.poll() is not None
                with open(results_file, encoding="utf-8") as f:
                    f.seek(offset)
                    chunk = f.read()
                complete = chunk[:chunk.rfind("\n") + 1]
                offset += len(complete.encode())
                for line in complete.splitlines():
                    record = json.loads(line)
                    since = time.monotonic()
                    if "hello" in record:
                        self.hello = record["hello"]
                    elif "start" in record:
                        running = record["start"]
                    else:
                        self.results[record["id"]] = record
                        running = None
                        done_here += 1
                        self._progress(record)
                if exited:
                    break
                if time.monotonic() - since > a.case_timeout:
                    child.kill()  # our own child, by its id
                    child.wait()
                    killed = (f"timed out: no result after "
                              f"{a.case_timeout:.0f} s (killed)")
                    continue
                if time.monotonic() - last_report > 30 and not a.verbose:
                    last_report = time.monotonic()
                    self.log(f"  [{self.group}] {self.NAMES[self.backend]}: "
                             f"{len(self.results)} of this group's cases "
                             f"done")
                time.sleep(0.2)
        LIVE.discard(child)
        code = child.returncode
        left = [i for i in ids if i not in self.results]
        if not left:
            return []
        with open(log_file, encoding="utf-8", errors="replace") as f:
            tail = " ".join(f.read()[-800:].split())
        if running is None:
            # The process died outside any case: at start (the plugin did
            # not load) or between cases. Every case left gets the reason.
            why = (f"the {self.NAMES[self.backend]} process exited "
                   f"(code {code}) before running it: {tail}")
            if done_here == 0:
                for i in left:
                    self.results[i] = {"id": i, "error": why}
                return []
            return left  # it made progress: go on in a new process
        self.results[running] = {
            "id": running,
            "error": killed or f"the process died running it (exit code "
                               f"{code}{self._signal(code)}): {tail[-400:]}"}
        if killed:  # its time is at least the timeout: a lower bound
            self.results[running]["timed_out_s"] = a.case_timeout
        self.log(f"  [{self.group}] {self.NAMES[self.backend]}: {running}: "
                 f"{self.results[running]['error'][:160]}; restarting with "
                 f"the cases left")
        return [i for i in ids if i not in self.results]

    @staticmethod
    def _signal(code):
        if code is not None and code < 0:
            try:
                return f", {signal.Signals(-code).name}"
            except ValueError:
                return ""
        return ""

    def _progress(self, record):
        if not self.args.verbose:
            return
        if "error" in record:
            self.log(f"  {self.NAMES[self.backend]:7s} {record['id']}: "
                     f"error: {record['error'][:100]}")
        else:
            flag = "  MISMATCH" if record.get("mismatch") else ""
            self.log(f"  {self.NAMES[self.backend]:7s} {record['id']}: "
                     f"{record['median_s'] * 1e6:.1f} us{flag}")


def confirm(records, args, scratch, log):
    """Times the worst cases again, both backends, in new processes, and
    keeps each backend's faster median: load from elsewhere only adds
    time, and a burst of it during one case's 0.2 s made cliffs that were
    not there. Cases of seconds (timed by one call, or killed) are left
    as they are."""
    candidates = sorted(
        (r for r in records if r["ratio"] is not None and
         not r.get("ratio_is_lower_bound") and "timed_by" not in r["kiln"]
         and r["kiln"]["median_s"] < 1.0 and r["ratio"] > 1.0),
        key=lambda r: -r["ratio"])[:args.worst + 10]
    if not candidates:
        return
    log(f"[cliffs] timing the {len(candidates)} worst cases again")
    groups = collections.OrderedDict()
    for r in candidates:
        groups.setdefault(r["group"], []).append(r)
    for g, members in groups.items():
        ids = [r["id"] for r in members]
        again = {b: Backend(b, g, args, scratch, log, again=True).run(ids)
                 for b in ("cpu", "kiln")}
        for r in members:
            for backend, key in (("cpu", "xla_cpu"), ("kiln", "kiln")):
                second = again[backend].get(r["id"], {})
                figures_now = r[key]
                figures_now["medians"] = [figures_now["median_s"]]
                if "median_s" in second:
                    figures_now["medians"].append(second["median_s"])
                    figures_now["median_s"] = min(figures_now["medians"])
                    figures_now["min_s"] = min(figures_now["min_s"],
                                               second["min_s"])
            r["ratio"] = r["kiln"]["median_s"] / r["xla_cpu"]["median_s"]


def select(cases, only):
    if not only:
        return cases
    wanted = [w.strip() for w in only.split(",") if w.strip()]
    return [c for c in cases if any(w in c.id for w in wanted)]


def figures(record):
    if record is None:
        return {"error": "not run"}
    if "error" in record:
        return {k: record[k] for k in ("error", "timed_out_s") if k in record}
    return {k: record[k] for k in ("median_s", "min_s", "repeats",
                                   "first_call_s", "compile_s",
                                   "trace_lower_s", "timed_by",
                                   "load_average")
            if k in record}


def machine_info():
    """The suite's description of the machine (bench/suite/run.py), its
    load average taken as this run's start."""
    info = worker.suite_module("run").machine_info()
    info["load_average_start"] = info.pop("load_average")
    return info


def main(argv=None) -> int:
    args = parse_arguments(argv)
    args.seconds = args.seconds or (0.5 if args.full else 0.2)
    args.min_repeats = args.min_repeats or (5 if args.full else 3)
    args.max_repeats = 1000 if args.full else 300
    args.slow = 20.0 if args.full else 3.0
    args.case_timeout = args.case_timeout or (300 if args.full else 30)
    wall = time.perf_counter()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # this process runs none

    import programs
    import registry

    cases = select(registry.all_cases(args.full), args.only)
    groups = collections.OrderedDict()
    for g in registry.GROUP_ORDER:
        members = [c for c in cases if c.group == g]
        if members:
            groups[g] = members
    if args.list:
        for g, members in groups.items():
            print(f"{g} ({len(members)} cases)")
            for c in members:
                print(f"  {c.id}")
        return 0
    if not cases:
        print(f"cliffs: no case id contains any of {args.only!r}",
              file=sys.stderr)
        return 2
    library = plugin_library(args.build_dir)
    if not args.xla_only and not os.path.isfile(library):
        print(f"cliffs: Kiln's plugin is not at {library}: build it "
              "(scripts/build.sh) or set KILN_PLUGIN_LIBRARY; --xla-only "
              "runs XLA:CPU alone", file=sys.stderr)
        return 2

    def log(message):
        print(message, flush=True)

    machine = machine_info()
    mode = "full" if args.full else "quick"
    log(f"[cliffs] {mode} mode: {len(cases)} cases in {len(groups)} groups "
        f"({', '.join(f'{g} {len(m)}' for g, m in groups.items())}), "
        f"{args.seconds:g} s per case and backend, {machine['cores_available']}"
        f" cores, load average {machine['load_average_start'][0]:.2f}")
    if machine["load_average_start"][0] > machine["cores_available"]:
        log("[cliffs] the load average is above the core count: other work "
            "competes for the cores and the figures will be noisy")

    scratch = tempfile.mkdtemp(prefix="kiln-cliffs-")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    records, dropped, versions = [], [], {}
    try:
        for g, members in groups.items():
            ids = [c.id for c in members]
            cpu = Backend("cpu", g, args, scratch, log)
            cpu_results = cpu.run(ids)
            if cpu.hello:
                versions["xla_cpu"] = cpu.hello["platform_version"]
            good = [i for i in ids if "error" not in cpu_results.get(
                i, {"error": "not run"})]
            kiln_results = {}
            if not args.xla_only and good:
                kiln = Backend("kiln", g, args, scratch, log)
                kiln_results = kiln.run(good)
                if kiln.hello:
                    versions["kiln"] = kiln.hello["platform_version"]
            for c in members:
                x = cpu_results.get(c.id, {"error": "not run"})
                if "error" in x:
                    dropped.append({"id": c.id, "group": g,
                                    "xla_cpu_error": x["error"]})
                    continue
                k = kiln_results.get(c.id) if not args.xla_only else None
                record = {"id": c.id, "family": c.family, "op": c.op,
                          "dtype": c.dtype, "size": c.size,
                          "variant": c.variant, "group": g,
                          "tags": list(c.tags),
                          "kiln": figures(k) if not args.xla_only else
                          {"error": "--xla-only"},
                          "xla_cpu": figures(x), "ratio": None,
                          "checked": bool(k and k.get("checked")),
                          "mismatch": bool(k and k.get("mismatch")),
                          "mismatch_detail": (k or {}).get(
                              "mismatch_detail")}
                if "median_s" in record["kiln"]:
                    record["ratio"] = (record["kiln"]["median_s"] /
                                       record["xla_cpu"]["median_s"])
                elif "timed_out_s" in record["kiln"]:
                    # Killed after the timeout: the ratio is a lower bound.
                    record["ratio"] = (record["kiln"]["timed_out_s"] /
                                       record["xla_cpu"]["median_s"])
                    record["ratio_is_lower_bound"] = True
                records.append(record)
        if not args.xla_only and not args.no_confirm:
            confirm(records, args, scratch, log)
    finally:
        end_workers()
        shutil.rmtree(scratch, ignore_errors=True)

    elapsed = time.perf_counter() - wall
    print()
    if args.xla_only:
        slowest = sorted(records, key=lambda r: -r["xla_cpu"]["median_s"])
        log(f"XLA:CPU alone (--xla-only): {len(records)} cases ran, "
            f"{len(dropped)} failed; the slowest:")
        for r in slowest[:args.worst]:
            log(f"  {r['id']:60s} {report.us(r['xla_cpu']['median_s']):>10s}"
                f" us  first call {r['xla_cpu']['first_call_s']:.2f} s")
        for d in dropped:
            log(f"  failed: {d['id']}: {d['xla_cpu_error'][:150]}")
    else:
        log(report.text(records, dropped, args.worst, programs.REPORTED))
    import jax
    import jaxlib
    machine["load_average_end"] = list(os.getloadavg())
    date = datetime.datetime.now(datetime.timezone.utc)
    document = {
        "tool": "kiln-cliffs",
        "format": 1,
        "date": date.isoformat(timespec="seconds"),
        "command": "bench/cliffs/run.py " + " ".join(
            argv if argv is not None else sys.argv[1:]),
        "mode": mode,
        "ratio": "Kiln's time / XLA:CPU's (medians); above 1 Kiln is slower",
        "timing": {"seconds_per_case_and_backend": args.seconds,
                   "min_repeats": args.min_repeats,
                   "max_repeats": args.max_repeats,
                   "slow_s": args.slow,
                   "warmup": "the compiling call, then 2 calls",
                   "figure": "median of the timed calls (min_s: their "
                             "minimum), each awaited (block_until_ready); "
                             "where the first call, less its compile, took "
                             "over slow_s, that call alone (timed_by)",
                   "confirm": None if args.no_confirm else
                   "the worst cases (up to --worst + 10 above 1x) timed "
                   "again in new processes; each backend's faster median "
                   "kept (medians: both)"},
        "machine": machine,
        "versions": dict(versions, jax=jax.__version__,
                         jaxlib=jaxlib.__version__),
        "elapsed_s": round(elapsed, 1),
        "summary": report.summary(records, dropped),
        "reported": programs.REPORTED,
        "cases": records,
        "dropped": dropped,
    }
    report.write_json(args.json, document)
    log(f"\njson: {args.json}")
    if args.chart and not args.xla_only:
        g = document["summary"]["geomean_ratio"]
        title = (f"Kiln / XLA:CPU, the {args.worst} worst of "
                 f"{document['summary']['timed']} cases ({mode}, "
                 f"{date:%Y-%m-%d}, {machine['cores_available']} cores"
                 + (f", geometric mean {g:.2f}x)" if g else ")"))
        why_not = report.write_chart(args.chart, records, args.worst, title)
        log(f"chart: {why_not or args.chart}")
    log(f"[cliffs] done in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
