"""Gradient accumulation as a loop shows it: the guard that makes a step run once every N
micro-batches, and the framework contexts that accumulate on the loop's behalf."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from torchlint.analysis.loops import IterEvent, LoopModel
from torchlint.analysis.model import GuardFrame, GuardKind, Kind, LoopFrame, WithFrame, WithKind


def manual_steps(loops: Iterable[LoopModel]) -> Iterator[tuple[LoopModel, IterEvent]]:
    """Each optimizer step that the loop's own code takes (not an engine's, which accumulates
    and clips on its own, nor a closure's), with the loop it is read in."""
    for model in loops:
        if not model.is_step_loop:
            continue
        for step in model.events:
            if step.kind is Kind.STEP and not step.event.has_closure and step.event.via != "engine":
                yield model, step


def window_loop(model: LoopModel, event: IterEvent, step: IterEvent) -> LoopFrame | None:
    """The loop nested in the step's iteration that holds `event` while the step comes after
    it, with no step of its own (`for micro in micro_batches: loss.backward()`, then
    `optimizer.step()`): the loop whose iterations add up to one step; else None."""
    chain = event.loop_chain
    if len(step.loop_chain) >= len(chain) or chain[: len(step.loop_chain)] != step.loop_chain:
        return None
    inner_id = chain[len(step.loop_chain)]
    if any(e.kind is Kind.STEP and inner_id in e.loop_chain for e in model.events):
        return None  # the inner loop steps on its own
    for frame in event.frames:
        if isinstance(frame, LoopFrame) and id(frame.node) == inner_id:
            return frame
    return None


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
