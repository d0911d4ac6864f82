"""Which files `torchlint check PATH ...` looks at, and reading them safely.

Folders are walked (following symbolic links, with loop detection) for `.py` and `.pyi` files
and Jupyter notebooks (`.ipynb`),
skipping hidden folders, the built-in exclusions and the configuration's `exclude` patterns.
A file named on the command line is always checked, whatever its name, unless
`--force-exclude` is given and an exclusion matches it. Problems (a missing path, a symbolic
link loop, a folder that cannot be listed) are collected as messages, never raised.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")


class ExclusionPolicy(Protocol):
    def is_excluded(self, path: Path, is_dir: bool, *, ancestors: bool) -> bool: ...


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)  # absolute, sorted, without duplicates
    errors: list[str] = field(default_factory=list)


def display_path(path: Path | str, cwd: Path | None = None) -> str:
    """`path` relative to the current directory when it lies below it, else absolute."""
    absolute = os.path.abspath(path)
    base = os.path.abspath(cwd if cwd is not None else os.getcwd())
    try:
        relative = os.path.relpath(absolute, base)
    except ValueError:  # another drive on Windows
        return absolute
    if relative == os.curdir:
        return relative
    if relative.startswith(os.pardir + os.sep) or relative == os.pardir:
        return absolute
    return relative


def is_python_file(name: str) -> bool:
    return name.endswith(PYTHON_SUFFIXES)


def discover(
    paths: Iterable[Path | str],
    policy: ExclusionPolicy,
    *,
    force_exclude: bool = False,
    cwd: Path | None = None,
) -> Discovery:
    """The files to check under `paths` (files and folders), sorted by path."""
    result = Discovery()
    found: set[Path] = set()
    for raw in paths:
        path = Path(os.path.abspath(raw))
        shown = display_path(path, cwd)
        if not os.path.lexists(path):
            result.errors.append(f"{shown}: no such file or directory")
            continue
        try:
            is_dir = path.is_dir()
        except OSError as exc:
            result.errors.append(f"{shown}: {_reason(exc)}")
            continue
        if force_exclude and policy.is_excluded(path, is_dir, ancestors=True):
            continue
        if is_dir:
            _walk(path, policy, found, result.errors, cwd)
        elif path.is_symlink() and not path.exists():
            # A dangling link or a link loop: report it now, it cannot be read either way.
            try:
                os.stat(path)
            except OSError as exc:
                result.errors.append(f"{shown}: {_reason(exc)}")
        else:
            found.add(path)
    result.files = sorted(found, key=lambda p: p.parts)
    return result


def _walk(
    root: Path, policy: ExclusionPolicy, found: set[Path], errors: list[str], cwd: Path | None
) -> None:
    try:
        info = os.stat(root)
    except OSError as exc:
        errors.append(f"{display_path(root, cwd)}: {_reason(exc)}")
        return
    # Each entry on the stack carries the (device, inode) of the folders above it, so a link
    # back to one of them is caught (a link to a folder seen elsewhere is not a loop).
    stack: list[tuple[Path, frozenset[tuple[int, int]]]] = [
        (root, frozenset({(info.st_dev, info.st_ino)}))
    ]
    while stack:
        folder, above = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            errors.append(f"{display_path(folder, cwd)}: cannot list the folder: {_reason(exc)}")
            continue
        subfolders: list[tuple[Path, frozenset[tuple[int, int]]]] = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()  # follows links
            except OSError:
                is_dir = False
            if is_dir:
                if policy.is_excluded(path, True, ancestors=False):
                    continue
                try:
                    target = os.stat(path)
                except OSError as exc:
                    errors.append(f"{display_path(path, cwd)}: {_reason(exc)}")
                    continue
                key = (target.st_dev, target.st_ino)
                if key in above:
                    errors.append(
                        f"{display_path(path, cwd)}: symbolic link loop (it leads back to "
                        f"{display_path(os.path.realpath(path), cwd)}); not followed"
                    )
                    continue
                subfolders.append((path, above | {key}))
                continue
            if not is_python_file(entry.name):
                if entry.is_symlink() and _is_link_loop(path):
                    errors.append(f"{display_path(path, cwd)}: symbolic link loop; not followed")
                continue
            if policy.is_excluded(path, False, ancestors=False):
                continue
            found.add(path)
        stack.extend(reversed(subfolders))


def _is_link_loop(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symbolic link loop (too many levels of symbolic links)"
    return exc.strerror.lower() if exc.strerror else str(exc)


class ReadError(Exception):
    """A file that cannot be read (the message is ready to show)."""


def read_file(path: Path) -> bytes:
    """The bytes of a regular file. Never blocks on a FIFO or a device: anything that is not a
    regular file is refused. Raises `ReadError`."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ReadError(f"cannot read the file: {_reason(exc)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReadError("not a regular file; skipped")
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise ReadError(f"cannot read the file: {_reason(exc)}") from None
    finally:
        os.close(fd)
