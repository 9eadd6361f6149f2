"""How the suite times things: warm up, then repeat within a time budget,
taking turns between Kiln and its peers.

The machine is shared and noisy, so every figure is the median of several
timed runs (the minimum is kept beside it), ratios are taken between
figures of the same run, and the contenders of one row are measured in
alternating rounds (Kiln, peer, Kiln, peer, ...) so that a burst of load
from elsewhere falls on all of them alike. The number of runs scales with
the time one run takes: a program of seconds runs `min_repeats` times, one
of microseconds until the budget is spent.
"""

import dataclasses
import math
import statistics
import time
from typing import Callable


@dataclasses.dataclass(frozen=True)
class Budget:
    """How long to measure one figure."""
    warmup: int  # untimed runs first
    min_repeats: int
    max_repeats: int
    seconds: float  # timed runs go on until this much time has passed
    rounds: int = 3  # turns taken with the other contenders of a row

    @staticmethod
    def default() -> "Budget":
        return Budget(warmup=1, min_repeats=3, max_repeats=200, seconds=2.0)

    @staticmethod
    def quick() -> "Budget":
        return Budget(warmup=1, min_repeats=2, max_repeats=20, seconds=0.2,
                      rounds=2)

    def round_share(self) -> "Budget":
        """The part of this budget that one round spends on a contender."""
        rounds = max(1, min(self.rounds, self.min_repeats))
        return dataclasses.replace(
            self, warmup=0, rounds=1,
            min_repeats=math.ceil(self.min_repeats / rounds),
            max_repeats=math.ceil(self.max_repeats / rounds),
            seconds=self.seconds / rounds)


@dataclasses.dataclass
class Timing:
    """Seconds of each timed run of one thing."""
    samples: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def min(self) -> float:
        return min(self.samples)


# A sampler measures one contender: given a budget it returns the seconds
# of each timed run it made; with warmup=True it only warms up (and may
# return nothing).
Sampler = Callable[[Budget, bool], list[float]]


def run_sampler(run: Callable[[], object],
                calls_per_sample: int = 1) -> Sampler:
    """A sampler of `run`, which must block until its work is done.

    With `calls_per_sample` > 1 one sample is that many calls in a row,
    divided by the count: for calls of microseconds, whose single timing
    would be mostly the clock's own cost.
    """

    def sample(budget: Budget, warmup: bool) -> list[float]:
        if warmup:
            for _ in range(budget.warmup * calls_per_sample):
                run()
            return []
        samples: list[float] = []
        spent = 0.0
        while len(samples) < budget.max_repeats and (
                len(samples) < budget.min_repeats or spent < budget.seconds):
            start = time.perf_counter()
            for _ in range(calls_per_sample):
                run()
            elapsed = time.perf_counter() - start
            samples.append(elapsed / calls_per_sample)
            spent += elapsed
        return samples

    return sample


def seconds_sampler(one: Callable[[], float]) -> Sampler:
    """A sampler of something that reports its own seconds (a compile)."""

    def sample(budget: Budget, warmup: bool) -> list[float]:
        if warmup:
            return []
        samples: list[float] = []
        while len(samples) < budget.max_repeats and (
                len(samples) < budget.min_repeats or
                sum(samples) < budget.seconds):
            samples.append(one())
        return samples

    return sample


def interleave(samplers: dict[str, Sampler],
               budget: Budget) -> dict[str, Timing]:
    """Warms every contender up, then measures them in turns."""
    for sampler in samplers.values():
        sampler(budget, True)
    share = budget.round_share()
    samples: dict[str, list[float]] = {name: [] for name in samplers}
    for _ in range(max(1, min(budget.rounds, budget.min_repeats))):
        for name, sampler in samplers.items():
            samples[name] += sampler(share, False)
    return {name: Timing(s) for name, s in samples.items()}


def calls_for(run: Callable[[], object], target_seconds: float = 0.01) -> int:
    """How many calls of `run` make a sample of about `target_seconds`."""
    start = time.perf_counter()
    count = 0
    while time.perf_counter() - start < target_seconds / 10:
        run()
        count += 1
    per_call = (time.perf_counter() - start) / count
    return max(1, int(target_seconds / per_call))
