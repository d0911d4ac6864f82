"""The oldest PyTorch a project declares it needs, when `target-torch-version` is not set: the
`torch>=2.6` of the nearest `requirements*.txt`, `pyproject.toml` (`[project] dependencies`),
`setup.cfg` or `setup.py` above a file. Advice that only matters on older releases (TL503's
`weights_only`, which 2.6 made the default) is then left out, as the setting would."""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: tomli is a dependency there
    import tomli as tomllib

_FILES = ("requirements.txt", "pyproject.toml", "setup.cfg", "setup.py")
# `torch>=2.6`, `torch==2.7.1`, `torch ~= 2.6`, `"torch>=2.6,<3"`, `torch = ">=2.6"` (Poetry).
_FLOOR = re.compile(
    r"""(?im)^[\s"'\-]*torch\s*(?:\[[^\]]*\])?\s*(?:=\s*["'])?\s*(?:>=|==|~=|\^)\s*(\d+)\.(\d+)"""
)
_ANYWHERE = re.compile(r"""["']torch\s*(?:>=|==|~=)\s*(\d+)\.(\d+)""")
# One requirement string of `[project] dependencies`: `torch>=2.6.0`, `torch[opt] ~= 2.7`.
_REQUIREMENT = re.compile(r"""^\s*torch\s*(?:\[[^\]]*\])?\s*(?:>=|==|~=)\s*(\d+)\.(\d+)""", re.I)
# A folder holding one of these ends the search: it is the project's root.
_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
MAX_LEVELS = 8
MAX_BYTES = 200_000


def declared_torch_floor(folder: Path) -> tuple[int, int] | None:
    """The lowest PyTorch that the packaging files nearest `folder` require, if they say."""
    return _floor(folder.resolve())


@lru_cache(maxsize=1024)
def _floor(folder: Path) -> tuple[int, int] | None:
    current = folder
    for _ in range(MAX_LEVELS):
        for name in _FILES:
            found = _read_floor(current / name)
            if found is not None:
                return found
        if any((current / marker).exists() for marker in _ROOT_MARKERS):
            return None
        if current.parent == current:
            return None
        current = current.parent
    return None


def _read_floor(path: Path) -> tuple[int, int] | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if path.name == "pyproject.toml":
        required = _required_floor(text)
        if required is not None:
            return required
    pattern = _ANYWHERE if path.name == "setup.py" else _FLOOR
    floors = [(int(m.group(1)), int(m.group(2))) for m in pattern.finditer(text)]
    return min(floors) if floors else None


def _required_floor(text: str) -> tuple[int, int] | None:
    """The floor that `[project] dependencies` of a pyproject.toml puts on torch, written in any
    TOML layout (one line or many); None when the file does not parse or says nothing there (the
    line patterns then read the rest: Poetry, extras)."""
    try:
        document: dict[str, Any] = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return None
    project = document.get("project")
    dependencies = project.get("dependencies") if isinstance(project, dict) else None
    if not isinstance(dependencies, list):
        return None
    floors = []
    for requirement in dependencies:
        match = _REQUIREMENT.match(requirement) if isinstance(requirement, str) else None
        if match is not None:
            floors.append((int(match.group(1)), int(match.group(2))))
    return min(floors) if floors else None
