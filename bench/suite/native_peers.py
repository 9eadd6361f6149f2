"""The suite's peers outside Python: small C++ binaries of the build.

- `memcpy_peer` (bench/peers): memcpy of the bytes an elementwise program
  moves, on one thread and on every available core.
- `sgemm_peer` (bench/peers): oneDNN's `dnnl_sgemm` called directly.
- `pjrt_execute_bench` (bench/pjrt, Google Benchmark): a tiny program's
  execute round trip through Kiln's PJRT C API, with a host round trip of
  the same bytes beside it.

Each is found in `<build>/bin`; a missing one makes its peer "n/a" with the
reason instead of failing the suite.
"""

import json
import os
import statistics
import subprocess

from timing import Budget


class PeerUnavailable(Exception):
    """A peer that cannot be measured here (not built, failed)."""


def _run(binary: str, arguments: list[str], timeout: float) -> str:
    if not os.path.isfile(binary):
        raise PeerUnavailable(f"{os.path.basename(binary)} is not built "
                              f"(expected at {binary})")
    try:
        done = subprocess.run([binary] + arguments, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        raise PeerUnavailable(f"{binary} ran past {timeout} s") from e
    if done.returncode != 0:
        message = done.stderr.strip()[-300:]
        raise PeerUnavailable(f"{os.path.basename(binary)} exited with "
                              f"{done.returncode}: {message}")
    return done.stdout


def _timing_flags(budget: Budget) -> list[str]:
    return ["--seconds", str(budget.seconds), "--min-repeats",
            str(budget.min_repeats), "--max-repeats", str(budget.max_repeats),
            "--warmup", str(max(1, budget.warmup))]


def memcpy(bin_dir: str, bytes_copied: int, threads: int,
           budget: Budget) -> dict:
    """{"median_s", "min_s", "repeats", "gbps", "threads", "samples_s"};
    `threads` 0 is every available core."""
    out = _run(os.path.join(bin_dir, "memcpy_peer"),
               ["--bytes", str(bytes_copied), "--threads", str(threads)] +
               _timing_flags(budget), timeout=120)
    return json.loads(out)


def sgemm(bin_dir: str, sizes: list[int], budget: Budget) -> dict:
    """{"threads", "dnnl_version", "results": [{"n", "median_s", "min_s",
    "repeats", "gflops", "samples_s"}]}."""
    out = _run(os.path.join(bin_dir, "sgemm_peer"),
               ["--sizes", ",".join(str(n) for n in sizes)] +
               _timing_flags(budget), timeout=300)
    return json.loads(out)


def capi_round_trips(bin_dir: str, budget: Budget) -> dict:
    """Microseconds of BM_ExecuteTinyRoundTrip and BM_HostRoundTrip16Bytes.

    Google Benchmark repeats each (`--benchmark_repetitions`); the median
    and minimum are taken over the repetitions' means.
    """
    repetitions = max(3, budget.min_repeats)
    min_time = max(0.05, budget.seconds / repetitions / 2)
    out = _run(os.path.join(bin_dir, "pjrt_execute_bench"),
               ["--benchmark_filter=^BM_(ExecuteTinyRoundTrip|"
                "HostRoundTrip16Bytes)",
                f"--benchmark_repetitions={repetitions}",
                f"--benchmark_min_time={min_time:.3f}",
                "--benchmark_format=json"], timeout=120)
    runs: dict[str, list[float]] = {}
    for entry in json.loads(out)["benchmarks"]:
        if entry.get("run_type") != "iteration":
            continue
        if entry.get("time_unit") != "us":
            raise PeerUnavailable(f"unexpected time unit in {entry['name']}")
        name = entry["name"].split("/")[0]
        runs.setdefault(name, []).append(entry["real_time"] * 1e-6)
    result = {}
    for name, samples in runs.items():
        result[name] = {"median_s": statistics.median(samples),
                        "min_s": min(samples), "repeats": len(samples)}
    for name in ("BM_ExecuteTinyRoundTrip", "BM_HostRoundTrip16Bytes"):
        if name not in result:
            raise PeerUnavailable(f"pjrt_execute_bench reported no {name}")
    return result
