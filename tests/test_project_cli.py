"""`torchlint check` on a whole project: calls followed into other project files, findings
reported at the call site, `--no-project`, the results cache invalidated by the files an
analysis read, workers, and `--fix` never touching another file. Run as a subprocess on a real
project folder."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snippets import DEPRECATED_SCALER, MISSING_STEP

from torchlint.cache import CACHE_DIR_NAME, content_hash

if TYPE_CHECKING:
    from conftest import CliResult, RunTorchlint


# The rules these tests rely on (others may come and go): the step, eval-mode leaks, and one
# with a safe fix.
PYPROJECT = '[tool.torchlint]\nselect = ["TL101", "TL105", "TL204"]\n'

ENGINE = """\
import torch


def evaluate(model, loader):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += model(x).sum().item()
    return total


def apply_step(optimizer):
    optimizer.step()
    optimizer.zero_grad()


def log_lr(optimizer):
    print(optimizer.param_groups[0]["lr"])
"""
# `evaluate()` puts the model back into training mode: no leak any more.
ENGINE_RESTORES = ENGINE.replace("    return total\n", "    model.train()\n    return total\n")

# TL105 on line 13, at the call: the `model.eval()` it reports is in pkg/engine.py, line 5.
TRAIN = """\
import torch

from .engine import evaluate


