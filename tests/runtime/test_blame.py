"""A failure the script causes is the script's, exactly as a plain run shows it.

scripts/failing_calls.py makes every patched file call fail the way the operating system makes
it fail (a missing file, a folder where a file is expected, a deleted file, ...) and then ends
on its own mistake. It runs once plainly, in a copy of the workspace, and once under a runtime
check with each isolation mechanism: every call must raise the same exception type with the
same message from the same line of the script, and the last one must be reported as the
script's crash (TLR001 at its line, the message and traceback a plain run prints), never as a
failure of torchlint (TLR005).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from envelope_schema import validate_envelope
from script_marks import SCRIPTS
from workspace_guard import make_workspace, unchanged

from torchlint.runtime.launcher import RunRequest, run_check

SCRIPT = SCRIPTS / "failing_calls.py"
CRASH_LINE = next(
    number
    for number, text in enumerate(SCRIPT.read_text().splitlines(), 1)
    if text.startswith('Path("epoch.log").unlink()')
)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[str]]:
    workspace = make_workspace(tmp_path_factory.mktemp("plain") / "workspace")
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=workspace, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    seen = json.loads((workspace / "probe.json").read_text())
    return seen, done.stderr.strip().splitlines()


@pytest.fixture(scope="module", params=("overlay", "redirect"))
def checked(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    root = tmp_path_factory.mktemp(f"checked-{request.param}")
    workspace = make_workspace(root / "workspace")
    kept = root / "kept"
    with unchanged(workspace, SCRIPTS):
        result = run_check(
            RunRequest(
                "grads",
                SCRIPT,
                steps=5,
                timeout_s=120,
                cwd=workspace,
                isolation=request.param,
                keep_outputs=kept,
            )
        )
    validate_envelope(result)
    assert result["isolation"]["files"]["mechanism"] == request.param
    seen = json.loads((kept / "probe.json").read_text())
    shutil.rmtree(kept)
    return request.param, result, seen


def test_every_failing_call_raises_what_the_real_call_raises(
    plain: tuple[dict[str, Any], list[str]], checked: tuple[str, dict[str, Any], dict[str, Any]]
) -> None:
    expected, _ = plain
    mechanism, _, seen = checked
    assert len(expected) >= 30 and all(v != ["no error"] for v in expected.values()), expected
    different = {
        name: {"plain": expected[name], mechanism: seen.get(name)}
        for name in expected
        if seen.get(name) != expected[name]
    }
    assert not different, json.dumps(different, indent=1)


def test_the_scripts_own_crash_is_reported_as_a_plain_run_shows_it(
    plain: tuple[dict[str, Any], list[str]], checked: tuple[str, dict[str, Any], dict[str, Any]]
) -> None:
    _, stderr = plain
    _, result, _ = checked
    codes = {d["code"]: d for d in result["diagnostics"]}
    assert "TLR005" not in codes, codes["TLR005"]["message"]
    crashed = codes["TLR001"]
    assert (Path(crashed["filename"]).name, crashed["line"]) == (SCRIPT.name, CRASH_LINE)
    error = result["error"]
    assert error["site"]["line"] == CRASH_LINE
    assert error["message"].endswith(stderr[-1]), (error["message"], stderr[-1])
    # the traceback names the script's frames and the standard library's, as Python would
    assert error["output_tail"][-len(stderr) :] == stderr
    assert not any("torchlint" in line for line in error["output_tail"])
