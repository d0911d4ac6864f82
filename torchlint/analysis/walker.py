"""One pass over a parsed module: the walker that records syntax facts (scopes, loops, the frames
around each point, anchors for positions) in evaluation order, and hands every call, `with`
item and construction to the recognisers (`recognise.py`), which turn them into events.

We do not use a libcst visitor here: a generic visitor dispatches on every node, whitespace
included, and costs about as much as the parse. This walker descends only into statements and
expressions, by hand, and records *events* in evaluation order (arguments before the call).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import libcst as cst

from torchlint.analysis.apis import (
    AMP_DEPRECATED,
    AMP_DEPRECATED_NAMES,
    COMPAT_TEST,
    DATA_NAME,
    ITER_WRAPPERS,
    NO_GRAD_FUNCTIONS,
    constructor_role,
)
from torchlint.analysis.conversions import CONVERSIONS, discarded_conversion
from torchlint.analysis.deprecations import ATTRIBUTE_NAMES as _API_ATTRIBUTES
from torchlint.analysis.deprecations import BY_QUALNAME as _API_CHANGES
from torchlint.analysis.facts import ApiUse, ModuleFacts
from torchlint.analysis.guards import classify_guard, is_counter_name
from torchlint.analysis.model import (
    ClassInfo,
    Event,
    Frame,
    GuardFrame,
    GuardKind,
    Kind,
    LoopFrame,
    Scope,
    WithFrame,
    WithKind,
    grad_disabled,
    visible_from,
)
from torchlint.analysis.names import (
    ImportTable,
    dotted,
    expr_text,
    looks_like_scaler,
    root_name,
)
from torchlint.analysis.positions import Anchor
from torchlint.analysis.protocol import ProjectView
from torchlint.analysis.recognise import FUNCTIONAL_LOSSES, CallRecogniser
from torchlint.analysis.sites import Branch, CallSite
from torchlint.analysis.source import ParsedSource
from torchlint.analysis.syntax import (
    NOT_A_LITERAL,
    block_ends_with,
    literal,
    method_name,
    target_names,
)
from torchlint.analysis.value import NOT_A_TENSOR, UNKNOWN, Value, What, iterates_data, join
from torchlint.analysis.values import Values


class Walker:
    def __init__(
        self,
        parsed: ParsedSource,
        project: ProjectView | None = None,
        watched: frozenset[str] = frozenset(),
        watched_prefixes: tuple[str, ...] = (),
    ) -> None:
        self.module = parsed.module
        self.project = project
        self.imports = ImportTable(
            project.relative if project is not None else None,
            project.star_names if project is not None else None,
        )
        root = Scope("<module>", "<module>", parsed.module, None, imports=self.imports)
        self.facts = ModuleFacts(parsed, self.imports, root, scopes=[root])
        self.scope = root
        self.frames: list[Frame] = []
        self.class_stack: list[ClassInfo] = []
        self.class_methods: dict[str, set[str]] = {}
        self.instances: dict[str, str] = {}  # receiver text -> project class name
        # `self.loss_func = F.binary_cross_entropy_with_logits`: (class, text) -> the loss.
        self.loss_aliases: dict[tuple[str, str], str] = {}
        self.no_grad_functions: set[str] = set()  # `f` / `Class.m` decorated with no_grad
        # For classifying guards: flags assigned a condition in the current scope, and what the
        # module's one-line predicates (`Class.method` for methods) return.
        self.flags: dict[str, cst.BaseExpression] = {}
        self.flag_calls: dict[int, bool] = {}  # id of an assigned call -> whether a flag
        # Counters the current scope wraps (`acc = acc % n`, `acc %= n`) -> that modulo as
        # written: `if acc == 0:` then runs once every n iterations, as `i % n == 0` does.
        self.wraps: dict[str, str] = {}
        self.predicates: dict[str, cst.BaseExpression] = {}
        self.class_bases: dict[str, tuple[str, ...]] = {}  # top-level classes, as written
        self.top_names = self._prescan(parsed.module)
        self.values = Values(self)
        self.loop_assigned: list[set[str]] = []  # names assigned so far in each open loop
        self.loop_guards: list[list[GuardFrame]] = []  # the guards of each open loop
        self.indents: tuple[str, ...] = ()  # a tuple, shared by the anchors inside a block
        self.condition_texts: dict[int, str] = {}  # id of a test (the tree outlives us) -> text
        self.anchors = self.facts.anchors
        self.anchor: Anchor | None = None
        self.top = -1  # index of the top-level statement being walked
        self.order = 0  # counts loops and constructions, in walk order
        self.consumer: tuple[int, str] | None = None  # (id of an argument, the callee's text)
        self.compat_depth = 0  # how many version tests / `except` handlers enclose the walk
        self.compat_names: set[str] = set()  # names imported under one
        self.recognise = CallRecogniser(self, watched, watched_prefixes)
        self.sites = self.facts.sites
        # The `if` branches around the point of the walk in the current function (sites.py).
        self.branches: tuple[Branch, ...] = ()

    def run(self) -> ModuleFacts:
        try:
            self.statements(self.module.body)
            self.facts.module_scope.tensor_names = self.values.tensors
            self.facts.module_values = self.values.env
            return self.facts
        finally:
            del self.recognise  # the recogniser points back at the walker: no cycle left

    def _prescan(self, module: cst.Module) -> set[str]:
        """Names of top-level functions and classes, and each class's methods, before the walk,
        so that a call can be told from a call of a variable even when the def comes later."""
        names: set[str] = set()
        assigned: set[str] = set()
        for stmt in module.body:
            if type(stmt) is cst.SimpleStatementLine:
                for small in stmt.body:  # imports first, to read decorators below
                    if type(small) is cst.Import:
                        self.imports.add_import(small)
                    elif type(small) is cst.ImportFrom:
                        self.imports.add_import_from(small)
                    elif type(small) is cst.Assign:
                        assigned.update(n for t in small.targets for n in target_names(t.target))
            elif not isinstance(stmt, cst.FunctionDef | cst.ClassDef):
                assigned.update(_assigned_in_blocks(stmt))
        # `import model` then `model = model.Net()` (also under an `if` at module level):
        # inside functions the name is the instance, and at module level once that assignment
        # has run.
        aliases = self.imports.aliases
        self.rebound_imports = {n: aliases[n] for n in assigned & set(aliases)}
        self.rebound_here: set[str] = set()
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef | cst.ClassDef):
                names.add(stmt.name.value)
            if type(stmt) is cst.FunctionDef and self._disables_grad(stmt):
                self.no_grad_functions.add(stmt.name.value)
            if type(stmt) is cst.FunctionDef:
                _add_predicate(self.predicates, stmt.name.value, stmt)
            if type(stmt) is cst.ClassDef:
                bases = (dotted(a.value) for a in stmt.bases)
                self.class_bases[stmt.name.value] = tuple(b for b in bases if b)
                methods = [s for s in stmt.body.body if type(s) is cst.FunctionDef]
                self.class_methods[stmt.name.value] = {m.name.value for m in methods}
                for method in methods:
                    if self._disables_grad(method):
                        self.no_grad_functions.add(f"{stmt.name.value}.{method.name.value}")
                    _add_predicate(
                        self.predicates, f"{stmt.name.value}.{method.name.value}", method
                    )
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
        return grad_disabled(self.frames)

    def anchor_at(self, node: cst.CSTNode) -> None:
        self.anchor = Anchor(node, self.indents, self.top)
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

    def condition_text(self, test: cst.BaseExpression) -> str:
        """The text of an `if` / `while` test, generated once: both branches of an `if` and an
        early exit after it ask for it, and a comparison's text costs a code generation."""
        text = self.condition_texts.get(id(test))
        if text is None:
            text = self.condition_texts[id(test)] = expr_text(test)
        return text

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

    def small(self, node: cst.BaseSmallStatement) -> None:
        self.anchor_at(node)
        if type(node) is cst.Expr:
            self.expr(node.value)
            if type(node.value) is cst.Call:
                self.conversion_statement(node.value)
        elif type(node) is cst.Assign:
            self.expr(node.value)
            for target in node.targets:
                self.sites.bind(self.scope_key(), target.target, node.value)
                self.assign(target.target, node.value)
        elif type(node) is cst.AnnAssign:
            if node.value is not None:
                self.expr(node.value)
                self.sites.bind(self.scope_key(), node.target, node.value)
                self.assign(node.target, node.value)
        elif type(node) is cst.AugAssign:
            self.expr(node.value)
            self.expr(node.target)
            text = dotted(node.target)
            if text is None and type(node.target) is cst.Subscript:
                self.recognise.accumulation(
                    node, expr_text(node.target), node.value
                )  # stats["loss"]
            if text is not None:
                if type(node.operator) is cst.ModuloAssign:
                    self.wraps[text] = f"{text} % {self.condition_text(node.value)}"
                self.recognise.accumulation(node, text, node.value)
                if self.values.is_tensor(node.value):
                    self.values.mark_device_tensor(text)
        elif type(node) is cst.Return:
            if node.value is not None:
                self.expr(node.value)
                self.scope.return_values.append(self.values.object_of(node.value))
                self.scope.return_nodes.append(node.value)
                self.scope.return_no_grad.append(self.under_no_grad())
                self.scope.return_reach |= self.values.reach_of(node.value)
                self.scope.return_graphs.append(self.values.graph_of(node.value))
                self.scope.returns.append(self.values.softmax_of(node.value))
                returned = node.value
                if type(returned) is cst.Tuple:
                    items = tuple(self.values.softmax_of(e.value) for e in returned.elements)
                    self.scope.return_items.append(items)
                else:
                    self.scope.return_items.append(None)
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

    def scope_key(self) -> int:
        """The key of the current function in `Sites.assigned`: its node's id, 0 at module level."""
        return 0 if self.scope.is_module else id(self.scope.node)

    def detached_entry(self, target: cst.Subscript, value: cst.BaseExpression) -> None:
        """`output["loss"] = output["loss"].detach()`: the entry whose backward was the evidence
        that `output` carries a graph no longer does (another entry may, unknown). The cheap
        tests first: most stores into a subscript (`config["lr"] = 0.1`) are into a container
        not known to carry a graph, and the scope's events are not read for them."""
        root = target.value
        if type(root) is not cst.Name or not self.values.is_graph(root):
            return
        if self.values.graph_of(value) is not False:
            return
        entry = expr_text(target)
        if any(e.kind is Kind.BACKWARD and e.receiver == entry for e in self.scope.events):
            self.values.forget_graph(root.value)

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        self.anchors[id(target)] = self.anchor  # type: ignore[assignment]
        if type(target) is cst.Tuple or type(target) is cst.List:
            values: list[cst.BaseExpression] | None = None
            if (type(value) is cst.Tuple or type(value) is cst.List) and len(value.elements) == len(
                target.elements
            ):
                values = [el.value for el in value.elements]
            whole = self.values.object_of(value) if values is None else UNKNOWN
            for i, element in enumerate(target.elements):
                self.assign(element.value, values[i] if values is not None else value)
                text = dotted(element.value)
                if values is None and text is not None and type(value) is cst.Call:
                    self.values.set_unpacked(text, i)  # `validity, label = D(x)`
                if whole is not UNKNOWN and text is not None:
                    # `train_loader, val_loader = make_loaders()`: each name one item of it
                    self.values.put(text, self.values.item_of(text, whole, i))
                    self.values.mark_bound(text, element.value)
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
            if type(target) is cst.Subscript:
                self.detached_entry(target, value)
            return
        # `model = model.TransformerModel(...)`: the value is read while `model` still names
        # the imported module; from here on the name is the instance
        rebinds_import = text in self.rebound_imports and self.scope.is_module
        if (
            type(value) is cst.BinaryOperation
            and type(value.operator) is cst.Add
            and dotted(value.left) == text
        ):
            self.recognise.accumulation(value, text, value.right)  # `total = total + loss`
        else:
            for names in self.loop_assigned:
                names.add(text)
        if type(value) is cst.Call:
            self.recognise.constructed(text, value)
        elif type(value) in (cst.Name, cst.Attribute):
            qual = self.imports.qualify(value)
            if qual in FUNCTIONAL_LOSSES:
                self.loss_aliases[self.alias_key(target)] = qual
        elif (type(value) is cst.Tuple or type(value) is cst.List) and value.elements:
            first = value.elements[0].value
            if type(first) is cst.Call:
                self.recognise.constructed(text, first)
        if type(value) in _CONDITIONS or type(value) is cst.Call:
            # `log_now = step % log_every == 0`, `= should_log(step)`; whether a call's result
            # is a flag is asked only when a condition reads it (see `definition`)
            self.flags[text] = value
        else:
            self.flags.pop(text, None)
        if type(value) is cst.BinaryOperation and type(value.operator) is cst.Modulo:
            self.wraps[text] = self.condition_text(value)
        else:
            self.wraps.pop(text, None)
        no_grad = self.under_no_grad() or self.recognise.calls_no_grad_function(value)
        bound = self.values.bind(text, value, under_no_grad=no_grad)
        if rebinds_import:
            self.rebound_here.add(text)
            self.imports.aliases.pop(text, None)
        if type(value) is cst.Call and bound.what is What.REF:
            self.values.mark_bound(text, target)  # `loader = build_loader(cfg)`
        if text.startswith("self.") and self.scope.class_name is not None:
            cls = self.facts.classes.get(self.scope.class_name)
            if cls is not None and bound is not UNKNOWN:
                cls.attributes.setdefault(text[5:], []).append(bound)
        if type(value) is cst.Call and method_name(value) == "scale":
            receiver = expr_text(value.func.value)  # type: ignore[attr-defined]
            if looks_like_scaler(receiver) or self.role_is(receiver, "scaler"):
                self.values.mark_scaled(text, True)

    def alias_key(self, node: cst.BaseExpression) -> tuple[str, str]:
        """Where a name's alias is kept: `self.x` per class, any other name per module."""
        text = dotted(node) or ""
        if text.startswith("self.") and self.class_stack:
            return (self.class_stack[-1].name, text)
        return ("", text)

    def conversion_statement(self, call: cst.Call) -> None:
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in _IN_PLACE_MOVES:
            text = dotted(func.value)
            if text is not None and self.values.get(text) is not None:
                self.values.mark_moved(text)  # `experience.to_device(device)` moves it in place
        if type(func) is not cst.Attribute or func.attr.value not in CONVERSIONS:
            return  # most statements are calls of something else: no closure for them
        key = self.scope_key()
        found = discarded_conversion(
            call,
            self.frames,
            self.imports.qualify,
            lambda name: self.sites.assigned.get((key, name), ()),
            iterates_data,
        )
        if found is not None:
            self.facts.discarded_conversions.append(found)

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
                and text in target_names(frame.node.target)
            ):
                return True
        return False

    def expr(self, node: cst.CSTNode | None) -> None:
        if node is None:
            return
        self.anchors[id(node)] = self.anchor  # type: ignore[assignment]
        kind = type(node)
        if kind is cst.Name:
            target = self.imports.aliases.get(node.value)  # type: ignore[attr-defined]
            if target is not None:
                if target in AMP_DEPRECATED:
                    self.recognise.deprecated_reference(node, target)  # type: ignore[arg-type]
                elif target in _API_CHANGES:
                    self.recognise.api_reference(node, target, node.value)  # type: ignore[arg-type,attr-defined]
            return
        if kind is cst.Call:
            call: cst.Call = node  # type: ignore[assignment]
            callee = dotted(call.func)
            self.site(call, callee)
            self.expr(call.func)
            for arg in call.args:
                self.anchors[id(arg)] = self.anchor  # type: ignore[assignment]
                if callee is not None:
                    self.consumer = (id(arg.value), callee)
                self.expr(arg.value)
            self.recognise.call(call)
        elif kind is cst.Attribute:
            attribute: cst.Attribute = node  # type: ignore[assignment]
            self.expr(attribute.value)
            name = attribute.attr.value
            if name in AMP_DEPRECATED_NAMES:
                qual = self.imports.qualify(attribute)
                if qual is not None and qual in AMP_DEPRECATED:
                    self.recognise.deprecated_reference(attribute, qual)
            elif name in _API_ATTRIBUTES:
                qual = self.imports.qualify(attribute)
                if qual is not None and qual in _API_CHANGES:
                    self.recognise.api_reference(attribute, qual, root_name(attribute))
            if name == "grad":
                self.event(Kind.GRAD_READ, node, receiver=expr_text(attribute.value))
            elif name == "require_grad":
                self.facts.require_grad_reads += 1
        else:
            children = _CHILDREN.get(kind)
            if children is not None:
                for child in children(node):
                    self.expr(child)
            if kind is cst.NamedExpr and type(node.target) is cst.Name:  # type: ignore[attr-defined]
                # `if (mask := batch.get("mask")) is not None:` binds `mask`
                self.values.bind(
                    node.target.value,  # type: ignore[attr-defined]
                    node.value,  # type: ignore[attr-defined]
                    under_no_grad=self.under_no_grad(),
                )

    def site(self, call: cst.Call, callee: str | None) -> None:
        """Record `call` with the function, class and `if` branches around it (see sites.py)."""
        scope = self.scope
        function = None if scope.is_module else scope.node
        self.sites.calls.append(
            CallSite(call, callee, function, scope.class_name, self.branches)  # type: ignore[arg-type]
        )

    def own_forward(self) -> Scope | None:
        """The `forward` of the class being walked (its own or a base class's of this module),
        when it has been read already."""
        if not self.class_stack:
            return None
        return self.facts.find_method(self.facts.classes.get(self.class_stack[-1].name), "forward")

    def resolve_function(self, name: str) -> Scope | None:
        """A function of the module already read (`to_probs` in `to_probs(logits)`)."""
        return self.resolve_local(name) or self.facts.functions.get(name)

    def definition(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """What a name or a call in a condition stands for: the condition a flag was assigned
        in this scope (`log_now = step % 10 == 0`), or the single expression a predicate
        function of this module returns (`def should_log(step): return step % n == 0`)."""
        if type(node) is not cst.Call:
            text = dotted(node)
            flag = self.flags.get(text) if text is not None else None
            if type(flag) is cst.Call and not self._flag_call(flag):
                return None
            return flag
        name = dotted(node.func)
        if name is None:
            return None
        if name.startswith("self.") and self.class_stack:
            found = self.predicates.get(f"{self.class_stack[-1].name}.{name[5:]}")
        else:
            found = self.predicates.get(name)
        return found

    def _flag_call(self, call: cst.Call) -> bool:
        """Whether a call whose result was assigned to a name makes that name a flag
        (`log_now = should_log(step)`), decided once per call."""
        key = id(call)
        known = self.flag_calls.get(key)
        if known is None:
            self.flag_calls[key] = False  # a predicate that reads the flag itself: not one
            known = classify_guard(call, False, self.definition) is not GuardKind.OTHER
            self.flag_calls[key] = known
        return known

    def defines(self, name: str) -> bool:
        """Whether `name` is a function or class this module (or an enclosing function)
        defines, so that calling it runs known code."""
        return name in self.top_names or self.resolve_local(name) is not None

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

    def project_symbol(self, qualified: str) -> bool | None:
        """True for a class of another project file, False for a function, None otherwise."""
        if self.project is None or not self.project.is_project(qualified):
            return None
        symbol = self.project.symbol(qualified)
        return None if symbol is None else symbol.is_class

    def class_role(self, name: str, depth: int = 0) -> str | None:
        """What instances of a class of this module are, from its bases (`dataloader` for
        `class InfiniteDataLoader(torch.utils.data.DataLoader)`)."""
        bases = self.class_bases.get(name, ())
        for base in bases:
            qual = self.imports.aliases.get(base.split(".", 1)[0])
            if qual is not None:
                rest = base.partition(".")[2]
                role = constructor_role(f"{qual}.{rest}" if rest else qual)
                if role is not None:
                    return role
            elif depth < 4 and base in self.class_bases:
                role = self.class_role(base, depth + 1)
                if role is not None:
                    return role
        return None

    def project_class_of(self, receiver: str) -> str | None:
        if receiver == "self" and self.class_stack:
            return self.class_stack[-1].name
        if receiver == "self":
            return None
        return self.instances.get(receiver)

    def event(self, kind: Kind, node: cst.CSTNode, **fields: object) -> Event:
        event = Event(kind, node, self.scope, tuple(self.frames), **fields)  # type: ignore[arg-type]
        if event.obj is None and event.receiver and kind in _OBJECT_EVENTS:
            event.obj = self.values.object_of_text(event.receiver)
        self.scope.events.append(event)
        return event

    def role_is(self, text: str, role: str) -> bool:
        return any(c.role == role and c.target == text for c in self.facts.constructed)


# Methods of a batch object that move it to the device in place, called as a statement.
_IN_PLACE_MOVES = frozenset({"to_device", "move_to_device", "to_gpu", "cuda_"})

# Events whose receiver is an object worth knowing (which optimizer steps, which model).
_OBJECT_EVENTS = frozenset(
    (
        Kind.STEP,
        Kind.MAYBE_STEP,
        Kind.ZERO_GRAD,
        Kind.SCALER_UPDATE,
        Kind.SCALER_UNSCALE,
        Kind.MODE_TRAIN,
        Kind.MODE_EVAL,
        Kind.MODE_UNKNOWN,
    )
)


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
_CONDITIONS = frozenset((cst.Comparison, cst.BooleanOperation, cst.UnaryOperation))


def _add_predicate(
    predicates: dict[str, cst.BaseExpression], name: str, node: cst.FunctionDef
) -> None:
    """A small function that ends by returning a condition: what it returns, for guards that
    call it (`if should_log(step):`)."""
    body = node.body.body if type(node.body) is cst.IndentedBlock else ()
    if not body or len(body) > 4:
        return
    last = body[-1]
    if type(last) is not cst.SimpleStatementLine or type(last.body[0]) is not cst.Return:
        return
    value = last.body[0].value
    if isinstance(value, cst.Comparison | cst.BooleanOperation | cst.UnaryOperation):
        predicates[name] = value


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


def _assigned_in_blocks(stmt: cst.BaseStatement) -> set[str]:
    """The names a module-level compound statement (`if`, `try`, `with`, a loop) assigns in
    its blocks, not in the functions or classes it defines."""
    found: set[str] = set()
    pending: list[cst.CSTNode] = [stmt]
    while pending:
        node = pending.pop()
        if type(node) is cst.SimpleStatementLine:
            for small in node.body:
                if type(small) is cst.Assign:
                    found.update(n for t in small.targets for n in target_names(t.target))
        elif not isinstance(node, cst.FunctionDef | cst.ClassDef):
            pending.extend(
                child
                for child in node.children
                if isinstance(child, cst.BaseStatement | cst.BaseSuite)
                or type(child) in (cst.Else, cst.ExceptHandler, cst.Finally)
            )
    return found
