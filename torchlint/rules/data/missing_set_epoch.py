"""TL402: a DistributedSampler is never told which epoch it is."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.links import LoaderArgs
from torchlint.analysis.model import Kind, visible_from
from torchlint.analysis.names import dotted
from torchlint.analysis.training import does_step_work
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class MissingSetEpoch(Rule):
    code = "TL402"
    name = "missing-set-epoch"
    family = "data"
    severity = Severity.WARNING
    summary = (
        "A `DistributedSampler` feeds the training loop and `sampler.set_epoch(epoch)` is never "
        "called in the epoch loop."
    )

    def check(self, ctx: RuleContext) -> None:
        models = ctx.loops.all
        for model in models:
            if not does_step_work(model, ctx.roles):
                continue
            for loader in ctx.links.loaders_of(model.loop):
                sampler = self._distributed_sampler(ctx, LoaderArgs(loader.node), loader.target)
                if sampler is None:
                    continue
                enclosing = [
                    outer
                    for outer in models
                    if id(model.loop.node) in outer.inner_loops
                    and outer is not model
                    and visible_from(loader, outer.loop.scope)
                ]
                # The epoch loop is the nearest enclosing loop, not a stage loop around it.
                nearest = [
                    outer
                    for outer in enclosing
                    if not any(id(o.loop.node) in outer.inner_loops for o in enclosing)
                ]
                for epoch in nearest:
                    if any(
                        e.kind is Kind.CALL and e.event.method == "set_epoch" for e in epoch.events
                    ):
                        continue
                    header = epoch.loop.node
                    node = header.iter if isinstance(header, cst.For) else header.test
                    ctx.report(
                        node,
                        f"`{sampler}` (a DistributedSampler) feeds `{loader.target}` but the "
                        f"{epoch.loop.label} never calls `{sampler}.set_epoch(...)`, so every "
                        "epoch shuffles in the same order on every rank; call "
                        f"`{sampler}.set_epoch(epoch)` at the start of each epoch.",
                    )

    def _distributed_sampler(self, ctx: RuleContext, args: LoaderArgs, loader: str) -> str | None:
        value = args.get("sampler", 3)
        if value is None:
            return None
        if isinstance(value, cst.Call):
            qual = ctx.facts.imports.qualify(value.func) or ""
            shuffles = qual.endswith("DistributedSampler") and _shuffles(value)
            return f"{loader}.sampler" if shuffles else None
        text = dotted(value)
        if text is None:
            return None
        for obj in reversed(ctx.facts.constructed):
            if obj.target == text:
                shuffles = obj.role == "distributed-sampler" and _shuffles(obj.node)
                return text if shuffles else None
        return None


def _shuffles(call: cst.Call) -> bool:
    """`DistributedSampler(ds, shuffle=False)` needs no epoch: its order never changes."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "shuffle":
            return not (isinstance(arg.value, cst.Name) and arg.value.value == "False")
    return True
