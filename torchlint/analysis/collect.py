"""One pass over a parsed module that records everything the rules need.

We do not use a libcst visitor here: a generic visitor dispatches on every node, whitespace
included, and costs about as much as the parse. This walker descends only into statements and
expressions, by hand, and records *events* in evaluation order (arguments before the call).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import libcst as cst

from torchlint.analysis.deprecations import ATTRIBUTE_NAMES as _API_ATTRIBUTES
from torchlint.analysis.deprecations import BY_QUALNAME as _API_CHANGES
from torchlint.analysis.guards import classify_guard
from torchlint.analysis.model import (
    CallFrame,
    ClassInfo,
    ConstructedObject,
    Event,
    Frame,
    GuardFrame,
    GuardKind,
    Kind,
    LoopFrame,
    Scope,
    WithFrame,
    WithKind,
    visible_from,
)
from torchlint.analysis.names import (
    AUTOCAST_FUNCTIONS,
    ENABLE_GRAD_FUNCTIONS,
    NO_GRAD_FUNCTIONS,
    PROFILE_FUNCTIONS,
    ImportTable,
    constructor_role,
    dotted,
    expr_text,
    looks_like_framework,
    looks_like_optimizer,
    looks_like_scaler,
    root_name,
)
from torchlint.analysis.positions import Anchor
from torchlint.analysis.source import ParsedSource
from torchlint.analysis.values import NON_TENSOR_BUILTINS, NUMBER_BUILTINS, Values

if TYPE_CHECKING:
    from torchlint.project.project import FileContext

_SYNC_METHODS = {"item", "tolist", "cpu", "numpy"}
_AMP_DEPRECATED = {"torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler"}
_CLIP_FUNCTIONS = {
    "torch.nn.utils.clip_grad_norm_",
    "torch.nn.utils.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_value_",
}
_DEVICE_SYNCS = {"torch.cuda.synchronize", "torch.cuda.empty_cache"}
_TIMERS = {"time.time", "time.perf_counter", "time.monotonic", "time.process_time", "timeit"}
_HOST_CONSTRUCTORS = {
    f"torch.{name}"
    for name in (
        "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
        "randperm", "arange", "linspace", "logspace", "eye",
    )
}  # fmt: skip
_AMP_DEPRECATED_NAMES = {"autocast", "GradScaler"}
# Calls the api rules (TL503-TL507) look at; with every `torchvision.models.*` call.
_WATCHED_CALLS = {
    "torch.load",
    "torch.serialization.load",
    "torch.utils.checkpoint.checkpoint",
    "torch.utils.checkpoint.checkpoint_sequential",
    "torch.log",
    "torch.exp",
}
# An `if` whose test reads a version (`torch.__version__`, `hasattr(torch, "linalg")`,
# `_TORCH_GREATER_EQUAL_2_0`) chooses code for one PyTorch release or another: what it runs on the
# older side is a deliberate fallback, not a forgotten deprecated call.
_COMPAT_TEST = re.compile(
    r"hasattr|version|torch_(?:ge|gt|le|lt|greater|less|older|newer)|_TORCH_|is_torch",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class DeprecatedUse:
    """A reference to `torch.cuda.amp.autocast` / `torch.cuda.amp.GradScaler`."""

    qualname: str
    node: cst.CSTNode  # the Call when called, else the reference itself
    func: cst.BaseExpression


@dataclass(frozen=True)
class ApiUse:
    """A use of a name the api rules watch: an entry of the deprecation table, `torch.load`..."""

    qualname: str
    node: cst.CSTNode  # the Call when called, else the reference; the ImportFrom for imports
    func: cst.BaseExpression | None
    # Under a version test or in an `except` handler (or through a name imported there): a
    # fallback for another PyTorch release, which the rules leave alone.
    compat: bool = False


@dataclass(frozen=True)
class CrossEntropyInput:
    """The first argument of a cross-entropy call, and where it came from."""

    call: cst.Call
    value: cst.BaseExpression
    softmax: str | None  # "softmax" / "log_softmax" when the value is known to be one
    producer: str | None  # `model` when the value is `model(x)`'s output
    scope: Scope
    # None when the call is known to be a cross-entropy; else the called parameter's name,
    # which the rule resolves through the module's call sites (`criterion` passed in).
    criterion: str | None = None


@dataclass
class ModuleFacts:
    parsed: ParsedSource
    imports: ImportTable
    module_scope: Scope
    scopes: list[Scope] = field(default_factory=list)
    functions: dict[str, Scope] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    constructed: list[ConstructedObject] = field(default_factory=list)
    deprecated_amp: list[DeprecatedUse] = field(default_factory=list)
    # For the api rules (TL501-TL507): uses of deprecated or removed APIs, `from functorch
    # import ...` statements, calls of `torch.load` & co., `<expr>.log()` method calls, and
    # `x.require_grad = ...` assignments (with how often `.require_grad` is read).
    api_uses: list[ApiUse] = field(default_factory=list)
    functorch_imports: list[ApiUse] = field(default_factory=list)
    watched_calls: list[ApiUse] = field(default_factory=list)
    log_calls: list[cst.Call] = field(default_factory=list)
    require_grad_writes: list[cst.Attribute] = field(default_factory=list)
    require_grad_reads: int = 0
    top_level_imports: list[cst.SimpleStatementLine] = field(default_factory=list)
    # For each expression walked: the statement or header it sits in (see positions.py).
    anchors: dict[int, Anchor] = field(default_factory=dict)

    ce_inputs: list[CrossEntropyInput] = field(default_factory=list)

    @property
    def loops(self) -> list[LoopFrame]:
        return [loop for scope in self.scopes for loop in scope.loops]

    def release(self) -> None:
        """Break the reference cycles between scopes, events and loops, so that the module
        (a large tree) is freed by reference counting, without waiting for the cyclic garbage
        collector."""
        for scope in self.scopes:
            scope.events.clear()
            scope.loops.clear()
            scope.local_defs.clear()
            scope.parent = None
        self.scopes.clear()
        self.functions.clear()
        self.classes.clear()
        self.constructed.clear()
        self.anchors.clear()


def collect(parsed: ParsedSource, project: FileContext | None = None) -> ModuleFacts:
    """The facts of one module. With `project`, relative imports are read and calls of other
    project files' functions and methods are recorded (resolution decides what they run)."""
    return _Collector(parsed, project).run()


