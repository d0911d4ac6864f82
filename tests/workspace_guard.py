"""A runtime check must leave the user's files exactly as they were.

`make_workspace()` builds what a real project folder holds (data files, an existing checkpoint
from an earlier run, a log folder with an events file and a metrics CSV); `unchanged(*folders)`
hashes folders before and after a block and fails with the list of what changed (content,
permission bits, modification time, files added or removed). The runtime tests run every check
inside it (tests/runtime/conftest.py).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: relative path -> content of the files a workspace starts with
WORKSPACE_FILES: dict[str, bytes] = {
    "data/train.csv": b"x1,x2,label\n0.1,0.2,0\n0.3,0.1,1\n",
    "data/features.npy": bytes(range(256)) * 8,
    "model.pt": b"PK\x03\x04 a checkpoint from an earlier, real training run " * 40,
    "checkpoint.pt": b"the user's checkpoint.pt, which a test script also writes " * 10,
    "best.pt": b"the user's best model " * 30,
    "checkpoints/last.ckpt": b"lightning checkpoint of an earlier run " * 20,
    "runs/exp1/events.out.tfevents.1700000000.host": b"\x00\x01tensorboard events" * 16,
    "lightning_logs/version_0/metrics.csv": b"epoch,step,train_loss\n0,9,0.69\n",
    "notes.txt": b"do not touch\n",
}

Snapshot = dict[str, tuple[str, ...]]


def make_workspace(root: Path) -> Path:
    for relative, content in WORKSPACE_FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def snapshot(*folders: Path, allowed: tuple[Path, ...] = ()) -> Snapshot:
    """Every entry under the folders: (kind, content hash or link target, mode, mtime); the
    `allowed` paths (files torchlint writes because it was asked to) are left out."""
    found: Snapshot = {}
    skip = {str(p) for p in allowed}
    for folder in folders:
        if not folder.exists():
            found[str(folder)] = ("missing",)
            continue
        for parent, dirs, names in os.walk(folder):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in [*dirs, *names]:
                path = Path(parent, name)
                if str(path) in skip or any(str(path).startswith(s + os.sep) for s in skip):
                    continue
                info = path.lstat()
                mode = stat.S_IMODE(info.st_mode)
                if stat.S_ISLNK(info.st_mode):
                    entry: tuple[str, ...] = ("link", os.readlink(path))
                elif stat.S_ISDIR(info.st_mode):
                    entry = ("dir", oct(mode))
                else:
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                    entry = ("file", digest, oct(mode), str(info.st_mtime_ns))
                found[str(path)] = entry
    return found


def differences(before: Snapshot, after: Snapshot) -> list[str]:
    lines = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        if old is None:
            lines.append(f"created: {path}")
        elif new is None:
            lines.append(f"removed: {path}")
        else:
            lines.append(f"changed: {path} ({old} -> {new})")
    return lines


@contextmanager
def unchanged(*folders: Path, allowed: list[Path] | None = None) -> Iterator[None]:
    """Fail when anything under `folders` differs after the block (but the `allowed` paths)."""
    unique = sorted({f.resolve() for f in folders}, key=str)
    skip = tuple(p.resolve() for p in allowed or [])
    before = snapshot(*unique, allowed=skip)
    yield
    changed = differences(before, snapshot(*unique, allowed=skip))
    assert not changed, "a runtime check changed the user's files:\n" + "\n".join(changed[:40])
