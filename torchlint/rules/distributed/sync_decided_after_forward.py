"""TL607: DDP's gradient sync for a micro-batch decided after that micro-batch's forward."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.distributed.sites import mentions

_RELEVANT = re.compile(r"\bno_sync\b|\brequire_backward_grad_sync\b")
_FLAG = "require_backward_grad_sync"
_NO_GRAD = {"torch.no_grad", "no_grad", "torch.inference_mode", "inference_mode"}
# Wrappers whose `no_sync(model)` takes the model as its argument.
_HOLDERS = re.compile(r"accelerator|fabric", re.IGNORECASE)


@dataclass(frozen=True)
class _Step:
    """One thing a loop's body does, in the order it is written."""

    what: str  # "forward" | "backward" | "flag" | "sync-off"
    node: cst.CSTNode
    model: str = ""  # forward, flag, sync-off: the DDP module as written
    # sync-off: whether the `with` block runs a forward of the model / a backward.
    forward_inside: bool = False
    backward_inside: bool = False


class SyncDecidedAfterForward(Rule):
    code = "TL607"
    name = "sync-decided-after-forward"
    family = "dist"
    severity = Severity.WARNING
    summary = (
        "DDP's gradient sync is switched (`with model.no_sync():`, "
        "`model.require_backward_grad_sync = ...`) after the forward of the micro-batch it "
        "should govern: DDP decides in the forward, so the switch acts one micro-batch late."
    )

    def check(self, ctx: RuleContext) -> None:
        if not mentions(ctx, _RELEVANT):
            return
        for loop in ctx.facts.loops:  # every `for` and `while`, as the walker found them
            steps: list[_Step] = []
            _record(loop.node.body, steps, no_grad=False)
            self._check_loop(ctx, steps)

    def _check_loop(self, ctx: RuleContext, steps: list[_Step]) -> None:
        for i, step in enumerate(steps):
            if step.what not in ("flag", "sync-off"):
                continue
            forward = next(
                (s for s in steps[:i] if s.what == "forward" and s.model == step.model), None
            )
            if forward is None:
                continue
            if step.what == "flag":
                if not any(s.what == "backward" for s in steps[i + 1 :]):
                    continue
                ctx.report(
                    step.node,
                    f"`{ctx.text(step.node)}` is set after `{ctx.text(forward.node)}`, the "
                    "forward of the micro-batch it should govern; DDP reads the flag in the "
                    "forward, so this backward syncs (or skips the sync) as the previous "
                    "micro-batch's setting said: the last micro-batch's gradients can go "
                    "unsynchronised and the ranks drift apart; set the flag before the forward.",
                )
            elif step.backward_inside and not step.forward_inside:
                ctx.report(
                    step.node,
                    f"`with {ctx.text(step.node)}:` wraps the backward but not "
                    f"`{ctx.text(forward.node)}`, the forward that built the loss; DDP decides "
                    "in the forward whether the backward all-reduces, so these gradients are "
                    "still synchronised on every micro-batch; run the forward inside the "
                    "`with` block too.",
                )


def _record(node: cst.CSTNode, steps: list[_Step], no_grad: bool) -> None:
    """The forwards, backwards and sync switches under `node`, in source order, not entering
    nested loops (each is checked as its own loop) nor definitions."""
    for child in node.children:
        kind = type(child)
        if kind in (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if kind is cst.With:
            _record_with(child, steps, no_grad)  # type: ignore[arg-type]
            continue
        if kind is cst.Assign:
            for target in child.targets:  # type: ignore[attr-defined]
                t = target.target
                if type(t) is cst.Attribute and t.attr.value == _FLAG:
                    _record(child.value, steps, no_grad)  # type: ignore[attr-defined]
                    steps.append(_Step("flag", child, dotted(t.value) or ""))
                    break
            else:
                _record(child, steps, no_grad)
            continue
        if kind is cst.Call:
            _record(child, steps, no_grad)  # arguments first: they run before the call
            func = child.func  # type: ignore[attr-defined]
            name = dotted(func)
            if type(func) is cst.Attribute and func.attr.value == "backward":
                steps.append(_Step("backward", child))
            elif name and not no_grad:
                steps.append(_Step("forward", child, name))
            continue
        _record(child, steps, no_grad)


def _record_with(node: cst.With, steps: list[_Step], no_grad: bool) -> None:
    inner_no_grad = no_grad
    switch: tuple[cst.CSTNode, str] | None = None
    for item in node.items:
        call = item.item
        if type(call) is not cst.Call:
            continue
        name = dotted(call.func) or ""
        if name in _NO_GRAD:
            inner_no_grad = True
        elif name.endswith(".no_sync"):
            holder = name.removesuffix(".no_sync")
            if _HOLDERS.search(holder.rsplit(".", 1)[-1]) and call.args:
                model = dotted(call.args[0].value) or ""
            else:
                model = holder
            if model:
                switch = (call, model)
    if switch is None:
        _record(node.body, steps, inner_no_grad)
        return
    inner: list[_Step] = []
    _record(node.body, inner, inner_no_grad)
    at, model = switch
    steps.append(
        _Step(
            "sync-off",
            at,
            model,
            forward_inside=any(
                s.what == "forward" and (s.model == model or s.model.startswith(model + "."))
                for s in inner
            ),
            backward_inside=any(s.what == "backward" for s in inner),
        )
    )
    steps.extend(inner)
