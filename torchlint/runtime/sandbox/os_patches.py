"""The replacements of the `os`, `builtins`/`io` file functions (see redirect.py).

Each replacement fails exactly as the real call would: the same exception class and errno, and
the paths in its message as the script gave them (`'data'`, not the absolute path the
redirection works with). The errors they raise are the script's business (`TRANSPARENT`, read by
runtime/child/blame.py), and their frames are left out of the traceback the report shows.
"""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

from torchlint.runtime.sandbox import originals as orig
from torchlint.runtime.sandbox.redirect import (
    WRITE_FLAGS,
    Redirect,
    call_on,
    copy_file,
    exists,
    is_dir,
    os_error,
    path_of_descriptor,
    renamed_error,
    under,
)

#: an OSError raised here is the system's answer to the script's call, not a fault of torchlint
TRANSPARENT = True
#: the keyword names of path arguments in the patched calls
_PATH_KEYWORDS = ("file", "path", "src", "dst")
#: the calls whose errors name both of their paths ('src' -> 'dst')
_TWO_PATHS = frozenset(("rename", "replace", "symlink", "link"))


def as_the_call_fails(
    redirect: Redirect, function: Callable[..., Any], name: str = ""
) -> Callable[..., Any]:
    """`function`, its OSErrors naming each path as the caller passed it."""
    two_paths = name in _TWO_PATHS

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except OSError as exc:
            given = [*args[:2], *(kwargs[k] for k in _PATH_KEYWORDS if k in kwargs)]
            if any(kwargs.get(k) is not None for k in ("dir_fd", "src_dir_fd", "dst_dir_fd")):
                raise
            if two_paths and len(given) == 2 and exc.errno is not None:
                exc.filename, exc.filename2 = (os.fspath(p) for p in given)
            else:
                _name_as_given(redirect, exc, given)
            raise

    return functools.update_wrapper(call, function)


def _name_as_given(redirect: Redirect, exc: OSError, given: list[Any]) -> None:
    paths = [os.fspath(p) for p in given if isinstance(p, (str, bytes, os.PathLike))]
    for attribute in ("filename", "filename2"):
        named = getattr(exc, attribute, None)
        if not isinstance(named, (str, bytes)):
            continue
        for path in paths:
            if named == path:
                break
            if os.fsdecode(named) == redirect.virtual(path):
                setattr(exc, attribute, path)
                break


class ShadowEntry:
    """A `scandir` entry for something the run created: named by the folder as the script
    gave it, answering from the shadow."""

    def __init__(self, folder: Any, entry: os.DirEntry[Any]) -> None:
        self.name = entry.name
        self.path = os.path.join(folder, entry.name)
        self._entry = entry

    def __fspath__(self) -> Any:
        return self.path

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return self._entry.is_dir(follow_symlinks=follow_symlinks)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return self._entry.is_file(follow_symlinks=follow_symlinks)

    def is_symlink(self) -> bool:
        return self._entry.is_symlink()

    def is_junction(self) -> bool:
        return False

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return self._entry.stat(follow_symlinks=follow_symlinks)

    def inode(self) -> int:
        return self._entry.inode()

    def __repr__(self) -> str:
        return f"<DirEntry {self.name!r}>"


class MergedScandir:
    """The iterator `os.scandir` returns for a folder the run changed: the user's entries that
    are still visible, then the run's own."""

    def __init__(self, redirect: Redirect, given: Any, virtual: str) -> None:
        self._items = self._collect(redirect, given, virtual)

    @staticmethod
    def _collect(redirect: Redirect, given: Any, virtual: str) -> Iterator[Any]:
        shadow = redirect.shadow(virtual)
        folder = given if given is not None else "."
        as_bytes = isinstance(os.fspath(folder), bytes)
        shadow_names: set[str] = set()
        shadow_entries: list[Any] = []
        if is_dir(shadow):
            with orig.os_scandir(os.fsencode(shadow) if as_bytes else shadow) as it:
                for entry in it:
                    shadow_names.add(os.fsdecode(entry.name))
                    shadow_entries.append(ShadowEntry(folder, entry))
        real_entries: list[Any] = []
        if not redirect.is_deleted(virtual) and is_dir(virtual):
            real_folder = redirect.real_arg(folder, virtual)
            with orig.os_scandir(real_folder) as it:
                for entry in it:
                    name = os.fsdecode(entry.name)
                    if name in shadow_names or os.path.join(virtual, name) in redirect.deleted:
                        continue
                    real_entries.append(entry)
        return iter(real_entries + shadow_entries)

    def __iter__(self) -> MergedScandir:
        return self

    def __next__(self) -> Any:
        return next(self._items)

    def __enter__(self) -> MergedScandir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._items = iter(())


