"""fit's curve diagnosis: healthy, overfitting, underfitting or inconclusive, from per-epoch
training and validation losses, and the thresholds it uses (docs/runtime-fit.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# diagnosis thresholds (docs/runtime-fit.md)
#: epochs with both a training and a validation loss needed for any diagnosis but nan
MIN_EPOCHS = 2
#: overfitting: the last validation loss at least this much (relative) above its minimum ...
OVERFIT_RISE = 0.10
#: ... with at least this many epochs after the minimum, every one of them above it
OVERFIT_EPOCHS_AFTER = 2
#: underfitting: the last training loss is still at least this fraction of where it started ...
UNDERFIT_RATIO = 0.90
#: ... (and the last validation loss at least this fraction of the first) ...
UNDERFIT_VAL_RATIO = 0.90
#: ... or, for classification, both stay at least this fraction of log C (uniform prediction)
UNIFORM_FRACTION = 0.90
#: where the training loss started: the mean of its first values
START_WINDOW = 3
#: the classification losses (their number of classes is read from the loss call)
CLASSIFICATION = ("cross_entropy", "nll_loss")


@dataclass
class Diagnosis:
    diagnosis: str
    reason: str
    best_epoch: int | None = None  # 0-based epoch of the lowest validation loss
    evidence: dict[str, Any] = field(default_factory=dict)


def _g(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def diagnose(
    train: Sequence[float | None],
    val: Sequence[float | None],
    train_start: float | None,
    num_classes: int | None = None,
) -> Diagnosis:
    """The curve diagnosis from per-epoch training and validation losses (the same metric and
    aggregation; None where an epoch has none). `train_start` is where the training loss
    started (the mean of its first values); `num_classes` enables the log C rule. Non-finite
    values are the caller's concern (diagnosis `nan`). When unsure: inconclusive."""
    paired = [
        (e, t, v)
        for e, (t, v) in enumerate(zip(train, val, strict=False))
        if t is not None and v is not None
    ]
    if len(paired) < MIN_EPOCHS:
        return Diagnosis(
            "inconclusive",
            f"Only {len(paired)} epoch(s) had both a training and a validation loss; "
            f"reading the curves needs at least {MIN_EPOCHS}.",
        )
    epochs = [e for e, _, _ in paired]
    ts = [t for _, t, _ in paired]
    vs = [v for _, _, v in paired]
    last_t, first_t, last_v, first_v = ts[-1], ts[0], vs[-1], vs[0]
    best = min(range(len(vs)), key=lambda i: vs[i])
    best_epoch = epochs[best]
    positive = min(ts + vs) > 0 and (train_start is None or train_start > 0)
    start = train_start if train_start is not None else first_t
    evidence: dict[str, Any] = {"best_epoch": best_epoch + 1}

    # underfitting first: a model that did not fit the training set cannot be overfitting it
    if positive:
        ratio = last_t / start
        val_ratio = last_v / first_v
        evidence.update(train_ratio=ratio, val_ratio=val_ratio)
        if ratio >= UNDERFIT_RATIO and val_ratio >= UNDERFIT_VAL_RATIO:
            return Diagnosis(
                "underfitting",
                f"Both losses stayed high: the training loss went from {_g(start)} at the "
                f"start to {_g(last_t)} ({ratio:.2f}x) and the validation loss from "
                f"{_g(first_v)} to {_g(last_v)} ({val_ratio:.2f}x): underfitting or "
                "optimisation trouble.",
                best_epoch,
                evidence,
            )
    if num_classes is not None and num_classes >= 2:
        uniform = math.log(num_classes)
        evidence["uniform_loss"] = uniform
        if min(last_t, last_v) >= UNIFORM_FRACTION * uniform:
            return Diagnosis(
                "underfitting",
                f"Both losses stayed near log C = {uniform:.3g}, the loss of a model that "
                f"predicts all {num_classes} classes uniformly (training {_g(last_t)}, "
                f"validation {_g(last_v)} at the last epoch): underfitting or optimisation "
                "trouble.",
                best_epoch,
                evidence,
            )
    after = vs[best + 1 :]
    rise = (last_v - vs[best]) / vs[best] if vs[best] > 0 else 0.0
    if (
        len(after) >= OVERFIT_EPOCHS_AFTER
        and all(v > vs[best] for v in after)
        and rise >= OVERFIT_RISE
        and last_t < ts[best]
    ):
        evidence["val_rise"] = rise
        return Diagnosis(
            "overfitting",
            f"The validation loss rose {rise:.0%} above its minimum {_g(vs[best])} at epoch "
            f"{best_epoch + 1} (to {_g(last_v)}) while the training loss kept falling "
            f"({_g(ts[best])} -> {_g(last_t)}): overfitting, the model memorises the "
            "training set.",
            best_epoch,
            evidence,
        )
    if last_t < first_t and last_v < first_v:
        return Diagnosis(
            "healthy",
            f"Both losses fell: training {_g(first_t)} -> {_g(last_t)} and validation "
            f"{_g(first_v)} -> {_g(last_v)} over {len(paired)} epochs.",
            best_epoch,
            evidence,
        )
    if last_t >= first_t:
        detail = f"the training loss did not fall ({_g(first_t)} -> {_g(last_t)})"
    else:
        detail = (
            f"the training loss fell ({_g(first_t)} -> {_g(last_t)}) but the validation loss "
            f"did not ({_g(first_v)} -> {_g(last_v)}), without a clear rise above its minimum"
        )
    return Diagnosis(
        "inconclusive",
        f"The curves fit no clear pattern: {detail}; run more epochs (--epochs) or more "
        "batches per epoch (--limit-batches).",
        best_epoch,
        evidence,
    )
