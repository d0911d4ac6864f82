"""The walker's state, and the questions its recognisers and values ask of it (names, roles)."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.apis import NO_GRAD_FUNCTIONS, constructor_role
from torchlint.analysis.facts import ModuleFacts
from torchlint.analysis.guards import classify_guard
from torchlint.analysis.model import (
    ClassInfo,
    Event,
    Frame,
    GuardFrame,
    GuardKind,
    Kind,
    Scope,
    grad_disabled,
    visible_from,
)
from torchlint.analysis.names import ImportTable, dotted, expr_text, looks_like_scaler, root_name
from torchlint.analysis.positions import Anchor
from torchlint.analysis.protocol import ProjectView
from torchlint.analysis.recognise import CallRecogniser
from torchlint.analysis.sites import Branch
from torchlint.analysis.source import ParsedSource
from torchlint.analysis.syntax import target_names
from torchlint.analysis.values import Values


class WalkState:
    """What the walk knows so far, and its answers about names, classes and roles."""

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

    def condition_text(self, test: cst.BaseExpression) -> str:
        """The text of an `if` / `while` test, generated once: both branches of an `if` and an
        early exit after it ask for it, and a comparison's text costs a code generation."""
        text = self.condition_texts.get(id(test))
        if text is None:
            text = self.condition_texts[id(test)] = expr_text(test)
        return text

    def scope_key(self) -> int:
        """The key of the current function in `Sites.assigned`: its node's id, 0 at module level."""
        return 0 if self.scope.is_module else id(self.scope.node)

    def alias_key(self, node: cst.BaseExpression) -> tuple[str, str]:
        """Where a name's alias is kept: `self.x` per class, any other name per module."""
        text = dotted(node) or ""
        if text.startswith("self.") and self.class_stack:
            return (self.class_stack[-1].name, text)
        return ("", text)

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
