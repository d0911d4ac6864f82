"""Native readers and writers that open files by path themselves (torch.save, safetensors,
h5py, sqlite3): their path arguments are redirected, patched as their modules are imported."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from torchlint.runtime.post_import import PostImport
from torchlint.runtime.sandbox.redirect import Redirect

#: an error raised here is the library's answer to the script's call (runtime/child/blame.py)
TRANSPARENT = True


def _map_path(redirect: Redirect, path: Any, write: bool, keep: bool = False) -> Any:
    """The path a native reader or writer should use for `path` (unchanged when it is not a
    redirected path)."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        return path
    virtual = redirect.virtual(path)
    if virtual is None:
        return path
    if not write:
        actual = redirect.for_read(virtual)
    else:
        try:
            actual = redirect.for_write(virtual, keep=keep)
        except OSError:
            # its folder is not in the run's view: the library must fail on its own terms
            # (torch.save's "Parent directory ... does not exist"), on a path in the scratch
            # folder, so that nothing outside it can be written
            return redirect.shadow(virtual)
    return path if actual == virtual and not redirect.cwd_shadowed else actual


def _in_callers_terms(exc: BaseException, given: Any, used: Any) -> None:
    """Name the path in a native library's error as the caller gave it, not as it was mapped."""
    if given is used or not isinstance(used, (str, bytes)):
        return
    given_text, used_text = os.fsdecode(os.fspath(given)), os.fsdecode(used)
    pairs = [(used_text, given_text)]
    given_folder, used_folder = os.path.dirname(given_text), os.path.dirname(used_text)
    if given_folder:
        pairs.append((used_folder, given_folder))
    args = []
    for arg in exc.args:
        if isinstance(arg, str):
            for mapped, as_given in pairs:
                arg = arg.replace(mapped, as_given)
        args.append(arg)
    exc.args = tuple(args)
    if not isinstance(exc, OSError):
        return
    if isinstance(exc.filename, (str, bytes)) and os.fsdecode(exc.filename) == used_text:
        exc.filename = os.fspath(given)


def _wrap_path_argument(
    redirect: Redirect,
    function: Callable[..., Any],
    index: int,
    keyword: str,
    write: bool,
    keep: bool = False,
) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = used = None
        if len(args) > index:
            given = args[index]
            used = _map_path(redirect, given, write, keep)
            args = (*args[:index], used, *args[index + 1 :])
        elif keyword in kwargs:
            given = kwargs[keyword]
            used = kwargs[keyword] = _map_path(redirect, given, write, keep)
        try:
            return function(*args, **kwargs)
        except Exception as exc:
            _in_callers_terms(exc, given, used)
            raise

    return functools.update_wrapper(wrapper, function)


def _patch_torch(redirect: Redirect, module: Any, patches: list[tuple[Any, str, Any]]) -> None:
    """`torch.save` / `torch.jit.save` open a path in C++; `torch.load(mmap=True)` maps it."""
    for owner, name, index, keyword, write in (
        (module, "save", 1, "f", True),
        (module, "load", 0, "f", False),
    ):
        original = getattr(owner, name, None)
        if original is not None and not hasattr(original, "__torchlint_redirect__"):
            wrapper = _wrap_path_argument(redirect, original, index, keyword, write)
            wrapper.__torchlint_redirect__ = True  # type: ignore[attr-defined]
            patches.append((owner, name, original))
            setattr(owner, name, wrapper)


def _patch_torch_jit(redirect: Redirect, module: Any, patches: list[tuple[Any, str, Any]]) -> None:
    for name, index, keyword, write in (("save", 1, "f", True), ("load", 0, "f", False)):
        original = getattr(module, name, None)
        if original is not None:
            patches.append((module, name, original))
            setattr(module, name, _wrap_path_argument(redirect, original, index, keyword, write))


def _patch_safetensors(
    redirect: Redirect, module: Any, patches: list[tuple[Any, str, Any]]
) -> None:
    """safetensors reads and writes files in Rust, by path."""
    for name, index, keyword, write in (
        ("save_file", 1, "filename", True),
        ("load_file", 0, "filename", False),
        ("safe_open", 0, "filename", False),
    ):
        original = getattr(module, name, None)
        if original is not None:
            patches.append((module, name, original))
            setattr(module, name, _wrap_path_argument(redirect, original, index, keyword, write))


def _patch_h5py(redirect: Redirect, module: Any, patches: list[tuple[Any, str, Any]]) -> None:
    """h5py.File opens its file in the HDF5 C library."""
    file_class = getattr(module, "File", None)
    if file_class is None:
        return
    original = file_class.__init__

    def init(self: Any, name: Any, mode: str = "r", *args: Any, **kwargs: Any) -> None:
        mode = kwargs.pop("mode", mode) or "r"
        writes = mode != "r"
        name = _map_path(redirect, name, writes, keep=mode in ("r+", "a"))
        original(self, name, mode, *args, **kwargs)

    patches.append((file_class, "__init__", original))
    file_class.__init__ = init


def _patch_sqlite3(redirect: Redirect, module: Any, patches: list[tuple[Any, str, Any]]) -> None:
    """sqlite3 changes its database file (and writes journals beside it) in C."""
    original = module.connect

    def connect(database: Any, *args: Any, **kwargs: Any) -> Any:
        uri = kwargs.get("uri", False)
        text = os.fsdecode(database) if isinstance(database, (str, bytes, os.PathLike)) else None
        if text is not None and text != ":memory:" and text and not uri:
            database = _map_path(redirect, database, True, keep=True)
        return original(database, *args, **kwargs)

    patches.append((module, "connect", original))
    module.connect = connect


#: module name -> the patch applied once it is imported
NATIVE_WRITERS: dict[str, Callable[[Redirect, Any, list[tuple[Any, str, Any]]], None]] = {
    "torch": _patch_torch,
    "torch.jit": _patch_torch_jit,
    "safetensors": _patch_safetensors,
    "safetensors.torch": _patch_safetensors,
    "safetensors.numpy": _patch_safetensors,
    "h5py": _patch_h5py,
    "sqlite3": _patch_sqlite3,
    "sqlite3.dbapi2": _patch_sqlite3,
}


class AfterImport(PostImport):
    """Patches the native writers as their modules are imported."""

    def __init__(self, redirect: Redirect, patches: list[tuple[Any, str, Any]]) -> None:
        def patch(name: str, module: Any) -> None:
            NATIVE_WRITERS[name](redirect, module, patches)

        super().__init__(NATIVE_WRITERS, patch, "redirect the file writes of")
        self.redirect = redirect
        self.patches = patches
