"""The project files around one file: the project modules it imports (and those they import,
a few levels down) and the project files that import it. Read from the text of each file only
(`exports`), never by running or collecting it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from torchlint.project.exports import resolve_relative
from torchlint.project.project import Project

# How far imports are followed, and how many files at most: a neighbourhood, not the project.
MAX_DEPTH = 3
MAX_FILES = 64


def module_path(project: Project[Any], qualified: str, search: tuple[Path, ...]) -> Path | None:
    """The project file of `qualified`: the module itself (`pkg.core`), or the module that
    defines the name (`pkg.utils.setup` -> `pkg/utils.py`)."""
    parts = qualified.split(".")
    for cut in range(len(parts), 0, -1):
        path = project.layout.find_module(".".join(parts[:cut]), search)
        if path is not None:
            return path
    return None


def imported_files(project: Project[Any], path: Path) -> Iterator[Path] | None:
    """The project files that `path` imports anywhere in it (functions included), directly or
    through the files it imports (up to MAX_DEPTH levels); None when the neighbourhood cannot
    be read whole (a file that does not parse, a project import that names no file, more than
    MAX_FILES files)."""
    seen = {path}
    found: list[Path] = []
    frontier = [path]
    for _ in range(MAX_DEPTH):
        following: list[Path] = []
        for current in frontier:
            targets = _imports(project, current)
            if targets is None:
                return None
            search = project.layout.search_path(current)
            names = project.top_level_names(search)
            for target in targets:
                if target.split(".", 1)[0] not in names:
                    continue
                imported = module_path(project, target, search)
                if imported is None:
                    return None
                if imported in seen:
                    continue
                seen.add(imported)
                found.append(imported)
                following.append(imported)
                if len(found) > MAX_FILES:
                    return None
        frontier = following
    return iter(found)


def _imports(project: Project[Any], path: Path) -> list[str] | None:
    """What every import statement of the file names, absolute (`pkg.mod`, `pkg.mod.name`);
    None when the file cannot be read or does not parse."""
    source = project.source(path)
    if source is None:
        return None
    try:
        tree = ast.parse(source[0])
    except (SyntaxError, ValueError):
        return None
    package = project.layout.package_of(path)
    targets: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(package, node.level, node.module) if node.level else node.module
            if base is None:
                return None
            for alias in node.names:  # `from pkg.mod import *` imports `pkg.mod`
                targets.append(base if alias.name == "*" else f"{base}.{alias.name}")
    return targets


def importing_files(project: Project[Any], path: Path) -> list[Path]:
    """The project files that import `path`'s module or a name from it (and those that may:
    a file that mentions the module's name and cannot be read whole counts)."""
    module = project.layout.module_name(path)
    if module is None:
        return []
    needle = module.rsplit(".", 1)[-1].encode()
    found: list[Path] = []
    for other in project.python_files():
        if other == path:
            continue
        source = project.source(other)
        if source is None or needle not in source[0]:
            continue
        targets = _imports(project, other)
        search = project.layout.search_path(other)
        names = project.top_level_names(search)
        if targets is None or any(
            t.split(".", 1)[0] in names and module_path(project, t, search) == path for t in targets
        ):
            found.append(other)
    return found
