"""Cheap name resolution: import aliases, dotted expressions, what a receiver's name suggests."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import libcst as cst

_OPTIMIZER_NAME = re.compile(r"optim|(^|_)opt($|_|s$)", re.IGNORECASE)
_SCHEDULER_NAME = re.compile(r"sched|(^|_)lr_?s?($|_)|warmup", re.IGNORECASE)
_SCALER_NAME = re.compile(r"scaler", re.IGNORECASE)
_FRAMEWORK_NAME = re.compile(r"accelerat|fabric|engine|deepspeed|strategy|trainer", re.IGNORECASE)
_MODEL_NAME = re.compile(r"model|net|^module$|encoder|decoder|backbone|classifier", re.IGNORECASE)


# libcst's node classes are ABCs, and `isinstance` against an ABC is slow; these helpers run on
# every expression, so they compare exact types (libcst's concrete node classes have no
# subclasses).
_NAME, _ATTRIBUTE, _SUBSCRIPT, _CALL = cst.Name, cst.Attribute, cst.Subscript, cst.Call
_LITERALS = (cst.Integer, cst.SimpleString, cst.Float)
_EMPTY_MODULE = cst.Module(body=())


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of names and attributes; None for anything else."""
    kind = type(node)
    if kind is _NAME:  # most calls: a plain name, without building a list
        return node.value  # type: ignore[attr-defined,no-any-return]
    if kind is not _ATTRIBUTE:
        return None
    parts: list[str] = []
    while type(node) is _ATTRIBUTE:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not _NAME:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def expr_text(node: cst.BaseExpression) -> str:
    """The source text of a small expression, rebuilt without whitespace or comments."""
    kind = type(node)
    if kind is _NAME:
        return node.value  # type: ignore[attr-defined,no-any-return]
    if kind is _ATTRIBUTE:
        return f"{expr_text(node.value)}.{node.attr.value}"  # type: ignore[attr-defined]
    if kind is _SUBSCRIPT:
        inner = ", ".join(_slice_text(el.slice) for el in node.slice)  # type: ignore[attr-defined]
        return f"{expr_text(node.value)}[{inner}]"  # type: ignore[attr-defined]
    if kind in _LITERALS:
        return node.value  # type: ignore[attr-defined,no-any-return]
    if kind is _CALL:
        args = ", ".join(_arg_text(a) for a in node.args)  # type: ignore[attr-defined]
        return f"{expr_text(node.func)}({args})"  # type: ignore[attr-defined]
    operator = _OPERATOR_TEXT.get(kind)
    if operator is not None:
        return operator(node)
    return _EMPTY_MODULE.code_for_node(node).strip()


def _parenthesized(node: cst.BaseExpression, text: str) -> str:
    return "(" * len(node.lpar) + text + ")" * len(node.rpar)


