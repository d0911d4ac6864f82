"""What a project module defines and imports, read with CPython's `ast` (a fraction of a libcst
parse): enough to know, while another file is collected, that `Trainer` is a project class with
a `fit` method, or that `pkg.evaluate` is re-exported from `pkg.engine`."""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ClassExport:
    name: str
    methods: frozenset[str]
    bases: tuple[str, ...]  # qualified through the module's imports where they are imports


@dataclass(frozen=True)
class ModuleExports:
    module: str
    functions: frozenset[str] = frozenset()
    classes: dict[str, ClassExport] = field(default_factory=dict)
    # Names bound by imports, to what they stand for (relative imports made absolute).
    aliases: dict[str, str] = field(default_factory=dict)


def resolve_relative(package: str | None, level: int, module: str | None) -> str | None:
    """`from ..data import x` in package `pkg.sub` names `pkg.data`; None when it climbs out."""
    if package is None:
        return None
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    if module:
        base.append(module)
    return ".".join(base) or None


def read_exports(text: str, module: str, package: str | None) -> ModuleExports:
    """The exports of `text`; an empty table when it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ModuleExports(module)
    aliases: dict[str, str] = {}
    functions: set[str] = set()
    classes: dict[str, ClassExport] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    head = alias.name.split(".", 1)[0]
                    aliases[head] = head
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(package, node.level, node.module) if node.level else node.module
            if base is None:
                continue
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.add(node.name)
            aliases.pop(node.name, None)
        elif isinstance(node, ast.ClassDef):
            methods = frozenset(
                s.name for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            )
            bases = tuple(_base_name(b, aliases) for b in node.bases)
            classes[node.name] = ClassExport(node.name, methods, tuple(b for b in bases if b))
            aliases.pop(node.name, None)
    return ModuleExports(module, frozenset(functions), classes, aliases)


def _base_name(node: ast.expr, aliases: dict[str, str]) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    text = ".".join(reversed(parts))
    head, _, rest = text.partition(".")
    if head in aliases:
        return f"{aliases[head]}.{rest}" if rest else aliases[head]
    return text
