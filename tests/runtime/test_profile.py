"""`torchlint run profile` on real scripts: stages that add up, the right stage blamed, hints at
the user's lines, the profiler's own cost measured, a Chrome trace on request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from envelope_schema import validate_envelope
from script_marks import SCRIPTS, line_of

from torchlint.runtime.launcher import RunRequest, exit_status, run_check

STAGES = ["data_wait", "h2d_and_preprocess", "forward", "loss", "backward", "optimizer", "other"]


def profile(script: str, steps: int = 10, **options: Any) -> dict[str, Any]:
    request = RunRequest(
        "profile", SCRIPTS / f"{script}.py", steps=steps, timeout_s=90, options=options
    )
    return validate_envelope(run_check(request))


def by_code(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["code"]: d for d in result["diagnostics"]}


def test_a_slow_loader_is_blamed_on_data_wait() -> None:
    result = profile("profile_slow_loader", steps=8, warmup=2)
    assert (result["status"], result["verdict"]) == ("completed", "hints"), (
        result["summary"],
        result["payload"]["stages"],
    )
    assert exit_status(result) == 0  # a profile with hints is a result, not a failure
    payload = result["payload"]
    assert [s["name"] for s in payload["stages"]] == STAGES
    shares = {s["name"]: s["share"] for s in payload["stages"]}
    assert shares["data_wait"] > 0.6
    assert sum(shares.values()) == pytest.approx(1.0, abs=0.01)
    assert payload["synchronization"] == "cpu_clock"
    assert (payload["warmup_steps"], payload["measured_steps"]) == (2, 8)
    assert payload["uninstrumented_steps"] == 8
    assert payload["step_ms"]["uninstrumented_median"] > 0
    assert 0.9 <= payload["coverage"] <= 1.1
    hint = by_code(result)["TLR601"]
    assert hint["line"] == line_of("profile_slow_loader", "loader")
    assert "num_workers" in hint["message"]
    assert payload["hints"][0]["line"] == hint["line"]
    assert payload["record"]["loader"]["num_workers"] == 0


def test_validation_stages_syncs_and_grad_in_evaluation() -> None:
    result = profile("profile_validation", steps=10, warmup=2, limit_batches=4)
    payload = result["payload"]
    validation = payload["validation"]
    assert validation is not None and validation["batches"] >= 4
    assert [s["name"] for s in validation["stages"]] == [
        "validation_data",
        "validation_forward",
        "validation_other",
    ]
    found = by_code(result)
    assert found["TLR605"]["line"] == line_of("profile_validation", "val_forward")
    assert "TLR305" not in found  # the same finding, said once
    # `.item()` on a CPU tensor waits for no device: not a synchronisation
    assert "TLR603" not in found and payload["host_syncs"] == []
    assert "TLR601" not in found  # the data is fast: no near-miss hint


def test_grad_in_an_evaluation_after_the_measured_steps_is_still_tlr605() -> None:
    # 1 warm-up + 4 measured steps, then the plain ones: the first (7-batch) epoch ends among
    # them, so its validation runs after every measured step (a Fabric loop with short epochs)
    result = profile("profile_validation", steps=4, warmup=1, limit_batches=7)
    found = by_code(result)
    assert found["TLR605"]["line"] == line_of("profile_validation", "val_forward")
    assert "TLR305" not in found


def test_a_healthy_loop_gets_no_hints_and_a_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    result = profile("plain", steps=6, warmup=1, trace=str(trace))
    assert result["verdict"] == "ok", result["diagnostics"]
    assert result["payload"]["trace"] == str(trace)
    events = json.loads(trace.read_text())["traceEvents"]
    assert any("aten::" in str(e.get("name", "")) for e in events)


def test_profile_options_belong_to_profile(tmp_path: Path) -> None:
    import subprocess
    import sys

    from conftest import RunTorchlint  # noqa: F401  (the fixture type, for readers)

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "torchlint",
            "run",
            "grads",
            str(SCRIPTS / "plain.py"),
            "--warmup",
            "2",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2
    assert "--warmup applies to profile, not grads" in done.stderr


def test_in_memory_tensors_get_the_advice_tl303_gives_not_more_workers() -> None:
    # the near miss of test_a_slow_loader_is_blamed_on_data_wait: the same wait, but collating
    # slices of tensors in memory, where worker processes would only add copies
    result = profile("profile_in_memory", steps=10, warmup=2)
    hint = by_code(result)["TLR601"]
    assert hint["line"] == line_of("profile_in_memory", "loader")
    assert "TensorDataset" in hint["message"]
    assert "raise num_workers" not in hint["message"]
    payload = result["payload"]
    comparison = payload["instrumentation_comparison"]
    assert comparison in ("measured", "inconclusive", "too few steps")
    # the two windows' spreads are reported, and a ratio only when they allow one
    low, high = payload["step_ms"]["spread"]
    assert 0 < low <= payload["step_ms"]["median"] <= high
    assert (payload["instrumentation_overhead"] is None) == (comparison != "measured")
