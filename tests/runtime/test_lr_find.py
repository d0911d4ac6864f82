"""`torchlint run lr-find`: the learning-rate range test on real, unmodified training scripts
(tests/runtime/scripts/lr_*.py), each in a real child process on the CPU. Every envelope is
validated against the shipped JSON Schema; lines come from `# line: NAME` markers."""

from __future__ import annotations

import io
import json
import math
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest
from conftest import RunTorchlint
from envelope_schema import validate_envelope
from rich.console import Console
from script_marks import SCRIPTS, at, codes

from torchlint.runtime.child.lr_find_curve import analyse, diverged, smooth, sweep_lr
from torchlint.runtime.launcher import RunRequest, exit_status, run_check
from torchlint.runtime.report import render_report


def lr_find(
    script: str, steps: int | None = 100, cwd: Path | None = None, **options: Any
) -> dict[str, Any]:
    result = run_check(
        RunRequest(
            check="lr-find",
            script=SCRIPTS / f"{script}.py",
            steps=steps,
            options=options,
            timeout_s=60,
            cwd=cwd,
        )
    )
    return validate_envelope(result)


def report_text(result: dict[str, Any]) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None, legacy_windows=False)
    render_report(result, console)
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------
# real sweeps


def test_a_learnable_classifier_gets_a_sane_suggestion_and_the_plot(tmp_path: Path) -> None:
    plot = tmp_path / "sweep.svg"
    result = lr_find("lr_sweep", cwd=tmp_path, plot=str(plot))
    assert (result["status"], result["verdict"]) == ("completed", "suggested"), result["summary"]
    assert exit_status(result) == 0
    payload = result["payload"]
    assert 1e-4 < payload["suggested_lr"] < 1
    # one recommendation, with its reason (no second "minimum / 10" suggestion)
    assert "min_loss_lr_div10" not in payload
    assert payload["suggestion_reason"].startswith("where the smoothed loss fell fastest")
    assert payload["min_loss_lr"] > payload["suggested_lr"]
    # the loss diverged before lr_max: the sweep stopped early
    assert payload["diverged_at_step"] is not None and payload["sweep_end"] == "diverged"
    assert payload["steps_run"] == payload["diverged_at_step"] + 1 < payload["steps_requested"]
    assert payload["diverged_lr"] < payload["lr_max"]
    assert len(payload["lrs"]) == len(payload["losses"]) == len(payload["smoothed"])
    # the exponential schedule, from the defaults
    assert payload["lrs"][0] == pytest.approx(1e-7)
    assert payload["lrs"][50] == pytest.approx(1e-7 * 1e8 ** (50 / 99))
    assert payload["suggested_lr"] == payload["lrs"][payload["suggested_step"]]
    # the script's lr (after a warm-up that starts 1000x lower) is reported, not flagged
    assert payload["script_lr"] == pytest.approx(3e-3)
    assert result["diagnostics"] == []
    # the user's scheduler keeps its own lr: the sweep's value is put back after each step
    (optimizer,) = result["captured"]["optimizers"]
    assert optimizer["lr"][0] < 3e-3
    assert payload["weights"] == "discarded with the child process"
    assert not (tmp_path / "model.pt").exists()
    # the SVG
    assert payload["plot"] == str(plot)
    root = ElementTree.parse(plot).getroot()
    assert root.tag.endswith("svg")
    assert "suggested" in plot.read_text()
    text = report_text(result)
    assert "suggested lr" in text and "lowest loss at" in text and str(plot) in text
    assert "diverged at step" in text and "1e-5" in text  # the log lr axis


def test_without_steps_the_sweep_length_follows_the_step_cost() -> None:
    # a step of this classifier costs a few ms of CPU: the 30 CPU-second budget holds the most
    # steps (1000), so the sweep climbs more slowly per decade of lr than the 100-step one
    result = lr_find("lr_sweep", steps=None)
    assert result["status"] == "completed", result["summary"]
    payload = result["payload"]
    assert payload["steps_requested"] == 1000
    assert payload["lrs"][0] == pytest.approx(1e-7)
    # from step 6 on, the schedule is the 1000-step one
    assert payload["lrs"][500] == pytest.approx(1e-7 * 1e8 ** (500 / 999))
    assert payload["steps_run"] > 100
    assert 1e-4 < payload["suggested_lr"] < 1


def test_an_explicit_steps_is_the_sweep_length() -> None:
    result = lr_find("lr_sweep", steps=60)
    assert result["payload"]["steps_requested"] == 60
    assert len(result["payload"]["lrs"]) <= 60


