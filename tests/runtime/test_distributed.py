"""Checks under torchrun: two real CPU processes with the gloo backend, every rank instrumented,
their results combined in the parent."""

from __future__ import annotations

from typing import Any

from envelope_schema import validate_envelope
from script_marks import SCRIPTS, line_of

from torchlint.runtime.launcher import RunRequest, exit_status, run_check


def launch(check: str, script: str, steps: int = 4) -> dict[str, Any]:
    request = RunRequest(
        check, SCRIPTS / f"{script}.py", steps=steps, timeout_s=90, nproc_per_node=2
    )
    return validate_envelope(run_check(request))


def test_ddp_gradients_agree_across_ranks() -> None:
    result = launch("grads", "ddp_train")
    assert (result["status"], result["verdict"]) == ("completed", "healthy"), result["summary"]
    ranks = result["payload"]["ranks"]
    assert [(r["rank"], r["status"]) for r in ranks] == [(0, "completed"), (1, "completed")]
    assert result["payload"]["distributed"] == {"ranks": 2, "differing_params": []}
    assert result["diagnostics"] == []


def test_a_module_outside_ddp_drifts_apart() -> None:
    result = launch("grads", "ddp_unsynced")
    assert result["verdict"] == "problems" and exit_status(result) == 1
    (finding,) = [d for d in result["diagnostics"] if d["code"] == "TLR209"]
    assert finding["evidence"]["params"] == ["head.weight", "head.bias"]
    assert finding["line"] == line_of("ddp_unsynced", "head")
    assert result["summary"].startswith("grads problems:")


def test_profile_blames_the_slow_rank() -> None:
    result = launch("profile", "ddp_skew", steps=6)
    assert result["status"] == "completed", result["summary"]
    waits = result["payload"]["distributed"]["stage_ms_by_rank"]["data_wait"]
    assert waits[1] > 10 * waits[0]
    (finding,) = [d for d in result["diagnostics"] if d["code"] == "TLR606"]
    assert finding["message"].startswith("rank 1 spends")
    assert finding["evidence"]["stage"] == "data_wait"
    assert finding["line"] == line_of("ddp_skew", "loader")


def test_balanced_ranks_are_not_blamed() -> None:
    result = launch("profile", "ddp_train", steps=6)
    assert result["status"] == "completed", result["summary"]
    assert "TLR606" not in {d["code"] for d in result["diagnostics"]}
    assert len(result["payload"]["ranks"]) == 2
