"""TL106: an evaluation loop runs the model with autograd recording."""

from __future__ import annotations

import os
from pathlib import Path

import libcst as cst

from torchlint.analysis.loops import IterEvent, LoopModel, same_object
from torchlint.analysis.model import MODE_SWITCHES, Kind, Scope, WithKind
from torchlint.analysis.training import (
    called_only_without_grad,
    context,
    grad_disabled,
    is_opaque_call,
    opaque_training_step,
    passes_optimizer,
)
from torchlint.diagnostics import Edit, Fix, Location, Severity
from torchlint.project.callers import callers_elsewhere
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.edits import torch_name

_TRAINING = (Kind.BACKWARD, Kind.STEP, Kind.MAYBE_STEP)


class EvalWithoutNoGrad(Rule):
    code = "TL106"
    name = "eval-without-no-grad"
    family = "loop"
    severity = Severity.WARNING
    summary = (
        "An evaluation loop (model in eval mode, no backward) runs the model outside "
        "`torch.no_grad()` / `torch.inference_mode()`."
    )
    fixable = True

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.all:
            if model.loop.runner:
                continue  # a framework's training step (Lightning backpropagates what it returns)
            if any(e.kind in _TRAINING or opaque_training_step(e, ctx.roles) for e in model.events):
                continue
            before = self._modes_before(model)
            forward = next(
                (
                    e
                    for e in model.events
                    if e.kind is Kind.CALL
                    and e.event.callee is None
                    and e.callee_text is not None
                    and self._in_eval_mode(model, e, before)
                    and not grad_disabled(context(model, e))
                ),
                None,
            )
            if forward is None or self._callers_disable_grad(ctx, model.loop.scope):
                continue  # `with torch.no_grad(): evaluate(model, loader)` at every call site
            function = model.loop.scope
            torch, _ = torch_name(ctx)
            decorate = not function.is_module and not _also_trains(ctx, function)
            where = f" or decorate `{function.name}()` with it" if decorate else ""
            ctx.report(
                forward.event.node,
                f"`{ctx.text(forward.event.node)}` runs in eval mode without "
                f"`{torch}.no_grad()`, so autograd records a graph for every batch of the "
                f"{model.loop.label} and holds its activations; wrap the loop in "
                f"`with {torch}.no_grad():`{where}.",
                fix=self._fix(ctx, function) if decorate else None,
            )

    def _callers_disable_grad(self, ctx: RuleContext, function: Scope) -> bool:
        """Every call of `function`, in this file and in the project's other files, runs with
        gradients off, and there is at least one."""
        if called_only_without_grad(function, ctx.links.callers):
            return True
        if ctx.project is None or function.is_module or function.parent is None:
            return False
        if not function.parent.is_module:
            return False  # methods and nested functions: their callers are not found by name
        callers = ctx.links.callers
        for site in callers.get(id(function), []):
            if not (grad_disabled(site.path) or called_only_without_grad(site.scope, callers, 1)):
                return False
        path = Path(os.path.abspath(ctx.filename))
        elsewhere = callers_elsewhere(ctx.project, path, function.name)
        return bool(elsewhere) and all(site.without_grad for site in elsewhere)

    def _modes_before(self, model: LoopModel) -> dict[str, Kind]:
        """The mode each module is left in by the loop's function before the loop starts."""
        scope = model.loop.scope
        modes: dict[str, Kind] = {}
        for event in scope.events:
            if model.loop in event.path:
                break
            if event.kind in MODE_SWITCHES and event.receiver:
                modes[event.receiver] = event.kind
        return modes

    def _in_eval_mode(self, model: LoopModel, forward: IterEvent, before: dict[str, Kind]) -> bool:
        """Whether the module `forward` runs is in eval mode there: the last mode it was set to
        earlier in the iteration, else at the end of the previous iteration, else before the
        loop."""
        target = forward.callee_text
        set_to = [
            e for e in model.events if e.kind in MODE_SWITCHES and same_object(e.receiver, target)
        ]
        earlier = [e for e in set_to if e.index < forward.index]
        if earlier:
            return earlier[-1].kind is Kind.MODE_EVAL
        if set_to:
            return set_to[-1].kind is Kind.MODE_EVAL
        return any(same_object(r, target) and k is Kind.MODE_EVAL for r, k in before.items())

    def _fix(self, ctx: RuleContext, function: Scope) -> Fix | None:
        """Decorate the evaluation function with `@torch.no_grad()` (it never trains)."""
        if function.is_module or any(d.kind is WithKind.NO_GRAD for d in function.decorators):
            return None
        node = function.node
        assert isinstance(node, cst.FunctionDef)
        row = ctx.line_of(node.decorators[0].decorator if node.decorators else node)
        line = ctx.facts.parsed.lines.line(row)
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if not (line.lstrip().startswith("@") or line.lstrip().startswith(("def ", "async def "))):
            return None
        torch, edits = torch_name(ctx)
        at = Location(row, 1)
        edits.append(Edit(f"{indent}@{torch}.no_grad()\n", at, at))
        return ctx.fix(
            "unsafe",
            f"Decorate `{function.name}()` with `@{torch}.no_grad()`",
            *edits,
        )


def _also_trains(ctx: RuleContext, function: Scope, depth: int = 0) -> bool:
    """Whether `function` also trains, itself or through the functions it calls: decorating it
    with `no_grad` would then turn its training off."""
    for event in function.events:
        opaque_step = (
            is_opaque_call(event) and bool(event.tensor_args) and passes_optimizer(event, ctx.roles)
        )
        if event.kind in _TRAINING or opaque_step:
            return True
        callee = event.callee if event.kind is Kind.CALL else None
        if (
            callee is not None
            and callee is not function
            and depth < 3
            and _also_trains(ctx, callee, depth + 1)
        ):
            return True
    return False