class _Collector:
    def __init__(self, parsed: ParsedSource, project: FileContext | None = None) -> None:
        self.module = parsed.module
        self.project = project
        self.imports = ImportTable(project.relative if project is not None else None)
        root = Scope("<module>", "<module>", parsed.module, None)
        self.facts = ModuleFacts(parsed, self.imports, root, scopes=[root])
        self.scope = root
        self.frames: list[Frame] = []
        self.class_stack: list[ClassInfo] = []
        self.class_methods: dict[str, set[str]] = {}
        self.instances: dict[str, str] = {}  # receiver text -> project class name
        self.no_grad_functions: set[str] = set()  # `f` / `Class.m` decorated with no_grad
        self.top_names = self._prescan(parsed.module)
        self.values = Values(self)
        self.loop_assigned: list[set[str]] = []  # names assigned so far in each open loop
        self.indents: list[str] = []
        self.anchors = self.facts.anchors
        self.anchor: Anchor | None = None
        self.top = -1  # index of the top-level statement being walked
        self.order = 0  # counts loops and constructions, in walk order
        self.consumer: tuple[int, str] | None = None  # (id of an argument, the callee's text)
        self.compat_depth = 0  # how many version tests / `except` handlers enclose the walk
        self.compat_names: set[str] = set()  # names imported under one

    # --- entry ----------------------------------------------------------------------------

    def run(self) -> ModuleFacts:
        self.statements(self.module.body)
        self.facts.module_scope.tensor_names = self.values.tensors
        return self.facts

    def _prescan(self, module: cst.Module) -> set[str]:
        """Names of top-level functions and classes, and each class's methods, before the walk,
        so that a call can be told from a call of a variable even when the def comes later."""
        names: set[str] = set()
        for stmt in module.body:
            if type(stmt) is cst.SimpleStatementLine:
                for small in stmt.body:  # imports first, to read decorators below
                    if type(small) is cst.Import:
                        self.imports.add_import(small)
                    elif type(small) is cst.ImportFrom:
                        self.imports.add_import_from(small)
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef | cst.ClassDef):
                names.add(stmt.name.value)
            if type(stmt) is cst.FunctionDef and self._disables_grad(stmt):
                self.no_grad_functions.add(stmt.name.value)
            if type(stmt) is cst.ClassDef:
                methods = [s for s in stmt.body.body if type(s) is cst.FunctionDef]
                self.class_methods[stmt.name.value] = {m.name.value for m in methods}
                for method in methods:
                    if self._disables_grad(method):
                        self.no_grad_functions.add(f"{stmt.name.value}.{method.name.value}")
        return names

    def _disables_grad(self, node: cst.FunctionDef) -> bool:
        for decorator in node.decorators:
            expr = decorator.decorator
            func = expr.func if type(expr) is cst.Call else expr
            if self.imports.qualify(func) in NO_GRAD_FUNCTIONS:
                return True
        return False

    def constructed_kind(self, text: str) -> str | None:
        """The role of the object last assigned to `text`, when the module constructs it."""
        for obj in reversed(self.facts.constructed):
            if obj.target == text and visible_from(obj, self.scope):
                return obj.role
        return None

    def under_no_grad(self) -> bool:
        for frame in reversed(self.frames):
            if isinstance(frame, WithFrame):
                if frame.kind is WithKind.NO_GRAD:
                    return True
                if frame.kind is WithKind.ENABLE_GRAD:
                    return False
        return False

    # --- statements -----------------------------------------------------------------------

    def anchor_at(self, node: cst.CSTNode) -> None:
        self.anchor = Anchor(node, tuple(self.indents), self.top)
        self.anchors[id(node)] = self.anchor

    def stmt(self, node: cst.CSTNode) -> None:
        if type(node) is cst.SimpleStatementLine:
            at_top = (
                self.scope.is_module
                and not self.class_stack
                and all(
                    isinstance(f, WithFrame) and type(f.node) is cst.SimpleStatementLine
                    for f in self.frames
                )
            )
            if at_top and any(isinstance(s, cst.Import | cst.ImportFrom) for s in node.body):
                self.facts.top_level_imports.append(node)
            for small in node.body:
                self.small(small)
        elif type(node) is cst.If:
            self.if_(node)
        elif type(node) is cst.For:
            self.for_(node)
        elif type(node) is cst.While:
            self.while_(node)
        elif type(node) is cst.With:
            self.with_(node)
        elif type(node) is cst.FunctionDef:
            self.function(node)
        elif type(node) is cst.ClassDef:
            self.class_(node)
        elif isinstance(node, cst.Try | cst.TryStar):
            self.block(node.body)
            for handler in node.handlers:
                self.frames.append(GuardFrame(handler, 0, GuardKind.OTHER))
                self.compat_depth += 1
                self.block(handler.body)
                self.compat_depth -= 1
                self.frames.pop()
            if node.orelse is not None:
                self.block(node.orelse.body)
            if node.finalbody is not None:
                self.block(node.finalbody.body)
        elif type(node) is cst.Match:
            self.anchor_at(node.subject)
            self.expr(node.subject)
            for case in node.cases:
                self.frames.append(GuardFrame(case, 0, GuardKind.OTHER))
                self.block(case.body)
                self.frames.pop()

    def block(self, suite: cst.BaseSuite) -> None:
        depth = len(self.frames)
        if type(suite) is cst.IndentedBlock:
            self.indents.append(
                suite.indent if suite.indent is not None else self.module.default_indent
            )
            self.statements(suite.body)
            self.indents.pop()
        elif type(suite) is cst.SimpleStatementSuite:
            for small in suite.body:
                self.small(small)
        del self.frames[depth:]

    def statements(self, body: Sequence[cst.BaseStatement]) -> None:
        """A block's statements; the frames some of them open last until the block ends (the
        caller truncates them)."""
        top_level = body is self.module.body
        for index, stmt in enumerate(body):
            if top_level:
                self.top = index
            if type(stmt) is not cst.SimpleStatementLine:
                # compound statements: their rows come from `ast` (see positions.py)
                self.anchors[id(stmt)] = Anchor(stmt, tuple(self.indents), self.top)
            self.stmt(stmt)
            if type(stmt) is cst.If and stmt.orelse is None and _ends_with_continue(stmt.body):
                # `if cond: continue` -- what follows runs only when `cond` is false. (After
                # `if cond: break`, the rest still runs on every iteration until the last.)
                self.frames.append(
                    GuardFrame(stmt, 1, classify_guard(stmt.test, True), expr_text(stmt.test))
                )
                continue
            enabled = _sets_grad_mode(stmt, self.imports)
            if enabled is not None:
                # `torch.set_grad_enabled(False)` as a statement: for the rest of the block
                kind = WithKind.ENABLE_GRAD if enabled else WithKind.NO_GRAD
                self.frames.append(WithFrame(stmt, kind, "torch.set_grad_enabled"))

    def if_(self, node: cst.If) -> None:
        self.anchor_at(node.test)
        self.expr(node.test)
        condition = expr_text(node.test)
        compat = _COMPAT_TEST.search(condition) is not None
        self.compat_depth += compat
        self.frames.append(GuardFrame(node, 0, classify_guard(node.test, False), condition))
        self.block(node.body)
        self.frames.pop()
        if node.orelse is not None:
            self.frames.append(GuardFrame(node, 1, classify_guard(node.test, True), condition))
            if type(node.orelse) is cst.If:
                self.if_(node.orelse)
            else:
                self.block(node.orelse.body)
            self.frames.pop()
        self.compat_depth -= compat

    def for_(self, node: cst.For) -> None:
        self.anchor_at(node.iter)
        self.expr(node.iter)
        self.values.bind_loop_targets(_target_names(node.target))
        iter_text = _iterable_label(node.iter)
        self.order += 1
        loop = LoopFrame(
            node, self.scope, iter_text, _is_param_loop(node.iter), tuple(self.frames), self.order
        )
        loop.sources.extend(self.loop_sources(node.iter))
        self.scope.loops.append(loop)
        self.loop_body(loop, node.body)
        if node.orelse is not None:
            self.block(node.orelse.body)

    def while_(self, node: cst.While) -> None:
        self.order += 1
        loop = LoopFrame(node, self.scope, "", False, tuple(self.frames), self.order)
        self.scope.loops.append(loop)
        self.loop_body(loop, node.body, node.test)
        if node.orelse is not None:
            self.block(node.orelse.body)

    def loop_body(
        self, loop: LoopFrame, body: cst.BaseSuite, test: cst.BaseExpression | None = None
    ) -> None:
        start = len(self.scope.events)
        self.frames.append(loop)
        self.loop_assigned.append(set())
        if test is not None:
            self.anchor_at(test)
            self.expr(test)
        self.block(body)
        assigned = self.loop_assigned.pop()
        self.frames.pop()
        for event in self.scope.events[start:]:
            # `running += loss` ... `running = 0` after the optimizer step: the total spans a
            # few iterations of this loop, not all of them.
            receiver = event.receiver or ""
            if (
                event.kind is Kind.ACCUMULATE
                and loop not in event.reset_in
                and (receiver in assigned or receiver.split("[", 1)[0] in assigned)
            ):
                event.reset_in = (*event.reset_in, loop)

    def with_(self, node: cst.With) -> None:
        pushed = 0
        for item in node.items:
            self.anchor_at(item.item)
            self.expr(item.item)
            self.frames.append(self.with_frame(node, item.item))
            pushed += 1
        self.block(node.body)
        del self.frames[len(self.frames) - pushed :]

    def with_frame(self, owner: cst.CSTNode, expr: cst.BaseExpression) -> WithFrame:
        call = expr if type(expr) is cst.Call else None
        func = call.func if call is not None else expr
        qual = self.imports.qualify(func) or ""
        text = expr_text(func)
        if qual in AUTOCAST_FUNCTIONS:
            device = AUTOCAST_FUNCTIONS[qual]
            dtype = None
            if call is not None:
                for i, arg in enumerate(call.args):
                    key = arg.keyword.value if arg.keyword else None
                    if key == "device_type" or (key is None and i == 0 and device is None):
                        device = _string_value(arg.value) or device
                    elif key == "dtype":
                        dtype = (dotted(arg.value) or "").rsplit(".", 1)[-1] or None
                    elif key == "enabled" and _is_false(arg.value):
                        return WithFrame(owner, WithKind.AUTOCAST_OFF, text)
            return WithFrame(owner, WithKind.AUTOCAST, text, dtype, device)
        if qual in NO_GRAD_FUNCTIONS:
            if call is not None and any(
                ((a.keyword and a.keyword.value == "mode") or not a.keyword) and _is_false(a.value)
                for a in call.args
            ):
                return WithFrame(owner, WithKind.OTHER, text)  # inference_mode(False)
            return WithFrame(owner, WithKind.NO_GRAD, text)
        if qual == "torch.set_grad_enabled" and call is not None and call.args:
            if _is_false(call.args[0].value):
                return WithFrame(owner, WithKind.NO_GRAD, text)
            return WithFrame(owner, WithKind.ENABLE_GRAD, text)
        if qual in ENABLE_GRAD_FUNCTIONS:
            return WithFrame(owner, WithKind.ENABLE_GRAD, text)
        lowered = text.lower()
        if qual in PROFILE_FUNCTIONS or "profil" in lowered or "timer" in lowered:
            return WithFrame(owner, WithKind.PROFILE, text)
        return WithFrame(owner, WithKind.OTHER, text)

    def function(self, node: cst.FunctionDef) -> None:
        parent = self.scope
        cls = self.class_stack[-1] if self.class_stack else None
        name = node.name.value
        if cls is not None and parent.is_module:
            qualname = f"{cls.name}.{name}"
        elif parent.is_module:
            qualname = name
        else:
            qualname = f"{parent.qualname}.{name}"
        params = tuple(p.name.value for p in _all_params(node.params))
        for decorator in node.decorators:
            self.anchor_at(decorator.decorator)
            self.expr(decorator.decorator)
        decorators = tuple(self.with_frame(d, d.decorator) for d in node.decorators)
        scope = Scope(
            name,
            qualname,
            node,
            parent,
            class_name=cls.name if cls is not None and parent.is_module else None,
            params=params,
            decorators=tuple(d for d in decorators if d.kind is not WithKind.OTHER),
        )
        self.facts.scopes.append(scope)
        if cls is not None and parent.is_module:
            cls.methods[name] = scope
        elif parent.is_module:
            self.facts.functions[name] = scope
        else:
            parent.local_defs[name] = scope

        saved = (self.scope, self.frames, self.values, self.loop_assigned)
        self.scope = scope
        self.frames = list(scope.decorators)
        self.values = Values(self, params)
        self.loop_assigned = []
        self.block(node.body)
        scope.tensor_names = self.values.tensors
        self.scope, self.frames, self.values, self.loop_assigned = saved

    def class_(self, node: cst.ClassDef) -> None:
        bases = tuple(t for t in (dotted(a.value) for a in node.bases) if t)
        info = ClassInfo(node.name.value, node, bases)
        if self.scope.is_module and not self.class_stack:
            self.facts.classes[info.name] = info
        self.class_stack.append(info)
        self.block(node.body)
        self.class_stack.pop()

    # --- small statements -------------------------------------------------------------------

    def small(self, node: cst.BaseSmallStatement) -> None:
        self.anchor_at(node)
        if type(node) is cst.Expr:
            self.expr(node.value)
        elif type(node) is cst.Assign:
            self.expr(node.value)
            for target in node.targets:
                self.assign(target.target, node.value)
        elif type(node) is cst.AnnAssign:
            if node.value is not None:
                self.expr(node.value)
                self.assign(node.target, node.value)
        elif type(node) is cst.AugAssign:
            self.expr(node.value)
            self.expr(node.target)
            text = dotted(node.target)
            if text is None and type(node.target) is cst.Subscript:
                self.accumulation(node, expr_text(node.target), node.value)  # stats["loss"]
            if text is not None:
                self.accumulation(node, text, node.value)
                if self.values.is_tensor(node.value):
                    self.values.tensors.add(text)
        elif type(node) is cst.Return:
            if node.value is not None:
                self.expr(node.value)
                self.scope.returns.append(self.values.softmax_of(node.value))
                value = node.value
                qual = self.imports.qualify(value.func) if type(value) is cst.Call else None
                self.scope.returned_roles.append(constructor_role(qual) if qual else None)
        elif type(node) is cst.Assert:
            self.expr(node.test)
        elif type(node) is cst.Raise:
            if node.exc is not None:
                self.expr(node.exc)
        elif type(node) is cst.Import:
            self.imports.add_import(node)
            if self.compat_depth:
                self.compat_names.update(_bound_names(node))
        elif type(node) is cst.ImportFrom:
            self.imports.add_import_from(node)
            if self.compat_depth:
                self.compat_names.update(_bound_names(node))
            module = node.module
            if type(module) is cst.Name and module.value == "functorch" and not node.relative:
                use = ApiUse("functorch", node, None, self.compat_depth > 0)
                self.facts.functorch_imports.append(use)

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        self.anchors[id(target)] = self.anchor  # type: ignore[assignment]
        if isinstance(target, cst.Tuple | cst.List):
            values: list[cst.BaseExpression] | None = None
            if isinstance(value, cst.Tuple | cst.List) and len(value.elements) == len(
                target.elements
            ):
                values = [el.value for el in value.elements]
            for i, element in enumerate(target.elements):
                self.assign(element.value, values[i] if values is not None else value)
            return
        if (
            type(target) is cst.Attribute
            and target.attr.value == "require_grad"
            and self.holds_parameters(target.value)
        ):
            self.facts.require_grad_writes.append(target)
        if type(target) is cst.Attribute and target.attr.value == "grad":
            receiver = expr_text(target.value)
            if type(value) is cst.Name and value.value == "None":
                self.event(Kind.ZERO_GRAD, target, receiver=receiver, method="grad")
            else:
                self.event(Kind.GRAD_WRITE, target, receiver=receiver, method="grad")
            return
        text = dotted(target)
        if text is None:
            return
        if (
            type(value) is cst.BinaryOperation
            and type(value.operator) is cst.Add
            and dotted(value.left) == text
        ):
            self.accumulation(value, text, value.right)  # `total = total + loss`
        else:
            for names in self.loop_assigned:
                names.add(text)
        if type(value) is cst.Call:
            self.constructed(text, value)
        elif isinstance(value, cst.List | cst.Tuple) and value.elements:
            first = value.elements[0].value
            if type(first) is cst.Call:
                self.constructed(text, first)
        no_grad = self.under_no_grad() or self.calls_no_grad_function(value)
        self.values.bind(text, value, under_no_grad=no_grad)
        if type(value) is cst.Call and _method(value) == "scale":
            receiver = expr_text(value.func.value)  # type: ignore[attr-defined]
            if looks_like_scaler(receiver) or self.role_is(receiver, "scaler"):
                self.values.scaled.add(text)
        else:
            self.values.scaled.discard(text)

    def holds_parameters(self, receiver: cst.BaseExpression) -> bool:
        """`p` in `for p in model.parameters()`, `layer.weight`, a known tensor: something whose
        `requires_grad` matters (not a config object that happens to have such a field)."""
        text = dotted(receiver)
        if text is None:
            return False
        last = text.rsplit(".", 1)[-1].lower()
        if any(word in last for word in ("weight", "bias", "param", "embed")):
            return True
        if self.values.is_tensor(receiver):
            return True
        for frame in self.frames:
            if (
                isinstance(frame, LoopFrame)
                and type(frame.node) is cst.For
                and (frame.is_param_loop or "param" in frame.iter_text.lower())
                and text in _target_names(frame.node.target)
            ):
                return True
        return False

    def constructed(self, target: str, call: cst.Call) -> None:
        if _streams(call, self.imports):
            self.order += 1
            self.facts.constructed.append(
                ConstructedObject(
                    "iterable-dataset", target, "", call, self.scope, order=self.order
                )
            )
            return
        qual = self.imports.qualify(call.func)
        if qual is not None:
            role = constructor_role(qual)
            if role == "sequential" and call.args:
                last = call.args[-1].value
                inner = self.imports.qualify(last.func) if type(last) is cst.Call else None
                role = constructor_role(inner or "")
                role = role if role in ("softmax", "log_softmax") else None
            if role is None:
                if self.is_project_class(call.func, qual):
                    self.instances[target] = qual  # dotted: a class of another project file
                    self.facts.constructed.append(
                        ConstructedObject("instance", target, qual, call, self.scope)
                    )
                return
            enabled: bool | None = True
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "enabled":
                    enabled = False if _is_false(arg.value) else None
            owner = None
            if role == "optimizer" and call.args:
                first = call.args[0].value
                if type(first) is cst.Call and _method(first) in (
                    "parameters",
                    "named_parameters",
                ):
                    owner = expr_text(first.func.value)  # type: ignore[attr-defined]
            self.order += 1
            self.facts.constructed.append(
                ConstructedObject(role, target, qual, call, self.scope, enabled, owner, self.order)
            )
        elif (
            type(call.func) is cst.Name
            and call.func.value in self.facts.functions
            and set(self.facts.functions[call.func.value].returned_roles) == {"tensor-dataset"}
        ):  # `dataset = build_corpus()` where the helper returns a TensorDataset
            self.order += 1
            self.facts.constructed.append(
                ConstructedObject(
                    "tensor-dataset", target, call.func.value, call, self.scope, order=self.order
                )
            )
        elif type(call.func) is cst.Name and call.func.value in self.class_methods:
            self.instances[target] = call.func.value
            self.facts.constructed.append(
                ConstructedObject("instance", target, call.func.value, call, self.scope)
            )

    def accumulation(self, node: cst.CSTNode, target: str, value: cst.BaseExpression) -> None:
        """`total += loss` / `losses.append(loss)` in a loop, with `loss` on the graph. Which
        loop's iterations the total outlives is the rule's question: we record where it was
        reset (assigned) so far."""
        if not self.loop_assigned or self.under_no_grad() or not self.values.is_graph(value):
            return
        loops = [f for f in self.frames if isinstance(f, LoopFrame)]
        reset_in = tuple(
            loop for loop, names in zip(loops, self.loop_assigned, strict=False) if target in names
        )
        self.event(
            Kind.ACCUMULATE,
            node,
            receiver=target,
            subject=root_name(value),
            value=value,
            reset_in=reset_in,
            producer=self.producer_of(value),
        )

    def producer_of(self, value: cst.BaseExpression) -> str | None:
        """The variable called to compute `value`: `model` for `model(x)`, for `out` after
        `out = model(x)`, and for `out.logits * w`."""
        while isinstance(value, cst.BinaryOperation | cst.UnaryOperation):
            value = value.left if isinstance(value, cst.BinaryOperation) else value.expression
        called = self.values.variable_call(value)
        if called is not None:
            return called
        while type(value) is cst.Call and type(value.func) is cst.Attribute:
            value = value.func.value  # `loss.mean()`, `out.float()`
        while isinstance(value, cst.Attribute | cst.Subscript):
            text = dotted(value)
            if text is not None and text in self.values.produced_by:
                return self.values.produced_by[text]
            value = value.value
        text = dotted(value)
        return self.values.produced_by.get(text) if text is not None else None

    def calls_no_grad_function(self, value: cst.BaseExpression) -> bool:
        """`loss = compute(...)` where `compute` is decorated with `torch.no_grad()`."""
        if type(value) is not cst.Call:
            return False
        name = dotted(value.func)
        if name is None:
            return False
        if name.startswith("self.") and self.class_stack:
            name = f"{self.class_stack[-1].name}.{name[5:]}"
        return name in self.no_grad_functions

    def loop_sources(self, node: cst.BaseExpression) -> list[str]:
        """The loaders a `for` iterates: through enumerate / tqdm / iter, each side of a zip."""
        if type(node) is cst.Call:
            name = dotted(node.func) or ""
            if name == "zip":
                return [s for a in node.args for s in self.loop_sources(a.value)]
            if (name in _ITER_WRAPPERS or name.endswith(".tqdm")) and node.args:
                return self.loop_sources(node.args[0].value)
            return []
        text = dotted(node)
        if text is None:
            return []
        return [self.values.iterators.get(text, text)]

    def role_is(self, text: str, role: str) -> bool:
        return any(c.role == role and c.target == text for c in self.facts.constructed)

    # --- expressions ----------------------------------------------------------------------

    def expr(self, node: cst.CSTNode | None) -> None:
        if node is None:
            return
        self.anchors[id(node)] = self.anchor  # type: ignore[assignment]
        kind = type(node)
        if kind is cst.Name:
            target = self.imports.aliases.get(node.value)  # type: ignore[attr-defined]
            if target is not None:
                if target in _AMP_DEPRECATED:
                    self.deprecated_reference(node, target)  # type: ignore[arg-type]
                elif target in _API_CHANGES:
                    self.api_reference(node, target, node.value)  # type: ignore[arg-type,attr-defined]
            return
        if kind is cst.Call:
            call: cst.Call = node  # type: ignore[assignment]
            self.expr(call.func)
            callee = dotted(call.func)
            for arg in call.args:
                self.anchors[id(arg)] = self.anchor  # type: ignore[assignment]
                if callee is not None:
                    self.consumer = (id(arg.value), callee)
                self.expr(arg.value)
            self.call(call)
        elif kind is cst.Attribute:
            attribute: cst.Attribute = node  # type: ignore[assignment]
            self.expr(attribute.value)
            name = attribute.attr.value
            if name in _AMP_DEPRECATED_NAMES:
                qual = self.imports.qualify(attribute)
                if qual is not None and qual in _AMP_DEPRECATED:
                    self.deprecated_reference(attribute, qual)
            elif name in _API_ATTRIBUTES:
                qual = self.imports.qualify(attribute)
                if qual is not None and qual in _API_CHANGES:
                    self.api_reference(attribute, qual, root_name(attribute))
            if name == "grad":
                self.event(Kind.GRAD_READ, node, receiver=expr_text(attribute.value))
            elif name == "require_grad":
                self.facts.require_grad_reads += 1
        else:
            children = _CHILDREN.get(kind)
            if children is not None:
                for child in children(node):
                    self.expr(child)
        # Lambdas run later, if ever; their bodies are not part of this statement's work.

    def call(self, node: cst.Call) -> None:
        func = node.func
        qual = self.imports.qualify(func)
        if qual is not None and self.project is not None and self.project.is_project(qual):
            if self.project_call(node, qual):
                return
            qual = None  # the imported name is shadowed here
        if qual is not None:
            self.qualified_call(node, qual)
            return
        callee = self.values.variable_call(node)
        if callee is not None and self.constructed_kind(callee) == "cross-entropy":
            self.cross_entropy_input(node)  # `criterion(outputs, labels)`
        elif callee is not None and callee.split(".", 1)[0] in self.scope.params:
            self.cross_entropy_input(node, criterion=callee)  # maybe: decided by the rule
        if type(func) is cst.Attribute:
            self.method_call(node, func)
        elif type(func) is cst.Name:
            self.name_call(node, func.value)
        elif type(func) is cst.Call:  # `nn.CrossEntropyLoss()(outputs, labels)`
            inner = self.imports.qualify(func.func)
            if inner is not None and constructor_role(inner) == "cross-entropy":
                self.cross_entropy_input(node)

    def project_call(self, node: cst.Call, qual: str) -> bool:
        """A call of something imported from another project file. False when a definition or
        parameter of this file shadows the imported name (the call is then read as local)."""
        assert self.project is not None
        if self.shadowed(node.func):
            return False
        symbol = self.project.symbol(qual)
        if symbol is not None and symbol.is_class:
            if _may_update_weights(qual, node):
                self.call_event(node, ("qualified", qual))  # as for any opaque constructor
            return True
        self.call_event(node, ("project", qual))
        return True

    def foreign_methods(self, qual: str) -> frozenset[str]:
        """The methods of a class another project file defines (`trainer.Trainer`)."""
        methods = self.class_methods.get(qual)
        if methods is None:
            found = self.project.class_methods(qual) if self.project is not None else None
            methods = self.class_methods[qual] = set(found or ())
        return frozenset(methods)

    def cross_entropy_input(self, node: cst.Call, criterion: str | None = None) -> None:
        if not node.args:
            return
        value = node.args[0].value
        producer = self.values.variable_call(value)
        if producer is None and isinstance(value, cst.Name | cst.Attribute):
            producer = self.values.produced_by.get(dotted(value) or "")
        softmax = self.values.softmax_of(value)
        if criterion is not None and softmax is None and producer is None:
            return  # nothing that could make a parameter call interesting
        self.facts.ce_inputs.append(
            CrossEntropyInput(node, value, softmax, producer, self.scope, criterion)
        )

    def deprecated_reference(self, node: cst.BaseExpression, qual: str) -> None:
        """`autocast = torch.cuda.amp.autocast`: a use that is not (yet) a call."""
        self.facts.deprecated_amp.append(DeprecatedUse(qual, node, node))

    def api_reference(self, node: cst.BaseExpression, qual: str, root: str | None) -> None:
        """`torch.qr`, or `qr` after `from torch import qr`: a use of a table entry (the call
        replaces it when it is the callee). A parameter named `torch` is not the module."""
        if root is None or root in self.scope.params:
            return
        compat = self.compat_depth > 0 or root in self.compat_names
        self.facts.api_uses.append(ApiUse(qual, node, node, compat))

    def watched_call(self, node: cst.Call, qual: str) -> None:
        root = root_name(node.func)
        if root is None or root in self.scope.params:
            return
        compat = self.compat_depth > 0 or root in self.compat_names
        self.facts.watched_calls.append(ApiUse(qual, node, node.func, compat))

    def qualified_call(self, node: cst.Call, qual: str) -> None:
        if qual in _AMP_DEPRECATED:
            uses = self.facts.deprecated_amp
            if uses and uses[-1].node is node.func:
                uses.pop()  # the reference is this call's callee: report the call instead
            uses.append(DeprecatedUse(qual, node, node.func))
        elif qual in _API_CHANGES:
            api_uses = self.facts.api_uses
            for i in range(len(api_uses) - 1, -1, -1):  # the callee, recorded just before
                if api_uses[i].node is node.func:
                    api_uses[i] = ApiUse(qual, node, node.func, api_uses[i].compat)
                    break
        elif qual in _WATCHED_CALLS or qual.startswith("torchvision.models."):
            self.watched_call(node, qual)
        if not qual.startswith("torch.") and _may_update_weights(qual, node):
            # e.g. `xm.optimizer_step(optimizer)`: a library call that may step or clear.
            self.call_event(node, ("qualified", qual))
        if qual == "torch.autograd.backward":
            subject = node.args[0].value if node.args else None
            root = root_name(subject) if subject is not None else None
            self.event(
                Kind.BACKWARD,
                node,
                method="torch.autograd.backward",
                via="autograd",
                subject=root,
                subject_no_grad=root in self.values.no_grad,
            )
        elif qual in _CLIP_FUNCTIONS:
            self.event(Kind.CLIP, node, method=qual.rsplit(".", 1)[-1])
        elif qual in _DEVICE_SYNCS:
            self.event(Kind.DEVICE_SYNC, node, method=qual.rsplit(".", 1)[-1])
        elif qual in _TIMERS or qual.startswith("torch.cuda.Event"):
            self.event(Kind.TIMING, node, method=qual)
        elif qual in ("torch.nn.functional.cross_entropy",):
            self.cross_entropy_input(node)

    def name_call(self, node: cst.Call, name: str) -> None:
        shadowed = name in self.top_names or name in self.imports.aliases
        if name in NUMBER_BUILTINS and not shadowed and len(node.args) == 1:
            self.sync_of_value(node, node.args[0].value, name)
            return
        if name == "print" and not shadowed:
            for arg in node.args:
                printed = self.values.printed_tensor(arg.value)
                if printed is not None:
                    self.sync_of_value(node, printed, "print")
                    return
            return
        if name == "next" and not shadowed and node.args:
            self.next_batch(node.args[0].value)
            return
        if name in NON_TENSOR_BUILTINS and not shadowed:
            return
        self.call_event(node, ("name", name))

    def method_call(self, node: cst.Call, func: cst.Attribute) -> None:
        method = func.attr.value
        receiver_node = func.value
        if method == "log" and not node.args and type(receiver_node) is cst.Call:
            self.facts.log_calls.append(node)  # maybe `x.exp().sum(dim).log()` (TL507)
        if type(receiver_node) is cst.Call and dotted(receiver_node.func) == "super":
            self.call_event(node, ("super", method))
            return
        receiver = expr_text(_moved_object(receiver_node))
        project_class = self.project_class_of(receiver)
        if project_class is not None and "." in project_class:
            self.foreign_methods(project_class)
        if project_class is not None and method in self.class_methods.get(project_class, ()):
            self.call_event(node, ("method", receiver, method))
            return
        on_grad = receiver.endswith((".grad", ".grad.data"))
        if on_grad and method == "zero_":
            owner = receiver.rsplit(".grad", 1)[0]
            self.event(Kind.ZERO_GRAD, node, receiver=owner, method="grad")
        elif on_grad and method.endswith("_") and method not in ("detach_", "requires_grad_"):
            self.event(Kind.GRAD_WRITE, node, receiver=receiver, method=method)
        elif method == "backward" or method == "manual_backward":
            self.backward(node, receiver_node, receiver, method)
        elif method == "step":
            self.step(node, receiver)
        elif method == "zero_grad":
            self.event(Kind.ZERO_GRAD, node, receiver=receiver, method=method)
        elif method == "update" and self.is_scaler(receiver) and not node.args:
            self.event(Kind.SCALER_UPDATE, node, receiver=receiver, scaler=receiver, method=method)
        elif method == "unscale_" and self.is_scaler(receiver):
            arg = expr_text(node.args[0].value) if node.args else None
            self.event(Kind.SCALER_UNSCALE, node, receiver=arg, scaler=receiver, method=method)
        elif method == "train":
            kind = Kind.MODE_TRAIN
            if node.args:
                value = node.args[0].value
                if _is_false(value):
                    kind = Kind.MODE_EVAL
                elif not (type(value) is cst.Name and value.value == "True"):
                    kind = Kind.MODE_UNKNOWN
            self.event(kind, node, receiver=receiver, method=method)
        elif method == "eval" and not node.args:
            self.event(Kind.MODE_EVAL, node, receiver=receiver, method=method)
        elif (method in _SYNC_METHODS and not node.args) or method == "cpu":
            if _chain_has_sync(receiver_node):
                return  # `x.cpu().numpy()`: one sync, already recorded
            self.sync_of_value(node, receiver_node, method)
        elif method in ("to", "cuda") and self.moves_to_device(node):
            self.transfer(node, receiver_node)
        elif method in ("record", "elapsed_time") and _looks_like_event(receiver):
            self.event(Kind.TIMING, node, method=method)
        elif method in ("append", "extend") and len(node.args) == 1:
            self.accumulation(node, receiver, node.args[0].value)
            self.call_event(node, ("method", receiver, method))
        else:
            self.call_event(node, ("method", receiver, method))

    def moves_to_device(self, node: cst.Call) -> bool:
        """`.cuda()`, `.to(device)`, `.to("cuda:0")`, `.to(device=...)` — not `.to(torch.float16)`
        or `.to("cpu")`."""
        if _method(node) == "cuda":
            return True
        for arg in node.args:
            key = arg.keyword.value if arg.keyword else None
            if key in ("dtype", "non_blocking", "copy", "memory_format"):
                continue
            value = arg.value
            text = (dotted(value) or expr_text(value)).lower()
            if type(value) is cst.SimpleString:
                return "cpu" not in text
            return key == "device" or "device" in text or "cuda" in text or text.endswith("dev")
        return False

    def transfer(self, node: cst.Call, receiver: cst.BaseExpression) -> None:
        non_blocking = any(
            a.keyword is not None and a.keyword.value == "non_blocking" and not _is_false(a.value)
            for a in node.args
        )
        created = receiver
        while (
            type(created) is cst.Call
            and type(created.func) is cst.Attribute
            and self.imports.qualify(created.func) is None
            and created.func.attr.value not in ("to", "cuda")
        ):
            created = created.func.value  # `torch.arange(n).unsqueeze(0).to(device)`
        if type(created) is cst.Call:
            qual = self.imports.qualify(created.func) or ""
            if qual in _HOST_CONSTRUCTORS and not any(
                a.keyword is not None and a.keyword.value == "device" for a in created.args
            ):
                self.event(Kind.CREATE_MOVE, node, method=qual)
                return
        if self.values.is_host(receiver):
            self.event(
                Kind.TRANSFER,
                node,
                subject=root_name(receiver),
                non_blocking=non_blocking,
                receiver=expr_text(receiver),
            )

    def next_batch(self, iterator: cst.BaseExpression) -> None:
        """`next(it)` in a loop: the loop iterates whatever `it` iterates."""
        if type(iterator) is cst.Call and dotted(iterator.func) == "iter" and iterator.args:
            source = dotted(iterator.args[0].value)
        else:
            text = dotted(iterator)
            source = self.values.iterators.get(text, text) if text else None
        loops = [f for f in self.frames if isinstance(f, LoopFrame)]
        if source is not None and loops:
            loops[-1].sources.append(source)

    def backward(
        self, node: cst.Call, receiver_node: cst.BaseExpression, receiver: str, method: str
    ) -> None:
        if type(receiver_node) is cst.Call and _method(receiver_node) == "scale":
            scaler = expr_text(receiver_node.func.value)  # type: ignore[attr-defined]
            if self.is_scaler(scaler):
                loss = receiver_node.args[0].value if receiver_node.args else None
                self.event(
                    Kind.BACKWARD,
                    node,
                    receiver=receiver,
                    method=method,
                    via="scaled",
                    scaler=scaler,
                    subject=root_name(loss) if loss is not None else None,
                    subject_no_grad=loss is not None and root_name(loss) in self.values.no_grad,
                )
                return
        if receiver in self.values.scaled:
            self.event(Kind.BACKWARD, node, receiver=receiver, method=method, via="scaled")
            return
        if method == "manual_backward" or (node.args and looks_like_framework(receiver)):
            subject = node.args[0].value if node.args else None
            self.event(
                Kind.BACKWARD,
                node,
                receiver=receiver,
                method=method,
                via="framework",
                subject=root_name(subject) if subject is not None else None,
            )
            return
        root = root_name(receiver_node)
        self.event(
            Kind.BACKWARD,
            node,
            receiver=receiver,
            method=method,
            via="tensor",
            subject=root,
            subject_no_grad=root in self.values.no_grad,
        )
        if root is not None:
            self.values.tensors.add(root)
            self.values.graph.add(root)  # backward on it proves it carries a graph

    def step(self, node: cst.Call, receiver: str) -> None:
        if self.is_scaler(receiver):
            optimizer = expr_text(node.args[0].value) if node.args else None
            self.event(
                Kind.STEP, node, receiver=optimizer, method="step", via="scaler", scaler=receiver
            )
            return
        closure = node.args[0].value if node.args else None
        if type(closure) is cst.Name and (
            self.resolve_local(closure.value) is not None or closure.value in self.top_names
        ):
            # LBFGS & co.: the closure runs inside step, before the update.
            self.call_event(closure, ("name", closure.value))
        has_closure = any(a.keyword is None or a.keyword.value == "closure" for a in node.args)
        # Which `.step()` this is (optimizer, scheduler, unknown) is decided once the whole
        # module is known: see resolve.py.
        self.event(Kind.MAYBE_STEP, node, receiver=receiver, method="step", has_closure=has_closure)

    def call_event(self, node: cst.CSTNode, ref: tuple[str, ...]) -> None:
        args: tuple[str, ...] = ()
        kwargs: tuple[tuple[str, str], ...] = ()
        tensor_args: set[int | str] = set()
        if type(node) is cst.Call:
            positional = [a for a in node.args if a.keyword is None and not a.star]
            args = tuple(_simple_text(a.value) for a in positional)
            kwargs = tuple(
                (a.keyword.value, _simple_text(a.value)) for a in node.args if a.keyword is not None
            )
            for i, a in enumerate(positional):
                if self.values.is_tensor(a.value):
                    tensor_args.add(i)
            for a in node.args:
                if a.keyword is not None and self.values.is_tensor(a.value):
                    tensor_args.add(a.keyword.value)
        receiver = ref[1] if ref[0] in ("name", "method") else "self"
        method = ref[-1].rsplit(".", 1)[-1] if ref[0] == "project" else ref[-1]
        event = self.event(Kind.CALL, node, method=method, receiver=receiver)
        event.callee_ref = ref
        event.arg_texts = args
        event.kwarg_texts = kwargs
        event.tensor_args = frozenset(tensor_args)

    def sync_of_value(self, node: cst.Call, value: cst.BaseExpression, method: str) -> None:
        root = root_name(value)
        if self.values.is_tensor(value):
            is_tensor: bool | None = True
        elif self.values.is_param(value):
            is_tensor = None  # the caller knows
        else:
            is_tensor = False
        host = value
        while type(host) is cst.Call and type(host.func) is cst.Attribute:
            if host.func.attr.value in ("to", "cuda"):
                break
            host = host.func.value  # `y.sum().item()`: look through tensor methods
        consumer = self.consumer[1] if self.consumer and self.consumer[0] == id(node) else None
        self.event(
            Kind.HOST_SYNC,
            node,
            method=method,
            subject=root,
            subject_is_tensor=is_tensor,
            subject_on_host=not is_tensor and self.values.is_host(host),
            receiver=expr_text(value) if method in _SYNC_METHODS else None,
            consumer=consumer,
        )

    def resolve_function(self, name: str) -> Scope | None:
        """A function of the module already read (`to_probs` in `to_probs(logits)`)."""
        return self.resolve_local(name) or self.facts.functions.get(name)

    def resolve_local(self, name: str) -> Scope | None:
        scope: Scope | None = self.scope
        while scope is not None:
            if name in scope.local_defs:
                return scope.local_defs[name]
            scope = scope.parent
        return None

    def is_project_class(self, func: cst.BaseExpression, qual: str) -> bool:
        if self.project is None or not self.project.is_project(qual) or self.shadowed(func):
            return False
        symbol = self.project.symbol(qual)
        return symbol is not None and symbol.is_class

    def shadowed(self, func: cst.BaseExpression) -> bool:
        """Whether the imported name `func` starts with is hidden here by a definition of the
        module or a parameter (`def fit(engine, ...)`: not the project's `engine.py`)."""
        root = root_name(func)
        return root is None or root in self.top_names or root in self.scope.params

    def is_scaler(self, text: str) -> bool:
        return looks_like_scaler(text) or self.role_is(text, "scaler")

    def project_class_of(self, receiver: str) -> str | None:
        if receiver == "self" and self.class_stack:
            return self.class_stack[-1].name
        if receiver == "self":
            return None
        return self.instances.get(receiver)

    def event(self, kind: Kind, node: cst.CSTNode, **fields: object) -> Event:
        event = Event(kind, node, self.scope, tuple(self.frames), **fields)  # type: ignore[arg-type]
        self.scope.events.append(event)
        return event


