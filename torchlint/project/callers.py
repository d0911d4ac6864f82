"""Who calls a project function from the other files of the project, and whether gradients are
off there: `evaluate()` in engine.py needs no `torch.no_grad()` of its own when every caller
wraps the call in one.

Read with CPython's `ast`, only in files whose bytes mention the function's name, and only when
a rule is about to report something that such callers would excuse."""

from __future__ import annotations

import ast
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torchlint.project.project import Project

NO_GRAD = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"}
# Folders never searched for callers.
SKIPPED_FOLDERS = {
    "node_modules",
    "__pycache__",
    "site-packages",
    "build",
    "dist",
    "venv",
    "env",
}
MAX_FILES = 5000


@dataclass(frozen=True)
class CallerSite:
    path: Path
    row: int
    without_grad: bool  # inside `with torch.no_grad():` or a function decorated with it


@dataclass(frozen=True)
class CallRecord:
    qualified: str  # through the file's imports
    row: int
    without_grad: bool


def python_files(root: Path) -> Iterator[Path]:
    count = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        for name in sorted(files):
            if name.endswith(".py"):
                count += 1
                if count > MAX_FILES:
                    return
                yield Path(folder) / name


def read_calls(text: str, aliases: dict[str, str], defined: frozenset[str]) -> list[CallRecord]:
    """Every call in `text` of an imported name (`evaluate(...)`, `engine.evaluate(...)`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    finder = _CallFinder(aliases, defined)
    try:
        finder.visit(tree)
    except RecursionError:
        return []
    return finder.calls


class _CallFinder(ast.NodeVisitor):
    def __init__(self, aliases: dict[str, str], defined: frozenset[str]) -> None:
        self.aliases = aliases
        self.defined = defined
        self.calls: list[CallRecord] = []
        self.no_grad = 0

    def qualify(self, node: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.defined:
            return None
        target = self.aliases.get(node.id)
        if target is None:
            return None
        return ".".join([target, *reversed(parts)])

    def disables_grad(self, expr: ast.expr) -> bool:
        func = expr.func if isinstance(expr, ast.Call) else expr
        return self.qualify(func) in NO_GRAD

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        off = any(self.disables_grad(d) for d in node.decorator_list)
        self.no_grad += off
        self.generic_visit(node)
        self.no_grad -= off

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        off = any(self.disables_grad(item.context_expr) for item in node.items)
        for item in node.items:
            self.visit(item)
        self.no_grad += off
        for stmt in node.body:
            self.visit(stmt)
        self.no_grad -= off

    visit_AsyncWith = visit_With

    def visit_Call(self, node: ast.Call) -> None:
        qualified = self.qualify(node.func)
        if qualified is not None:
            self.calls.append(CallRecord(qualified, node.lineno, self.no_grad > 0))
        self.generic_visit(node)


def callers_elsewhere(project: Project[Any], path: Path, name: str) -> list[CallerSite]:
    """The calls of function `name` of project file `path` made from the project's other
    files (re-exports followed)."""
    needle = name.encode()
    found: list[CallerSite] = []
    for other in project.python_files():
        if other == path:
            continue
        source = project.source(other)
        if source is None or needle not in source[0]:
            continue
        search = project.layout.search_path(other)
        for call in project.calls(other):
            if call.qualified.rsplit(".", 1)[-1] != name:
                continue
            symbol = project.symbol(call.qualified, search)
            if symbol is not None and symbol.path == path and symbol.name == name:
                found.append(CallerSite(other, call.row, call.without_grad))
    return found
