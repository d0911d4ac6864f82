"""The redirection against the operating system itself: random sequences of file operations
(writes, appends, exclusive creation, updates, folders, removals, renames, moves, copies,
listings, walks, stats) give the same results and the same errors on a redirected workspace as
on a plain copy of it, the run sees the same tree at the end, and the workspace on disk is
unchanged (redirect_model_child.py runs each sequence in a fresh process)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from workspace_guard import unchanged

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("redirect_model_child.py")
NAMES = ["a.txt", "b.txt", "d", "d/x.txt", "d/e", "d/e/y.txt", "f", "f/z.txt", "g"]
SEQUENCES = 100


def make_files(root: Path) -> Path:
    (root / "d/e").mkdir(parents=True)
    (root / "f").mkdir()
    for name, text in (("a.txt", "A"), ("d/x.txt", "X"), ("d/e/y.txt", "Y"), ("f/z.txt", "Z")):
        (root / name).write_text(text)
    return root


def random_sequence(rng: random.Random, length: int = 32) -> list[list[Any]]:
    ops = []
    for _ in range(length):
        kind = rng.choice(
            ["write", "append", "exclusive", "update", "read", "mkdir", "makedirs", "remove",
             "rmdir", "rmtree", "rename", "replace", "move", "copy", "listdir", "scandir",
             "walk", "exists", "size", "touch", "chmod"]
        )  # fmt: skip
        path = rng.choice(NAMES)
        if kind in ("write", "append", "exclusive", "update"):
            ops.append([kind, path, rng.choice(["1", "22", "333"])])
        elif kind in ("rename", "replace", "move", "copy"):
            ops.append([kind, path, rng.choice(NAMES)])
        elif kind in ("listdir", "scandir", "walk"):
            ops.append([kind, rng.choice(["d", "d/e", "f", "g", "."])])
        else:
            ops.append([kind, path])
    return ops


@pytest.mark.parametrize("seed", range(SEQUENCES))
def test_redirected_file_operations_behave_as_the_system_does(seed: int, tmp_path: Path) -> None:
    workspace = make_files(tmp_path / "tree")
    scratch = tmp_path / "scratch"
    (scratch / "tmp").mkdir(parents=True)
    sequence = random_sequence(random.Random(seed))
    with unchanged(workspace):
        done = subprocess.run(
            [sys.executable, str(CHILD), str(scratch), str(workspace)],
            input=json.dumps(sequence),
            capture_output=True,
            text=True,
            cwd=workspace,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) is None, (sequence, done.stdout)
