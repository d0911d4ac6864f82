"""The fresh table of benchmarks/mature/run.py: a batch's kept first run, judged by today's
verdicts (a verdict written after the first run still counts for it), and a first run is kept
once."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

RUN = Path(__file__).resolve().parents[1] / "benchmarks" / "mature" / "run.py"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("mature_run", RUN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setitem(sys.modules, "mature_run", module)  # dataclasses look themselves up
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "FRESH_DIR", tmp_path / "fresh")
    return module


def _finding(run: ModuleType, line: int, code: str, severity: str, text: str) -> object:
    return run.Finding("repo-a", "train.py", line, code, severity, "message", text)


def test_first_run_is_judged_by_todays_verdicts(run: ModuleType) -> None:
    repos = [run.Repo("repo-a", "o/a", "c" * 40, "", ("**/*.py",), batch="b1")]
    found = [
        _finding(run, 10, "TL101", "error", "loss.backward()"),
        _finding(run, 20, "TL301", "warning", "loss.item()"),
        _finding(run, 30, "TL301", "warning", "acc.item()"),
    ]
    run.record_fresh("b1", repos, {"repo-a": 50}, found)
    verdicts = [
        run.Verdict("repo-a", "train.py", 10, "TL101", "loss.backward()", "FP", "w", "schedule"),
        run.Verdict("repo-a", "train.py", 20, "TL301", "loss.item()", "TP", "w"),
    ]
    (row,) = run.fresh_rows(verdicts)
    assert (row["files"], row["findings"], row["TP"], row["FP"]) == (50, 3, 1, 1)
    assert row["unreviewed"] == 1
    assert row["error_false_alarms"] == 1
    assert row["mechanisms"] == {"schedule": 1}
    assert row["false_alarms_per_25_files"] == 0.5
    assert all(v.used == 0 for v in verdicts)  # the main run's join starts afresh


def test_a_batch_keeps_one_first_run(run: ModuleType) -> None:
    repos = [run.Repo("repo-a", "o/a", "c" * 40, "", ("**/*.py",), batch="b1")]
    kept = run.record_fresh("b1", repos, {"repo-a": 5}, [])
    assert json.loads(kept.read_text())["files"] == {"repo-a": 5}
    with pytest.raises(SystemExit, match="has one first run"):
        run.record_fresh("b1", repos, {"repo-a": 5}, [])
