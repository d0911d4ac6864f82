"""TL109: cross-entropy receives probabilities (or log-probabilities) instead of logits."""

from __future__ import annotations

from torchlint.analysis.facts import CrossEntropyInput
from torchlint.analysis.model import ConstructedObject, Scope
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class SoftmaxIntoCrossEntropy(Rule):
    code = "TL109"
    name = "softmax-into-cross-entropy"
    family = "loop"
    severity = Severity.ERROR
    summary = (
        "`cross_entropy` / `CrossEntropyLoss` receives softmax or log_softmax output instead of "
        "raw logits."
    )

    def check(self, ctx: RuleContext) -> None:
        for item in ctx.facts.ce_inputs:
            if item.loss != "cross-entropy":
                continue
            if item.criterion is not None and not self._is_cross_entropy(ctx, item):
                continue
            kind, origin = normalised_input(ctx, item)
            if kind is None:
                continue
            value = ctx.text(item.value)
            if kind == "softmax":
                problem = (
                    f"`{value}` is already a softmax{origin}, and cross-entropy applies "
                    "log_softmax itself: the probabilities are squashed twice, gradients shrink "
                    "and the model learns slowly or not at all; pass the raw logits"
                )
            else:
                problem = (
                    f"`{value}` is already a log_softmax{origin}, and cross-entropy normalises "
                    "it again: wasted work that hides intent; pass the raw logits, or use "
                    "`nll_loss` / `NLLLoss` on log-probabilities"
                )
            ctx.report(item.call, f"{problem}.")

    def _is_cross_entropy(self, ctx: RuleContext, item: CrossEntropyInput) -> bool:
        """`criterion(outputs, labels)` where `criterion` is a parameter: follow the call
        sites to the `nn.CrossEntropyLoss()` the caller passed."""
        assert item.criterion is not None
        if ctx.roles.flow.resolve(item.criterion_value).role == "cross-entropy":
            return True  # `self.loss` set from `loss=nn.CrossEntropyLoss()`
        return any(
            obj.role == "cross-entropy" for obj in ctx.links.resolve(item.criterion, item.scope)
        )


def normalised_input(ctx: RuleContext, item: CrossEntropyInput) -> tuple[str | None, str]:
    """ "softmax" / "log_softmax" when the loss input is known to be one, with where it comes
    from (for the message), else (None, "")."""
    if item.softmax is not None:
        return item.softmax, ""
    for obj in producers(ctx, item):
        if obj.role in ("softmax", "log_softmax"):
            return obj.role, f" (`{item.producer}` ends in a {obj.role} layer)"
        forward = forward_of(ctx, obj)
        if forward is not None and forward.returns_softmax:
            name = obj.qualname.rsplit(".", 1)[-1]
            where = ctx.foreign_row(forward, forward.node)
            if where is not None:
                return forward.returns_softmax, f" (`{name}.forward` at {where} returns one)"
            return forward.returns_softmax, f" (`{name}.forward` returns one)"
    return None, ""


def producers(ctx: RuleContext, item: CrossEntropyInput) -> list[ConstructedObject]:
    """What the model of the input `model(x)` may be: its constructions, through callers."""
    if item.producer is None:
        return []
    return ctx.links.resolve(item.producer, item.scope)


def forward_of(ctx: RuleContext, obj: ConstructedObject) -> Scope | None:
    """The `forward` of an instance of a class of this file or of another project file."""
    if obj.role != "instance":
        return None
    cls = ctx.facts.classes.get(obj.qualname)
    forward = cls.methods.get("forward") if cls else None
    if forward is None and ctx.file_context is not None and "." in obj.qualname:
        forward = ctx.file_context.method_scope(obj.qualname, "forward")
    return forward
