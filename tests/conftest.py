"""Shared fixtures: the CLI in a subprocess (`run_torchlint`) and in this process (`run`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import hypothesis_profiles  # noqa: F401  (registers and loads the `ci` profile)
import pytest
from runtime_guard import guarded_cli_run, guarded_run_check
from workspace_guard import make_workspace

from torchlint import cli

# Tests run in parallel on few cores, and the runtime tests start torch in child processes: one
# intra-op thread each keeps them from oversubscribing the CPU (OpenMP workers spin while they
# wait, so two processes with two threads each on two cores run many times slower).
os.environ.setdefault("OMP_NUM_THREADS", "1")

# The CUDA suite (tests/gpu) runs only through `make test-gpu` (TORCHLINT_GPU=1), on a machine
# with a GPU; everywhere else it is not collected at all, so nothing is reported skipped.
collect_ignore = [] if os.environ.get("TORCHLINT_GPU") == "1" else ["gpu"]


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str


RunTorchlint = Callable[..., CliResult]


@pytest.fixture
def run_torchlint() -> RunTorchlint:
    """Run `python -m torchlint ARGS...` in a subprocess: `run(*args, cwd=path, env={...})`.

    Colour and the output-format variable are cleared from the environment unless `env`
    sets them."""

    def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> CliResult:
        environment = {
            key: value
            for key, value in os.environ.items()
            if key not in ("FORCE_COLOR", "NO_COLOR", "TORCHLINT_OUTPUT_FORMAT", "COLUMNS")
        }
        environment.update(env or {})
        with guarded_cli_run(args, cwd):  # a `torchlint run` must not change the user's files
            completed = subprocess.run(
                [sys.executable, "-m", "torchlint", *args],
                cwd=cwd,
                env=environment,
                capture_output=True,
                text=True,
                encoding="utf-8",
                timeout=120,
                check=False,
            )
        return CliResult(completed.returncode, completed.stdout, completed.stderr)

    return run


@dataclass(frozen=True)
class Output:
    code: int
    out: str
    err: str


Run = Callable[..., Output]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """`run(*args, cwd=path)`: `torchlint ARGS` in this process, from `cwd`."""
    for name in ("FORCE_COLOR", "NO_COLOR", "TORCHLINT_OUTPUT_FORMAT", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)

    def invoke(*args: str, cwd: Path) -> Output:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = cli.main(list(args))
        captured = capsys.readouterr()
        return Output(code, captured.out, captured.err)

    return invoke


RUNTIME_TESTS = Path(__file__).resolve().parent / "runtime"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A project folder as users have them: data, an earlier checkpoint, logs."""
    return make_workspace(tmp_path / "workspace")


@pytest.fixture(autouse=True)
def _guard_runtime_checks(request: pytest.FixtureRequest) -> None:
    """In tests/runtime/: the runtime checks run from a fresh workspace, and each `run_check`
    fails its test when it changed a byte of the user's files (see runtime_guard.py)."""
    if RUNTIME_TESTS not in Path(str(request.node.path)).parents:
        return
    root: Path = request.getfixturevalue("workspace")
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    monkeypatch.chdir(root)
    if hasattr(request.module, "run_check"):
        monkeypatch.setattr(request.module, "run_check", guarded_run_check(root))
