"""`torchlint run` as a user runs it: a subprocess, its exit status, its output."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import RunTorchlint
from envelope_schema import validate_envelope

SCRIPTS = Path(__file__).parent / "scripts"


def test_json_output_and_exit_status_of_a_failing_check(
    run_torchlint: RunTorchlint, tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    done = run_torchlint(
        "run", "overfit", str(SCRIPTS / "labels.py"), "--steps", "10",
        "--output-format", "json", "--output", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    printed = validate_envelope(json.loads(done.stdout))
    assert printed["verdict"] == "fail"
    assert json.loads(out.read_text()) == printed


def test_script_arguments_follow_a_double_dash(run_torchlint: RunTorchlint, tmp_path: Path) -> None:
    done = run_torchlint(
        "run", "grads", str(SCRIPTS / "args.py"), "--steps", "2", "--output-format", "json",
        "--", "--lr", "0", cwd=tmp_path,
    )  # fmt: skip
    result = validate_envelope(json.loads(done.stdout))
    assert result["argv"] == ["--lr", "0"]
    assert [d["code"] for d in result["diagnostics"]] == ["TLR104"]
    assert done.returncode == 1


def test_a_script_that_cannot_run_exits_2(run_torchlint: RunTorchlint, tmp_path: Path) -> None:
    done = run_torchlint(
        "run", "overfit", str(SCRIPTS / "sys_exit.py"), "--output-format", "json", cwd=tmp_path
    )  # fmt: skip
    assert done.returncode == 2
    assert validate_envelope(json.loads(done.stdout))["error"]["kind"] == "exit"


def test_usage_errors_exit_2_with_a_message(run_torchlint: RunTorchlint, tmp_path: Path) -> None:
    missing = run_torchlint("run", "overfit", str(tmp_path / "nope.py"), cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr
    stray = run_torchlint("run", "overfit", str(SCRIPTS / "plain.py"), "--lr", "3", cwd=tmp_path)
    assert stray.returncode == 2 and "unrecognized arguments: --lr 3" in stray.stderr
    bad_steps = run_torchlint(
        "run", "grads", str(SCRIPTS / "plain.py"), "--steps", "0", cwd=tmp_path
    )
    assert bad_steps.returncode == 2 and "--steps" in bad_steps.stderr
