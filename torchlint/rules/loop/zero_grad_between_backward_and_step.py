"""TL103: the gradients are cleared after backward computed them and before step uses them."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.loops import IterEvent
from torchlint.analysis.model import Kind
from torchlint.analysis.training import clears_all_gradients, clears_for
from torchlint.diagnostics import Fix, Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.edits import delete_line, insert_line_before, statement_of


class ZeroGradBetweenBackwardAndStep(Rule):
    code = "TL103"
    name = "zero-grad-between-backward-and-step"
    family = "loop"
    severity = Severity.ERROR
    fixable = True
    summary = "In one iteration, gradients are cleared after backward and before the step."

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.all:
            if not model.is_step_loop:
                continue
            events = model.events
            for z in events:
                if not clears_all_gradients(z, ctx.roles):
                    continue
                after = events[z.index + 1 :]
                step = next(
                    (
                        e
                        for e in after
                        if e.kind is Kind.STEP
                        and clears_for(z, e, ctx.roles)
                        and e.related(z)
                        and not e.exclusive_with(z)
                    ),
                    None,
                )
                if step is None:
                    continue
                between = events[z.index + 1 : step.index]
                if any(
                    e.kind in (Kind.BACKWARD, Kind.GRAD_WRITE)
                    and e.related(z)
                    and not e.exclusive_with(z)
                    for e in between
                ):
                    continue  # fresh gradients are computed (or set by hand) before the step
                backward = None
                for e in reversed(events[: z.index]):
                    if not e.related(z):
                        continue
                    if e.kind is Kind.STEP and clears_for(z, e, ctx.roles):
                        break  # that backward's gradients were already used
                    if e.kind is Kind.BACKWARD and not e.exclusive_with(z):
                        backward = e
                        break
                if backward is None:
                    continue
                clear = ctx.text(z.event.node)
                if isinstance(z.event.node, cst.Attribute):
                    clear += " = None"
                ctx.report(
                    z.event.node,
                    f"`{clear}` runs after `{ctx.text(backward.event.node)}` and "
                    f"before `{ctx.text(step.event.node)}`{ctx.where(z)}, so the step applies "
                    "cleared gradients and the model never learns; clear the gradients before "
                    "the backward pass instead.",
                    fix=_move_fix(ctx, z, backward),
                )


def _move_fix(ctx: RuleContext, z: IterEvent, backward: IterEvent) -> Fix | None:
    """Move the clearing statement to just before the backward statement, when both stand
    on their own lines in the same block."""
    if z.event.scope is not backward.event.scope or z.event.path != backward.event.path:
        return None
    clear = statement_of(ctx, z.event.node)
    target = statement_of(ctx, backward.event.node)
    if clear is None or target is None or not isinstance(clear, cst.Expr):
        return None
    delete = delete_line(ctx, clear)
    insert = insert_line_before(ctx, target, ctx.text(clear))
    if delete is None or insert is None:
        return None
    return ctx.fix("unsafe", "Clear the gradients before the backward pass", insert, delete)
