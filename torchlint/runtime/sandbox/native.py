"""Native readers and writers that open files by path themselves (torch.save, safetensors,
h5py, sqlite3): their path arguments are redirected, patched as their modules are imported."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from torchlint.runtime.post_import import PostImport
from torchlint.runtime.sandbox.redirect import Redirect


def _map_path(redirect: Redirect, path: Any, write: bool, keep: bool = False) -> Any:
    """The path a native reader or writer should use for `path` (unchanged when it is not a
    redirected path)."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        return path
    virtual = redirect.virtual(path)
    if virtual is None:
        return path
    actual = redirect.for_write(virtual, keep=keep) if write else redirect.for_read(virtual)
    return path if actual == virtual and not redirect.cwd_shadowed else actual


def _wrap_path_argument(
    redirect: Redirect,
    function: Callable[..., Any],
    index: int,
    keyword: str,
    write: bool,
    keep: bool = False,
) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if len(args) > index:
            args = (
                *args[:index],
                _map_path(redirect, args[index], write, keep),
                *args[index + 1 :],
            )
        elif keyword in kwargs:
            kwargs[keyword] = _map_path(redirect, kwargs[keyword], write, keep)
        return function(*args, **kwargs)

    wrapper.__name__ = getattr(function, "__name__", "wrapper")
    wrapper.__qualname__ = getattr(function, "__qualname__", wrapper.__name__)
    wrapper.__doc__ = getattr(function, "__doc__", None)
    wrapper.__wrapped__ = function  # type: ignore[attr-defined]
    return wrapper


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
