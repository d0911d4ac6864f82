"""Overlay mounts for a run: `python -S -m torchlint.runtime.sandbox.namespace --scratch S
--mode auto|overlay --protect DIR ... -- COMMAND ...`.

Puts itself in a private mount namespace (inside a new user namespace when it is not root, so no
privilege is needed where the kernel allows unprivileged user namespaces), covers each protected
folder with an overlay filesystem whose upper layer is `S/overlay/<k>/upper`, and then replaces
itself with COMMAND. Every process of the run, and every native library in them, then writes
into the upper layers only; the folders themselves are never written. Mounts inside a protected
folder (a data set on another disk) are covered the same way, each with its own overlay. The
mounts vanish with the namespace when the run's last process ends; nothing propagates out
(the namespace's mounts are made private first).

Where that is not possible (not Linux, no user namespaces, no overlayfs, a path the mount
options cannot express, the scratch folder inside a protected folder) nothing is changed and
COMMAND runs with the in-process redirection alone (`--mode overlay` exits with status 97
instead). `S/isolation.json` records what was done and why, and `TORCHLINT_REDIRECT` is set so
the redirection leaves the overlaid folders to the overlay. Uses only the standard library.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import sys
from pathlib import Path

from torchlint.runtime.sandbox.redirect import ENVIRONMENT_VARIABLE

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
#: exit status when `--mode overlay` was asked for and cannot be had
UNAVAILABLE_EXIT = 97
STATUS_FILE = "isolation.json"


class Unavailable(Exception):
    """Why the overlay cannot be used here."""


def _libc() -> ctypes.CDLL:
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name or None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise Unavailable(f"{what}: {os.strerror(code)}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as stream:
        stream.write(text)


def _mount_points() -> list[str]:
    points: list[str] = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as stream:
        for line in stream:
            fields = line.split()
            if len(fields) > 4:
                points.append(_unescape(fields[4]))
    return points


def _unescape(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 3 < len(text) + 0 and text[i + 1 : i + 4].isdigit():
            out.append(chr(int(text[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _option_path(path: str) -> str:
    if any(c in path for c in ",:\\\n"):
        raise Unavailable(f"the overlay's mount options cannot name {path!r}")
    return path


class Overlays:
    """The overlay mounts of one run (in this process's new mount namespace)."""

    def __init__(self, scratch: str) -> None:
        self.libc = _libc()
        self.root = os.path.join(scratch, "overlay")
        self.mounted: list[str] = []  # mount points, in mount order
        self.layers: list[dict[str, str]] = []  # {"folder": ..., "upper": ...}

    def enter_namespace(self) -> None:
        if not sys.platform.startswith("linux"):
            raise Unavailable("overlay mounts need Linux")
        uid, gid = os.getuid(), os.getgid()
        rootless = os.geteuid() != 0
        flags = CLONE_NEWNS | (CLONE_NEWUSER if rootless else 0)
        if rootless:
            self._probe()
        _check(self.libc.unshare(flags), "no private mount namespace (unshare)")
        if rootless:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        # nothing mounted from here on may reach the rest of the system
        _check(self.libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")

    def _probe(self) -> None:
        """An unprivileged user namespace can be entered but not left: try it in a child
        first, so that a failure leaves this process as it was."""
        uid, gid = os.getuid(), os.getgid()  # (unmapped, hence unknown, once inside)
        pid = os.fork()
        if pid == 0:
            try:
                code = 1
                if self.libc.unshare(CLONE_NEWNS | CLONE_NEWUSER) == 0:
                    _write("/proc/self/setgroups", "deny")
                    _write("/proc/self/uid_map", f"{uid} {uid} 1")
                    _write("/proc/self/gid_map", f"{gid} {gid} 1")
                    code = 0
            except BaseException:
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            raise Unavailable("unprivileged user namespaces are not allowed here")

    def protect(self, folders: list[str]) -> None:
        points = _mount_points()
        for index, folder in enumerate(folders):
            below = sorted(
                {p for p in points if _inside(p, folder) and p != folder},
                key=lambda p: p.count("/"),
            )
            stashes = []
            for k, point in enumerate(below):  # keep each inner mount reachable, then cover it
                stash = os.path.join(self.root, f"{index}-inner-{k}", "lower")
                os.makedirs(stash)
                _check(
                    self.libc.mount(point.encode(), stash.encode(), None, MS_BIND, None),
                    f"reach the mount at {point}",
                )
                self.mounted.append(stash)
                stashes.append((point, stash, f"{index}-inner-{k}"))
            self._overlay(folder, folder, f"{index}")
            for point, stash, name in stashes:
                self._overlay(point, stash, name)

    def _overlay(self, target: str, lower: str, name: str) -> None:
        base = os.path.join(self.root, name)
        upper, work = os.path.join(base, "upper"), os.path.join(base, "work")
        os.makedirs(upper, exist_ok=True)
        os.makedirs(work, exist_ok=True)
        options = (
            f"lowerdir={_option_path(lower)},upperdir={_option_path(upper)},"
            f"workdir={_option_path(work)}"
        )
        for extra in ("", ",userxattr"):
            data = (options + extra).encode()
            if self.libc.mount(b"overlay", target.encode(), b"overlay", 0, data) == 0:
                self.mounted.append(target)
                self.layers.append({"folder": target, "upper": upper})
                return
        code = ctypes.get_errno()
        raise Unavailable(f"overlay mount on {target}: {os.strerror(code)}")

    def undo(self) -> None:
        for point in reversed(self.mounted):
            self.libc.umount2(point.encode(), MNT_DETACH)
        self.mounted = []
        self.layers = []


def prepare(scratch: str, folders: list[str]) -> dict[str, object]:
    """Enter the namespace and mount; the status to record (never raises)."""
    status: dict[str, object] = {"mechanism": "redirect", "protected": [], "layers": []}
    for folder in folders:
        if _inside(scratch, folder):
            status["reason"] = f"the scratch folder {scratch} is inside {folder}"
            return status
        if folder == "/":
            status["reason"] = "the working directory is the file system's root"
            return status
    overlays = Overlays(scratch)
    try:
        overlays.enter_namespace()
    except (Unavailable, OSError) as exc:
        status["reason"] = str(exc)
        return status
    cwd = os.getcwd()
    try:
        overlays.protect(folders)
    except (Unavailable, OSError) as exc:
        overlays.undo()
        status["reason"] = str(exc)
        return status
    os.chdir(cwd)  # the working directory must be the overlay's, not the folder beneath it
    status.update(mechanism="overlay", protected=list(folders), layers=overlays.layers)
    return status


def main(argv: list[str]) -> None:
    scratch, mode, folders = "", "auto", []
    args = list(argv)
    while args and args[0] != "--":
        flag = args.pop(0)
        value = args.pop(0)
        if flag == "--scratch":
            scratch = value
        elif flag == "--mode":
            mode = value
        elif flag == "--protect":
            folders.append(os.path.abspath(value))
        else:
            raise SystemExit(f"unknown option {flag}")
    command = args[1:]
    status = prepare(scratch, folders)
    Path(scratch, STATUS_FILE).write_text(json.dumps(status), encoding="utf-8")
    if status["mechanism"] != "overlay" and mode == "overlay":
        sys.stderr.write(f"torchlint: overlay isolation is not available: {status.get('reason')}\n")
        os._exit(UNAVAILABLE_EXIT)
    config = json.loads(os.environ.get(ENVIRONMENT_VARIABLE) or "{}")
    config["scratch"] = scratch
    config["passthrough"] = [layer["folder"] for layer in status["layers"]]  # type: ignore[attr-defined]
    os.environ[ENVIRONMENT_VARIABLE] = json.dumps(config)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
