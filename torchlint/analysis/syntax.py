"""Small questions about syntax nodes that the walker and the recognisers share."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.names import expr_text


def method_name(node: cst.Call) -> str | None:
    return node.func.attr.value if type(node.func) is cst.Attribute else None


def is_false(node: cst.BaseExpression) -> bool:
    return (type(node) is cst.Name and node.value == "False") or (
        type(node) is cst.Integer and node.value == "0"
    )


def target_names(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [n for el in target.elements for n in target_names(el.value)]
    return []


def simple_text(node: cst.BaseExpression) -> str:
    kind = type(node)
    if kind is cst.Name:
        return node.value  # type: ignore[attr-defined,no-any-return]
    if kind is cst.Attribute or kind is cst.Subscript:
        return expr_text(node)
    return ""


def string_value(node: cst.BaseExpression) -> str | None:
    if type(node) is cst.SimpleString:
        return node.value[1:-1] if node.value[:1] in "'\"" else None
    return None


NOT_A_LITERAL = object()


def string_value_of(node: cst.SimpleString) -> object:
    """The value of a string literal (a `str`, or `bytes`), NOT_A_LITERAL when it has none.
    A plain one (`"none"`, most literal arguments) is read off its text: `ast.literal_eval`,
    which libcst's `evaluated_value` calls, is slower and leaves a reference cycle behind."""
    text = node.value
    quote = text[0]
    if (quote == '"' or quote == "'") and text[1:2] != quote and "\\" not in text:
        return text[1:-1]
    try:
        return node.evaluated_value
    except Exception:
        return NOT_A_LITERAL


def literal(node: cst.BaseExpression | None) -> object:
    """The value of a literal argument or default (`"none"`, `0`, `True`, `None`), else
    NOT_A_LITERAL."""
    if type(node) is cst.SimpleString:
        return string_value_of(node)
    if type(node) is cst.Integer:
        try:
            return int(node.value, 0)
        except ValueError:
            return NOT_A_LITERAL
    if type(node) is cst.Name and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return NOT_A_LITERAL


def block_ends_with(suite: cst.BaseSuite, exits: tuple[type[cst.BaseSmallStatement], ...]) -> bool:
    """Whether the block's last statement is one of `exits` (`continue`, `return`, `raise`):
    the code after its `if` runs only when the test is false."""
    if type(suite) is cst.IndentedBlock:
        if not suite.body:
            return False
        last = suite.body[-1]
        return type(last) is cst.SimpleStatementLine and isinstance(last.body[-1], exits)
    if type(suite) is cst.SimpleStatementSuite:
        return bool(suite.body) and isinstance(suite.body[-1], exits)
    return False
