"""TL506: `pretrained=` on a torchvision model builder (deprecated for `weights=`)."""

from __future__ import annotations

import libcst as cst

from torchlint.diagnostics import Applicability, Edit, Fix, Severity
from torchlint.rules.api.calls import is_literal, keyword, named
from torchlint.rules.base import Rule, RuleContext


class DeprecatedTorchvisionPretrained(Rule):
    code = "TL506"
    name = "deprecated-torchvision-pretrained"
    family = "api"
    severity = Severity.WARNING
    summary = (
        "`pretrained=` on a `torchvision.models` builder, deprecated since torchvision 0.13 "
        "in favour of `weights=`."
    )
    fixable = True
    min_torch = (1, 12)  # torchvision 0.13, which brought `weights=`, pairs with PyTorch 1.12
    watches_prefixes = ("torchvision.models.",)

    def check(self, ctx: RuleContext) -> None:
        for use in ctx.facts.watched_calls:
            if not use.qualname.startswith("torchvision.models.") or use.compat:
                continue
            builder = use.qualname.rsplit(".", 1)[-1]
            if not builder[:1].islower():
                continue  # a class (`ResNet`) or a private helper, not a builder
            call = use.node
            assert isinstance(call, cst.Call)
            arg = keyword(call, "pretrained")
            if arg is None:
                continue
            ctx.report(
                arg,
                f"`pretrained=` on {named(ctx, use)} is deprecated since torchvision 0.13 and "
                'warns; pass `weights="DEFAULT"` for the best weights available, the name of '
                'the weights `pretrained=True` loaded (`weights="IMAGENET1K_V1"` for the '
                "ImageNet classifiers), or `weights=None` for none.",
                fix=self._fix(ctx, call, arg),
            )

    def _fix(self, ctx: RuleContext, call: cst.Call, arg: cst.Arg) -> Fix | None:
        if keyword(call, "weights") is not None or arg.keyword is None:
            return None
        applicability: Applicability
        if is_literal(arg.value, "True"):
            content, applicability = 'weights="DEFAULT"', "unsafe"
        elif is_literal(arg.value, "False"):
            content, applicability = "weights=None", "safe"
        else:
            return None  # `pretrained=flag`: `weights="DEFAULT" if flag else None` by hand
        span = ctx.positions.span(arg)  # `pretrained=True`, without the comma after it
        return ctx.fix(
            applicability, f"Replace with `{content}`", Edit(content, span.start, span.end)
        )
