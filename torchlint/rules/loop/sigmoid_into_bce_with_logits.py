"""TL114: `BCEWithLogitsLoss` / `binary_cross_entropy_with_logits` receives a sigmoid's output."""

from __future__ import annotations

from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.loop.softmax_into_cross_entropy import criterion_has_role, normalised_input


class SigmoidIntoBceWithLogits(Rule):
    code = "TL114"
    name = "sigmoid-into-bce-with-logits"
    family = "loop"
    severity = Severity.ERROR
    summary = (
        "`BCEWithLogitsLoss` / `binary_cross_entropy_with_logits` receives a sigmoid's output: "
        "the loss applies the sigmoid again."
    )

    def check(self, ctx: RuleContext) -> None:
        for item in ctx.facts.ce_inputs:
            if item.loss != "bce-with-logits" and not criterion_has_role(
                ctx, item, "bce-with-logits"
            ):
                continue
            kind, origin = normalised_input(ctx, item)
            if kind != "sigmoid":
                continue
            value = ctx.text(item.value)
            ctx.report(
                item.call,
                f"`{value}` is already a sigmoid{origin}, and the loss applies one itself: "
                "every prediction is squashed into [0.5, 0.73], a negative example can never "
                "score below 0.5 and the gradients vanish as it trains; pass the raw logits "
                "(and apply the sigmoid only where probabilities are read), or use "
                "`BCELoss` / `binary_cross_entropy` on the probabilities.",
            )
