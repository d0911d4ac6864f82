"""How often a branch runs, judged from its condition: a step counter (`step % n == 0`, a
periodic predicate such as `should_log(step)` or a flag assigned from one) makes it *periodic*;
values the loop never changes (configuration, `args.loss == "wgan-gp"`) make it *loop-invariant*
(it runs on every iteration or on none); a rank test makes it rank-dependent; anything else is
data-dependent."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import libcst as cst

from torchlint.analysis.model import GuardKind
from torchlint.analysis.names import dotted, expr_text
from torchlint.analysis.syntax import NOT_A_LITERAL, string_value_of

_REFERENCES = frozenset((cst.Name, cst.Attribute, cst.Call))
_RANK_WORDS = ("rank", "main_process", "is_master", "is_main", "master_process", "is_global_zero")


# What a name or a call in a condition stands for: the expression a flag was assigned
# (`log_now = step % 10 == 0`), or what a predicate function returns (`return step % n == 0`).
Definition = Callable[[cst.BaseExpression], cst.BaseExpression | None]


def _no_definition(node: cst.BaseExpression) -> cst.BaseExpression | None:
    return None


def classify_guard(
    test: cst.BaseExpression,
    negated: bool,
    definition: Definition = _no_definition,
    depth: int = 0,
) -> GuardKind:
    """How often a branch under `test` (or under `not test`) runs. `definition` gives what a
    name or call in the test stands for, when the module shows it."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return classify_guard(test.expression, not negated, definition, depth)
    node_type = type(test)
    if depth < 3 and node_type in _REFERENCES:
        defined = definition(test)
        if defined is not None:
            return classify_guard(defined, negated, definition, depth + 1)
    if type(test) is cst.BooleanOperation:
        left = classify_guard(test.left, negated, definition, depth)
        right = classify_guard(test.right, negated, definition, depth)
        conjunction = (type(test.operator) is cst.And) != negated  # De Morgan
        kinds = {left, right}
        if conjunction:
            for kind in (GuardKind.PERIODIC, GuardKind.OTHER, GuardKind.CONFIG, GuardKind.RANK):
                if kind in kinds:
                    return kind
        if kinds == {GuardKind.PERIODIC}:
            return GuardKind.PERIODIC
        return GuardKind.OTHER if GuardKind.OTHER in kinds else max(kinds, key=_guard_rank)
    if type(test) is cst.BinaryOperation and type(test.operator) is cst.Modulo:
        return GuardKind.OTHER if not negated else GuardKind.PERIODIC  # `if not i % n`
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        lhs, rhs = test.left, test.comparisons[0].comparator
        if _mentions_rank(test):
            return GuardKind.RANK if not negated else GuardKind.OTHER
        if isinstance(op, cst.Equal | cst.NotEqual | cst.In | cst.NotIn) and (
            _is_text(lhs) or _is_text(rhs)
        ):
            return GuardKind.CONFIG  # `args.loss == "wgan-gp"`, `mode in ("train", "val")`
        is_mod = type(lhs) is cst.BinaryOperation and type(lhs.operator) is cst.Modulo
        if type(op) is cst.Equal:
            return GuardKind.PERIODIC if not negated else GuardKind.OTHER
        if type(op) is cst.NotEqual:
            return GuardKind.PERIODIC if negated and is_mod else GuardKind.OTHER
        if isinstance(
            op, cst.LessThan | cst.LessThanEqual | cst.GreaterThan | cst.GreaterThanEqual
        ):
            # `step >= warmup`, `step < resume_step`: on for most iterations, unless it tests
            # for the last one (`i >= len(loader) - 1`). `loss > 10` is an anomaly check.
            if not (_is_counter(lhs) or _is_counter(rhs)):
                return GuardKind.OTHER
            if "len(" in expr_text(rhs) or "- 1" in expr_text(rhs):
                return GuardKind.PERIODIC
            return GuardKind.CONFIG
        if isinstance(op, cst.IsNot | cst.Is) and type(rhs) is cst.Name and rhs.value == "None":
            return GuardKind.CONFIG  # `if writer is not None:`, `if plugin is None:`
        return GuardKind.OTHER
    if node_type in _REFERENCES:
        if _mentions_rank(test):
            return GuardKind.RANK if not negated else GuardKind.OTHER
        if node_type is not cst.Call:
            if _PERIODIC_FLAG.fullmatch((dotted(test) or "").rsplit(".", 1)[-1]):
                return GuardKind.PERIODIC  # `if self.control.should_log:`: set every N steps
            return GuardKind.CONFIG  # `if args.log:`, `if not args.distributed:`
        callee = (dotted(test.func) or "") if type(test) is cst.Call else ""
        if callee.endswith(("is_available", "is_initialized")):
            return GuardKind.CONFIG if not negated else GuardKind.OTHER  # set for the whole run
        if _PERIODIC_FLAG.fullmatch(callee.rsplit(".", 1)[-1]):
            return GuardKind.PERIODIC if not negated else GuardKind.OTHER  # `should_log(step)`
    return GuardKind.OTHER


