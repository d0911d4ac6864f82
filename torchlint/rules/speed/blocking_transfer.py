"""TL304: pinned batches are copied to the device synchronously."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.links import LoaderArgs
from torchlint.analysis.loops import IterEvent
from torchlint.analysis.model import Kind, LoopFrame
from torchlint.diagnostics import Edit, Fix, Severity
from torchlint.rules.base import Rule, RuleContext


class BlockingTransfer(Rule):
    code = "TL304"
    confirmed_by = ("TLR608",)  # a run measures it at the same line
    name = "blocking-transfer"
    family = "speed"
    severity = Severity.INFO
    summary = (
        "A batch is moved with `.to(device)` / `.cuda()` without `non_blocking=True` while its "
        "loader has `pin_memory=True`."
    )
    fixable = True

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.step_loops:
            pinned = [
                loader
                for loader in ctx.links.loaders_of(model.loop)
                if _is_true(LoaderArgs(loader.node).keyword("pin_memory"))
            ]
            if not pinned:
                continue
            for e in model.events:
                if e.kind is not Kind.TRANSFER or e.event.non_blocking or e.via_call is not None:
                    continue
                if self._in_another_loaders_loop(ctx, e):
                    continue
                ctx.report(
                    e.event.node,
                    f"`{ctx.text(e.event.node)}` copies a batch from `{pinned[0].target}`, which "
                    "pins its memory, but waits for the copy to finish; add "
                    "`non_blocking=True` so the copy overlaps with GPU work.",
                    fix=self._fix(ctx, e),
                )

    def _in_another_loaders_loop(self, ctx: RuleContext, e: IterEvent) -> bool:
        """The copy is of a batch of a loop nested in the training loop over another loader
        (a validation pass every N steps): that loop's batch, not the training loader's."""
        return any(
            isinstance(frame, LoopFrame) and not frame.is_param_loop and ctx.links.loaders_of(frame)
            for frame in e.frames
        )

    def _fix(self, ctx: RuleContext, e: IterEvent) -> Fix | None:
        call = e.event.node
        assert isinstance(call, cst.Call)
        closing = ctx.positions.offsets(call)[1] - 1  # the offset of `)`
        text = ctx.facts.parsed.text
        if text[closing : closing + 1] != ")":
            return None
        before = text[:closing].rstrip()
        if not call.args:
            content = "non_blocking=True"
        elif before.endswith(","):
            content = " non_blocking=True"
        else:
            content = ", non_blocking=True"
        at = ctx.facts.parsed.lines.location(len(before) if call.args else closing)
        return ctx.fix("safe", "Add `non_blocking=True`", Edit(content, at, at))


def _is_true(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Name) and value.value == "True"
