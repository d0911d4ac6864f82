"""The walker of one parsed module: its blocks and compound statements, and the frames they open.

The walk records syntax facts (scopes, loops, the frames around each point, anchors for
positions) in evaluation order, and hands every call, `with` item and construction to the
recognisers (`recognise.py`), which turn them into events. Its parts, each the base of the
next: the state and the questions asked of it (`walk_state.py`), expressions
(`walk_expressions.py`), simple statements (`walk_simple.py`), and compound statements here.

We do not use a libcst visitor here: a generic visitor dispatches on every node, whitespace
included, and costs about as much as the parse. This walker descends only into statements and
expressions, by hand, and records *events* in evaluation order (arguments before the call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import libcst as cst

from torchlint.analysis.apis import COMPAT_TEST, DATA_NAME, ITER_WRAPPERS
from torchlint.analysis.facts import ModuleFacts
from torchlint.analysis.guards import classify_guard, is_counter_name
from torchlint.analysis.model import (
    ClassInfo,
    GuardFrame,
    GuardKind,
    Kind,
    LoopFrame,
    Scope,
    WithFrame,
    WithKind,
)
from torchlint.analysis.names import ImportTable, dotted, expr_text
from torchlint.analysis.positions import Anchor
from torchlint.analysis.sites import Branch
from torchlint.analysis.syntax import NOT_A_LITERAL, block_ends_with, literal, target_names
from torchlint.analysis.value import NOT_A_TENSOR, UNKNOWN, Value, What, join
from torchlint.analysis.values import Values
from torchlint.analysis.walk_simple import SimpleStatementWalker


class Walker(SimpleStatementWalker):
    """Walks a module's statements, and the blocks of its compound statements."""

    def run(self) -> ModuleFacts:
        try:
            self.statements(self.module.body)
            self.facts.module_scope.tensor_names = self.values.tensors
            self.facts.module_values = self.values.env
            return self.facts
        finally:
            del self.recognise  # the recogniser points back at the walker: no cycle left

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
            outer = self.indents
            indent = suite.indent if suite.indent is not None else self.module.default_indent
            self.indents = (*outer, indent)
            self.statements(suite.body)
            self.indents = outer
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
                self.anchors[id(stmt)] = Anchor(stmt, self.indents, self.top)
            self.stmt(stmt)
            if type(stmt) is cst.If and stmt.orelse is None and block_ends_with(stmt.body, _EXITS):
                # `if cond: continue` / `if not should_log: return` -- what follows runs only
                # when `cond` is false. (After `if cond: break`, the rest still runs on every
                # iteration until the last.)
                self.frames.append(self.guard(stmt, stmt.test, 1))
                continue
            enabled = _sets_grad_mode(stmt, self.imports)
            if enabled is not None:
                # `torch.set_grad_enabled(False)` as a statement: for the rest of the block
                kind = WithKind.ENABLE_GRAD if enabled else WithKind.NO_GRAD
                self.frames.append(WithFrame(stmt, kind, "torch.set_grad_enabled"))

    def if_(self, node: cst.If) -> None:
        self.anchor_at(node.test)
        self.expr(node.test)
        condition = self.condition_text(node.test)
        compat = COMPAT_TEST.search(condition) is not None
        self.compat_depth += compat
        self.frames.append(self.guard(node, node.test, 0))
        outside = self.branches
        self.branches = (*outside, Branch(node, 0))
        if node.orelse is None:
            self.block(node.body)
            self.frames.pop()
        else:
            # each branch from the values before the `if` (branches.py)
            self.values.open_branch()
            self.block(node.body)
            body = self.values.close_body()
            self.frames.pop()
            self.frames.append(self.guard(node, node.test, 1))
            self.branches = (*outside, Branch(node, 1))
            self.values.open_branch()
            if type(node.orelse) is cst.If:
                self.if_(node.orelse)
            else:
                self.block(node.orelse.body)
            self.values.join(body, node)
            self.frames.pop()
        self.branches = outside
        self.compat_depth -= compat

    def guard(self, node: cst.CSTNode, test: cst.BaseExpression, branch: int) -> GuardFrame:
        kind = classify_guard(test, branch == 1, self.definition)
        defined = ""
        if kind is GuardKind.PERIODIC and type(test) in (cst.Name, cst.Attribute):
            flag = self.definition(test)
            defined = self.condition_text(flag) if flag is not None else ""
        elif kind is GuardKind.PERIODIC and type(test) is cst.Comparison:
            defined = self.wraps.get(dotted(test.left) or "", "")  # `if acc == 0:`
        frame = GuardFrame(node, branch, kind, self.condition_text(test), _reads(test), defined)
        if self.loop_guards:
            self.loop_guards[-1].append(frame)
        return frame

    def for_(self, node: cst.For) -> None:
        self.anchor_at(node.iter)
        self.expr(node.iter)
        iter_text = _iterable_label(node.iter)
        self.values.bind_loop_targets(target_names(node.target), self.loop_element(node.iter))
        self.order += 1
        loop = LoopFrame(
            node, self.scope, iter_text, _is_param_loop(node.iter), tuple(self.frames), self.order
        )
        loop.sources.extend(self.recognise.loop_sources(node.iter))
        loop.source_values.extend(self.recognise.loop_source_values(node.iter))
        self.scope.loops.append(loop)
        self.loop_body(loop, node.body)
        if node.orelse is not None:
            self.block(node.orelse.body)

    def loop_element(self, iterable: cst.BaseExpression) -> Value:
        """What each iteration of `for ... in iterable` binds: each object of a container
        (`for opt in optimizers:`), or a batch, which carries no graph when it comes from data
        (a loader, `batches`), and may when it is anything else (`for out in outputs:`)."""
        while type(iterable) is cst.Call and iterable.args:
            name = dotted(iterable.func) or ""
            if name in ITER_WRAPPERS or name.endswith(".tqdm"):
                iterable = iterable.args[0].value  # enumerate(tqdm(loader))
            else:
                break
        value = self.values.object_of(iterable)
        if value.what is What.CONTAINER and value.items:
            return replace(join(list(value.items)), items=value.items)
        if value.what is What.LOADER or DATA_NAME.search(expr_text(iterable)):
            return NOT_A_TENSOR
        prob = self.values.softmax_of(iterable)
        if prob is not None:
            return Value(prob=prob)  # `for out in torch.softmax(scores, -1):`
        return UNKNOWN

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
        targets = target_names(loop.node.target) if type(loop.node) is cst.For else []
        self.loop_assigned.append(set(targets))
        self.loop_guards.append([])
        if test is not None:
            self.anchor_at(test)
            self.expr(test)
        self.block(body)
        assigned = self.loop_assigned.pop()
        for guard in self.loop_guards.pop():
            if loop.is_param_loop:
                break  # `if p.grad is not None:` over the parameters: a detail of each step
            if (
                guard.kind is GuardKind.CONFIG
                and not any(is_counter_name(r) for r in guard.reads)
                and any(_changes(r, assigned) for r in guard.reads)
            ):
                guard.kind = GuardKind.OTHER  # `if batch is None:`: the loop changes what it reads
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
            self.progress_bar_as(item)
            self.frames.append(self.recognise.with_frame(node, item.item))
            pushed += 1
        self.block(node.body)
        del self.frames[len(self.frames) - pushed :]

    def progress_bar_as(self, item: cst.WithItem) -> None:
        """`with tqdm(enumerate(loader)) as t:`: `t` iterates what the bar wraps."""
        call, target = item.item, item.asname.name if item.asname is not None else None
        if type(call) is not cst.Call or type(target) is not cst.Name:
            return
        callee = dotted(call.func) or ""
        if callee.rsplit(".", 1)[-1] in ("tqdm", "track"):
            self.values.bind(target.value, call, under_no_grad=self.under_no_grad())

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
        every = _all_params(node.params)
        params = tuple(p.name.value for p in every)
        defaults = {
            p.name.value: self.values.object_of(p.default) for p in every if p.default is not None
        }
        for decorator in node.decorators:
            self.anchor_at(decorator.decorator)
            self.expr(decorator.decorator)
        decorators = tuple(self.recognise.with_frame(d, d.decorator) for d in node.decorators)
        scope = Scope(
            name,
            qualname,
            node,
            parent,
            class_name=cls.name if cls is not None and parent.is_module else None,
            params=params,
            decorators=tuple(
                d for d in decorators if d.kind is not WithKind.OTHER or _maybe_ours(d)
            ),
            param_defaults={k: v for k, v in defaults.items() if v is not UNKNOWN},
            param_consts={
                p.name.value: value
                for p in every
                if (value := literal(p.default)) is not NOT_A_LITERAL
            },
        )
        self.facts.scopes.append(scope)
        if cls is not None and parent.is_module:
            cls.methods[name] = scope
            self.sites.methods[(cls.name, name)] = node
            self.sites.class_of[id(node)] = cls.name
        elif parent.is_module:
            self.facts.functions[name] = scope
            self.sites.functions[name] = node
        else:
            parent.local_defs[name] = scope

        saved = (self.scope, self.frames, self.values, self.loop_assigned, self.flags, self.wraps)
        saved_guards, saved_branches = self.loop_guards, self.branches
        self.branches = ()
        for name in self.rebound_imports:
            self.imports.aliases.pop(name, None)
        self.scope = scope
        self.frames = list(scope.decorators)
        self.values = Values(self, params, scope)
        self.loop_assigned = []
        self.loop_guards = []
        self.flags = {}
        self.wraps = {}
        self.block(node.body)
        self.loop_guards, self.branches = saved_guards, saved_branches
        if parent.is_module:  # back at module level: the import, until it is rebound there
            for name, target in self.rebound_imports.items():
                if name not in self.rebound_here:
                    self.imports.aliases[name] = target
        scope.tensor_names = self.values.tensors
        # Names the function binds itself; `model.mem.k.requires_grad = False` stores into
        # an object, it does not rebind `model`.
        roots = {text for text in self.values.env if _root(text) == text}
        scope.bound = frozenset(roots - {"self", *params})
        self.scope, self.frames, self.values, self.loop_assigned, self.flags, self.wraps = saved

    def class_(self, node: cst.ClassDef) -> None:
        bases = tuple(t for t in (dotted(a.value) for a in node.bases) if t)
        info = ClassInfo(node.name.value, node, bases)
        if self.scope.is_module and not self.class_stack:
            self.facts.classes[info.name] = info
            self.sites.classes[info.name] = node
        self.class_stack.append(info)
        self.block(node.body)
        self.class_stack.pop()


