"""Source sites: which line of the user's code did something, found from the call stack.

A hook fires deep inside torch; the line a person cares about is the first frame, walking
outwards, that belongs to their code. "Their code" is any file under the project (the nearest
folder above the script with a pyproject.toml, setup.py, setup.cfg or .git, and the working
directory when the script lies below it) that is not inside an installed package; failing
that, any file that was not imported from where packages are installed or put on the path
before the script started: Python's own installation, site-packages, the folders of
PYTHONPATH and of .pth files (editable installs of other projects), torch and torchlint.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any


@dataclass(frozen=True)
class Site:
    """A line in the user's code: file, 1-based line and the enclosing function's name."""

    filename: str
    line: int
    function: str

    def to_json(self) -> dict[str, Any]:
        return {"filename": self.filename, "line": self.line, "function": self.function}


def _library_roots(project: str) -> tuple[str, ...]:
    """Where packages are installed or imported from: Python's installation and site folders,
    and every folder on `sys.path` when the script starts (PYTHONPATH, .pth files) that is not
    the project or inside it (nor above it)."""
    roots: set[str] = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.realpath(path))
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        roots.add(os.path.realpath(os.path.join(prefix, "lib")))
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        inside = (real + os.sep).startswith(project)
        above = project.startswith(real + os.sep)
        if not inside and not above:
            roots.add(real)
    import torchlint

    roots.add(os.path.realpath(os.path.dirname(torchlint.__file__)))
    return tuple(sorted(root + os.sep for root in roots))


def project_folder(script_folder: Path) -> str:
    """The user's project: the nearest folder at or above the script's with a project marker,
    widened to the working directory when the script lies below it."""
    from torchlint.project.layout import find_project_root

    root = os.path.realpath(find_project_root(script_folder))
    cwd = os.path.realpath(os.getcwd())
    script = os.path.realpath(script_folder)
    if (script + os.sep).startswith(cwd + os.sep) and (root + os.sep).startswith(cwd + os.sep):
        root = cwd
    return root + os.sep


class SiteFinder:
    """Finds the user's frame on the current stack. Results are cached per code object, so a
    hook that fires every step pays for the walk only once per calling line's code."""

    def __init__(self, project_root: Path) -> None:
        self.project = project_folder(project_root)
        self.libraries = _library_roots(self.project)
        self._verdicts: dict[str, int] = {}  # filename -> 2 project, 1 other user file, 0 library

    def _kind(self, filename: str) -> int:
        kind = self._verdicts.get(filename)
        if kind is None:
            if filename.startswith("<"):
                kind = 0
            else:
                real = os.path.realpath(filename)
                if any(real.startswith(root) for root in self.libraries):
                    kind = 0
                elif real.startswith(self.project):
                    kind = 2
                else:
                    kind = 1
            self._verdicts[filename] = kind
        return kind

    def is_user_file(self, filename: str) -> bool:
        return self._kind(filename) > 0

    def find(self, frame: FrameType | None = None) -> Site | None:
        """The innermost frame of a project file on the stack above `frame` (default: the
        caller), else the innermost frame of any non-library file, else None."""
        frame = frame if frame is not None else sys._getframe(1)
        fallback: FrameType | None = None
        while frame is not None:
            kind = self._kind(frame.f_code.co_filename)
            if kind == 2:
                return _site_of(frame)
            if kind == 1 and fallback is None:
                fallback = frame
            frame = frame.f_back
        return _site_of(fallback) if fallback is not None else None

    def find_in_traceback(self, tb: Any) -> Site | None:
        """The innermost user frame of a traceback (where the user's code raised)."""
        found: Site | None = None
        fallback: Site | None = None
        while tb is not None:
            frame = tb.tb_frame
            kind = self._kind(frame.f_code.co_filename)
            site = Site(frame.f_code.co_filename, tb.tb_lineno, frame.f_code.co_name)
            if kind == 2:
                found = site
            elif kind == 1:
                fallback = site
            tb = tb.tb_next
        return found or fallback


def _site_of(frame: FrameType) -> Site:
    return Site(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def parse_traceback_dump(text: str, project_root: Path) -> Site | None:
    """The innermost project frame of the main thread in a `faulthandler` dump (each thread's
    frames most recent first), used to say where a script was when it was stopped for running
    too long. The main thread is the one whose outermost project frame is module level."""
    project = os.path.realpath(project_root) + os.sep
    threads: list[list[Site]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.endswith("(most recent call first):"):
            threads.append([])
            continue
        if not line.startswith('File "') or not threads:
            continue
        try:
            name, rest = line[6:].split('", line ', 1)
            number_text, _, function = rest.partition(" in ")
            number = int(number_text.strip())
        except ValueError:
            continue
        if os.path.realpath(name).startswith(project):
            threads[-1].append(Site(name, number, function.strip()))
    with_frames = [frames for frames in threads if frames]
    main = next((f for f in with_frames if f[-1].function == "<module>"), None)
    chosen = main or (with_frames[0] if with_frames else None)
    return chosen[0] if chosen else None
