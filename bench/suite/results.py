"""What the suite measures, as data: rows of Kiln beside its peers.

A row holds Kiln's figure and each peer's in the row's unit, the ratio of
Kiln's speed to each peer's (peer time / Kiln time, or Kiln rate / peer
rate: above 1 Kiln is faster), and the issue's goal for the row with its
verdict. Peers that could not be measured carry the reason instead of a
figure ("n/a").
"""

import dataclasses
from typing import Any

# Units whose figure is a rate (higher is better); the rest are times.
RATE_UNITS = {"GB/s", "GFLOP/s"}
TIME_SCALE = {"s": 1.0, "ms": 1e3, "us": 1e6}


@dataclasses.dataclass
class Figure:
    """One measured thing (Kiln or a peer) in a row's unit."""
    value: float | None = None  # from the median
    best: float | None = None  # from the fastest run
    repeats: int | None = None
    unavailable: str | None = None  # why there is no figure
    details: dict[str, Any] = dataclasses.field(default_factory=dict)

    @staticmethod
    def missing(reason: str) -> "Figure":
        return Figure(unavailable=reason)

    def to_json(self) -> dict:
        out = {"value": self.value, "best": self.best,
               "repeats": self.repeats}
        if self.unavailable:
            out["unavailable"] = self.unavailable
        out.update(self.details)
        return out


def figure_from_seconds(unit: str, median_s: float, min_s: float,
                        repeats: int, work: float | None = None,
                        **details) -> Figure:
    """A figure in `unit` from run times; rates need the `work` per run
    (bytes for GB/s, floating-point operations for GFLOP/s)."""
    if unit in RATE_UNITS:
        return Figure(value=work / median_s / 1e9, best=work / min_s / 1e9,
                      repeats=repeats,
                      details={"median_s": median_s, "min_s": min_s,
                               **details})
    scale = TIME_SCALE[unit]
    return Figure(value=median_s * scale, best=min_s * scale, repeats=repeats,
                  details={"median_s": median_s, "min_s": min_s, **details})


@dataclasses.dataclass
class Condition:
    """Kiln's speed against `peer` must reach `ratio` (strictly above it when
    `strict`), or, with `peer` None, Kiln's figure must stay below `limit`."""
    peer: str | None
    ratio: float = 1.0
    strict: bool = False
    limit: float | None = None
    # An optional peer (PyTorch) that was not measured is left out of the
    # verdict instead of making it "n/a".
    optional: bool = False


@dataclasses.dataclass
class Goal:
    text: str
    conditions: list[Condition]


@dataclasses.dataclass
class Row:
    group: int
    id: str
    name: str
    unit: str
    kiln: Figure
    peers: dict[str, Figure]
    goal: Goal | None = None
    notes: list[str] = dataclasses.field(default_factory=list)
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    skipped: str | None = None  # the whole row could not run
    error: str | None = None  # it ran and failed
    # The machine's 1, 5 and 15 minute load averages when the row began:
    # above the core count, other work was competing for the cores.
    load_average: list[float] | None = None

    @property
    def higher_is_better(self) -> bool:
        return self.unit in RATE_UNITS

    def ratio(self, peer: str) -> float | None:
        """Kiln's speed over the peer's (above 1: Kiln is faster)."""
        other = self.peers.get(peer)
        if (other is None or other.value is None or self.kiln.value is None
                or other.value == 0 or self.kiln.value == 0):
            return None
        if self.higher_is_better:
            return self.kiln.value / other.value
        return other.value / self.kiln.value

    def verdict(self) -> bool | None:
        """Whether the goal is met; None without a goal or a figure."""
        if self.goal is None or self.kiln.value is None:
            return None
        judged = False
        for condition in self.goal.conditions:
            if condition.peer is None:
                if not self.kiln.value < condition.limit:
                    return False
                judged = True
                continue
            ratio = self.ratio(condition.peer)
            if ratio is None:
                if condition.optional:
                    continue
                return None
            judged = True
            if ratio < condition.ratio or (condition.strict and
                                           ratio == condition.ratio):
                return False
        return True if judged else None

    def to_json(self) -> dict:
        verdict = self.verdict()
        return {
            "group": self.group, "id": self.id, "name": self.name,
            "unit": self.unit, "higher_is_better": self.higher_is_better,
            "params": self.params,
            "kiln": self.kiln.to_json(),
            "peers": {name: f.to_json() for name, f in self.peers.items()},
            "ratios": {name: self.ratio(name) for name in self.peers},
            "goal": self.goal.text if self.goal else None,
            "pass": verdict,
            "notes": self.notes, "skipped": self.skipped,
            "error": self.error, "load_average": self.load_average,
        }
