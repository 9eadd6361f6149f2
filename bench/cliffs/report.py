"""The cliff finder's output: the worst ratios as a table, the summary,
the reported workloads, mismatches and errors; the JSON; the chart."""

import json
import math
import os

SLOW = 1.2  # a ratio above this counts as a cliff


def timed(records):
    return [r for r in records if r.get("ratio") is not None]


def geomean(values):
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def summary(records, dropped) -> dict:
    ratios = [r["ratio"] for r in timed(records)]
    return {
        "cases": len(records) + len(dropped),
        "timed": len(ratios),
        "geomean_ratio": geomean(ratios),
        "over_1_2x": sum(1 for x in ratios if x > SLOW),
        "over_2x": sum(1 for x in ratios if x > 2),
        "over_10x": sum(1 for x in ratios if x > 10),
        "kiln_faster_1_2x": sum(1 for x in ratios if x < 1 / SLOW),
        "mismatches": sum(1 for r in records if r.get("mismatch")),
        "kiln_errors": sum(1 for r in records if "error" in r["kiln"]),
        "kiln_timeouts": sum(1 for r in records
                             if r.get("ratio_is_lower_bound")),
        "dropped_xla_cpu_errors": len(dropped),
    }


def us(seconds):
    if seconds is None:
        return "-"
    value = seconds * 1e6
    return f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def kiln_us(figures):
    if "timed_out_s" in figures:
        return ">" + us(figures["timed_out_s"])
    return us(figures.get("median_s"))


def label(r):
    name = f"{r['family']}.{r['op']}"
    return f"{name} [{r['variant']}]" if r["variant"] else name


def worst_table(records, n) -> str:
    rows = sorted(timed(records), key=lambda r: -r["ratio"])[:n]
    return table(rows, numbered=True)


def table(rows, numbered=False) -> str:
    width = max([len(label(r)) for r in rows] + [10])
    dw = max([len(r["dtype"]) for r in rows] + [5])
    sw = max([len(r["size"]) for r in rows] + [4])
    head = (("  # " if numbered else "") +
            f"{'case':{width}s}  {'dtype':{dw}s}  {'size':{sw}s}  "
            f"{'Kiln us':>10s}  {'XLA us':>10s}  {'ratio':>8s}")
    lines = [head, "-" * len(head)]
    for i, r in enumerate(rows, 1):
        ratio = f"{r['ratio']:.2f}x" if r.get("ratio") else "-"
        flag = ""
        if r.get("ratio_is_lower_bound"):
            ratio = ">" + ratio
            flag = "  killed after the timeout"
        elif r.get("mismatch"):
            flag = "  MISMATCH"
        elif "error" in r["kiln"]:
            flag = "  Kiln error: " + r["kiln"]["error"][:60]
        lines.append((f"{i:3d} " if numbered else "") +
                     f"{label(r):{width}s}  {r['dtype']:{dw}s}  "
                     f"{r['size']:{sw}s}  {kiln_us(r['kiln']):>10s}"
                     f"  {us(r['xla_cpu'].get('median_s')):>10s}  "
                     f"{ratio:>8s}{flag}")
    return "\n".join(lines)


def text(records, dropped, worst, reported_ids) -> str:
    s = summary(records, dropped)
    out = [f"The {worst} worst ratios (Kiln's time / XLA:CPU's, medians; "
           f"above 1 Kiln is slower):", "", worst_table(records, worst), ""]
    g = s["geomean_ratio"]
    out.append(
        f"{s['timed']} cases timed on both: geometric mean of the ratios "
        f"{g:.3f}; {s['over_1_2x']} above {SLOW}x ({s['over_2x']} above 2x, "
        f"{s['over_10x']} above 10x); Kiln faster by more than {SLOW}x in "
        f"{s['kiln_faster_1_2x']}" if g else "no case timed on both")
    by_id = {r["id"]: r for r in records}
    reported = [by_id[i] for i in reported_ids if i in by_id]
    if reported:
        out += ["", "The reported workloads:", "", table(reported)]
    mismatches = [r for r in records if r.get("mismatch")]
    out += ["", f"Mismatches (Kiln's results differ from XLA:CPU's): "
            f"{len(mismatches)}"]
    for r in mismatches:
        out.append(f"  {r['id']}: {r['mismatch_detail']}")
    errors = [r for r in records if "error" in r["kiln"]]
    out += ["", f"Kiln errors: {len(errors)}"]
    for r in errors:
        out.append(f"  {r['id']}: {r['kiln']['error'][:300]}")
    if dropped:
        out += ["", f"Dropped: {len(dropped)} cases where XLA:CPU itself "
                f"fails (not run on Kiln; the JSON's `dropped` has the "
                f"errors):"]
        for d in dropped[:12]:
            out.append(f"  {d['id']}: {d['xla_cpu_error'][:120]}")
        if len(dropped) > 12:
            out.append(f"  ... and {len(dropped) - 12} more")
    return "\n".join(out)


def write_json(path, document):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1)
        f.write("\n")


def write_chart(path, records, worst, title) -> str | None:
    """A horizontal bar per case of the worst ratios, log scale, with lines
    at 1 and 1.2. Returns why no chart was drawn, or None."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("matplotlib is not installed (pip install -r "
                "bench/suite/requirements.txt)")
    rows = sorted(timed(records), key=lambda r: -r["ratio"])[:worst]
    if not rows:
        return "no case has a ratio to draw"
    figure, axes = plt.subplots(figsize=(10, 0.3 * len(rows) + 1.6))
    positions = list(range(len(rows)))[::-1]
    for y, r in zip(positions, rows):
        color = "#cf222e" if r.get("mismatch") else (
            "#dd8452" if r["ratio"] > SLOW else "#4c72b0")
        axes.barh(y, r["ratio"], color=color, height=0.7)
        bound = ">" if r.get("ratio_is_lower_bound") else ""
        shown = (f"{r['ratio']:.0f}" if r["ratio"] >= 100 else
                 f"{r['ratio']:.3g}")
        axes.text(r["ratio"] * 1.04, y, f"{bound}{shown}x",
                  va="center", fontsize=7)
    axes.set_yticks(positions)
    axes.set_yticklabels([f"{label(r)} {r['dtype']} {r['size']}"
                          for r in rows], fontsize=7)
    axes.set_xscale("log")
    high = max(r["ratio"] for r in rows)
    low = min(r["ratio"] for r in rows)
    axes.set_xlim(min(low / 1.5, 0.8), max(high * 3, 2))
    axes.axvline(1.0, color="#333333", linestyle="-", linewidth=0.9)
    axes.axvline(SLOW, color="#cf222e", linestyle="--", linewidth=0.9)
    axes.set_xlabel("Kiln's time / XLA:CPU's (log scale; above 1 Kiln is "
                    f"slower; dashed: {SLOW}x; red bar: results differ)")
    axes.set_title(title, fontsize=9)
    axes.grid(axis="x", which="both", alpha=0.2)
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return None
