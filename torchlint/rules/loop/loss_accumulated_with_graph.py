"""TL108: a running total keeps every iteration's autograd graph alive."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.apis import DATA_NAME
from torchlint.analysis.model import Event, Kind
from torchlint.analysis.names import last_segment, looks_like_model
from torchlint.diagnostics import Fix, Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.edits import parenthesized


class LossAccumulatedWithGraph(Rule):
    code = "TL108"
    name = "loss-accumulated-with-graph"
    family = "loop"
    severity = Severity.WARNING
    summary = (
        "A running total keeps the autograd graph alive: `total += loss`, "
        "`losses.append(loss)` with `loss` still attached to the graph."
    )
    fixable = True

    def check(self, ctx: RuleContext) -> None:
        for scope in ctx.facts.scopes:
            for event in scope.events:
                if event.kind is not Kind.ACCUMULATE or event.value is None:
                    continue
                if self._backpropagated(event) or not self._outlives_iteration(ctx, event):
                    continue  # a per-step sum of loss terms, reset each step and backpropagated
                if _returns_numbers(ctx, event):
                    continue  # `total += loss_compute(out, y)` whose `__call__` returns `.item()`
                if not self._in_training(ctx, event) and not (
                    _model_result(event.producer) and self._over_data(ctx, event)
                ):
                    continue  # outside training: a model's outputs collected batch by batch
                target, value = event.receiver or "total", parenthesized(ctx, event.value)
                appending = isinstance(event.node, cst.Call)
                kept = "list" if appending else "running total"
                # In a training loop `.item()` would be a host sync on every step (TL301):
                # a detached tensor is kept instead, and read once when it is reported.
                detach = appending or self._in_training(ctx, event)
                advice = (
                    f"add `{value}.detach()` (and read the total with `.item()` when it is "
                    "reported, not on every step)"
                    if detach
                    else f"add `{value}.item()` for a number or `{value}.detach()` for a tensor"
                )
                ctx.report(
                    event.node,
                    f"`{ctx.text(event.node)}` keeps `{value}` attached to its autograd graph, so "
                    f"the {kept} `{target}` holds every iteration's graph and activations alive "
                    f"(memory grows each step); {advice}.",
                    fix=self._fix(ctx, event, detach),
                )

    def _outlives_iteration(self, ctx: RuleContext, event: Event) -> bool:
        """Whether the total survives iterations of the loop that matters: the innermost
        enclosing loop that trains (else the innermost loop)."""
        loops = [loop for loop in event.loops if not loop.is_param_loop]
        if not loops:
            return False
        training = [loop for loop in loops if ctx.loops.model_of(loop).has_backward]
        decisive = training[-1] if training else loops[-1]
        return decisive not in event.reset_in

    def _in_training(self, ctx: RuleContext, event: Event) -> bool:
        return any(
            ctx.loops.model_of(loop).has_backward for loop in event.loops if not loop.is_param_loop
        )

    def _over_data(self, ctx: RuleContext, event: Event) -> bool:
        """The innermost loop runs over batches of data (a DataLoader, or an iterable named
        like one), not over a model's layers, tasks or chunks."""
        loops = [loop for loop in event.loops if not loop.is_param_loop]
        if not loops:
            return False
        loop = loops[-1]
        return bool(ctx.links.loaders_of(loop)) or bool(DATA_NAME.search(loop.iter_text))

    def _backpropagated(self, event: Event) -> bool:
        # `losses[-1].backward()` backpropagates one entry: the list still holds every graph.
        target = re.compile(rf"(?<![\w.]){re.escape(event.receiver or '')}(?![\w\[])")
        return any(
            other.kind is Kind.BACKWARD and target.search(other.receiver or other.subject or "")
            for other in event.scope.events
        )

    def _fix(self, ctx: RuleContext, event: Event, detach: bool) -> Fix | None:
        assert event.value is not None
        method = "detach" if detach else "item"
        content = f"{parenthesized(ctx, event.value)}.{method}()"
        return ctx.fix("unsafe", f"Use `.{method}()`", ctx.replace(event.value, content))


_LOSS_NAME = re.compile(r"loss|criterion", re.IGNORECASE)


def _returns_numbers(ctx: RuleContext, event: Event) -> bool:
    """The accumulated value is the result of a call whose every `return` carries no graph
    (a loss object whose `__call__` returns `loss.item()`)."""
    callee = ctx.roles.flow.runs(event.obj)
    graphs = callee.return_graphs if callee is not None else []
    return bool(graphs) and all(g is False for g in graphs)


def _model_result(producer: str | None) -> bool:
    """Whether `producer` (a called variable) is a model or a loss function by its name."""
    return producer is not None and (
        looks_like_model(producer) or bool(_LOSS_NAME.search(last_segment(producer)))
    )
