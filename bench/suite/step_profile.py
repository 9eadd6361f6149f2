"""Where Kiln's time goes in a row: its steps, from one profiled run.

`run.py --profile` traces a few runs of each Kiln contender with
`jax.profiler.trace` (Kiln answers through PJRT's profiler extension,
src/pjrt/profiler.cc: one "XLA Ops" event per step, a fused step named
after every op it covers) and reads the `.xplane.pb` back with jaxlib's own
reader. The row's JSON then holds Kiln's steps by total time, and the
table prints the heaviest few under the row.

Steps inside a loop body are nested in the event of the loop that runs
them; only outermost events count, so no time is counted twice.
"""

import collections
import glob
import os
import tempfile
from typing import Callable

import jax

SHOWN = 8  # steps printed under a row
KEPT = 40  # steps kept in the JSON


def _outermost_ops(path: str) -> list[tuple[str, int]]:
    """(name, duration in ns) of every outermost step event in the trace."""
    from jax._src.lib import _profile_data

    data = _profile_data.ProfileData.from_file(path)
    found = []
    for plane in data.planes:
        if not plane.name.startswith("/device:CUSTOM:"):
            continue
        for line in plane.lines:
            if line.name != "XLA Ops":
                continue
            events = sorted(((e.start_ns, e.duration_ns, e.name)
                             for e in line.events), key=lambda e: e[0])
            covered_until = None
            for start, duration, name in events:
                if covered_until is not None and start < covered_until:
                    continue  # inside the previous outermost step
                covered_until = start + duration
                found.append((name, duration))
    return found


def profile_steps(run: Callable[[], object], runs: int = 3) -> dict:
    """Runs `run` `runs` times under the profiler; Kiln's steps by total
    time per run: {"runs", "total_ms", "steps": [{"name", "ms", "share",
    "count"}]} (count: how often the step ran per run)."""
    run()  # compiled and warm before the trace
    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder):
            for _ in range(runs):
                run()
        files = glob.glob(os.path.join(folder, "**", "*.xplane.pb"),
                          recursive=True)
        if not files:
            return {"error": "the profiler wrote no trace"}
        ops = _outermost_ops(files[0])
    totals: dict[str, int] = collections.defaultdict(int)
    counts: dict[str, int] = collections.defaultdict(int)
    for name, duration in ops:
        totals[name] += duration
        counts[name] += 1
    total_ns = sum(totals.values())
    steps = sorted(totals, key=totals.get, reverse=True)[:KEPT]
    kinds: dict[str, list] = collections.defaultdict(lambda: [0, 0])
    for name, duration in ops:
        kind = kinds[_kind(name)]
        kind[0] += duration
        kind[1] += 1
    return {
        "runs": runs,
        "total_ms": total_ns / runs / 1e6,
        "steps_per_run": len(ops) / runs,
        # Time by what a step is (its op, or "fusion"), heaviest first.
        "kinds": [{"kind": kind, "ms": ns / runs / 1e6,
                   "count": count / runs}
                  for kind, (ns, count) in sorted(
                      kinds.items(), key=lambda item: -item[1][0])],
        "steps": [{"name": name, "ms": totals[name] / runs / 1e6,
                   "share": totals[name] / total_ns if total_ns else 0.0,
                   "count": counts[name] / runs} for name in steps],
    }


def _kind(step_name: str) -> str:
    """A step's op ("stablehlo.convolution"), or "fusion" for a fused
    step: the name up to its location."""
    if step_name.startswith("fusion of "):
        return "fusion"
    return step_name.split(" at ", 1)[0]


def describe(profile: dict, width: int = 110) -> list[str]:
    """The heaviest steps as lines for the table."""
    if "error" in profile:
        return [f"    profile: {profile['error']}"]
    kinds = ", ".join(f"{k['kind'].removeprefix('stablehlo.')} "
                      f"{k['ms']:.2f} ms x{k['count']:g}"
                      for k in profile["kinds"][:5])
    lines = [f"    Kiln's steps, {profile['total_ms']:.2f} ms per run in "
             f"{profile['steps_per_run']:g} steps: {kinds}"]
    for step in profile["steps"][:SHOWN]:
        name = step["name"]
        if len(name) > width:
            name = name[:width - 3] + "..."
        lines.append(f"    {step['ms']:9.3f} ms {100 * step['share']:5.1f}% "
                     f"x{step['count']:<4g} {name}")
    return lines
