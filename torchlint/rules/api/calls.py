"""What the api rules share: reading a call's arguments and adding a keyword argument to it."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.deprecations import Version
from torchlint.analysis.facts import ApiUse
from torchlint.diagnostics import Edit
from torchlint.rules.base import RuleContext


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list[cst.Arg]:
    """The positional arguments, `*args` included (check `starred` before counting them)."""
    return [arg for arg in call.args if arg.keyword is None and arg.star != "**"]


def starred(call: cst.Call, star: str) -> bool:
    """Whether the call unpacks arguments: `*args` (star="*") or `**kwargs` (star="**")."""
    return any(arg.star == star for arg in call.args)


def keywords(call: cst.Call) -> set[str]:
    return {arg.keyword.value for arg in call.args if arg.keyword is not None}


def is_literal(node: cst.BaseExpression, name: str) -> bool:
    """`True` / `False` / `None`."""
    return type(node) is cst.Name and node.value == name


def is_one(node: cst.BaseExpression) -> bool:
    """The literal `1` or `1.0` (any spelling of the float one)."""
    if type(node) is cst.Integer:
        return node.value == "1"
    if type(node) is cst.Float:
        try:
            return float(node.value) == 1.0
        except ValueError:
            return False
    return False


def named(ctx: RuleContext, use: ApiUse) -> str:
    """`` `torch.qr` ``, or `` `th.qr` (`torch.qr`) `` when the file spells it differently."""
    written = ctx.text(use.func if use.func is not None else use.node)
    if written == use.qualname:
        return f"`{written}`"
    return f"`{written}` (`{use.qualname}`)"


def used_as_function(ctx: RuleContext, use: ApiUse) -> bool:
    """A call, or a reference that is evidently kept to be called later: the whole value of an
    assignment or `return` (`decompose = torch.qr`). Not a dict key, a function registered in a
    table, an `is` test, a lookup argument or `torch.qr.__doc__`."""
    node = use.node
    if isinstance(node, cst.Call):
        return True
    anchor = ctx.facts.anchors.get(id(node))
    statement = anchor.node if anchor is not None else None
    return (
        isinstance(statement, cst.Assign | cst.AnnAssign | cst.Return) and statement.value is node
    )


def before_target(ctx: RuleContext, version: Version | None) -> bool:
    """Whether `target-torch-version` is older than `version` (advice it cannot follow yet)."""
    return version is not None and ctx.target_torch is not None and ctx.target_torch < version


def add_keyword(ctx: RuleContext, call: cst.Call, text: str) -> Edit | None:
    """An edit that appends the keyword argument `text` (`weights_only=True`) to the call."""
    closing = ctx.positions.offsets(call)[1] - 1  # the offset of `)`
    source = ctx.facts.parsed.text
    if source[closing : closing + 1] != ")":
        return None
    if call.args and "#" in source[ctx.positions.offsets(call.args[-1].value)[1] : closing]:
        return None  # a comment before `)`: the argument would land inside it
    before = source[:closing].rstrip()
    if not call.args:
        content = text
    elif before.endswith(",") and "\n" in source[len(before) : closing]:
        # one argument per line, with a trailing comma: add a line in the same style
        line = ctx.facts.parsed.lines.line(ctx.positions.span(call.args[-1]).start.row)
        newline = ctx.facts.parsed.module.default_newline
        content = f"{newline}{line[: len(line) - len(line.lstrip())]}{text},"
    elif before.endswith(","):
        content = f" {text}"
    else:
        content = f", {text}"
    at = ctx.facts.parsed.lines.location(len(before) if call.args else closing)
    return Edit(content, at, at)