def _write_mode(mode: Any) -> tuple[bool, bool, bool]:
    """(writes, keeps the content, exclusive) for an `open()` mode."""
    if not isinstance(mode, str):
        return False, False, False
    writes = any(c in mode for c in "wax+")
    keep = ("a" in mode or "+" in mode) and "w" not in mode
    return writes, keep, "x" in mode


def make_open(redirect: Redirect, original: Callable[..., Any]) -> Callable[..., Any]:
    def open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        virtual = redirect.virtual(file)
        if virtual is None:
            return original(file, mode, *args, **kwargs)
        writes, keep, exclusive = _write_mode(mode)
        if writes:
            actual = redirect.for_write(virtual, keep=keep, exclusive=exclusive)
        else:
            actual = redirect.for_read(virtual)
            if actual == virtual:
                return original(redirect.real_arg(file, virtual), mode, *args, **kwargs)
        if isinstance(os.fspath(file), bytes):
            return call_on(original, os.fsencode(actual), virtual, mode, *args, **kwargs)
        return call_on(original, actual, virtual, mode, *args, **kwargs)

    open.__doc__ = original.__doc__
    return as_the_call_fails(redirect, open)


def install_os(redirect: Redirect, patches: list[tuple[Any, str, Any]]) -> None:
    r = redirect

    def os_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        virtual = r.virtual_at(path, dir_fd)
        if virtual is None:
            return orig.os_open(path, flags, mode, dir_fd=dir_fd)
        if flags & WRITE_FLAGS:
            keep = not flags & os.O_TRUNC and bool(flags & (os.O_WRONLY | os.O_RDWR))
            exclusive = bool(flags & os.O_CREAT and flags & os.O_EXCL)
            actual = r.for_write(virtual, keep=keep, exclusive=exclusive)
        else:
            actual = r.for_read(virtual)
            if actual == virtual and dir_fd is None:
                return orig.os_open(r.real_arg(path, virtual), flags, mode)
        result: int = call_on(orig.os_open, actual, virtual, flags, mode)
        return result

    def make_stat(original: Callable[..., Any], follow: bool) -> Callable[..., Any]:
        def stat(path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = follow) -> Any:
            virtual = r.virtual_at(path, dir_fd) if not isinstance(path, int) else None
            if virtual is None:
                if original is orig.os_lstat:
                    return orig.os_lstat(path, dir_fd=dir_fd)
                return orig.os_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
            actual = r.for_read(virtual)
            if actual == virtual:
                actual = r.real_arg(path, virtual) if dir_fd is None else virtual
                return orig.os_stat(actual, follow_symlinks=follow_symlinks and follow)
            return call_on(
                orig.os_stat, actual, virtual, follow_symlinks=follow_symlinks and follow
            )

        return stat

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        dir_fd = kwargs.pop("dir_fd", None)
        virtual = r.virtual_at(path, dir_fd) if not isinstance(path, int) else None
        if virtual is None:
            return orig.os_access(path, mode, dir_fd=dir_fd, **kwargs)
        try:
            actual = r.for_read(virtual)
        except OSError:
            return False
        return orig.os_access(actual, mode, **kwargs)

    def folder(path: Any) -> tuple[Any, str | None]:
        """(what to list, None) when the run changed nothing there, else (path, virtual)."""
        given = "." if path is None else path
        virtual = r.virtual(given)
        if virtual is not None and not exists(r.shadow(virtual)) and not r.deleted:
            return r.real_arg(given, virtual), None
        return given, virtual

    def listdir(path: Any = None) -> list[Any]:
        given, virtual = folder(path)
        if virtual is None:
            return orig.os_listdir(given)
        names = r.list(virtual)
        if isinstance(os.fspath(given), bytes):
            return [os.fsencode(n) for n in names]
        return names

    def scandir(path: Any = None) -> Any:
        given, virtual = folder(path)
        if virtual is None:
            return orig.os_scandir(given)
        if not r.visible_dir(virtual):
            raise os_error(errno.ENOTDIR, virtual) if r.visible(virtual) else r.missing(virtual)
        return MergedScandir(r, path, virtual)

    def mkdir(path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        virtual = r.virtual_at(path, dir_fd)
        if virtual is None:
            return orig.os_mkdir(path, mode, dir_fd=dir_fd)
        if r.visible(virtual):
            raise os_error(errno.EEXIST, virtual)
        r.make_parent(virtual)
        call_on(orig.os_mkdir, r.shadow(virtual), virtual, mode)

    def make_remove(original: Callable[..., Any], folder: bool) -> Callable[..., Any]:
        def remove(path: Any, *, dir_fd: int | None = None) -> None:
            virtual = r.virtual_at(path, dir_fd)
            if virtual is None:
                return original(path, dir_fd=dir_fd)  # type: ignore[no-any-return]
            return r.remove(virtual, folder)

        return remove

    def make_rename(original: Callable[..., Any], replace: bool) -> Callable[..., Any]:
        def rename(
            src: Any, dst: Any, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None
        ) -> None:
            source = r.virtual_at(src, src_dir_fd)
            target = r.virtual_at(dst, dst_dir_fd)
            if source is None and target is None:
                return original(  # type: ignore[no-any-return]
                    src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd
                )
            r.rename(
                source, _absolute(src, src_dir_fd), target, _absolute(dst, dst_dir_fd), replace
            )

        return rename

    def make_metadata(original: Callable[..., Any]) -> Callable[..., Any]:
        """chmod/utime/chown-like: the user's file is copied first, the copy changed."""

        def change(path: Any, *args: Any, **kwargs: Any) -> Any:
            dir_fd = kwargs.pop("dir_fd", None)
            virtual = r.virtual_at(path, dir_fd) if not isinstance(path, int) else None
            if virtual is None:
                if dir_fd is not None:
                    kwargs["dir_fd"] = dir_fd
                return original(path, *args, **kwargs)
            kwargs.pop("follow_symlinks", None)
            if r.visible_dir(virtual):
                if not is_dir(r.shadow(virtual)):
                    r._make_shadow_dirs(virtual)
                actual = r.shadow(virtual)
            else:
                if not r.visible(virtual):
                    raise r.missing(virtual)
                actual = r.for_write(virtual, keep=True)
            return call_on(original, actual, virtual, *args, **kwargs)

        return change

    def truncate(path: Any, length: int) -> None:
        virtual = r.virtual(path) if not isinstance(path, int) else None
        if virtual is None:
            return orig.os_truncate(path, length)
        if not r.visible(virtual):
            raise r.missing(virtual)
        return call_on(orig.os_truncate, r.for_write(virtual, keep=True), virtual, length)  # type: ignore[no-any-return]

    def symlink(
        src: Any, dst: Any, target_is_directory: bool = False, *, dir_fd: int | None = None
    ) -> None:
        virtual = r.virtual_at(dst, dir_fd)
        if virtual is None:
            return orig.os_symlink(src, dst, target_is_directory, dir_fd=dir_fd)
        actual = r.for_write(virtual, exclusive=True)
        try:
            orig.os_symlink(src, actual, target_is_directory)
        except OSError as exc:
            raise renamed_error(exc, actual, virtual) from None

    def readlink(path: Any, *, dir_fd: int | None = None) -> Any:
        virtual = r.virtual_at(path, dir_fd)
        if virtual is None:
            return orig.os_readlink(path, dir_fd=dir_fd)
        actual = r.for_read(virtual)
        if actual == virtual:
            return orig.os_readlink(r.real_arg(path, virtual) if dir_fd is None else virtual)
        return call_on(orig.os_readlink, actual, virtual)

    def link(src: Any, dst: Any, **kwargs: Any) -> None:
        kwargs.pop("follow_symlinks", None)
        source = r.virtual_at(src, kwargs.pop("src_dir_fd", None))
        target = r.virtual_at(dst, kwargs.pop("dst_dir_fd", None))
        if target is None:
            return os_link_original(src, dst)
        src_actual = r.for_read(source) if source is not None else os.fsdecode(src)
        copy_file(src_actual, r.for_write(target, exclusive=True))

    def make_node(original: Callable[..., Any]) -> Callable[..., Any]:
        def node(path: Any, *args: Any, **kwargs: Any) -> Any:
            dir_fd = kwargs.pop("dir_fd", None)
            virtual = r.virtual_at(path, dir_fd)
            if virtual is None:
                if dir_fd is not None:
                    kwargs["dir_fd"] = dir_fd
                return original(path, *args, **kwargs)
            return call_on(original, r.for_write(virtual, exclusive=True), virtual, *args, **kwargs)

        return node

    def make_read(original: Callable[..., Any]) -> Callable[..., Any]:
        def read(path: Any = None, *args: Any, **kwargs: Any) -> Any:
            virtual = r.virtual(path) if path is not None and not isinstance(path, int) else None
            if virtual is None:
                return original(path, *args, **kwargs) if path is not None else original()
            return call_on(original, r.for_read(virtual), virtual, *args, **kwargs)

        return read

    def getcwd() -> str:
        cwd = orig.os_getcwd()
        if under(cwd, r.files):
            return "/" + cwd[len(r.files) :].lstrip("/")
        return cwd

    def getcwdb() -> bytes:
        return os.fsencode(getcwd())

    def chdir(path: Any) -> None:
        virtual = r.virtual(path) if not isinstance(path, int) else None
        if virtual is None:
            orig.os_chdir(path)
            r.cwd_shadowed = under(orig.os_getcwd(), r.files)
            return
        if not r.is_deleted(virtual) and is_dir(virtual):
            orig.os_chdir(virtual)
            r.cwd_shadowed = False
        elif is_dir(r.shadow(virtual)):
            orig.os_chdir(r.shadow(virtual))  # a folder the run created
            r.cwd_shadowed = True
        else:
            raise os_error(errno.ENOTDIR, virtual) if r.visible(virtual) else r.missing(virtual)

    os_link_original = os.link
    replacements: dict[str, Callable[..., Any]] = {
        "open": os_open,
        "stat": make_stat(orig.os_stat, True),
        "lstat": make_stat(orig.os_lstat, False),
        "access": access,
        "listdir": listdir,
        "scandir": scandir,
        "mkdir": mkdir,
        "remove": make_remove(os.remove, False),
        "unlink": make_remove(orig.os_unlink, False),
        "rmdir": make_remove(orig.os_rmdir, True),
        "rename": make_rename(orig.os_rename, False),
        "replace": make_rename(orig.os_replace, True),
        "chmod": make_metadata(orig.os_chmod),
        "utime": make_metadata(orig.os_utime),
        "truncate": truncate,
        "symlink": symlink,
        "readlink": readlink,
        "link": link,
        "mkfifo": make_node(os.mkfifo),
        "getcwd": getcwd,
        "getcwdb": getcwdb,
        "chdir": chdir,
    }
    for name in ("chown", "lchown", "lchmod", "chflags", "lchflags", "setxattr", "removexattr"):
        function = getattr(os, name, None)
        if function is not None:
            replacements[name] = make_metadata(function)
    for name in ("listxattr", "getxattr"):
        function = getattr(os, name, None)
        if function is not None:
            replacements[name] = make_read(function)
    if hasattr(os, "mknod"):
        replacements["mknod"] = make_node(os.mknod)
    for name, replacement in replacements.items():
        if hasattr(os, name):
            patches.append((os, name, getattr(os, name)))
            setattr(os, name, as_the_call_fails(r, replacement, name))


def _absolute(path: Any, dir_fd: int | None) -> str:
    text = os.fsdecode(os.fspath(path))
    if not text.startswith("/"):
        folder = path_of_descriptor(dir_fd) if dir_fd is not None else None
        text = os.path.join(folder or orig.os_getcwd(), text)
    return os.path.normpath(text)
