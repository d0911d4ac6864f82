"""Installing the redirection in a process (once), and taking it out again."""

from __future__ import annotations

import builtins
import io
import json
import os
import shutil
import sys
from collections.abc import Callable
from typing import Any

from torchlint.runtime.sandbox import originals as orig
from torchlint.runtime.sandbox.native import NATIVE_WRITERS, AfterImport
from torchlint.runtime.sandbox.os_patches import install_os, make_open
from torchlint.runtime.sandbox.redirect import ENVIRONMENT_VARIABLE, Redirect


class Installed:
    """The redirection in force in this process, and how to take it out again."""

    def __init__(self, redirect: Redirect) -> None:
        self.redirect = redirect
        self.patches: list[tuple[Any, str, Any]] = []
        self.finder: AfterImport | None = None
        self._shutil_fd: bool | None = None

    def uninstall(self) -> None:
        for owner, name, original in reversed(self.patches):
            setattr(owner, name, original)
        self.patches = []
        if self.finder is not None and self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        if self._shutil_fd is not None:
            shutil._use_fd_functions = self._shutil_fd  # type: ignore[attr-defined]
        global _installed
        _installed = None


_installed: Installed | None = None


def active() -> Installed | None:
    return _installed


def install(redirect: Redirect) -> Installed:
    """Redirect this process's writes (once per process)."""
    global _installed
    if _installed is not None:
        return _installed
    installed = Installed(redirect)
    patches = installed.patches
    install_os(redirect, patches)
    opened = make_open(redirect, orig.builtin_open)
    import _io

    for owner in (builtins, io, _io):  # io.open is _io.open, looked up under both names
        patches.append((owner, "open", owner.open))
        setattr(owner, "open", opened)  # noqa: B010
    # shutil.rmtree and friends with directory descriptors would bypass the path functions
    installed._shutil_fd = getattr(shutil, "_use_fd_functions", None)
    if installed._shutil_fd is not None:
        shutil._use_fd_functions = False  # type: ignore[attr-defined]
    if hasattr(shutil, "_rmtree_impl") and hasattr(shutil, "_rmtree_unsafe"):  # Python 3.13
        patches.append((shutil, "_rmtree_impl", shutil._rmtree_impl))
        shutil._rmtree_impl = shutil._rmtree_unsafe  # type: ignore[attr-defined]
    _patch_pathlib_accessor(opened, patches)
    for name, patch in NATIVE_WRITERS.items():
        module = sys.modules.get(name)
        if module is not None:
            patch(redirect, module, patches)
    installed.finder = AfterImport(redirect, patches)
    sys.meta_path.insert(0, installed.finder)
    _installed = installed
    return installed


def _patch_pathlib_accessor(
    opened: Callable[..., Any], patches: list[tuple[Any, str, Any]]
) -> None:
    """Python 3.10's pathlib bound the os functions in an accessor object when it was imported."""
    import pathlib

    accessor = getattr(pathlib, "_normal_accessor", None)
    if accessor is None:
        return
    for name in (
        "open", "stat", "lstat", "listdir", "scandir", "mkdir", "unlink", "rmdir", "rename",
        "replace", "chmod", "utime", "symlink", "readlink",
    ):  # fmt: skip
        replacement = opened if name == "open" else getattr(os, name, None)
        if replacement is not None and hasattr(accessor, name):
            patches.append((accessor, name, getattr(accessor, name)))
            setattr(accessor, name, replacement)


def configuration(scratch: str, passthrough: tuple[str, ...] = ()) -> str:
    """The value of `TORCHLINT_REDIRECT` for a run."""
    return json.dumps({"scratch": scratch, "passthrough": list(passthrough)})


def install_from_environment() -> Installed | None:
    """Install the redirection `TORCHLINT_REDIRECT` describes (no variable: nothing)."""
    text = os.environ.get(ENVIRONMENT_VARIABLE)
    if not text:
        return None
    config = json.loads(text)
    scratch = config["scratch"]
    passthrough = tuple(str(p) for p in config.get("passthrough", ()))
    return install(Redirect(str(scratch), passthrough))
