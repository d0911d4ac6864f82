"""TL112: `nll_loss` / `NLLLoss` receives raw logits or probabilities instead of
log-probabilities (the mirror image of TL109)."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.facts import CrossEntropyInput
from torchlint.analysis.names import dotted
from torchlint.analysis.value import Value, through_shape
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.loop.softmax_into_cross_entropy import (
    forward_of,
    normalised_input,
    producers,
)

# Layers whose output is a raw score: a forward that ends in one returns logits.
_SCORE_LAYERS = frozenset(
    {
        "torch.nn.Linear",
        "torch.nn.LazyLinear",
        "torch.nn.Bilinear",
        "torch.nn.Conv1d",
        "torch.nn.Conv2d",
        "torch.nn.Conv3d",
    }
)


class LogitsIntoNllLoss(Rule):
    code = "TL112"
    name = "logits-into-nll-loss"
    family = "loop"
    severity = Severity.ERROR
    summary = (
        "`nll_loss` / `NLLLoss` receives raw logits (a model whose `forward` ends in a linear "
        "layer) or softmax probabilities instead of log_softmax output."
    )

    def check(self, ctx: RuleContext) -> None:
        for item in ctx.facts.ce_inputs:
            if item.loss != "nll":
                continue
            value = ctx.text(item.value)
            kind, origin = normalised_input(ctx, item)
            if kind == "softmax":
                ctx.report(
                    item.call,
                    f"`{value}` is a softmax{origin}, and `nll_loss` expects log-probabilities: "
                    "it then minimises minus the probability of the target instead of minus "
                    "its log, the loss goes negative and the gradients are not those of "
                    "cross-entropy; use `log_softmax` (or pass the logits to `cross_entropy`).",
                )
                continue
            if kind is not None:
                continue
            layer = self._logits_layer(ctx, item)
            if layer is not None:
                ctx.report(
                    item.call,
                    f"`{value}` is raw logits ({layer}), and `nll_loss` expects "
                    "log-probabilities: it only picks minus the target's score, which the "
                    "model can push to minus infinity, so the loss goes negative and never "
                    "converges; apply `log_softmax(dim=1)` first, or use `cross_entropy` on "
                    "the logits.",
                )

    def _logits_layer(self, ctx: RuleContext, item: CrossEntropyInput) -> str | None:
        """`Net.forward` returns `self.fc(...)` on every path, `fc` an `nn.Linear`: where
        the logits come from, for the message; None when that is not certain."""
        if type(through_shape(item.value)) is not cst.Call:
            return None  # a variable: it may have been normalised since `model(x)`
        found: str | None = None
        for obj in producers(ctx, item):
            forward = forward_of(ctx, obj)
            cls = ctx.facts.classes.get(obj.qualname)
            if forward is None or cls is None or not forward.return_nodes:
                return None
            for node in forward.return_nodes:
                layer = _layer_call(cls.attributes, node)
                if layer is None:
                    return None
                found = found or f"`{cls.name}.forward` returns `self.{layer}(...)`, a linear layer"
        return found


def _layer_call(attributes: dict[str, list[Value]], node: cst.BaseExpression) -> str | None:
    """`fc` for `return self.fc(x)` where every value of `self.fc` is a score layer."""
    if type(node) is not cst.Call:
        return None
    name = dotted(node.func) or ""
    head, _, attr = name.partition(".")
    if head != "self" or not attr or "." in attr:
        return None
    values = attributes.get(attr) or []
    if not values or any(v.cls not in _SCORE_LAYERS for v in values):
        return None
    return attr