def fit(model, optimizer, loader, val_loader, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
        evaluate(model, val_loader)
"""

# The step happens in the helper: nothing to report, with the project or without.
NEAR_MISS = """\
from pkg.engine import apply_step


def fit(model, optimizer, loader):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        apply_step(optimizer)
"""

# The helper is given the optimizer but never steps it: TL101 on line 8, seen only with the
# project (alone, an unknown call that receives the optimizer may well step it). Reported at
# the backward pass.
FORGETS_STEP = """\
from pkg import engine


def fit(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        engine.log_lr(optimizer)
"""

DATA = """\
import torch


def make_loader(n):
    return [(torch.randn(4, 2), torch.randn(4, 1)) for _ in range(n)]
"""

MODELS = """\
import torch


def build():
    return torch.nn.Linear(2, 1)
"""

UTILS = """\
from pkg.data import make_loader


def count_batches(n):
    return len(make_loader(n))
"""

# The files of the project; none but train, near_miss and forgets_step uses pkg/engine.py.
FILES = {
    "pyproject.toml": PYPROJECT,
    "pkg/__init__.py": "",
    "pkg/engine.py": ENGINE,
    "pkg/train.py": TRAIN,
    "pkg/near_miss.py": NEAR_MISS,
    "pkg/forgets_step.py": FORGETS_STEP,
    "pkg/data.py": DATA,
    "pkg/models.py": MODELS,
    "pkg/utils.py": UTILS,
    "scripts/solo.py": MISSING_STEP,  # TL101 on line 7, in a file of its own
}
PYTHON_FILES = sum(1 for name in FILES if name.endswith(".py"))
USES_ENGINE = {"pkg/engine.py", "pkg/train.py", "pkg/near_miss.py", "pkg/forgets_step.py"}

CONCISE = re.compile(r"^(?P<path>[^:]+):(?P<row>\d+):\d+: (?P<code>TL\d{3}) (?P<message>.*)$")
CROSS_FILE = ("pkg/train.py", 13, "TL105")
PROJECT_ONLY_STEP = ("pkg/forgets_step.py", 8, "TL101")
SOLO = ("scripts/solo.py", 7, "TL101")


def make_project(root: Path) -> Path:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def findings(result: CliResult) -> dict[tuple[str, int, str], str]:
    """The concise output's findings, (path, row, code) -> message."""
    found: dict[tuple[str, int, str], str] = {}
    for line in result.stdout.splitlines():
        match = CONCISE.match(line)
        if match:
            key = (match["path"].replace("\\", "/"), int(match["row"]), match["code"])
            found[key] = match["message"]
    return found


def from_cache(result: CliResult) -> int:
    """How many files the run took from the cache (from its --verbose line)."""
    for line in result.stderr.splitlines():
        if line.startswith("debug: checked") and "from the cache" in line:
            return int(line.split("(")[1].split()[0])
    raise AssertionError(f"no cache line in:\n{result.stderr}")


def cache_entries(root: Path) -> dict[str, Any]:
    (path,) = (root / CACHE_DIR_NAME).glob("*/*.json")
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == 2
    files: dict[str, Any] = document["files"]
    return files


def check(run_torchlint: RunTorchlint, root: Path, *args: str) -> CliResult:
    result = run_torchlint("check", "--output-format", "concise", *args, cwd=root)
    assert result.returncode in (0, 1), result.stderr
    assert "error:" not in result.stderr, result.stderr
    return result


# --- following calls -----------------------------------------------------------------------


def test_cross_file_findings_and_no_project(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    root = make_project(tmp_path)

    project = findings(check(run_torchlint, root, "--no-cache"))
    assert set(project) == {CROSS_FILE, PROJECT_ONLY_STEP, SOLO}
    # Reported at the call, naming where the other half lives.
    assert "(in `evaluate()` at pkg/engine.py:5)" in project[CROSS_FILE]
    assert "model.eval()" in project[CROSS_FILE]

    alone = findings(check(run_torchlint, root, "--no-cache", "--no-project"))
    # Each file on its own: the leak through evaluate() and the helper that never steps are
    # out of sight; the helper that does step is silent both ways; solo.py is unchanged.
    assert set(alone) == {SOLO}
    assert alone[SOLO] == project[SOLO]


# --- the results cache ---------------------------------------------------------------------


def test_cache_is_invalidated_by_the_files_an_analysis_read(
    tmp_path: Path, run_torchlint: RunTorchlint
) -> None:
    root = make_project(tmp_path)
    engine = root / "pkg" / "engine.py"

    cold = check(run_torchlint, root, "-v")
    assert from_cache(cold) == 0
    assert CROSS_FILE in findings(cold)
    entries = cache_entries(root)
    assert entries["pkg/train.py"]["deps"] == {"pkg/engine.py": content_hash(engine.read_bytes())}
    data = content_hash((root / "pkg" / "data.py").read_bytes())
    assert entries["pkg/utils.py"]["deps"] == {"pkg/data.py": data}  # a dependency, not engine
    assert "deps" not in entries["scripts/solo.py"]  # nothing read: no dependencies stored
    assert "deps" not in entries["pkg/engine.py"]

    warm = check(run_torchlint, root, "-v")
    assert from_cache(warm) == PYTHON_FILES
    assert warm.stdout == cold.stdout

    engine.write_text(ENGINE_RESTORES, encoding="utf-8")
    edited = check(run_torchlint, root, "-v")
    # engine.py and the three files that read it are analysed again; the others still come
    # from the cache, utils.py too (its dependency, data.py, did not change).
    assert from_cache(edited) == PYTHON_FILES - len(USES_ENGINE)
    assert set(findings(edited)) == {PROJECT_ONLY_STEP, SOLO}
    assert cache_entries(root)["pkg/train.py"]["deps"] == {
        "pkg/engine.py": content_hash(ENGINE_RESTORES.encode())
    }


# --- workers -------------------------------------------------------------------------------


def test_workers_give_the_same_output(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    root = make_project(tmp_path)
    here = check(run_torchlint, root, "--no-cache", "--jobs", "1", "-v")
    workers = check(run_torchlint, root, "--no-cache", "--jobs", "2", "-v")
    assert f"analysing {PYTHON_FILES} files in this process" in here.stderr
    assert f"analysing {PYTHON_FILES} files in 2 processes" in workers.stderr
    assert workers.stdout == here.stdout
    assert set(findings(workers)) == {CROSS_FILE, PROJECT_ONLY_STEP, SOLO}


# --- fixing --------------------------------------------------------------------------------


def test_fix_edits_only_the_checked_file(tmp_path: Path, run_torchlint: RunTorchlint) -> None:
    root = make_project(tmp_path)
    train = root / "pkg" / "train.py"
    # TL204 on line 2, with a safe fix (TRAIN's own `import torch` serves it).
    train.write_text(DEPRECATED_SCALER + TRAIN, encoding="utf-8")
    engine_bytes = (root / "pkg" / "engine.py").read_bytes()
    # Below the scaler's line: the fix drops the import line it leaves unused (TRAIN's own
    # `import torch` serves the new call).
    shifted = (CROSS_FILE[0], CROSS_FILE[1] + 1, CROSS_FILE[2])

    fixed = check(run_torchlint, root, "--fix")
    assert (root / "pkg" / "engine.py").read_bytes() == engine_bytes
    text = train.read_text(encoding="utf-8")
    assert 'torch.amp.GradScaler("cuda")' in text and text.endswith(TRAIN)
    # What is left is what a plain check of the fixed files reports, the cross-file leak too.
    left = findings(fixed)
    assert set(left) == {shifted, PROJECT_ONLY_STEP, SOLO}
    assert "pkg/engine.py:5" in left[shifted]
    assert "Fixed 1 error" in fixed.stdout

    again = check(run_torchlint, root, "-v")
    assert from_cache(again) == PYTHON_FILES  # the fixed file was stored with its dependency
    assert findings(again) == left
