"""TL306: a tensor read on the host inside a function that `torch.compile` compiles: dynamo
breaks the graph there on every call."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.model import Event, GuardFrame, Kind, Scope
from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext

_COMPILE = frozenset({"torch.compile"})
_DISABLE = frozenset({"torch.compiler.disable", "torch._dynamo.disable"})
# The reads dynamo cannot trace (checked with `torch._dynamo.explain` on torch 2.13): each one
# ends the graph. `.cpu()` and `.numpy()` are traced and do not break it.
_BREAKS = {
    "item": "reads a tensor as a Python number",
    "float": "reads a tensor as a Python number",
    "int": "reads a tensor as a Python number",
    "tolist": "copies a tensor into a Python list",
    "print": "prints a tensor",
}
_SCALARS = ("item", "float", "int")  # captured with `capture_scalar_outputs = True`
_MAX_DEPTH = 3  # functions dynamo inlines: the compiled one and what it calls


class SyncInCompiledFunction(Rule):
    code = "TL306"
    name = "sync-in-compiled-function"
    family = "speed"
    severity = Severity.WARNING
    summary = (
        "`.item()`, `.tolist()`, `float(t)` or `print(t)` inside a function that "
        "`torch.compile` compiles: a graph break, and a device sync, on every call."
    )
    watches = _COMPILE

    def check(self, ctx: RuleContext) -> None:
        text = ctx.facts.parsed.text
        if "compile" not in text:
            return
        captures = "capture_scalar_outputs" in text
        reported: set[int] = set()
        for scope, how in _compiled(ctx):
            for event, via in _events(scope, ctx):
                method = event.method or ""
                if id(event.node) in reported or not _breaks(event, method):
                    continue
                if captures and method in _SCALARS:
                    continue
                reported.add(id(event.node))
                where = f" (in `{via}`, which it calls)" if via else ""
                ctx.report(
                    event.node,
                    f"`{ctx.text(event.node)}` {_BREAKS[method]} inside `{scope.qualname}`"
                    f"{where}, which {how}: dynamo cannot trace it, so it breaks the graph "
                    "here and every call runs two compiled graphs with Python and a device "
                    "sync between them; return the tensor and read it outside the compiled "
                    "function.",
                )


def _breaks(event: Event, method: str) -> bool:
    if event.kind is not Kind.HOST_SYNC or method not in _BREAKS:
        return False
    if any(isinstance(f, GuardFrame) and "compiling" in f.condition for f in event.path):
        return False  # `if not torch.compiler.is_compiling():` keeps it out of the graph
    if method in ("item", "tolist"):
        return True  # in a compiled function, what has these methods is a tensor
    return event.subject_is_tensor is True


def _events(scope: Scope, ctx: RuleContext) -> list[tuple[Event, str | None]]:
    """The events of `scope` and of the functions of the file it calls (dynamo inlines
    them), each with the callee it sits in (None: in `scope` itself)."""
    found: list[tuple[Event, str | None]] = []
    _visit(scope, scope, 0, ctx, found, {id(scope)})
    return found


def _visit(
    scope: Scope,
    current: Scope,
    depth: int,
    ctx: RuleContext,
    found: list[tuple[Event, str | None]],
    seen: set[int],
) -> None:
    # (Not a closure that calls itself: that would be a reference cycle holding the file's
    # tree until the cyclic garbage collector ran.)
    for event in current.events:
        found.append((event, None if current is scope else current.qualname))
        callee = event.callee if event.kind is Kind.CALL else None
        if (
            callee is not None
            and callee.source is None
            and id(callee) not in seen
            and depth < _MAX_DEPTH
            and not _decorated_with(ctx, callee, _DISABLE)
        ):
            seen.add(id(callee))
            _visit(scope, callee, depth + 1, ctx, found, seen)


def _compiled(ctx: RuleContext) -> list[tuple[Scope, str]]:
    """The functions of this file that `torch.compile` compiles, with how: as a decorator,
    `torch.compile(fn)`, `torch.compile(self.method)`, or `torch.compile(model)` on an
    instance of a module class of the file (its `forward`)."""
    found: list[tuple[Scope, str]] = []
    for scope in ctx.facts.scopes:
        if _decorated_with(ctx, scope, _COMPILE):
            found.append((scope, "`@torch.compile` compiles"))
    for use in ctx.facts.watched_calls:
        call = use.node
        if use.qualname not in _COMPILE or type(call) is not cst.Call or not call.args:
            continue
        subject = call.args[0].value
        function = _function_of(ctx, subject)
        how = f"`torch.compile` compiles (line {ctx.line_of(call)})"
        if function is not None:
            found.append((function, how))
            continue
        cls = _class_of(ctx, subject)
        forward = ctx.facts.find_method(ctx.facts.classes.get(cls or ""), "forward")
        if forward is not None:
            found.append((forward, f"`torch.compile` compiles as the module's forward "
                                   f"(line {ctx.line_of(call)})"))  # fmt: skip
    for scope in ctx.facts.scopes:  # `model.compile()`: nn.Module.compile, in place
        for event in scope.events:
            if event.kind is not Kind.CALL or event.method != "compile" or event.arg_texts:
                continue
            call = event.node
            if type(call) is not cst.Call or type(call.func) is not cst.Attribute:
                continue
            cls = _class_of(ctx, call.func.value)
            forward = ctx.facts.find_method(ctx.facts.classes.get(cls or ""), "forward")
            if forward is not None:
                found.append((forward, f"`{ctx.text(event.node)}` compiles as the module's "
                                       f"forward (line {ctx.line_of(event.node)})"))  # fmt: skip
    return found


def _decorated_with(ctx: RuleContext, scope: Scope, names: frozenset[str]) -> bool:
    """Whether a decorator of `scope` is one of `names` (qualified), called or not."""
    for frame in scope.decorators:
        if type(frame.node) is cst.Decorator:
            expr = frame.node.decorator
            func = expr.func if type(expr) is cst.Call else expr
            if (ctx.facts.imports.qualify(func) or "") in names:
                return True
    return False


def _function_of(ctx: RuleContext, subject: cst.BaseExpression) -> Scope | None:
    """`train_step` (a function of the file) or `self.train_step` (a method of one class)."""
    text = dotted(subject)
    if text is None:
        return None
    if "." not in text:
        return ctx.facts.functions.get(text)
    owner, _, name = text.rpartition(".")
    if owner != "self":
        return None
    methods = [c.methods[name] for c in ctx.facts.classes.values() if name in c.methods]
    return methods[0] if len(methods) == 1 else None


def _class_of(ctx: RuleContext, subject: cst.BaseExpression) -> str | None:
    """The class of the file that `subject` is an instance of: `Net(...)` itself, or a name
    the file assigns only instances of that class."""
    if type(subject) is cst.Call:
        name = dotted(subject.func)
        return name if name in ctx.facts.classes else None
    text = dotted(subject)
    classes = {
        obj.qualname
        for obj in ctx.facts.constructed
        if obj.role == "instance" and obj.target == text
    }
    if len(classes) != 1:
        return None
    cls = next(iter(classes))
    return cls if cls in ctx.facts.classes else None
