"""TL602: `loss.backward()` where Accelerate, Lightning Fabric or a DeepSpeed engine drives the
model: the framework's own backward (loss scaling, accumulation, sharded gradients) is skipped."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.distributed.sites import CallSite, Sites, TextGate, last, mentions, sites_of


@dataclass(frozen=True)
class _Framework:
    name: str  # "Accelerate"
    constructors: frozenset[str]  # what builds the object that owns the backward
    setup: frozenset[str]  # its methods that take over the model
    owner: re.Pattern[str]  # a receiver named like one (`self.accelerator`, a parameter)
    skipped: str  # what its backward does that `loss.backward()` does not


_FRAMEWORKS = (
    _Framework(
        "Accelerate",
        frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"}),
        frozenset({"prepare", "prepare_model"}),
        re.compile(r"accelerator"),
        "the mixed-precision loss scaling, the division by `gradient_accumulation_steps` and "
        "the DeepSpeed / Megatron-LM backward",
    ),
    _Framework(
        "Lightning Fabric",
        frozenset(
            {
                "lightning.Fabric",
                "lightning.fabric.Fabric",
                "lightning_fabric.Fabric",
                "lightning.fabric.fabric.Fabric",
                "lightning_fabric.fabric.Fabric",
            }
        ),
        frozenset({"setup", "setup_module"}),
        re.compile(r"fabric"),
        "the precision plugin's loss scaling and the strategy's own backward (DeepSpeed, FSDP)",
    ),
)
_DEEPSPEED_INIT = {"deepspeed.initialize"}
_DEEPSPEED_SKIPS = (
    "the fp16 loss scaling, the gradient accumulation boundaries and ZeRO's gradient "
    "partitioning (the engine's `step()` then updates from gradients it never reduced)"
)
_RELEVANT = TextGate(("accelerate", "fabric", "deepspeed"))
_PLAIN_BACKWARD = re.compile(r"\.backward\(\s*\)")


class BackwardBypassesFramework(Rule):
    code = "TL602"
    name = "backward-bypasses-framework"
    family = "dist"
    severity = Severity.WARNING
    summary = (
        "`loss.backward()` on a model prepared by Accelerate, set up by Fabric or wrapped in a "
        "DeepSpeed engine: the framework's backward (loss scaling, accumulation) is skipped."
    )
    fixable = True

    def check(self, ctx: RuleContext) -> None:
        if not mentions(ctx, _PLAIN_BACKWARD) or not mentions(ctx, _RELEVANT):
            return

        sites = sites_of(ctx)
        owners = self._owners(ctx, sites)
        if not owners:
            return
        for site in sites.calls:
            loss = _plain_backward(site)
            if loss is None:
                continue
            found = self._driver(sites, site, owners)
            if found is None:
                continue
            owner, (framework, skipped) = found
            text = ctx.text(loss)
            replacement = f"{owner}.backward({text})"
            ctx.report(
                site.call,
                f"`{text}.backward()` runs where {framework} drives the model (`{owner}`): it "
                f"bypasses `{owner}.backward(...)` and with it {skipped}; call "
                f"`{replacement}`.",
                fix=ctx.fix(
                    "unsafe",
                    f"Replace with `{replacement}`",
                    ctx.replace(site.call, replacement),
                ),
            )

    def _owners(self, ctx: RuleContext, sites: Sites) -> dict[str, tuple[str, str]]:
        """The objects (as written) whose backward the model must go through, by framework."""
        owners: dict[str, tuple[str, str]] = {}
        for (_, name), values in sites.assigned.items():
            for value in values:
                if type(value) is not cst.Call:
                    continue
                qual = ctx.facts.imports.qualify(value.func) or ""
                for framework in _FRAMEWORKS:
                    if qual in framework.constructors:
                        owners[name] = (framework.name, framework.skipped)
        for site in sites.calls:
            qual = ctx.facts.imports.qualify(site.call.func) or ""
            if qual in _DEEPSPEED_INIT:
                for engine in _engines(sites, site):
                    owners[engine] = ("DeepSpeed", _DEEPSPEED_SKIPS)
                continue
            for framework in _FRAMEWORKS:
                head, _, method = (site.callee or "").rpartition(".")
                if method in framework.setup and framework.owner.search(last(head)):
                    owners.setdefault(head, (framework.name, framework.skipped))
        return owners

    def _driver(
        self, sites: Sites, site: CallSite, owners: dict[str, tuple[str, str]]
    ) -> tuple[str, tuple[str, str]] | None:
        """The framework object the function of `site` uses, unless that function also calls
        the framework's own backward (one branch per mode: `if args.deepspeed:`)."""
        used: tuple[str, tuple[str, str]] | None = None
        for other in sites.in_function(site.function):
            head, _, method = (other.callee or "").rpartition(".")
            if head in owners:
                if method == "backward":
                    return None
                used = used or (head, owners[head])
        return used


def _plain_backward(site: CallSite) -> cst.BaseExpression | None:
    """The loss of `loss.backward()` (no arguments: not a framework's `backward(loss)`)."""
    func = site.call.func
    if type(func) is not cst.Attribute or func.attr.value != "backward" or site.call.args:
        return None
    if type(func.value) is cst.Call:
        return None  # `scaler.scale(loss).backward()`: another scheme, checked by TL201
    return func.value


def _engines(sites: Sites, site: CallSite) -> list[str]:
    """`model_engine` in `model_engine, optimizer, _, _ = deepspeed.initialize(...)`."""
    targets = sites.targets.get(id(site.call), [])
    return targets[:1]
