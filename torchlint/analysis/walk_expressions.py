"""The walk of expressions, in evaluation order: anchors, call sites, calls to the recognisers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import libcst as cst

from torchlint.analysis.apis import AMP_DEPRECATED, AMP_DEPRECATED_NAMES
from torchlint.analysis.deprecations import ATTRIBUTE_NAMES as _API_ATTRIBUTES
from torchlint.analysis.deprecations import BY_QUALNAME as _API_CHANGES
from torchlint.analysis.model import Kind
from torchlint.analysis.names import dotted, expr_text, root_name
from torchlint.analysis.sites import CallSite
from torchlint.analysis.walk_state import WalkState


class ExpressionWalker(WalkState):
    """Walks expressions, arguments before the call, and hands each call to the recogniser."""

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
# handled in `ExpressionWalker.expr` itself). Dispatching on the exact type avoids libcst's ABC
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