def test_an_absurd_lr_is_flagged_at_the_optimizer_line() -> None:
    result = lr_find("lr_too_high")
    assert result["verdict"] == "suggested", result["summary"]
    found = codes(result)
    assert set(found) == {"TLR501"}
    at(found["TLR501"], "lr_too_high", "optimizer")
    assert found["TLR501"]["severity"] == "error"
    assert (result["outcome"], exit_status(result)) == ("fail", 1)
    evidence = found["TLR501"]["evidence"]
    assert evidence["script_lr"] == 50 and evidence["script_lr"] > 10 * evidence["diverged_lr"]
    assert "Lower the learning rate" in found["TLR501"]["message"]


def test_a_tiny_tensor_lr_is_flagged_and_restored() -> None:
    result = lr_find("lr_too_low")
    assert result["verdict"] == "suggested", result["summary"]
    found = codes(result)
    assert set(found) == {"TLR502"}
    at(found["TLR502"], "lr_too_low", "optimizer")
    assert result["payload"]["script_lr"] == pytest.approx(1e-6)
    # the tensor lr was swept in place, and the scheduler's value put back
    assert result["captured"]["optimizers"][0]["lr"][0] < 1e-6


def test_a_loss_that_cannot_fall_gets_no_suggestion(tmp_path: Path) -> None:
    result = lr_find("lr_flat", cwd=tmp_path)
    assert (result["status"], result["verdict"]) == ("completed", "no_suggestion")
    # the loss is not connected to the model: an error-level finding, so the outcome is fail
    assert (result["outcome"], exit_status(result)) == ("fail", 1)
    assert result["reason"].startswith("TLR106")
    payload = result["payload"]
    assert payload["suggested_lr"] is None
    assert "never fell clearly below" in payload["no_suggestion_reason"]
    assert payload["sweep_end"] == "completed" and payload["steps_run"] == 100
    found = codes(result)
    assert set(found) == {"TLR106", "TLR503"}  # the capture says why: nothing reaches the model
    at(found["TLR503"], "lr_flat", "backward")
    assert "no suggestion" in report_text(result)


def test_the_cli_exit_status_and_json(run_torchlint: RunTorchlint, tmp_path: Path) -> None:
    done = run_torchlint(
        "run", "lr-find", str(SCRIPTS / "lr_sweep.py"), "--steps", "100", "--lr-min", "1e-6",
        "--lr-max", "100", "--output-format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = validate_envelope(json.loads(done.stdout))
    payload = result["payload"]
    assert (payload["lr_min"], payload["lr_max"]) == (1e-6, 100)
    assert payload["lrs"][0] == pytest.approx(1e-6)
    assert result["verdict"] == "suggested"


# ---------------------------------------------------------------------------------------------
# the rule, without a child process


def test_the_sweep_schedule_and_the_smoothing() -> None:
    assert sweep_lr(0, 100, 1e-7, 10) == pytest.approx(1e-7)
    assert sweep_lr(99, 100, 1e-7, 10) == pytest.approx(10)
    assert sweep_lr(0, 1, 1e-3, 1) == 1e-3
    smoothed = smooth([2.0, 2.0, None, 1.0, math.nan, 1.0])
    assert smoothed[:3] == pytest.approx([2.0, 2.0, 2.0])  # bias-corrected; None keeps it
    assert 1.0 < smoothed[3] < 2.0  # type: ignore[operator]
    assert smoothed[4] is None and smoothed[5] is None
    assert diverged(4.1, 1.0) and not diverged(3.9, 1.0)
    assert diverged(5.0, -1.0) is True and diverged(1.9, -1.0) is False


def test_the_steepest_descent_lies_between_the_start_and_the_minimum() -> None:
    n = 100
    lrs = [sweep_lr(k, n, 1e-6, 1) for k in range(n)]
    # flat, a descent centred on lr 1e-3, a minimum, then a rise
    losses: list[float | None] = [
        2.0 - 1.5 / (1 + math.exp(-(math.log10(lr) + 3) * 3)) + (lr > 0.1) * 10 * lr for lr in lrs
    ]
    smoothed = smooth(losses, 0.5)
    found = analyse(lrs, losses, smoothed)
    assert found.steepest_step is not None and found.min_step is not None
    assert found.skip <= found.steepest_step < found.min_step
    assert 1e-4 < lrs[found.steepest_step] < 1e-2
    flat = analyse(lrs, [1.0] * n, smooth([1.0] * n))
    assert flat.steepest_step is None and flat.kind == "no_descent"
    short = analyse(lrs[:5], losses[:5], smoothed[:5])
    assert short.kind == "too_few_steps"
    nan = analyse(lrs[:4], [1.0, 1.0, math.nan, None], smooth([1.0, 1.0, math.nan, None]))
    assert nan.kind == "diverged_at_start"
