"""TL119: `backward(retain_graph=True)` in a training loop where nothing backpropagates again."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.loops import IterEvent, LoopModel
from torchlint.analysis.model import Kind
from torchlint.analysis.training import iterates_steps
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class RetainGraphWithoutReuse(Rule):
    code = "TL119"
    name = "retain-graph-without-reuse"
    family = "loop"
    severity = Severity.WARNING
    summary = (
        "`backward(retain_graph=True)` in a training loop with no later backward pass in the "
        "iteration: each iteration's graph is kept alive for nothing."
    )

    def check(self, ctx: RuleContext) -> None:
        seen: set[int] = set()
        for model in ctx.loops.all:
            if not iterates_steps(model):
                continue
            for backward in model.events:
                if backward.kind is not Kind.BACKWARD or id(backward.event) in seen:
                    continue
                if backward.depth != 0 or backward.event.via not in ("tensor", "scaled"):
                    continue
                if not _retains(backward) or _backward_after(model, backward):
                    continue
                seen.add(id(backward.event))
                ctx.report(
                    backward.event.node,
                    f"`{ctx.text(backward.event.node)}`{ctx.where(backward)} keeps the graph "
                    f"(its saved activations) alive after the backward, but nothing in the "
                    f"iteration of the {model.loop.label} backpropagates through it again: "
                    "the memory stays taken until the next iteration rebinds the names; drop "
                    "`retain_graph=True`. If it silenced 'Trying to backward through the graph "
                    "a second time', a tensor carried across iterations (a recurrent hidden "
                    "state) still holds the previous graph: detach it instead.",
                )


def _retains(backward: IterEvent) -> bool:
    node = backward.event.node
    if type(node) is not cst.Call:
        return False
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "retain_graph":
            return type(arg.value) is cst.Name and arg.value.value == "True"
    return False


def _backward_after(model: LoopModel, backward: IterEvent) -> bool:
    """Another backward pass (or `torch.autograd.grad`) later in the same iteration, which may
    go through the retained graph."""
    return any(
        e.kind is Kind.BACKWARD and e.related(backward) and not e.exclusive_with(backward)
        for e in model.events[backward.index + 1 :]
    )
