"""The oldest PyTorch a project declares it needs, when `target-torch-version` is not set: the
`torch>=2.6` of the nearest `requirements*.txt`, `pyproject.toml` (`[project] dependencies`),
`setup.cfg` or `setup.py` above a file. Advice that only matters on older releases (TL503's
`weights_only`, which 2.6 made the default) is then left out, as the setting would."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

_FILES = ("requirements.txt", "pyproject.toml", "setup.cfg", "setup.py")
# `torch>=2.6`, `torch==2.7.1`, `torch ~= 2.6`, `"torch>=2.6,<3"`, `torch = ">=2.6"` (Poetry).
_FLOOR = re.compile(
    r"""(?im)^[\s"'\-]*torch\s*(?:\[[^\]]*\])?\s*(?:=\s*["'])?\s*(?:>=|==|~=|\^)\s*(\d+)\.(\d+)"""
)
_ANYWHERE = re.compile(r"""["']torch\s*(?:>=|==|~=)\s*(\d+)\.(\d+)""")
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
    pattern = _ANYWHERE if path.name == "setup.py" else _FLOOR
    floors = [(int(m.group(1)), int(m.group(2))) for m in pattern.finditer(text)]
    return min(floors) if floors else None