# --- helpers ------------------------------------------------------------------------------


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


_EXITS = (cst.Continue, cst.Return, cst.Raise)


def _reads(test: cst.BaseExpression) -> frozenset[str]:
    """The names and attribute chains a condition reads (`batch`, `self.cfg.amp`)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        text = dotted(node) if isinstance(node, cst.Name | cst.Attribute) else None
        if text is not None:
            found.add(text)
            continue
        if isinstance(node, cst.Attribute | cst.Subscript):
            stack.append(node.value)
        elif type(node) is cst.Call:
            stack.append(node.func)
            stack.extend(a.value for a in node.args)
        elif isinstance(node, cst.BinaryOperation | cst.BooleanOperation):
            stack.extend((node.left, node.right))
        elif type(node) is cst.UnaryOperation:
            stack.append(node.expression)
        elif type(node) is cst.Comparison:
            stack.append(node.left)
            stack.extend(c.comparator for c in node.comparisons)
    return frozenset(found)


def _changes(read: str, assigned: set[str]) -> bool:
    """Whether assigning the names `assigned` changes what `read` stands for."""
    for name in assigned:
        if read == name or read.startswith(name + ".") or name.startswith(read + "."):
            return True
    return False


def _root(text: str) -> str:
    return text.split(".", 1)[0].split("[", 1)[0]


def _maybe_ours(frame: WithFrame) -> bool:
    """A decorator that calls or names a function (`@smart_inference_mode()`, `@no_grad_run`),
    which resolution may find applies `no_grad` (not `@property`, `@staticmethod`)."""
    decorator = frame.node.decorator if type(frame.node) is cst.Decorator else None
    if decorator is None:
        return False
    func = decorator.func if type(decorator) is cst.Call else decorator
    name = dotted(func)
    return name is not None and name not in _PLAIN_DECORATORS


_PLAIN_DECORATORS = {
    "property", "staticmethod", "classmethod", "abstractmethod", "abc.abstractmethod",
    "functools.wraps", "wraps", "functools.lru_cache", "lru_cache", "functools.cache",
    "cached_property", "functools.cached_property", "dataclass", "dataclasses.dataclass",
    "override", "typing.override", "torch.jit.script", "torch.jit.ignore", "torch.jit.unused",
}  # fmt: skip


def _iterable_label(node: cst.BaseExpression) -> str:
    while type(node) is cst.Call and node.args:
        name = dotted(node.func) or ""
        if name in ITER_WRAPPERS or name.endswith(".tqdm"):
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
