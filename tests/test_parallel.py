"""Analysing files across processes: the same results in the same order as one process, no
pool for a handful of files, and a worker that dies costs its file, not the run."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from snippets import MISSING_STEP

from torchlint import cli, cli_check, parallel
from torchlint.parallel import (
    MIN_PARALLEL_FILES,
    Outcome,
    Task,
    analyze_all,
    analyze_task,
    worker_count,
)
from torchlint.selection import RuleSelection

ITEM = "    print(loss.item())\n"
SELECTION = RuleSelection(("TL001", "TL101", "TL301"))
CRASH_MARKER = "crash_here"


def source(index: int) -> str:
    """Varied files: some clean, some with TL101, some with TL301 too, one that does not parse."""
    if index % 5 == 0:
        return f"x = {index}\n"
    if index % 7 == 0:
        return "def broken(:\n"
    return MISSING_STEP + ITEM * (index % 3)


def tasks(count: int) -> list[Task]:
    return [
        Task(f"/virtual/file_{index:02}.py", source(index).encode(), SELECTION)
        for index in range(count)
    ]


def crash_on_marker(task: Task) -> Outcome:
    """A worker that dies, like a segfault would kill it, on one file."""
    if CRASH_MARKER in task.filename:
        os._exit(70)
    return analyze_task(task)


def raise_on_marker(task: Task) -> Outcome:
    if CRASH_MARKER in task.filename:
        raise ValueError("a bug outside the engine")
    return analyze_task(task)


def test_worker_count() -> None:
    assert worker_count(0) == worker_count(1) == 1
    assert worker_count(MIN_PARALLEL_FILES - 1, cpus=16) == 1  # a handful: no pool
    assert worker_count(8, cpus=16) == 2  # at least FILES_PER_WORKER files each
    assert worker_count(220, cpus=2) == 2
    assert worker_count(220, cpus=16) == 16
    assert worker_count(220, jobs=1, cpus=16) == 1
    assert worker_count(3, jobs=4, cpus=1) == 3  # asked for: a pool even for a few files
    assert worker_count(220, jobs=0, cpus=3) == 3  # 0: automatic
    assert worker_count(1, jobs=8) == 1  # never a pool for one file


def test_parallel_results_equal_serial_results_in_order() -> None:
    work = tasks(24)
    serial = analyze_all(work, 1)
    parallel_ = analyze_all(work, 3)
    assert parallel_ == serial
    assert [o.diagnostics[0].filename if o.diagnostics else None for o in parallel_] == [
        t.filename if o.diagnostics else None for t, o in zip(work, serial, strict=True)
    ]
    codes = [[d.code for d in o.diagnostics] for o in serial]
    assert codes[1] == ["TL101", "TL301"] and codes[3] == ["TL101"] and codes[5] == []
    assert codes[7] == ["TL001"]
    # Text comes back only where there is something to show.
    assert serial[5].text == "" and "loss.backward()" in serial[1].text


def test_a_worker_that_dies_costs_only_its_file() -> None:
    work = tasks(12)
    work[5] = Task(f"/virtual/{CRASH_MARKER}.py", b"x = 1\n", SELECTION)
    outcomes = analyze_all(work, 2, worker=crash_on_marker)
    assert len(outcomes) == 12
    (message,) = outcomes[5].errors
    assert message.startswith(f"/virtual/{CRASH_MARKER}.py: internal error: the worker process")
    expected = analyze_all([t for i, t in enumerate(work) if i != 5], 1)
    assert [o for i, o in enumerate(outcomes) if i != 5] == expected


def test_a_crash_on_the_first_file_still_checks_the_others() -> None:
    # The pool may break while tasks are still being handed out: those run alone too.
    work = tasks(16)
    work[0] = Task(f"/virtual/{CRASH_MARKER}.py", b"x = 1\n", SELECTION)
    outcomes = analyze_all(work, 2, worker=crash_on_marker)
    assert "stopped unexpectedly" in outcomes[0].errors[0]
    assert outcomes[1:] == analyze_all(work[1:], 1)


def test_an_exception_in_a_worker_is_an_error_of_its_file() -> None:
    work = tasks(10)
    work[2] = Task(f"/virtual/{CRASH_MARKER}.py", b"x = 1\n", SELECTION)
    outcomes = analyze_all(work, 2, worker=raise_on_marker)
    (message,) = outcomes[2].errors
    assert "ValueError: a bug outside the engine" in message
    assert all(not o.errors for i, o in enumerate(outcomes) if i != 2)


def test_the_cli_reports_a_crashed_file_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for index in range(10):
        (tmp_path / f"file_{index}.py").write_text(MISSING_STEP, encoding="utf-8")
    (tmp_path / f"{CRASH_MARKER}.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(
        cli_check, "analyze_all", functools.partial(analyze_all, worker=crash_on_marker)
    )
    monkeypatch.chdir(tmp_path)
    code = cli.main(["check", "--no-cache", "--jobs", "2", "--select", "TL101", "."])
    captured = capsys.readouterr()
    assert code == 2
    assert f"{CRASH_MARKER}.py: internal error: the worker process" in captured.err
    assert captured.out.count("TL101") >= 10  # the other files were still checked


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    env.pop("TORCHLINT_OUTPUT_FORMAT", None)
    return subprocess.run(
        [sys.executable, "-m", "torchlint", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_cli_output_is_the_same_with_and_without_workers(tmp_path: Path) -> None:
    for index in range(30):
        folder = tmp_path / f"pkg{index % 4}"
        folder.mkdir(exist_ok=True)
        (folder / f"train_{index:02}.py").write_text(source(index), encoding="utf-8")
    common = ("check", "--no-cache", "-v", "--select", "TL001,TL101,TL301", "--output-format")
    serial = run_cli(*common, "concise", "--jobs", "1", cwd=tmp_path)
    pooled = run_cli(*common, "concise", "--jobs", "3", cwd=tmp_path)
    assert serial.returncode == pooled.returncode == 1
    assert pooled.stdout == serial.stdout
    assert "analysing 30 files in this process" in serial.stderr
    assert "analysing 30 files in 3 processes" in pooled.stderr
    assert serial.stdout.count("TL101") > 10


def test_jobs_must_be_a_count(tmp_path: Path) -> None:
    result = run_cli("check", "--jobs", "-2", cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot be negative" in result.stderr


def test_the_pool_is_forked_on_linux_from_a_single_thread() -> None:
    # The CLI has one thread, so on Linux its workers start by forking (cheap: nothing to
    # import again); elsewhere, or with threads running, they are started fresh.
    code = (
        "import sys, threading; from torchlint import parallel; "
        "print(parallel._context().get_start_method()); "
        "threading.Thread(target=lambda: threading.Event().wait(1), daemon=True).start(); "
        "print(parallel._context().get_start_method())"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    single, threaded = result.stdout.split()
    if sys.platform.startswith("linux"):
        assert single == "fork"
    assert threaded in ("forkserver", "spawn")
    assert parallel.available_cpus() >= 1
