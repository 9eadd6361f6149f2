"""The suite's outputs: the table it prints, its JSON and its PNG chart."""

import json
import math
import os

import step_profile
from results import Row

GROUP_TITLES = {
    1: "1 memory-bound elementwise",
    2: "2 matmul",
    3: "3 models",
    4: "4 layers",
    5: "5 dispatch",
    6: "6 compile",
}


def _number(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(value)))))
    return f"{value:.{min(digits, 4)}f}"


def _ratio(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{_number(ratio)}x"


def verdict_text(row: Row) -> str:
    if row.error:
        return "ERROR"
    if row.skipped:
        return "SKIP"
    if row.goal is None:
        return "-"
    verdict = row.verdict()
    return {True: "PASS", False: "FAIL", None: "n/a"}[verdict]


def _peer_cell(row: Row, name: str) -> str:
    figure = row.peers[name]
    if figure.value is None:
        return f"{name} n/a"
    return f"{name} {_number(figure.value)} ({_ratio(row.ratio(name))})"


def table(rows: list[Row]) -> str:
    """A plain-text table: Kiln, each peer with Kiln's speed ratio to it."""
    header = ["#", "row", "unit", "Kiln", "peer 1 (Kiln/peer)",
              "peer 2 (Kiln/peer)", "goal", "result"]
    lines = []
    for row in rows:
        peers = [_peer_cell(row, name) for name in row.peers][:2]
        peers += [""] * (2 - len(peers))
        kiln = _number(row.kiln.value)
        if row.skipped or row.error:
            kiln, peers = "-", [(row.skipped or row.error)[:60], ""]
        lines.append([str(row.group), row.name, row.unit, kiln, *peers,
                      row.goal.text if row.goal else "-", verdict_text(row)])
    widths = [max(len(r[i]) for r in [header] + lines)
              for i in range(len(header))]
    right = {0, 3}

    def format_line(cells):
        padded = (c.rjust(w) if i in right else c.ljust(w)
                  for i, (c, w) in enumerate(zip(cells, widths)))
        return "  ".join(padded).rstrip()

    out = [format_line(header), "  ".join("-" * w for w in widths)]
    out += [format_line(line) for line in lines]
    return "\n".join(out)


def profiles(rows: list[Row]) -> str:
    """Each profiled row's heaviest Kiln steps (run.py --profile)."""
    out = []
    for row in rows:
        profile = row.kiln.details.get("profile")
        if profile is not None:
            out.append(f"{row.id}: Kiln {_number(row.kiln.value)} {row.unit}")
            out.extend(step_profile.describe(profile))
    return "\n".join(out)


def summary(rows: list[Row]) -> str:
    verdicts = [verdict_text(r) for r in rows]
    counts = {v: verdicts.count(v) for v in ("PASS", "FAIL", "n/a", "SKIP",
                                             "ERROR")}
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n)


def write_json(path: str, document: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1)
        f.write("\n")


_PEER_COLORS = {"XLA:CPU": "#4c72b0", "PyTorch": "#dd8452",
                "memcpy": "#55a868", "oneDNN sgemm": "#8172b3",
                "C API host round trip": "#937860"}


def write_chart(path: str, rows: list[Row], title: str) -> str | None:
    """Kiln's speed over each peer's, one bar per row and peer, on a log
    scale, with each row's goal marked. Returns why no chart was drawn, or
    None."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (scripts/bench.sh installs it)"
    bars = []  # (row label, peer, ratio, goal ratio for that peer)
    for row in rows:
        goals = {}
        if row.goal:
            goals = {c.peer: c.ratio for c in row.goal.conditions if c.peer}
        for peer in row.peers:
            ratio = row.ratio(peer)
            if ratio is not None:
                bars.append((f"{row.name}  [{verdict_text(row)}]", peer,
                             ratio, goals.get(peer)))
    if not bars:
        return "no row has a ratio to draw"
    figure, axes = plt.subplots(figsize=(10, 0.32 * len(bars) + 1.8))
    positions = list(range(len(bars)))[::-1]
    drawn_peers = {}
    for y, (label, peer, ratio, goal_ratio) in zip(positions, bars):
        drawn_peers[peer] = axes.barh(
            y, ratio, color=_PEER_COLORS.get(peer, "#999999"), height=0.7)
        axes.text(ratio * 1.05, y, f"{ratio:.3g}x", va="center", fontsize=7)
        if goal_ratio is not None:
            axes.plot([goal_ratio, goal_ratio], [y - 0.45, y + 0.45],
                      color="black", linewidth=1.5)
    axes.set_yticks(positions)
    axes.set_yticklabels([b[0] for b in bars], fontsize=7)
    for tick, bar in zip(axes.get_yticklabels(), bars):
        verdict = bar[0].rsplit("[", 1)[1].rstrip("]")
        tick.set_color({"PASS": "#1a7f37", "FAIL": "#cf222e"}.get(
            verdict, "#333333"))
    axes.legend(list(drawn_peers.values()), [f"vs {p}" for p in drawn_peers],
                fontsize=7, loc="lower right")
    axes.set_xscale("log")
    low = min(b[2] for b in bars)
    high = max(max(b[2] for b in bars), 1.0)
    axes.set_xlim(min(low / 2, 0.5), high * 8)
    axes.axvline(1.0, color="#666666", linestyle="--", linewidth=0.8)
    axes.set_xlabel("Kiln's speed / peer's speed (log scale; > 1: Kiln is "
                    "faster; black tick: the row's goal)")
    axes.set_title(title, fontsize=9)
    axes.grid(axis="x", which="both", alpha=0.2)
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return None
