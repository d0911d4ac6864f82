"""For TL204's fix: the `from torch.cuda.amp import autocast` that the rewrite leaves unused.
A name is removable when every reference to it in the file is a use the fix rewrites; the fix
of each such use then rewrites them all and drops the name from its import, so that one
applied fix never leaves a call of a name that is no longer imported."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.names import dotted
from torchlint.diagnostics import Edit
from torchlint.rules.base import RuleContext
from torchlint.rules.edits import delete_line
from torchlint.rules.text import word_count

_DEPRECATED_MODULE = "torch.cuda.amp"


class _References(cst.CSTVisitor):
    """Counts the `Name` nodes that read or bind `name` (imports, attribute names after a dot
    and keyword names left out)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.count += 1


def importing_statement(
    ctx: RuleContext, local: str
) -> tuple[cst.SimpleStatementLine, cst.ImportFrom, cst.ImportAlias] | None:
    """The top-level `from torch.cuda.amp[...] import ...` statement that binds `local`."""
    for line in ctx.facts.top_level_imports:
        if len(line.body) != 1 or not isinstance(line.body[0], cst.ImportFrom):
            continue
        node = line.body[0]
        module = dotted(node.module) if node.module is not None else None
        if node.relative or module is None or not module.startswith(_DEPRECATED_MODULE):
            continue
        if isinstance(node.names, cst.ImportStar):
            continue
        for alias in node.names:
            bound = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(bound, cst.Name) and bound.value == local:
                return line, node, alias
    return None


def references(ctx: RuleContext, local: str, at_least: int = 0) -> int:
    """How many `Name` nodes read or bind `local`; `at_least` is a lower bound the caller knows
    (its own uses). When the text holds no more words `local` than those and the import, that is
    the answer without walking the module."""
    memo = ctx.memo.setdefault("tl204.references", {})
    assert isinstance(memo, dict)
    if local not in memo:
        words = word_count(ctx.facts.parsed.text, local)
        if at_least and words - 1 <= at_least:
            memo[local] = at_least  # every reference is a Name the text shows, the import aside
        else:
            visitor = _References(local)
            ctx.facts.parsed.module.visit(visitor)
            memo[local] = visitor.count
    count = memo[local]
    assert isinstance(count, int)
    return count


def removal(ctx: RuleContext, local: str, replacement_import: str | None) -> list[Edit] | None:
    """The edits that drop `local` from its import: the alias alone, or the whole line when it
    is the statement's only name (replaced by `replacement_import` when given)."""
    found = importing_statement(ctx, local)
    if found is None:
        return None
    line, node, alias = found
    assert not isinstance(node.names, cst.ImportStar)
    remaining = [a for a in node.names if a is not alias]
    if not remaining:
        if replacement_import is not None:
            return [ctx.replace(line, replacement_import)]
        edit = delete_line(ctx, line)
        return [edit] if edit is not None else None
    last = remaining[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    names = [*remaining[:-1], last]
    code = cst.Module(body=[]).code_for_node(node.with_changes(names=names))
    edits = [ctx.replace(node, code)]
    if replacement_import is not None:
        edits.append(ctx.insert_at(ctx.positions.span(line).start, replacement_import + "\n"))
    return edits
