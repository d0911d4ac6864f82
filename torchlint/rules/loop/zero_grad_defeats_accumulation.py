"""TL111: `zero_grad()` on every micro-batch while the step runs every N micro-batches."""

from __future__ import annotations

from torchlint.analysis.accumulation import accumulation_guard, framework_accumulates
from torchlint.analysis.lifecycle import Lifecycle, lifecycles, reaches_only_others
from torchlint.analysis.loops import IterEvent, LoopModel, runs_every_iteration
from torchlint.analysis.model import Kind, LoopFrame
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class ZeroGradDefeatsAccumulation(Rule):
    code = "TL111"
    name = "zero-grad-defeats-accumulation"
    family = "loop"
    severity = Severity.ERROR
    summary = (
        "Gradients are cleared on every micro-batch while the optimizer steps only every N "
        "micro-batches, so gradient accumulation keeps only the last one."
    )

    def check(self, ctx: RuleContext) -> None:
        reported: set[int] = set()
        for model in ctx.loops.all:
            lives = lifecycles(model, ctx.roles)
            for life in lives:
                for clear, step, how in self._defeats(model, life, lives):
                    if id(clear.event) in reported:
                        continue
                    reported.add(id(clear.event))
                    ctx.report(
                        clear.site.node if clear.via_call is not None else clear.event.node,
                        f"`{ctx.text(clear.event.node)}`{ctx.where(clear)} clears the gradients "
                        f"on every micro-batch, but `{ctx.text(step.event.node)}`{ctx.where(step)} "
                        f"runs only {how}, so each clear throws away the gradients accumulated "
                        "since the last step and only the last micro-batch is ever applied; clear "
                        "the gradients right after the step instead.",
                    )

    def _defeats(
        self, model: LoopModel, life: Lifecycle, lives: list[Lifecycle]
    ) -> list[tuple[IterEvent, IterEvent, str]]:
        found = []
        for step in life.steps:
            if step.event.has_closure:
                continue  # `optimizer.step(closure)`: the closure clears and recomputes
            if step.event.via == "engine" or framework_accumulates(model, step):
                continue  # the framework steps and clears once per accumulation window
            periodic = accumulation_guard(step)
            for clear in life.clears:
                backward = _backward_after(model, clear, life, lives)
                if backward is None or not clear.related(step) or clear.exclusive_with(step):
                    continue
                inner = _inner_loop(clear, backward, step)
                if inner is not None and any(
                    other.loop_chain == clear.loop_chain for other in life.steps
                ):
                    continue  # the inner loop steps on its own: a phase of its own
                if inner is not None:
                    found.append((clear, step, f"after the {inner} around them has finished"))
                elif (
                    periodic is not None
                    and clear.loop_chain == step.loop_chain
                    and periodic not in clear.guards
                    and periodic not in backward.guards
                    and runs_every_iteration(clear)
                ):
                    condition = periodic.condition or "a condition"
                    found.append((clear, step, f"under `if {condition}:`"))
        return found


def _backward_after(
    model: LoopModel, clear: IterEvent, life: Lifecycle, lives: list[Lifecycle]
) -> IterEvent | None:
    """The backward that follows the clear in the same iteration and may compute this
    optimizer's gradients."""
    for e in model.events[clear.index + 1 :]:
        if e.kind is Kind.STEP and e.event in (s.event for s in life.steps):
            return None  # stepped in between: that clear starts a fresh window
        if (
            e.kind is Kind.BACKWARD
            and e.loop_chain == clear.loop_chain
            and not e.exclusive_with(clear)
            and not reaches_only_others(e, life, lives)
        ):
            return e
    return None


def _inner_loop(clear: IterEvent, backward: IterEvent, step: IterEvent) -> str | None:
    """`for micro in micro_batches: zero_grad(); backward()` with the step after that inner
    loop: the label of the inner loop, else None."""
    chain = clear.loop_chain
    if backward.loop_chain != chain or len(step.loop_chain) >= len(chain):
        return None
    if chain[: len(step.loop_chain)] != step.loop_chain:
        return None
    for frame in clear.frames:
        if isinstance(frame, LoopFrame) and id(frame.node) == chain[len(step.loop_chain)]:
            return frame.label
    return None