# --- helpers ------------------------------------------------------------------------------


def _subscript_children(node: cst.Subscript) -> Iterator[cst.BaseExpression | None]:
    yield node.value
    for element in node.slice:
        sl = element.slice
        if type(sl) is cst.Index:
            yield sl.value
        elif type(sl) is cst.Slice:
            yield sl.lower
            yield sl.upper
            yield sl.step


def _comprehension_children(node: cst.BaseComp) -> Iterator[cst.BaseExpression | None]:
    comp: cst.CompFor | None = node.for_in
    while comp is not None:
        yield comp.iter
        for cond in comp.ifs:
            yield cond.test
        comp = comp.inner_for_in
    if type(node) is cst.DictComp:
        yield node.key
        yield node.value
    else:
        yield node.elt  # type: ignore[attr-defined]


def _dict_children(node: cst.Dict) -> Iterator[cst.BaseExpression]:
    for element in node.elements:
        if type(element) is cst.DictElement:
            yield element.key
        yield element.value


# The expressions inside each kind of expression, in evaluation order (Call and Attribute are
# handled in `_Collector.expr` itself). Dispatching on the exact type avoids libcst's ABC
# isinstance checks, which dominate a naive walker's time.
_CHILDREN: dict[type, Callable[[Any], Iterable[cst.BaseExpression | None]]] = {
    cst.Subscript: _subscript_children,
    cst.BinaryOperation: lambda n: (n.left, n.right),
    cst.BooleanOperation: lambda n: (n.left, n.right),
    cst.UnaryOperation: lambda n: (n.expression,),
    cst.Comparison: lambda n: (n.left, *(t.comparator for t in n.comparisons)),
    cst.Tuple: lambda n: (e.value for e in n.elements),
    cst.List: lambda n: (e.value for e in n.elements),
    cst.Set: lambda n: (e.value for e in n.elements),
    cst.Dict: _dict_children,
    cst.FormattedString: lambda n: (
        p.expression for p in n.parts if type(p) is cst.FormattedStringExpression
    ),
    cst.ConcatenatedString: lambda n: (n.left, n.right),
    cst.IfExp: lambda n: (n.test, n.body, n.orelse),
    cst.ListComp: _comprehension_children,
    cst.SetComp: _comprehension_children,
    cst.GeneratorExp: _comprehension_children,
    cst.DictComp: _comprehension_children,
    cst.Await: lambda n: (n.expression,),
    cst.NamedExpr: lambda n: (n.value,),
    cst.StarredElement: lambda n: (n.value,),
    cst.Yield: lambda n: (n.value,) if isinstance(n.value, cst.BaseExpression) else (),
}


