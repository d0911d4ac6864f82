"""TL109: cross-entropy receives probabilities (or log-probabilities) instead of logits."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.facts import CrossEntropyInput
from torchlint.analysis.model import ConstructedObject, Kind, Scope
from torchlint.analysis.value import PROB_ROLES
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
            if item.criterion is not None and not criterion_has_role(ctx, item, "cross-entropy"):
                continue
            kind, origin = normalised_input(ctx, item)
            for other in item.alternatives if kind is None else ():
                # bound otherwise in the body of an `if` whose `else` bound what `item` is
                kind, origin = normalised_input(ctx, other)
                if kind is not None and other.branch is not None:
                    test = f"`{ctx.text(other.branch.test)}`"
                    if test not in origin:
                        origin += f" and {test}" if " when `" in origin else f" when {test}"
                    break
            if kind not in ("softmax", "log_softmax"):
                continue  # a sigmoid into cross-entropy is another mistake (multi-label)
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


def criterion_has_role(ctx: RuleContext, item: CrossEntropyInput, role: str) -> bool:
    """`criterion(outputs, labels)` where `criterion` is a parameter: whether the loss object
    the callers pass (`nn.CrossEntropyLoss()` for the role "cross-entropy") has `role`."""
    if item.criterion is None:
        return False
    if ctx.roles.flow.resolve(item.criterion_value).role == role:
        return True  # `self.loss` set from `loss=nn.CrossEntropyLoss()`
    return any(obj.role == role for obj in ctx.links.resolve(item.criterion, item.scope))


def normalised_input(ctx: RuleContext, item: CrossEntropyInput) -> tuple[str | None, str]:
    """ "softmax" / "log_softmax" when the loss input is known to be one, with where it comes
    from (for the message), else (None, "")."""
    forward = _own_forward(ctx, item)
    if forward is not None and forward.returns_softmax:
        return forward.returns_softmax, f" (`{forward.qualname}` returns one)"
    if item.softmax is not None:
        return item.softmax, ""
    passed = _passed_in(ctx, item)
    if passed[0] is not None:
        return passed
    found = producers(ctx, item)
    for obj in found:
        if obj.role in PROB_ROLES:
            return obj.role, f" (`{item.producer}` ends in a {obj.role} layer)"
        forward = forward_of(ctx, obj)
        if forward is None:
            continue
        if item.element is None:
            kind, what = forward.returns_softmax, "returns one"
        else:
            kind = forward.returns_softmax_at(item.element)
            what = f"returns one as item {item.element} of its tuple"
        if kind:
            name = obj.qualname.rsplit(".", 1)[-1]
            where = ctx.foreign_row(forward, forward.node)
            path = _built_when(ctx, obj) if len(found) > 1 else ""
            if where is not None:
                return kind, f" (`{name}.forward` at {where} {what}){path}"
            return kind, f" (`{name}.forward` {what}){path}"
    return None, ""


def producers(ctx: RuleContext, item: CrossEntropyInput) -> list[ConstructedObject]:
    """What the model of the input `model(x)` may be: its constructions, through callers,
    one per path where an `if` / `else` builds one model or another."""
    if item.producer is None:
        return []
    return ctx.links.resolve(item.producer, item.scope, paths=True)


def _built_when(ctx: RuleContext, obj: ConstructedObject) -> str:
    """` when `args.model == "transformer"``: the test of the branch that built `obj`."""
    if not obj.branches:
        return ""
    branch = obj.branches[-1]
    test = ctx.text(branch.node.test)
    return f" when `{test}`" if branch.branch == 0 else f" unless `{test}`"


def forward_of(ctx: RuleContext, obj: ConstructedObject) -> Scope | None:
    """The `forward` of an instance of a class of this file or of another project file."""
    if obj.role != "instance":
        return None
    cls = ctx.facts.classes.get(obj.qualname)
    forward = cls.methods.get("forward") if cls else None
    if forward is None and ctx.file_context is not None and "." in obj.qualname:
        forward = ctx.file_context.method_scope(obj.qualname, "forward")
    return forward


def _passed_in(ctx: RuleContext, item: CrossEntropyInput) -> tuple[str | None, str]:
    """The input is a parameter of a loss helper (`def aux_loss(y_hat, y): return
    F.cross_entropy(y_hat, y)`) that a caller of this file hands probabilities."""
    scope = item.scope
    name = item.value.value if isinstance(item.value, cst.Name) else None
    if name is None or name not in scope.params or scope.is_module:
        return None, ""
    for site in ctx.links.callers.get(id(scope), []):
        index = scope.params.index(name)
        if scope.class_name is not None and site.callee_ref[0] != "name":
            index -= 1  # `self.loss(probs, y)`: the arguments start after `self`
        if 0 <= index < len(site.arg_probs) and site.arg_probs[index] is not None:
            kind = site.arg_probs[index]
            row = ctx.line_of(site.node)
            argument = site.arg_texts[index] or "the argument"
            return kind, f" (the call at line {row} passes `{argument}`)"
    if scope.name == "forward" and scope.class_name is not None:
        return _passed_to_instance(ctx, scope, scope.params.index(name) - 1)
    return None, ""


def _passed_to_instance(ctx: RuleContext, forward: Scope, index: int) -> tuple[str | None, str]:
    """The input is a parameter of a loss module's `forward` (`class FocalLoss(nn.Module)`), and
    an instance of the module in this file is called (`focal(pred, y)`) with probabilities, or
    with the output of a model whose `forward` returns them."""
    if index < 0:
        return None, ""
    for scope in ctx.facts.scopes:
        for site in scope.events:
            if site.kind is not Kind.CALL or site.callee_ref[:1] != ("name",):
                continue
            if index >= max(len(site.arg_probs), len(site.arg_outputs)):
                continue
            instances = ctx.links.resolve(site.callee_ref[1], scope)
            cls = forward.class_name
            if not any(o.role == "instance" and o.qualname == cls for o in instances):
                continue
            call = site.node
            if not isinstance(call, cst.Call):
                continue
            positional = [a for a in call.args if a.keyword is None and not a.star]
            if index >= len(positional):
                continue
            argument = ctx.text(positional[index].value)
            where = f"the call at line {ctx.line_of(call)} passes `{argument}`"
            if index < len(site.arg_probs) and site.arg_probs[index] is not None:
                return site.arg_probs[index], f" ({where})"
            output = site.arg_outputs[index] if index < len(site.arg_outputs) else None
            if output is None:
                continue
            producer, element = output
            for obj in ctx.links.resolve(producer, scope, paths=True):
                model = forward_of(ctx, obj)
                if model is None:
                    continue
                at = element
                kind = model.returns_softmax if at is None else model.returns_softmax_at(at)
                if kind:
                    owner = obj.qualname.rsplit(".", 1)[-1]
                    return kind, f" ({where}, an output of `{owner}.forward`, which returns one)"
    return None, ""


def _own_forward(ctx: RuleContext, item: CrossEntropyInput) -> Scope | None:
    """`self(x)` / `self.forward(x)` inside a module's method (a LightningModule's
    `training_step`): the class's `forward`, or a base class's of this file."""
    if item.producer not in ("self", "self.forward") or item.scope.class_name is None:
        return None
    pending, seen = [item.scope.class_name], set()
    while pending:
        name = pending.pop(0)
        if name in seen:
            continue
        seen.add(name)
        info = ctx.facts.classes.get(name)
        if info is None:
            continue
        forward = info.methods.get("forward")
        if forward is not None:
            return forward
        pending.extend(info.bases)
    return None
