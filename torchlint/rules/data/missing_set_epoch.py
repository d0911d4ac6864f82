"""TL402: a DistributedSampler is never told which epoch it is."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.apis import FRAMEWORK_SETUP
from torchlint.analysis.links import LoaderArgs
from torchlint.analysis.model import ConstructedObject, Kind, LoopFrame, visible_from
from torchlint.analysis.names import dotted, looks_like_framework
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
                    sampler = self._sampler_value(ctx, loader)
                if sampler is None or _through_framework(loader, model.loop):
                    continue
                # A loader found through the values (a factory's, a wrapper's, a dict's) is
                # the loop's own whatever its name; a constructed one must be visible there.
                flowed = loader not in ctx.facts.constructed
                enclosing = [
                    outer
                    for outer in models
                    if id(model.loop.node) in outer.inner_loops
                    and outer is not model
                    and (flowed or visible_from(loader, outer.loop.scope))
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
                    if isinstance(header, cst.FunctionDef):
                        continue  # a framework's loop (training_step): it sets the epoch
                    node = header.iter if isinstance(header, cst.For) else header.test
                    ctx.report(
                        node,
                        f"`{sampler}` (a DistributedSampler) feeds `{loader.target}` but the "
                        f"{epoch.loop.label} never calls `{sampler}.set_epoch(...)`, so every "
                        "epoch shuffles in the same order on every rank; call "
                        f"`{sampler}.set_epoch(epoch)` at the start of each epoch.",
                    )

    def _sampler_value(self, ctx: RuleContext, loader: ConstructedObject) -> str | None:
        """The DistributedSampler a loader's `sampler=` value resolves to (`sampler["train"]`,
        a sampler a factory built): how to name it in the message."""
        value = ctx.roles.flow.resolve(loader.value)
        sampler = ctx.roles.flow.resolve(dict(value.keywords).get("sampler"))
        site = sampler.site
        if sampler.role != "distributed-sampler" or not isinstance(site, cst.Call):
            return None
        return f"{loader.target}.sampler" if _shuffles(site) else None

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


def _through_framework(loader: ConstructedObject, loop: LoopFrame) -> bool:
    """The loop iterates what `accelerator.prepare(loader)` / `fabric.setup_dataloaders(...)`
    returns: Accelerate's and Fabric's wrappers call the sampler's `set_epoch` themselves each
    time they are iterated."""
    names = {loader.target, *loop.sources}
    for scope in {id(s): s for s in (loop.scope, loader.scope)}.values():
        for event in scope.events:
            node = event.node
            if (
                event.kind is not Kind.CALL
                or event.method not in FRAMEWORK_SETUP
                or not looks_like_framework(event.receiver or "")
                or type(node) is not cst.Call
            ):
                continue
            if any(a.value is loader.node or dotted(a.value) in names for a in node.args):
                return True
    return False