_STREAMING = re.compile(r"webdataset|iterable|stream", re.IGNORECASE)


def _streams(call: cst.Call, imports: ImportTable) -> bool:
    """An iterable-style dataset the loader cannot shuffle: `load_dataset(..., streaming=True)`,
    `wds.WebDataset(urls).shuffle(1000).decode()`, an `IterableDataset` from a library."""
    node: cst.BaseExpression = call
    while type(node) is cst.Call:
        if any(
            a.keyword is not None and a.keyword.value == "streaming" and not _is_false(a.value)
            for a in node.args
        ):
            return True
        qual = imports.qualify(node.func)
        if qual is not None:
            return bool(_STREAMING.search(qual))
        if type(node.func) is not cst.Attribute:
            return False
        node = node.func.value
    return False


def _sets_grad_mode(stmt: cst.CSTNode, imports: ImportTable) -> bool | None:
    """True / False for a statement `torch.set_grad_enabled(True / False)`, else None."""
    if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1:
        return None
    expr = stmt.body[0]
    if type(expr) is not cst.Expr or type(expr.value) is not cst.Call:
        return None
    call = expr.value
    if imports.qualify(call.func) != "torch.set_grad_enabled" or not call.args:
        return None
    value = call.args[0].value
    if type(value) is cst.Name and value.value in ("True", "False"):
        return value.value == "True"
    return None


