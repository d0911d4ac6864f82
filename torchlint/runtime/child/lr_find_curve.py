"""lr-find's curve: each step's lr, the smoothed loss, divergence, and the suggestion it gives."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

#: exponential smoothing of the loss (with bias correction), as in fastai's LR finder
BETA = 0.98
#: the sweep stops when the smoothed loss exceeds this many times its minimum
DIVERGENCE_FACTOR = 4.0
#: the first steps left out of the steepest-descent search, as a fraction of the steps run
SKIP_START_FRACTION = 0.1
#: a descent is meaningful when the smoothed loss falls below its starting level by at least
#: this fraction of it and by this many times the step-to-step noise of the raw loss
MIN_RELATIVE_DROP = 0.05
NOISE_FACTOR = 2.0
#: fewer steps than this cannot show a descent
MIN_SWEEP_STEPS = 10


def sweep_lr(step: int, steps: int, lr_min: float, lr_max: float) -> float:
    """The learning rate of step `step` (0-based) of a sweep of `steps` steps."""
    if steps <= 1:
        return lr_min
    return float(lr_min * (lr_max / lr_min) ** (step / (steps - 1)))


def smooth(losses: list[float | None], beta: float = BETA) -> list[float | None]:
    """Bias-corrected exponential moving average of the finite losses. A step without a loss
    (None) keeps the average; from the first non-finite loss on, every value is None."""
    smoothed: list[float | None] = []
    average, count, broken = 0.0, 0, False
    for loss in losses:
        if loss is not None and not math.isfinite(loss):
            broken = True
        if broken or (loss is None and count == 0):
            smoothed.append(None)
            continue
        if loss is not None:
            count += 1
            average = beta * average + (1 - beta) * loss
        smoothed.append(average / (1 - beta**count))
    return smoothed


def diverged(smoothed: float, minimum: float) -> bool:
    """fastai's rule, 4x the minimum, written as a rise above the minimum of 3x its magnitude
    so that it also means something for a loss whose minimum is negative."""
    return smoothed > minimum + (DIVERGENCE_FACTOR - 1) * abs(minimum)


def _noise(values: list[float]) -> float:
    """The step-to-step noise of a series (sigma, from the median absolute first difference,
    which a slow trend hardly moves)."""
    if len(values) < 4:
        return 0.0
    steps = sorted(abs(b - a) for a, b in itertools.pairwise(values))
    return steps[len(steps) // 2] / (0.6745 * math.sqrt(2))


@dataclass
class Suggestion:
    """What the curve says: the suggested lrs and the steps they come from, or why none."""

    skip: int = 0
    steepest_step: int | None = None
    min_step: int | None = None
    start_level: float | None = None
    min_level: float | None = None
    noise: float | None = None
    reason: str | None = None
    #: the kind of "no suggestion": no_descent, diverged_at_start, too_few_steps, no_loss
    kind: str | None = None


def analyse(
    lrs: list[float],
    losses: list[float | None],
    smoothed: list[float | None],
    diverged_at: int | None = None,
) -> Suggestion:
    """The steepest descent of the smoothed loss against log lr, between the first 10% of the
    steps and the minimum; or why there is no suggestion. `losses` are the raw losses (NaN and
    infinity kept, None for a step without one)."""
    n = len(smoothed)
    broken = next((k for k, v in enumerate(losses) if v is not None and not math.isfinite(v)), n)
    points = [k for k in range(min(broken, n)) if smoothed[k] is not None]
    result = Suggestion()
    if len(points) < MIN_SWEEP_STEPS:
        if broken < n:
            result.kind = "diverged_at_start"
            result.reason = (
                f"the loss was not finite at step {broken} (lr {lrs[broken]:.3g}), after "
                f"{len(points)} step(s) with a finite loss: too early to show a descent"
            )
        elif not points:
            result.kind = "no_loss"
            result.reason = "no scalar loss was passed to backward() during the sweep"
        else:
            result.kind = "too_few_steps"
            result.reason = (
                f"only {len(points)} step(s) with a loss ran; a sweep needs at least "
                f"{MIN_SWEEP_STEPS}"
            )
        return result
    values = [v for k in points if (v := smoothed[k]) is not None]
    skip = min(max(1, round(SKIP_START_FRACTION * len(points))), len(points) - 2)
    lowest = min(range(skip, len(points)), key=lambda i: values[i])
    result.skip = points[skip]
    result.min_step = points[lowest]
    result.start_level = values[skip]
    result.min_level = values[lowest]
    raw = [v for v in losses[: points[lowest] + 1] if v is not None and math.isfinite(v)]
    result.noise = _noise(raw)
    drop = values[skip] - values[lowest]
    needed = max(MIN_RELATIVE_DROP * abs(values[skip]), NOISE_FACTOR * result.noise)
    if drop < needed or lowest == skip:
        if lowest == skip and diverged_at is not None:
            result.kind = "diverged_at_start"
            result.reason = (
                f"the smoothed loss rose from the first steps and diverged at step "
                f"{diverged_at} (lr {lrs[diverged_at]:.3g}): the range starts too high"
            )
        else:
            result.kind = "no_descent"
            result.reason = (
                f"the smoothed loss never fell clearly below its starting level "
                f"({values[skip]:.4g}, lowest {values[lowest]:.4g}; a descent needs "
                f"{needed:.2g}: 5% of the level and twice the step-to-step noise) over lr "
                f"{lrs[points[0]]:.3g} to {lrs[points[-1]]:.3g}"
            )
        return result
    logs = [math.log10(lrs[k]) for k in points]
    best: tuple[float, int] | None = None
    for i in range(skip, min(lowest, len(points) - 2) + 1):
        span = logs[i + 1] - logs[i - 1]
        if span > 0:
            slope = (values[i + 1] - values[i - 1]) / span
            if best is None or slope < best[0]:
                best = (slope, i)
    if best is None or best[0] >= 0:
        result.kind = "no_descent"
        result.reason = "the smoothed loss has no descending stretch after the first steps"
        return result
    result.steepest_step = points[best[1]]
    return result