_OPERATORS: dict[type, str] = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.MatrixMultiply: "@",
    cst.LeftShift: "<<",
    cst.RightShift: ">>",
    cst.BitOr: "|",
    cst.BitAnd: "&",
    cst.BitXor: "^",
    cst.And: "and",
    cst.Or: "or",
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.In: "in",
    cst.NotIn: "not in",
    cst.Is: "is",
    cst.IsNot: "is not",
}
_UNARY: dict[type, str] = {cst.Not: "not", cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~"}


def _space(whitespace: cst.BaseParenthesizableWhitespace) -> str:
    """The spaces around an operator as written; one space where it spans lines."""
    return whitespace.value if type(whitespace) is cst.SimpleWhitespace else " "


def _operator(op: Any, token: str) -> str:
    if type(op) is cst.NotIn or type(op) is cst.IsNot:
        token = token.replace(" ", _space(op.whitespace_between))
    return f"{_space(op.whitespace_before)}{token}{_space(op.whitespace_after)}"


def _binary_text(node: cst.BinaryOperation | cst.BooleanOperation) -> str:
    op = _operator(node.operator, _OPERATORS[type(node.operator)])
    return _parenthesized(node, f"{expr_text(node.left)}{op}{expr_text(node.right)}")


def _comparison_text(node: cst.Comparison) -> str:
    parts = [expr_text(node.left)]
    for target in node.comparisons:
        parts.append(_operator(target.operator, _OPERATORS[type(target.operator)]))
        parts.append(expr_text(target.comparator))
    return _parenthesized(node, "".join(parts))


def _unary_text(node: cst.UnaryOperation) -> str:
    op = node.operator
    token = _UNARY[type(op)]
    if type(op) is cst.Not:
        token = "not" + (_space(op.whitespace_after) or " ")  # `not(a)`: the parens are `a`'s
    return _parenthesized(node, token + expr_text(node.expression))


# Operator expressions, rebuilt from their parts with the spacing as written (one space where
# an operator spans lines): a code generation of a comparison costs a hundred times more.
_OPERATOR_TEXT: dict[type, Callable[[Any], str]] = {
    cst.BinaryOperation: _binary_text,
    cst.BooleanOperation: _binary_text,
    cst.Comparison: _comparison_text,
    cst.UnaryOperation: _unary_text,
}


def _arg_text(arg: cst.Arg) -> str:
    prefix = f"{arg.keyword.value}=" if arg.keyword else arg.star
    return prefix + expr_text(arg.value)


def _slice_text(slice_: cst.BaseSlice) -> str:
    if type(slice_) is cst.Index:
        return expr_text(slice_.value)
    if type(slice_) is cst.Slice:
        text = _simple_slice_text(slice_)
        if text is not None:
            return text
    return _EMPTY_MODULE.code_for_node(slice_).strip()


def _simple_slice_text(slice_: cst.Slice) -> str | None:
    """`:`, `1:-1`, `::step`, as libcst would write them, without generating code (most
    slices are of names and numbers); None for anything else."""
    parts = [_bound_text(slice_.lower), _colon_text(slice_.first_colon), _bound_text(slice_.upper)]
    second = slice_.second_colon
    if type(second) is cst.Colon:
        parts.append(_colon_text(second))
    elif slice_.step is not None:
        parts.append(":")
    parts.append(_bound_text(slice_.step))
    if None in parts:
        return None
    return "".join(parts).strip()  # type: ignore[arg-type]


def _colon_text(colon: cst.Colon) -> str | None:
    before, after = colon.whitespace_before, colon.whitespace_after
    if type(before) is not cst.SimpleWhitespace or type(after) is not cst.SimpleWhitespace:
        return None
    return f"{before.value}:{after.value}"


def _bound_text(node: cst.BaseExpression | None) -> str | None:
    """A slice bound written plainly (`i`, `10`, `-1`), else None; `""` for a missing one."""
    if node is None:
        return ""
    if node.lpar or node.rpar:
        return None
    kind = type(node)
    if kind is _NAME or kind is cst.Integer:
        return node.value  # type: ignore[attr-defined,no-any-return]
    if (
        kind is cst.UnaryOperation
        and type(node.operator) is cst.Minus  # type: ignore[attr-defined]
        and type(node.operator.whitespace_after) is cst.SimpleWhitespace  # type: ignore[attr-defined]
        and not node.operator.whitespace_after.value  # type: ignore[attr-defined]
    ):
        inner = node.expression  # type: ignore[attr-defined]
        if type(inner) is cst.Integer and not inner.lpar and not inner.rpar:
            return f"-{inner.value}"
    return None


def root_name(node: cst.BaseExpression) -> str | None:
    """The leftmost name of `a.b[0].c()`-like expressions."""
    while True:
        kind = type(node)
        if kind is _NAME:
            return node.value  # type: ignore[attr-defined,no-any-return]
        if kind is _ATTRIBUTE or kind is _SUBSCRIPT:
            node = node.value  # type: ignore[attr-defined]
        elif kind is _CALL:
            node = node.func  # type: ignore[attr-defined]
        else:
            return None


def last_segment(text: str) -> str:
    """`self.optimizers[0]` -> `optimizers`."""
    if "[" in text:
        text = _INDEXES.sub("", text)
    return text.rsplit(".", 1)[-1]


_INDEXES = re.compile(r"\[[^\]]*\]")


def strip_module_wrapper(text: str) -> str:
    """`model.module` (DataParallel / DDP) and `model._orig_mod` (torch.compile) are the model."""
    for suffix in (".module", "._orig_mod"):
        while text.endswith(suffix):
            text = text[: -len(suffix)]
    return text


def rebind(text: str, binding: dict[str, str]) -> str:
    """Rename the root of `text` through a parameter binding: `opt.step` with {opt: self.o}."""
    if not binding:
        return text
    match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text)
    if not match:
        return text
    root = match.group(0)
    if root in binding:
        return binding[root] + text[match.end() :]
    return text


def looks_like_optimizer(text: str) -> bool:
    seg = last_segment(text)
    return bool(_OPTIMIZER_NAME.search(seg)) and not _SCHEDULER_NAME.search(seg)


def looks_like_scheduler(text: str) -> bool:
    return bool(_SCHEDULER_NAME.search(last_segment(text)))


def looks_like_scaler(text: str) -> bool:
    return bool(_SCALER_NAME.search(last_segment(text)))


def looks_like_framework(text: str) -> bool:
    return bool(_FRAMEWORK_NAME.search(last_segment(text)))


def looks_like_model(text: str) -> bool:
    return bool(_MODEL_NAME.search(last_segment(strip_module_wrapper(text))))


class ImportTable:
    """Local names bound by imports, mapped to the qualified names they stand for."""

    def __init__(
        self,
        relative: Callable[[int, str | None], str | None] | None = None,
        star: Callable[[str], frozenset[str] | None] | None = None,
    ) -> None:
        self.aliases: dict[str, str] = {}
        # Makes `from ..data import x` absolute (None: relative imports are not read).
        self._relative = relative
        # The names `from module import *` binds, for modules of the project (None: unknown).
        self._star = star

    def add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = full
            else:
                head = full.split(".", 1)[0]
                self.aliases[head] = head

    def add_import_from(self, node: cst.ImportFrom) -> None:
        module = dotted(node.module) if node.module is not None else None
        if node.relative:
            if self._relative is None:
                return
            module = self._relative(len(node.relative), module)
        if module is None:
            return
        if isinstance(node.names, cst.ImportStar):
            names = self._star(module) if self._star is not None else None
            for name in names or ():  # `from utils.datasets import *` of a project module
                self.aliases.setdefault(name, f"{module}.{name}")
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{module}.{alias.name.value}"

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """`F.cross_entropy` -> `torch.nn.functional.cross_entropy` when `F` is an import."""
        kind = type(node)
        if kind is _NAME:
            return self.aliases.get(node.value)  # type: ignore[attr-defined]
        if kind is not _ATTRIBUTE:
            return None
        root = node
        while type(root) is _ATTRIBUTE:
            root = root.value
        # Most receivers are no import (`model(x)`, `self.opt.step`): no text built for them.
        if type(root) is not _NAME or root.value not in self.aliases:
            return None
        text = dotted(node)
        return self.qualify_text(text) if text is not None else None

    def qualify_text(self, text: str) -> str | None:
        """`nn.Module` -> `torch.nn.Module` for a dotted name as written (a class's bases)."""
        head, _, rest = text.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target
