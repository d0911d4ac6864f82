"""TL603: `loss.backward()` or `optimizer.step()` written in a LightningModule's `training_step`
while Lightning's automatic optimization is on: Lightning does both again."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.distributed.sites import CallSite, Sites, mentions, sites_of

_RELEVANT = re.compile(r"LightningModule")
_CALLS = re.compile(r"\.backward\(\s*\)|\.step\(")
_AGAIN = {
    "optimizer": (
        "Lightning steps every optimizer itself after `training_step` returns, so each batch "
        "updates the weights twice"
    ),
    "scheduler": (
        "Lightning steps the schedulers `configure_optimizers` returns itself (each epoch, or "
        'each step with `interval: "step"`), so this one also advances on every batch, far '
        "faster than configured"
    ),
}
_HANDLES = {"self.optimizers": "optimizer", "self.lr_schedulers": "scheduler"}


class ManualStepInTrainingStep(Rule):
    code = "TL603"
    name = "manual-step-in-training-step"
    family = "dist"
    severity = Severity.ERROR
    summary = (
        "`loss.backward()` / `optimizer.step()` inside a LightningModule's `training_step` under "
        "automatic optimization: Lightning runs backward and steps again after it returns."
    )

    def check(self, ctx: RuleContext) -> None:
        if not mentions(ctx, _RELEVANT) or not mentions(ctx, _CALLS):
            return
        sites = sites_of(ctx)
        module = ctx.facts.parsed.module
        for name, node in sites.classes.items():
            if not is_lightning_module(ctx, node):
                continue
            if "automatic_optimization" in module.code_for_node(node):
                continue  # manual optimization (or a switch we do not read)
            step = sites.methods.get((name, "training_step"))
            if step is None:
                continue
            for site in sites.in_function(step):
                self._check_site(ctx, sites, step, site)

    def _check_site(
        self, ctx: RuleContext, sites: Sites, step: cst.FunctionDef, site: CallSite
    ) -> None:
        func = site.call.func
        if type(func) is not cst.Attribute:
            return
        method, owner = func.attr.value, func.value
        if method == "backward" and not site.call.args and type(owner) is not cst.Call:
            text = ctx.text(owner)
            ctx.report(
                site.call,
                f"`{text}.backward()` inside `training_step` while automatic optimization is "
                "on: after `training_step` returns, Lightning clears the gradients and runs "
                "its own backward on the returned loss, so this backward's gradients are "
                "thrown away (and a second backward through the same graph fails once it is "
                "freed); return the loss and let Lightning do it, or set "
                "`self.automatic_optimization = False` and call `self.manual_backward(loss)`.",
            )
        elif method == "step" and (kind := _handle_kind(sites, step, owner)) is not None:
            text = ctx.text(owner)
            ctx.report(
                site.call,
                f"`{text}.step()` inside `training_step` while automatic optimization is on: "
                f"{_AGAIN[kind]}; leave the stepping to Lightning, or set "
                "`self.automatic_optimization = False` to optimize by hand.",
            )


def _handle_kind(sites: Sites, step: cst.FunctionDef, owner: cst.BaseExpression) -> str | None:
    """ "optimizer" / "scheduler" when `owner` is what `self.optimizers()` /
    `self.lr_schedulers()` returned (directly, indexed or unpacked)."""
    values: list[cst.BaseExpression] = [owner]
    text = dotted(owner)
    if text is not None:
        values = sites.values_of(step, text)
    for value in values:
        while type(value) is cst.Subscript:
            value = value.value
        if type(value) is cst.Call:
            kind = _HANDLES.get(dotted(value.func) or "")
            if kind is not None:
                return kind
    return None


def is_lightning_module(ctx: RuleContext, node: cst.ClassDef) -> bool:
    for base in node.bases:
        qual = ctx.facts.imports.qualify(base.value) or dotted(base.value) or ""
        if qual.rsplit(".", 1)[-1] == "LightningModule":
            return True
    return False
