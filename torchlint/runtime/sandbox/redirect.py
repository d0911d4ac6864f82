"""Copy-on-write redirection of a run's file writes, inside each Python process of the run.

`install()` replaces the file functions of `os`, `builtins`/`io` and `shutil` (and, as those
modules are imported, the native writers of torch, safetensors, h5py and sqlite3) with versions
that keep the user's files as they were:

* a write of any kind (`open(path, "w"/"a"/"x"/"+")`, `os.open` with write flags, `os.rename`,
  `os.replace`, `os.remove`, `os.mkdir`, `os.chmod`, `os.utime`, `os.truncate`, `os.symlink`,
  ...) goes to the path's *shadow*, `<scratch>/files/<absolute path>`; a file that is appended
  to or opened for update is copied there first (copy-on-write);
* a deletion (or a rename away) of a user's file is recorded in `<scratch>/deleted.jsonl` and
  the file disappears from the run's view, while staying on disk;
* reads (`open`, `os.stat`, `os.listdir`, `os.scandir`, ...) see the shadow where there is one,
  so a script that saves a checkpoint and loads it again gets what it saved, and a folder lists
  its real entries merged with what the run created there.

Paths inside the scratch folder, `/dev`, `/proc` and `/sys`, and the folders an overlay mount
already protects (`passthrough`) are left alone. A path under `<scratch>/files` (a file object's
`.name`, a working directory inside a created folder) is read back as the path it stands for.

The configuration travels in `TORCHLINT_REDIRECT` (JSON: scratch folder and passthrough folders),
so the Python processes the script starts (DataLoader workers, `subprocess` calls of Python
scripts) install the same redirection from `boot/sitecustomize.py`. What this cannot see: native
code that opens files by itself (other than the writers patched here), and processes that are
not Python or run Python with `-I`/`-E`/`-S`; docs/runtime.md lists them.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat as stat_module
import threading
from collections.abc import Callable
from typing import Any

from torchlint.runtime.sandbox import originals as orig

#: the environment variable that carries the configuration to every Python process of the run
ENVIRONMENT_VARIABLE = "TORCHLINT_REDIRECT"
#: frames of this module are not the cause of an error that passes through it (see blame.py)
TRANSPARENT = True

#: folders that are never redirected (devices and kernel interfaces)
SYSTEM = ("/dev", "/proc", "/sys")
#: write flags of os.open
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
COPY_CHUNK = 1 << 20


def os_error(code: int, path: str) -> OSError:
    """The OSError the kernel would give for `path` (with its subclass: FileNotFoundError,...)."""
    return OSError(code, os.strerror(code), path)


def exists(path: str) -> bool:
    try:
        orig.os_lstat(path)
    except (OSError, ValueError):
        return False
    return True


def is_dir(path: str) -> bool:
    try:
        return stat_module.S_ISDIR(orig.os_stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_link(path: str) -> bool:
    try:
        return stat_module.S_ISLNK(orig.os_lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def copy_file(source: str, target: str) -> None:
    with orig.builtin_open(source, "rb") as src, orig.builtin_open(target, "wb") as dst:
        while chunk := src.read(COPY_CHUNK):
            dst.write(chunk)
    with contextlib.suppress(OSError):
        orig.os_chmod(target, stat_module.S_IMODE(orig.os_stat(source).st_mode))


def copy_real_tree(source: str, target: str) -> None:
    """Copy a folder that is not redirected (inside the scratch folder), with the originals."""
    orig.os_mkdir(target)
    for name in orig.os_listdir(source):
        src, dst = os.path.join(source, name), os.path.join(target, name)
        if is_link(src):
            orig.os_symlink(orig.os_readlink(src), dst)
        elif is_dir(src):
            copy_real_tree(src, dst)
        else:
            copy_file(src, dst)


def remove_real_tree(folder: str) -> None:
    for name in orig.os_listdir(folder):
        path = os.path.join(folder, name)
        if is_dir(path) and not is_link(path):
            remove_real_tree(path)
        else:
            orig.os_unlink(path)
    orig.os_rmdir(folder)


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class Redirect:
    """The redirection of one run: where shadows live, what was deleted, and the decisions."""

    def __init__(self, scratch: str, passthrough: tuple[str, ...] = ()) -> None:
        self.scratch = os.path.abspath(scratch)
        self.files = os.path.join(self.scratch, "files")
        self.journal = os.path.join(self.scratch, "deleted.jsonl")
        self.passthrough = tuple(os.path.abspath(p) for p in passthrough)
        self.deleted: set[str] = set()
        self.cwd_shadowed = False
        self._lock = threading.Lock()
        # prefix tests for virtual(): one str.startswith(tuple) call each
        self._files_prefix = self.files + "/"
        alone = (self.scratch, *SYSTEM, *self.passthrough)
        self._alone_exact = frozenset(alone)
        self._alone_prefixes = tuple(p.rstrip("/") + "/" for p in alone)
        self._deleted_prefixes: tuple[str, ...] = ()
        self._load_journal()

    # ----------------------------------------------------------------------------------------
    # paths

    def virtual(self, path: Any) -> str | None:
        """The absolute path `path` stands for, or None when it is not redirected (a file
        descriptor, something that is not a path, or a path that is left alone)."""
        if isinstance(path, str):
            text = path
        elif path is None or isinstance(path, int):
            return None
        else:
            try:
                raw = os.fspath(path)
                text = os.fsdecode(raw) if isinstance(raw, bytes) else raw
            except (TypeError, UnicodeError):
                return None
            if not isinstance(text, str):
                return None
        if not text or "\0" in text:
            return None
        if text[0] != "/":
            text = orig.os_getcwd() + "/" + text
        if "//" in text or "/." in text or text.endswith("/"):
            text = os.path.normpath(text)
            if text.startswith("//"):
                text = "/" + text.lstrip("/")
        if text.startswith(self._files_prefix) or text == self.files:
            text = "/" + text[len(self._files_prefix) :]
        elif text in self._alone_exact or text.startswith(self._alone_prefixes):
            return None
        return text

    def virtual_at(self, path: Any, dir_fd: int | None) -> str | None:
        """`virtual()` for the `dir_fd=` form of the os functions."""
        if dir_fd is None:
            return self.virtual(path)
        try:
            text = os.fsdecode(os.fspath(path))
        except (TypeError, UnicodeError):
            return None
        if text.startswith("/"):
            return self.virtual(text)
        folder = path_of_descriptor(dir_fd)
        if folder is None:
            raise PermissionError(
                errno.EPERM,
                "torchlint's run isolation cannot tell which folder this file descriptor is "
                "(a relative path with dir_fd=), so the operation was refused",
                text,
            )
        return self.virtual(os.path.join(folder, text))

    def shadow(self, virtual: str) -> str:
        return self.files + virtual

    def is_deleted(self, virtual: str) -> bool:
        """`virtual`, or a folder above it, is one of the user's that the run deleted."""
        if not self.deleted:
            return False
        return virtual in self.deleted or virtual.startswith(self._deleted_prefixes)

    def real_visible(self, virtual: str) -> bool:
        """The user's own file or folder at `virtual` is part of the run's view."""
        return not self.is_deleted(virtual) and exists(virtual)

    def visible(self, virtual: str) -> bool:
        return exists(self.shadow(virtual)) or self.real_visible(virtual)

    def visible_dir(self, virtual: str) -> bool:
        return is_dir(self.shadow(virtual)) or (not self.is_deleted(virtual) and is_dir(virtual))

    # ----------------------------------------------------------------------------------------
    # decisions

    def for_read(self, virtual: str) -> str:
        """The path to read for `virtual`: its shadow when the run wrote it, else the user's."""
        shadow = self.shadow(virtual)
        if exists(shadow):
            return shadow
        if self.is_deleted(virtual):
            raise self.missing(virtual)
        return virtual

    def missing(self, virtual: str) -> OSError:
        """The error for a path that is not in the run's view: NotADirectoryError when one of
        its folders is a file there, else FileNotFoundError."""
        path = os.path.dirname(virtual)
        while path != os.path.dirname(path):
            if self.visible(path):
                code = errno.ENOENT if self.visible_dir(path) else errno.ENOTDIR
                return os_error(code, virtual)
            path = os.path.dirname(path)
        return os_error(errno.ENOENT, virtual)

    def for_write(self, virtual: str, keep: bool = False, exclusive: bool = False) -> str:
        """The path to write for `virtual` (its shadow, with its folder made); `keep`: the
        user's content is copied there first (append, update); `exclusive`: fail as `O_EXCL`
        would when the file exists in the run's view."""
        shadow = self.shadow(virtual)
        if exists(shadow):
            if exclusive:
                raise os_error(errno.EEXIST, virtual)
            return shadow
        real = self.real_visible(virtual)
        if real:
            if exclusive:
                raise os_error(errno.EEXIST, virtual)
            if is_dir(virtual):
                raise os_error(errno.EISDIR, virtual)
        self.make_parent(virtual)
        if keep and real:
            self._copy_up(virtual, shadow)
        return shadow

    def make_parent(self, virtual: str) -> None:
        """Make the shadow of `virtual`'s folder, which must exist in the run's view."""
        parent = os.path.dirname(virtual)
        if parent == virtual:
            return
        shadow_parent = self.shadow(parent)
        if is_dir(shadow_parent):
            return
        if not self.is_deleted(parent) and is_dir(parent):
            self._make_shadow_dirs(parent)
            return
        raise self.missing(virtual)

    def _make_shadow_dirs(self, virtual: str) -> None:
        missing: list[str] = []
        path = virtual
        while not is_dir(self.shadow(path)):
            missing.append(path)
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
        for folder in reversed(missing):
            with contextlib.suppress(FileExistsError):
                orig.os_mkdir(self.shadow(folder))

    def _copy_up(self, virtual: str, shadow: str) -> None:
        copy_file(virtual, shadow)

    def copy_tree(self, source: str, target: str) -> None:
        """Copy the run's view of the folder `source` (virtual) to the real folder `target`."""
        orig.os_mkdir(target)
        for name in self.list(source):
            child = os.path.join(source, name)
            actual = self.for_read(child)
            if is_dir(actual) and not is_link(actual):
                self.copy_tree(child, os.path.join(target, name))
            else:
                copy_file(actual, os.path.join(target, name))

    def mark_deleted(self, virtual: str) -> None:
        """The user's `virtual` is gone from the run's view (it stays on disk)."""
        with self._lock:
            if virtual in self.deleted:
                return
            self._add_deleted(virtual)
            line = json.dumps(virtual) + "\n"
            fd = orig.os_open(self.journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, line.encode("utf-8", "surrogateescape"))
            finally:
                os.close(fd)

    def _load_journal(self) -> None:
        try:
            with orig.builtin_open(self.journal, encoding="utf-8", errors="surrogateescape") as f:
                for line in f:
                    try:
                        path = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(path, str):
                        self._add_deleted(path)
        except OSError:
            pass

    def _add_deleted(self, virtual: str) -> None:
        self.deleted.add(virtual)
        self._deleted_prefixes = (*self._deleted_prefixes, virtual.rstrip("/") + "/")

    def list(self, virtual: str) -> list[str]:
        """The names in the run's view of the folder `virtual`."""
        shadow = self.shadow(virtual)
        shadow_dir = is_dir(shadow)
        real_dir = not self.is_deleted(virtual) and is_dir(virtual)
        if not shadow_dir and not real_dir:
            raise (
                os_error(errno.ENOTDIR, virtual) if self.visible(virtual) else self.missing(virtual)
            )
        names: list[str] = []
        if real_dir:
            names = [
                n for n in orig.os_listdir(virtual) if os.path.join(virtual, n) not in self.deleted
            ]
        if shadow_dir:
            known = set(names)
            names += [n for n in orig.os_listdir(shadow) if n not in known]
        return names

    def remove(self, virtual: str, folder: bool) -> None:
        """`os.unlink` (`folder=False`) or `os.rmdir` (`folder=True`) in the run's view."""
        shadow = self.shadow(virtual)
        in_shadow = exists(shadow)
        real = self.real_visible(virtual)
        if not in_shadow and not real:
            raise self.missing(virtual)
        here = shadow if in_shadow else virtual
        is_folder = is_dir(here) and not is_link(here)
        if folder and not is_folder:
            raise os_error(errno.ENOTDIR, virtual)
        if not folder and is_folder:
            raise os_error(errno.EISDIR, virtual)
        if folder and self.list(virtual):
            raise os_error(errno.ENOTEMPTY, virtual)
        if in_shadow:
            (orig.os_rmdir if folder else orig.os_unlink)(shadow)
        if real:
            self.mark_deleted(virtual)

    def rename(
        self, source: str | None, src_path: str, target: str | None, dst_path: str, replace: bool
    ) -> None:
        """`os.rename`/`os.replace` where at least one side is redirected. `source`/`target`
        are the virtual paths (None: a path that is not redirected, `src_path`/`dst_path`)."""
        # in the kernel's order: both folders, then the file itself
        for side in (source, target):
            if side is not None and not self.visible_dir(os.path.dirname(side)):
                raise self.missing(side)
        if source is not None:
            src_actual = self.for_read(source)
            if not exists(src_actual):
                raise self.missing(source)
        elif exists(src_path):
            src_actual = src_path
        else:
            raise os_error(errno.ENOENT, src_path)
        if source is not None and source == target:
            return  # renaming a file onto itself changes nothing
        moving_dir = is_dir(src_actual) and not is_link(src_actual)
        if source is not None and target is not None:
            if moving_dir and under(target, source):
                raise os_error(errno.EINVAL, source)  # a folder into itself
            if under(source, target):
                raise os_error(errno.ENOTEMPTY, target)  # onto a folder that holds it
        if target is not None:
            if self.visible(target):
                if self.visible_dir(target):
                    if not moving_dir:
                        raise os_error(errno.EISDIR, target)
                    if self.list(target):
                        raise os_error(errno.ENOTEMPTY, target)
                    self.remove(target, folder=True)
                elif moving_dir:
                    raise os_error(errno.ENOTDIR, target)
            dst_actual = self.for_write(target)
        else:
            dst_actual = dst_path
        # the user's file, or a folder that holds some of the user's files, stays where it is:
        # the run's view of it is copied to the new name
        if source is not None and (
            src_actual == source or (moving_dir and self.real_visible(source))
        ):
            if moving_dir:
                self.copy_tree(source, dst_actual)
                if src_actual != source:
                    remove_real_tree(src_actual)  # the run's own part of the merged folder
            else:
                copy_file(src_actual, dst_actual)
            self.mark_deleted(source)
            return
        try:
            (orig.os_replace if replace else orig.os_rename)(src_actual, dst_actual)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise renamed_error(exc, src_actual, source or src_path) from None
            if moving_dir:
                copy_real_tree(src_actual, dst_actual)
                remove_real_tree(src_actual)
            else:
                copy_file(src_actual, dst_actual)
                orig.os_unlink(src_actual)
        if source is not None and self.real_visible(source):
            self.mark_deleted(source)  # the run's version moved away: the user's is gone too

    def real_arg(self, given: Any, virtual: str) -> Any:
        """What to pass to the original function for the user's own path: the argument as
        given (so names and error messages are unchanged), unless relative paths would be
        resolved against a shadow folder."""
        return virtual if self.cwd_shadowed else given


def path_of_descriptor(fd: int) -> str | None:
    try:
        return orig.os_readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
    try:  # macOS
        import fcntl

        raw = fcntl.fcntl(fd, 50, b"\0" * 1024)  # F_GETPATH
        return os.fsdecode(raw.split(b"\0", 1)[0]) or None
    except (OSError, ImportError, AttributeError):
        return None


def renamed_error(exc: OSError, actual: Any, virtual: str) -> OSError:
    """An error about a shadow path, named by the path the script used."""
    if isinstance(exc.filename, str) and exc.filename == actual:
        exc.filename = virtual
    elif isinstance(exc.filename, bytes) and exc.filename == os.fsencode(actual):
        exc.filename = os.fsencode(virtual)
    return exc


def call_on(
    function: Callable[..., Any], actual: Any, virtual: str, *args: Any, **kwargs: Any
) -> Any:
    try:
        return function(actual, *args, **kwargs)
    except OSError as exc:
        raise renamed_error(exc, actual, virtual) from None
