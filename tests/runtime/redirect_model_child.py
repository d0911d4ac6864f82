"""Run by test_redirect_model.py in a child process (the redirection patches the interpreter).

Reads a random sequence of file operations (JSON on stdin) and applies each twice: to a
reference copy of the workspace inside the scratch folder (which the redirection leaves alone,
so the operations behave as the operating system's own) and to the workspace itself (which is
redirected). Every operation must give the same result or the same exception class on both,
and both trees must look the same afterwards; the test then checks that the workspace on disk
is unchanged. Prints one JSON line: the first difference found, or null.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

from torchlint.runtime.sandbox.install import install
from torchlint.runtime.sandbox.redirect import Redirect


def apply(root: Path, op: list[Any]) -> Any:
    name, *args = op
    path = root / args[0] if args else root
    if name == "write":
        with open(path, "w") as f:
            return f.write(args[1])
    if name == "append":
        with open(path, "a") as f:
            return f.write(args[1])
    if name == "exclusive":
        with open(path, "x") as f:
            return f.write(args[1])
    if name == "update":
        with open(path, "r+") as f:
            f.seek(0)
            return f.write(args[1])
    if name == "read":
        with open(path) as f:
            return f.read()
    if name == "mkdir":
        return os.mkdir(path)
    if name == "makedirs":
        return os.makedirs(path, exist_ok=True)
    if name == "remove":
        return os.remove(path)
    if name == "rmdir":
        return os.rmdir(path)
    if name == "rmtree":
        return shutil.rmtree(path)
    if name == "rename":
        return os.rename(path, root / args[1])
    if name == "replace":
        return os.replace(path, root / args[1])
    if name == "move":
        target = shutil.move(str(path), str(root / args[1]))
        return os.path.relpath(target, root)
    if name == "copy":
        shutil.copyfile(path, root / args[1])
        return None
    if name == "listdir":
        return sorted(os.listdir(path))
    if name == "scandir":
        with os.scandir(path) as it:
            return sorted((e.name, e.is_dir()) for e in it)
    if name == "walk":
        return sorted(
            (os.path.relpath(top, root), sorted(dirs), sorted(files))
            for top, dirs, files in os.walk(path)
        )
    if name == "exists":
        return (os.path.exists(path), os.path.isdir(path), os.path.isfile(path))
    if name == "size":  # a folder's size depends on the file system, not on what it holds
        info = os.stat(path)
        return "folder" if stat.S_ISDIR(info.st_mode) else info.st_size
    if name == "touch":
        return path.touch()
    if name == "chmod":
        return os.chmod(path, 0o600)
    raise ValueError(name)


def outcome(root: Path, op: list[Any]) -> Any:
    try:
        return ["ok", apply(root, op)]
    except (OSError, shutil.Error, ValueError) as exc:  # shutil.move's own refusals too
        return ["error", type(exc).__name__]


def view(root: Path) -> list[Any]:
    items = []
    for top, dirs, files in os.walk(root):
        rel = os.path.relpath(top, root)
        items.append([rel, sorted(dirs), sorted((f, Path(top, f).read_text()) for f in files)])
    return sorted(items)


def main() -> None:
    scratch, workspace = Path(sys.argv[1]), Path(sys.argv[2])
    sequence = json.load(sys.stdin)
    install(Redirect(str(scratch)))
    reference = scratch / "tmp" / "reference"
    shutil.copytree(workspace, reference)  # a real copy: outside the redirection
    for index, op in enumerate(sequence):
        expected, got = outcome(reference, op), outcome(workspace, op)
        if expected != got:
            difference = {"step": index, "op": op, "reference": expected, "redirected": got}
            print(json.dumps(difference))
            return
    if view(reference) != view(workspace):
        print(json.dumps({"views": [view(reference), view(workspace)]}))
        return
    print(json.dumps(None))


if __name__ == "__main__":
    main()
