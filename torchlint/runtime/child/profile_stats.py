"""profile's statistics of step times: median, p90, quartiles, rounding, two windows compared."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

#: steps each window needs before their medians are compared
MIN_COMPARED_STEPS = 5


@dataclass(frozen=True)
class WindowComparison:
    overhead: float | None  # instrumented median / uninstrumented median, when conclusive
    verdict: str  # "measured", "inconclusive" or "too few steps"


def compare_windows(instrumented: list[float], plain: list[float]) -> WindowComparison:
    """What per-stage timing costs: the ratio of the two windows' median steps, but only when
    each window has enough steps and their interquartile ranges do not overlap (the difference
    is larger than the steps' own spread); "inconclusive" otherwise. A window of the loop runs
    through whatever the script does between steps, so its spread is the measure of noise."""
    if len(instrumented) < MIN_COMPARED_STEPS or len(plain) < MIN_COMPARED_STEPS:
        return WindowComparison(None, "too few steps")
    low_a, high_a = _quartiles(instrumented) or (0.0, 0.0)
    low_b, high_b = _quartiles(plain) or (0.0, 0.0)
    if low_a <= high_b and low_b <= high_a:
        return WindowComparison(None, "inconclusive")
    median_a, median_b = _median(instrumented), _median(plain)
    if not median_a or not median_b:
        return WindowComparison(None, "inconclusive")
    return WindowComparison(median_a / median_b, "measured")


def _quartiles(values: list[float]) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    quartiles = statistics.quantiles(values, n=4, method="inclusive")
    return quartiles[0], quartiles[2]


def _round_pair(pair: tuple[float, float] | None) -> list[float | None] | None:
    return [_round(pair[0]), _round(pair[1])] if pair is not None else None


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _p90(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def _round(value: float | None, digits: int = 3) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits)