# Flags a training framework raises every N steps (the Trainer's `control.should_log`,
# Accelerate's `sync_gradients` at the end of an accumulation window).
_PERIODIC_FLAG = re.compile(r"should_\w+|sync_gradients|is_\w+_step|\w+_now|do_\w+_step")
_COUNTER = re.compile(r"(^|_)(step|steps|iter|iters|iteration|it|i|j|idx|epoch|batch)($|_)")


def _is_text(node: cst.BaseExpression) -> bool:
    """A string, or a tuple / list of them (`("adam", "adamw")`)."""
    if isinstance(node, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
        return True
    if isinstance(node, cst.Tuple | cst.List | cst.Set) and node.elements:
        return all(_is_text(e.value) for e in node.elements)
    return False


def _is_counter(node: cst.BaseExpression) -> bool:
    text = dotted(node)
    return text is not None and is_counter_name(text)


def is_counter_name(text: str) -> bool:
    """`step`, `self.global_step`, `epoch`, `i`: a step counter (its thresholds, warm-up and
    resume-skip tests, hold on most iterations whatever the loop does to it)."""
    return bool(_COUNTER.search(text.rsplit(".", 1)[-1]))


def _guard_rank(kind: GuardKind) -> int:
    return [GuardKind.RANK, GuardKind.CONFIG, GuardKind.PERIODIC, GuardKind.OTHER].index(kind)


def _mentions_rank(node: cst.BaseExpression) -> bool:
    """Whether a name, attribute or string in the expression says rank (`rank == 0`,
    `accelerator.is_main_process`), read from its nodes (generating its code costs more)."""
    stack: list[cst.CSTNode] = [node]
    search = _RANK_TEXT.search
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is cst.Name or kind is cst.SimpleString or kind is cst.FormattedStringText:
            if search(current.value):  # type: ignore[attr-defined]
                return True
        elif kind is cst.Attribute:
            if search(current.attr.value):  # type: ignore[attr-defined]
                return True
            stack.append(current.value)  # type: ignore[attr-defined]
        elif kind is cst.Integer or kind is cst.Float or kind is cst.Ellipsis:
            continue
        else:
            children = _RANK_CHILDREN.get(kind)
            if children is not None:
                stack.extend(children(current))
            elif search(expr_text(current)):  # type: ignore[arg-type]
                return True
    return False


_RANK_TEXT = re.compile("|".join(_RANK_WORDS), re.IGNORECASE)
# Where a rank may be named inside an expression, by node type (anything else: its text).
_RANK_CHILDREN: dict[type, Callable[[Any], Iterable[cst.CSTNode]]] = {
    cst.Call: lambda n: (n.func, *(a.value for a in n.args)),
    cst.Comparison: lambda n: (n.left, *(c.comparator for c in n.comparisons)),
    cst.BinaryOperation: lambda n: (n.left, n.right),
    cst.BooleanOperation: lambda n: (n.left, n.right),
    cst.UnaryOperation: lambda n: (n.expression,),
    cst.Subscript: lambda n: (
        n.value,
        *(
            part
            for el in n.slice
            for part in (
                (el.slice.value,)
                if type(el.slice) is cst.Index
                else (el.slice.lower, el.slice.upper, el.slice.step)
            )
            if part is not None
        ),
    ),
    cst.Tuple: lambda n: (e.value for e in n.elements),
    cst.List: lambda n: (e.value for e in n.elements),
    cst.Set: lambda n: (e.value for e in n.elements),
    cst.Dict: lambda n: (
        part
        for e in n.elements
        for part in ((e.key, e.value) if type(e) is cst.DictElement else (e.value,))
    ),
    cst.IfExp: lambda n: (n.test, n.body, n.orelse),
    cst.ConcatenatedString: lambda n: (n.left, n.right),
    cst.StarredElement: lambda n: (n.value,),
    cst.Await: lambda n: (n.expression,),
    cst.NamedExpr: lambda n: (n.target, n.value),
    # Comprehensions, lambdas and f-strings by their parts: generating their code costs more.
    cst.ListComp: lambda n: (n.elt, n.for_in),
    cst.SetComp: lambda n: (n.elt, n.for_in),
    cst.GeneratorExp: lambda n: (n.elt, n.for_in),
    cst.DictComp: lambda n: (n.key, n.value, n.for_in),
    cst.CompFor: lambda n: (
        n.target,
        n.iter,
        *(c.test for c in n.ifs),
        *((n.inner_for_in,) if n.inner_for_in is not None else ()),
    ),
    cst.Lambda: lambda n: (*_parameter_parts(n.params), n.body),
    cst.FormattedString: lambda n: n.parts,
    cst.FormattedStringExpression: lambda n: (
        n.expression,
        *(n.format_spec if n.format_spec is not None else ()),
    ),
}


def _parameter_parts(params: cst.Parameters) -> Iterable[cst.CSTNode]:
    """The names and defaults of a lambda's parameters."""
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            every.append(extra)
    for param in every:
        yield param.name
        if param.default is not None:
            yield param.default


def decided(test: cst.BaseExpression, consts: dict[str, object]) -> bool | None:
    """The truth of `test` when the names it reads are the literals `consts` (the arguments
    one call passes: `reduction="none"`), else None."""
    if type(test) is cst.Name:
        return bool(consts[test.value]) if test.value in consts else None
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = decided(test.expression, consts)
        return None if inner is None else not inner
    if type(test) is cst.BooleanOperation:
        sides = (decided(test.left, consts), decided(test.right, consts))
        if type(test.operator) is cst.And:
            return False if False in sides else (None if None in sides else True)
        return True if True in sides else (None if None in sides else False)
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        name = test.left
        if type(name) is not cst.Name or name.value not in consts:
            return None
        value = consts[name.value]
        target = test.comparisons[0]
        other = _literal(target.comparator)
        if other is _UNKNOWN:
            return None
        op = target.operator
        if isinstance(op, cst.Equal | cst.Is):
            return value == other
        if isinstance(op, cst.NotEqual | cst.IsNot):
            return value != other
        if isinstance(op, cst.In | cst.NotIn) and isinstance(other, tuple):
            return (value in other) == isinstance(op, cst.In)
    return None


_UNKNOWN = object()


def _literal(node: cst.BaseExpression) -> object:
    if isinstance(node, cst.Tuple | cst.List):
        items = tuple(_literal(e.value) for e in node.elements)
        return _UNKNOWN if _UNKNOWN in items else items
    if type(node) is cst.SimpleString:
        value = string_value_of(node)
        return _UNKNOWN if value is NOT_A_LITERAL else value
    if type(node) is cst.Integer:
        return int(node.value, 0) if node.value.isdigit() else _UNKNOWN
    if type(node) is cst.Name and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return _UNKNOWN
