"""Building blocks for fixes: text edits that keep the file's layout and add what they need."""

from __future__ import annotations

import libcst as cst

from torchlint.diagnostics import Edit, Location
from torchlint.rules.base import RuleContext


def torch_name(ctx: RuleContext) -> tuple[str, list[Edit]]:
    """The local name of the `torch` module, and the edits that import it when nothing does."""
    for local, target in ctx.facts.imports.aliases.items():
        if target == "torch":
            return local, []
    return "torch", [import_torch(ctx)]


def import_torch(ctx: RuleContext) -> Edit:
    """`import torch` after the last top-level import (or after the docstring)."""
    imports = ctx.facts.top_level_imports
    lines = ctx.facts.parsed.lines
    if imports:
        row = ctx.positions.span(imports[-1].body[-1]).end.row
    else:
        row = 0
        body = ctx.facts.parsed.module.body
        if body and is_docstring(body[0]):
            row = ctx.positions.span(body[0].body[0]).end.row  # type: ignore[index]
    if row >= lines.line_count:
        last = lines.line_count
        end = Location(last, len(lines.line(last)) + 1)
        prefix = "" if ctx.facts.parsed.text.endswith(("\n", "\r")) else "\n"
        return Edit(f"{prefix}import torch\n", end, end)
    return Edit("import torch\n", Location(row + 1, 1), Location(row + 1, 1))


def statement_of(ctx: RuleContext, node: cst.CSTNode) -> cst.CSTNode | None:
    """The small statement (`optimizer.step()`, `x = ...`) that contains `node`."""
    anchor = ctx.facts.anchors.get(id(node))
    if anchor is None or not isinstance(anchor.node, cst.BaseSmallStatement):
        return None
    return anchor.node


def own_line_indent(ctx: RuleContext, statement: cst.CSTNode) -> str | None:
    """The indentation of `statement` when it is alone on its line(s), else None."""
    span = ctx.positions.span(statement)
    lines = ctx.facts.parsed.lines
    first = lines.line(span.start.row)
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    if span.start.column - 1 != len(indent):
        return None  # `a; b` or a one-line suite: no line of its own
    rest = lines.line(span.end.row)[span.end.column - 1 :].strip()
    if rest and not rest.startswith("#"):
        return None
    return indent


def insert_line_after(ctx: RuleContext, statement: cst.CSTNode, code: str) -> Edit | None:
    indent = own_line_indent(ctx, statement)
    if indent is None:
        return None
    row = ctx.positions.span(statement).end.row
    lines = ctx.facts.parsed.lines
    if row >= lines.line_count:
        end = Location(row, len(lines.line(row)) + 1)
        return Edit(f"\n{indent}{code}", end, end)
    return Edit(f"{indent}{code}\n", Location(row + 1, 1), Location(row + 1, 1))


def insert_line_before(ctx: RuleContext, statement: cst.CSTNode, code: str) -> Edit | None:
    indent = own_line_indent(ctx, statement)
    if indent is None:
        return None
    row = ctx.positions.span(statement).start.row
    return Edit(f"{indent}{code}\n", Location(row, 1), Location(row, 1))


def delete_line(ctx: RuleContext, statement: cst.CSTNode) -> Edit | None:
    """Remove a statement that has its line to itself (with its line ending)."""
    if own_line_indent(ctx, statement) is None:
        return None
    span = ctx.positions.span(statement)
    if span.start.row != span.end.row or span.end.row >= ctx.facts.parsed.lines.line_count:
        return None
    return Edit("", Location(span.start.row, 1), Location(span.start.row + 1, 1))


def parenthesized(ctx: RuleContext, node: cst.BaseExpression) -> str:
    """The source of `node`, in parentheses unless it binds tighter than attribute access."""
    text = ctx.text(node)
    if isinstance(node, cst.Name | cst.Attribute | cst.Call | cst.Subscript):
        return text
    return f"({text})"


def is_docstring(stmt: cst.BaseStatement) -> bool:
    """A statement that is only a string literal (a docstring when it comes first)."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )
