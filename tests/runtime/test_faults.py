"""Every way a user's script can go wrong under a runtime check: crash at import, crash mid-step,
hang, spin in C code ignoring signals, fork workers that would outlive it, exhaust memory, print
megabytes, `os._exit`, die by SIGKILL. For each the check returns `error` or `timeout` with the
reason and the output's last lines, within its time limit plus a small margin, and leaves no
process behind: none below this test's process, none whose command line names the script (its
copy has a unique name) or the token its workers carry.

(`test_launcher.py` checks the sites and messages in more detail; this file is about the time
limit and the process tree.)"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from envelope_schema import validate_envelope

from torchlint.runtime.launcher import RunRequest, run_check

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SCRIPTS = Path(__file__).parent / "scripts"
MARGIN_S = 5.0  # killing the process group, joining the readers, a loaded machine
ERROR_LIMIT_S = 60.0  # the limit for scripts that fail by themselves (they take seconds)
#: the limit for scripts that hang: past torch's import (several seconds on a loaded machine)
HANG_LIMIT_S = 12.0
SCRIPT = "<the script's file name>"  # the tail must name the script (its copy's name)


@dataclass(frozen=True)
class Case:
    script: str
    status: str
    kind: str
    reason: str  # in the error's message
    tail: str  # in the output's last lines (SCRIPT: the script's file name)
    args: tuple[str, ...] = ()
    timeout: float = ERROR_LIMIT_S


CASES = {
    "import": Case(
        "import_crash",
        "error",
        "crash",
        "No module named 'torchlint_missing_dependency'",
        "ModuleNotFoundError",
    ),
    "mid-step": Case("crash", "error", "crash", "corrupt shard 17", "RuntimeError: corrupt"),
    "hang": Case(
        "hang", "timeout", "timeout", "did not finish within 12 s", SCRIPT, timeout=HANG_LIMIT_S
    ),
    "spin-in-c": Case(
        "spin_in_c",
        "timeout",
        "timeout",
        "did not finish within 12 s",
        SCRIPT,
        timeout=HANG_LIMIT_S,
    ),
    "workers-crash": Case(
        "forks", "error", "crash", "the main process died first", "started workers", ("crash",)
    ),
    "workers-os-exit": Case("forks", "error", "exit", "status 7", "started workers", ("exit",)),
    "workers-hang": Case(
        "forks", "timeout", "timeout", "did not finish within 12 s", SCRIPT, ("hang",), HANG_LIMIT_S
    ),
    "out-of-memory": Case("out_of_memory", "error", "out_of_memory", "", SCRIPT),
    "megabytes": Case("noisy", "error", "crash", "bad config", "the real error comes last"),
    "os-exit": Case("os_exit", "error", "exit", "", "shutting down hard"),
    "sigkill": Case("killed", "error", "killed", "SIGKILL", "loading a large dataset..."),
}


def descendants(root: int) -> set[int]:
    """The live (non-zombie) processes below `root`, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def mentioning(needle: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and needle in (entry / "cmdline").read_text("utf-8", "replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return [pid for pid in found if pid != os.getpid()]


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("name", list(CASES))
def test_a_failing_script_is_reported_in_time_and_leaves_nothing_behind(
    name: str, tmp_path: Path
) -> None:
    case = CASES[name]
    token = f"torchlint-fault-{uuid.uuid4().hex}"
    script = tmp_path / f"{case.script}_{token}.py"
    shutil.copy(SCRIPTS / f"{case.script}.py", script)
    before = descendants(os.getpid())
    started = time.monotonic()
    try:
        result = validate_envelope(
            run_check(
                RunRequest(
                    "overfit",
                    script,
                    args=[token, *case.args],
                    steps=5,
                    timeout_s=case.timeout,
                    cwd=tmp_path,
                )
            )
        )
        elapsed = time.monotonic() - started
        left = mentioning(token)
        below = descendants(os.getpid()) - before
    finally:
        kill_all(mentioning(token))
    assert (result["status"], result["error"]["kind"]) == (case.status, case.kind), result[
        "summary"
    ]
    assert case.reason in result["error"]["message"], result["error"]["message"]
    tail = result["error"]["output_tail"]
    assert 0 < len(tail) <= 20
    needle = script.name if case.tail == SCRIPT else case.tail
    assert any(needle in line for line in tail), tail
    assert elapsed < case.timeout + MARGIN_S, elapsed
    if case.status == "timeout":
        assert elapsed >= case.timeout - 0.5, elapsed
    assert left == [] and below == set(), (left, below)


def test_a_worker_in_its_own_session_does_not_outlive_the_check(tmp_path: Path) -> None:
    token = f"torchlint-fault-{uuid.uuid4().hex}"
    try:
        result = run_check(
            RunRequest("overfit", SCRIPTS / "forks.py", args=[token, "detach"], timeout_s=30)
        )
        assert result["status"] == "error"
        time.sleep(0.2)
        left = mentioning(token)
    finally:
        kill_all(mentioning(token))
    assert left == []
