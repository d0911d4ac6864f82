"""TL108: a running total keeps every iteration's autograd graph alive."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.apis import DATA_NAME
from torchlint.analysis.model import Event, Kind, Scope
from torchlint.analysis.names import last_segment, looks_like_model
from torchlint.analysis.value import DETACHING_METHODS
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
                if _consumed(ctx, event):
                    continue  # a pipeline schedule's queue: each graph is popped for its backward
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
        self._check_meters(ctx)

    def _check_meters(self, ctx: RuleContext) -> None:
        """`meter.update(loss, n)` in a training loop, where the meter (an object of a class of
        this file, made before the loop) adds its argument to an attribute of its own
        (`self.sum += val * n`): the running total lives in the meter, with every
        iteration's graph."""
        for model in ctx.loops.training:
            backpropagated = {
                e.receiver for e in model.events if e.kind is Kind.BACKWARD and e.receiver
            }
            for e in model.events:
                call = e.event
                if e.kind is not Kind.CALL or e.depth != 0 or not call.receiver:
                    continue
                method = _meter_method(ctx, call, model.loop.order, model.loop.scope)
                if method is None:
                    continue
                found = _added_argument(call, method, backpropagated)
                if found is None:
                    continue
                argument, total = found
                ctx.report(
                    call.node,
                    f"`{ctx.text(call.node)}` hands `{argument}`, still attached to its autograd "
                    f"graph, to `{method.qualname}()`, which adds it to `{total}`, so the meter "
                    "holds every iteration's graph and activations alive (memory grows each "
                    f"step); pass `{argument}.detach()` (and read the total with `.item()` when "
                    "it is reported, not on every step).",
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


def _meter_method(ctx: RuleContext, call: Event, order: int, scope: Scope) -> Scope | None:
    """The method a call runs on an object of a class of this file built before the loop, in
    the loop's function (or at module level): the same name in another function is another
    object."""
    for obj in reversed(ctx.facts.constructed):
        if obj.scope is not scope and not obj.scope.is_module and "." not in obj.target:
            continue  # (`self.meter`, made in `__init__`, is the same object in every method)
        if obj.target == call.receiver and obj.role == "instance" and obj.order < order:
            info = ctx.facts.classes.get(obj.qualname)
            method = info.methods.get(call.method or "") if info is not None else None
            if method is not None:
                return method
    return None


def _added_argument(call: Event, method: Scope, attached: set[str]) -> tuple[str, str] | None:
    """The argument (as written) that is a backpropagated loss and that the method adds to
    an attribute of its object, with that attribute: `("loss", "self.sum")`."""
    params = [p for p in method.params if p != "self"]
    bound = {p: t for p, t in zip(params, call.arg_texts, strict=False) if t in attached}
    bound |= {k: t for k, t in call.kwarg_texts if t in attached and k in params}
    if not bound:
        return None
    for node in _aug_assignments(method.node):
        target = node.target
        if type(target) is not cst.Attribute or type(target.value) is not cst.Name:
            continue
        if target.value.value != "self":
            continue
        for name in _attached_names(node.value):
            if name in bound:
                return bound[name], f"self.{target.attr.value}"
    return None


def _attached_names(node: cst.BaseExpression) -> set[str]:
    """The names an expression uses as tensors that may keep their graph: not the receivers of
    a detaching method (`value.detach().cpu()`, `value.item()`), not `value.data`, not the
    argument of `float(...)` / `int(...)`."""
    kind = type(node)
    if kind is cst.Name:
        return {node.value}  # type: ignore[attr-defined]
    if kind is cst.Call:
        assert isinstance(node, cst.Call)
        func = node.func
        args = set().union(*(_attached_names(a.value) for a in node.args))
        if type(func) is cst.Attribute and func.attr.value in DETACHING_METHODS:
            return args
        if type(func) is cst.Name and func.value in ("float", "int"):
            return set()
        return args | _attached_names(func)
    if kind is cst.Attribute:
        assert isinstance(node, cst.Attribute)
        return set() if node.attr.value == "data" else _attached_names(node.value)
    found: set[str] = set()
    for child in node.children:
        if isinstance(child, cst.BaseExpression):
            found |= _attached_names(child)
        elif isinstance(child, cst.CSTNode):
            for inner in child.children:
                if isinstance(inner, cst.BaseExpression):
                    found |= _attached_names(inner)
    return found


def _aug_assignments(node: cst.CSTNode) -> list[cst.AugAssign]:
    """The `x += ...` statements of a function's own body (nested blocks included)."""
    found: list[cst.AugAssign] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.AugAssign:
            found.append(current)
        elif not isinstance(current, cst.BaseExpression):
            stack.extend(current.children)
    return found


def _consumed(ctx: RuleContext, event: Event) -> bool:
    """The list is a queue its function drains (`outputs.pop(0)`, `queue.popleft()`, `del
    outputs[0]`): a pipeline schedule keeps each micro-batch's output until its backward, and
    the graphs go as they are used."""
    if not isinstance(event.node, cst.Call) or not event.receiver:
        return False
    name = re.escape(event.receiver)
    drained = re.compile(rf"(?<![\w.]){name}\.(?:pop|popleft)\(|\bdel\s+{name}\[")
    return bool(drained.search(ctx.text(event.scope.node)))


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
