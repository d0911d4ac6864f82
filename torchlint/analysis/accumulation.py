"""Gradient accumulation as a loop shows it: the guard that makes a step run once every N
micro-batches, and the framework contexts that accumulate on the loop's behalf."""

from __future__ import annotations

from torchlint.analysis.loops import IterEvent, LoopModel
from torchlint.analysis.model import GuardFrame, GuardKind, WithFrame, WithKind


def accumulation_guard(step: IterEvent) -> GuardFrame | None:
    """The step-counter guard (`if (i + 1) % accumulation_steps == 0:`, `if acc == 0:` on a
    wrapped counter) a step runs under, in the loop's own iteration."""
    for guard in step.own_guards:
        if guard.kind is GuardKind.PERIODIC and guard.branch == 0 and guard.counts_steps:
            return guard
    return None


def framework_accumulates(model: LoopModel, step: IterEvent) -> bool:
    """`with accelerator.accumulate(model):` around the step (in the loop or around it): the
    prepared optimizer's `zero_grad()` and `step()` run only when the window closes."""
    return accumulating_context(model, step) is not None


def accumulating_context(model: LoopModel, event: IterEvent) -> WithFrame | None:
    """The framework's accumulation context (`with accelerator.accumulate(model):`) around
    an event, in the loop or around it; None when there is none."""
    for frame in (*model.loop.outer, *event.frames):
        if isinstance(frame, WithFrame) and frame.kind is WithKind.ACCUMULATE:
            return frame
    return None