def _bound_names(node: cst.Import | cst.ImportFrom) -> list[str]:
    """The local names an import statement binds."""
    if isinstance(node.names, cst.ImportStar):
        return []
    names = []
    for alias in node.names:
        if alias.asname is not None and type(alias.asname.name) is cst.Name:
            names.append(alias.asname.name.value)
        else:
            full = dotted(alias.name)
            if full is not None:
                names.append(full.split(".", 1)[0])
    return names


def _ends_with_continue(suite: cst.BaseSuite) -> bool:
    if type(suite) is cst.IndentedBlock:
        if not suite.body:
            return False
        last = suite.body[-1]
        return type(last) is cst.SimpleStatementLine and isinstance(last.body[-1], cst.Continue)
    if type(suite) is cst.SimpleStatementSuite:
        return bool(suite.body) and isinstance(suite.body[-1], cst.Continue)
    return False


def _target_names(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Name:
        return [target.value]
    if isinstance(target, cst.Tuple | cst.List):
        return [n for el in target.elements for n in _target_names(el.value)]
    return []


_ITER_WRAPPERS = {"enumerate", "tqdm", "zip", "iter", "tqdm.tqdm", "auto.tqdm", "track"}


def _iterable_label(node: cst.BaseExpression) -> str:
    while type(node) is cst.Call and node.args:
        name = dotted(node.func) or ""
        if name in _ITER_WRAPPERS or name.endswith(".tqdm"):
            node = node.args[0].value
        else:
            break
    text = expr_text(node)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_param_loop(node: cst.BaseExpression) -> bool:
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        return node.func.attr.value in ("parameters", "named_parameters")
    text = expr_text(node) if isinstance(node, cst.Attribute | cst.Subscript) else ""
    return "param_groups" in text or text.endswith("['params']") or text.endswith('["params"]')


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    result = [*params.posonly_params, *params.params, *params.kwonly_params]
    if type(params.star_arg) is cst.Param:
        result.append(params.star_arg)
    if params.star_kwarg is not None:
        result.append(params.star_kwarg)
    return result


def _may_update_weights(qual: str, node: cst.Call) -> bool:
    last = qual.rsplit(".", 1)[-1].lower()
    if any(word in last for word in ("step", "optim", "update", "zero", "clear", "reset")):
        return True
    return any(
        looks_like_optimizer(_simple_text(a.value)) for a in node.args if _simple_text(a.value)
    )


_MOVES = {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval"}


def _moved_object(node: cst.BaseExpression) -> cst.BaseExpression:
    """`net.to(device)` / `net.eval().cpu()` return `net` itself: see through the chain."""
    while type(node) is cst.Call and _method(node) in _MOVES:
        node = node.func.value  # type: ignore[attr-defined]
    return node


def _looks_like_event(receiver: str) -> bool:
    name = receiver.rsplit(".", 1)[-1].lower()
    return any(word in name for word in ("start", "end", "event", "evt", "tic", "toc", "begin"))


def _method(node: cst.Call) -> str | None:
    return node.func.attr.value if type(node.func) is cst.Attribute else None


def _chain_has_sync(node: cst.BaseExpression) -> bool:
    while True:
        if type(node) is cst.Call:
            if _method(node) in _SYNC_METHODS:
                return True
            node = node.func
        elif isinstance(node, cst.Attribute | cst.Subscript):
            node = node.value
        else:
            return False


def _simple_text(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name | cst.Attribute | cst.Subscript):
        return expr_text(node)
    return ""


def _string_value(node: cst.BaseExpression) -> str | None:
    if type(node) is cst.SimpleString:
        return node.value[1:-1] if node.value[:1] in "'\"" else None
    return None


def _is_false(node: cst.BaseExpression) -> bool:
    return (type(node) is cst.Name and node.value == "False") or (
        type(node) is cst.Integer and node.value == "0"
    )


__all__ = ["ApiUse", "CallFrame", "DeprecatedUse", "ModuleFacts", "classify_guard", "collect"]
