"""Every call of the module with the function, class and `if` branches around it, the functions
and classes by name, and what each name is assigned: what the distributed and framework rules
(and TL403, TL503) query. The walker fills it as it goes (`Walker.expr`, `Walker.small`), so no
rule walks the module a second time."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from torchlint.analysis.names import dotted
from torchlint.analysis.record import record

_SEQUENCES = frozenset((cst.Tuple, cst.List))


@record()
class Branch:
    """One side of an `if`: 0 is the body, 1 the `else` (or the `elif` chain)."""

    node: cst.If
    branch: int


@record()
class CallSite:
    call: cst.Call
    callee: str | None  # the callee as written, dotted (`dist.all_reduce`, `self.evaluate`)
    function: cst.FunctionDef | None  # the innermost enclosing function
    class_name: str | None  # the class of that function, when it is a method
    branches: tuple[Branch, ...]  # the `if` branches around the call in that function


@dataclass
class Sites:
    calls: list[CallSite] = field(default_factory=list)  # in walk order, a call before its args
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

    def bind(self, scope: int, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`target = value` in the function `scope` (its id, 0 at module level); tuples are
        unpacked element by element where the value is a tuple too."""
        kind = type(target)
        if kind is cst.Name:  # most assignments
            name: str | None = target.value  # type: ignore[attr-defined]
        elif kind is cst.Tuple or kind is cst.List:
            items = value.elements if type(value) in _SEQUENCES else None  # type: ignore[attr-defined]
            for i, element in enumerate(target.elements):  # type: ignore[attr-defined]
                item = items[i].value if items is not None and i < len(items) else value
                self.bind(scope, element.value, item)
            return
        else:
            name = dotted(target)
        if name is not None:
            self.assigned.setdefault((scope, name), []).append(value)
            self.targets.setdefault(id(value), []).append(name)

    def clear(self) -> None:
        self.calls.clear()
        self.functions.clear()
        self.methods.clear()
        self.classes.clear()
        self.class_of.clear()
        self.assigned.clear()
        self.targets.clear()
