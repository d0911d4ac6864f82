"""What the distributed and framework rules share: every call of the module with the function,
class and `if` branches around it, the functions and classes by name, and what each local name
is assigned. One walk of the module, made only when a rule of this family asks for it (and only
for files that mention a framework), shared through the rule context's memo."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from torchlint.analysis.names import dotted
from torchlint.rules.base import RuleContext


@dataclass(frozen=True, eq=False)
class Branch:
    """One side of an `if`: 0 is the body, 1 the `else` (or the `elif` chain)."""

    node: cst.If
    branch: int


@dataclass(frozen=True, eq=False)
class CallSite:
    call: cst.Call
    callee: str | None  # the callee as written, dotted (`dist.all_reduce`, `self.evaluate`)
    function: cst.FunctionDef | None  # the innermost enclosing function
    class_name: str | None  # the class of that function, when it is a method
    branches: tuple[Branch, ...]  # the `if` branches around the call in that function


@dataclass
class Sites:
    calls: list[CallSite] = field(default_factory=list)
    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)  # module level
    methods: dict[tuple[str, str], cst.FunctionDef] = field(default_factory=dict)
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    class_of: dict[int, str] = field(default_factory=dict)  # id(function) -> its class
    # (id(function) or 0 for module level, name) -> every value assigned to the name there.
    assigned: dict[tuple[int, str], list[cst.BaseExpression]] = field(default_factory=dict)
    # id(value) -> the names it is assigned to, in order (`a, b = f()`: both, `a` first).
    targets: dict[int, list[str]] = field(default_factory=dict)

    def in_function(self, function: cst.FunctionDef | None) -> list[CallSite]:
        return [site for site in self.calls if site.function is function]

    def values_of(self, function: cst.FunctionDef | None, name: str) -> list[cst.BaseExpression]:
        return self.assigned.get((id(function) if function is not None else 0, name), [])


class _Walk(cst.CSTVisitor):
    """One pass over the module. `on_visit` / `on_leave` are overridden with a dispatch on the
    node's type: the generic `visit_<Type>` lookup costs a string and an attribute search per
    node, which is most of the price of a walk."""

    def __init__(self, sites: Sites) -> None:
        self.sites = sites
        self.functions: list[cst.FunctionDef] = []
        self.classes: list[str] = []
        self.branches: list[Branch] = []
        self.saved: list[list[Branch]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        if kind is cst.Call:
            self._call(node)  # type: ignore[arg-type]
        elif kind is cst.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                self._bind(target.target, node.value)  # type: ignore[attr-defined]
        elif kind is cst.AnnAssign:
            if node.value is not None:  # type: ignore[attr-defined]
                self._bind(node.target, node.value)  # type: ignore[attr-defined]
        elif kind is cst.If:
            self._if(node)  # type: ignore[arg-type]
            return False
        elif kind is cst.FunctionDef:
            self._enter_function(node)  # type: ignore[arg-type]
        elif kind is cst.ClassDef:
            name = node.name.value  # type: ignore[attr-defined]
            if not self.classes and not self.functions:
                self.sites.classes[name] = node  # type: ignore[assignment]
            self.classes.append(name)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        kind = type(original_node)
        if kind is cst.FunctionDef:
            self.functions.pop()
            self.branches = self.saved.pop()
        elif kind is cst.ClassDef:
            self.classes.pop()

    def _enter_function(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        if not self.functions and self.classes:
            self.sites.methods[(self.classes[-1], name)] = node
            self.sites.class_of[id(node)] = self.classes[-1]
        elif not self.functions and not self.classes:
            self.sites.functions[name] = node
        self.functions.append(node)
        self.saved.append(self.branches)
        self.branches = []

    def _if(self, node: cst.If) -> None:
        node.test.visit(self)
        self.branches.append(Branch(node, 0))
        node.body.visit(self)
        self.branches.pop()
        if node.orelse is not None:
            self.branches.append(Branch(node, 1))
            if isinstance(node.orelse, cst.If):
                node.orelse.visit(self)
            else:
                node.orelse.body.visit(self)
            self.branches.pop()

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        scope = id(self.functions[-1]) if self.functions else 0
        if isinstance(target, cst.Tuple | cst.List):
            items = value.elements if isinstance(value, cst.Tuple | cst.List) else None
            for i, element in enumerate(target.elements):
                item = items[i].value if items is not None and i < len(items) else value
                self._bind(element.value, item)
            return
        name = dotted(target)
        if name is not None:
            self.sites.assigned.setdefault((scope, name), []).append(value)
            self.sites.targets.setdefault(id(value), []).append(name)

    def _call(self, node: cst.Call) -> None:
        function = self.functions[-1] if self.functions else None
        self.sites.calls.append(
            CallSite(
                node,
                dotted(node.func),
                function,
                self.sites.class_of.get(id(function)) if function is not None else None,
                tuple(self.branches),
            )
        )


def sites_of(ctx: RuleContext) -> Sites:
    """The module's call sites (walked once per file, whichever rule asks first)."""
    sites = ctx.memo.get("dist.sites")
    if not isinstance(sites, Sites):
        sites = Sites()
        ctx.facts.parsed.module.visit(_Walk(sites))
        ctx.memo["dist.sites"] = sites
    return sites


def mentions(ctx: RuleContext, pattern: re.Pattern[str]) -> bool:
    """A cheap test on the file's text, so that files of no framework are not walked again."""
    return pattern.search(ctx.facts.parsed.text) is not None


def last(text: str | None) -> str:
    return (text or "").rsplit(".", 1)[-1]


def receiver(text: str | None) -> str:
    """`accelerator` for `self.accelerator.gather`: the receiver's last segment."""
    parts = (text or "").split(".")
    return parts[-2] if len(parts) >= 2 else ""
