"""Frameworks that own the loop, installed from the package index (the dev extra) and run for
real on small models with data made in the scripts: Lightning's Trainer (with the check's own
limits, through torchlint.integrations' callback, added automatically or by hand), the Hugging
Face Trainer with dict batches, Accelerate and Fabric."""

from __future__ import annotations

from typing import Any

from envelope_schema import validate_envelope
from script_marks import SCRIPTS, codes, line_of

from torchlint.runtime.launcher import RunRequest, run_check


def launch(
    script: str,
    check: str = "overfit",
    steps: int | None = None,
    args: list[str] | None = None,
    **options: Any,
) -> dict[str, Any]:
    request = RunRequest(
        check=check,
        script=SCRIPTS / f"{script}.py",
        args=args or [],
        steps=steps,
        timeout_s=180,
        options=options,
    )
    return validate_envelope(run_check(request))


def test_lightning_trains_with_the_checks_limits_not_the_scripts_one_batch() -> None:
    result = launch("lightning_loop", steps=300)
    assert (result["status"], result["outcome"]) == ("completed", "pass"), result["summary"]
    # the script limits the Trainer to one step; overfit ran as many as it needed
    assert result["payload"]["steps_run"] > 1
    (used,) = result["frameworks"]
    assert used["integration"] == "torchlint.integrations.lightning"
    assert "overfit_batches" in used["note"]
    assert result["captured"]["losses"][0]["site"]["line"] > 0


def test_lightning_fit_gets_short_epochs_that_reach_validation() -> None:
    result = launch("lightning_loop", check="fit", epochs=3, limit_batches=4)
    assert result["status"] == "completed", result["summary"]
    payload = result["payload"]
    assert payload["epochs_run"] == 3
    assert all(v is not None for v in payload["val_loss"])  # validation after every epoch
    assert payload["metric"]["same_on_both_splits"]


def test_the_callback_added_by_hand_is_not_added_twice() -> None:
    result = launch("lightning_loop", steps=300, args=["--with-callback"])
    assert (result["status"], result["outcome"]) == ("completed", "pass"), result["summary"]
    assert result["payload"]["steps_run"] > 1
    assert len(result["frameworks"]) == 1


def test_the_hugging_face_trainer_with_dict_batches() -> None:
    result = launch("hf_trainer", steps=300)
    assert (result["status"], result["outcome"]) == ("completed", "pass"), result["summary"]
    (used,) = result["frameworks"]
    assert used["integration"] == "torchlint.integrations.transformers"
    assert result["payload"]["batch_source"].startswith("first training batch")
    fit = launch("hf_trainer", check="fit", epochs=2, limit_batches=4)
    assert fit["status"] == "completed", fit["summary"]
    assert fit["payload"]["epochs_run"] == 2
    assert all(v is not None for v in fit["payload"]["val_loss"]), fit["payload"]


def test_accelerate_and_fabric_are_followed_zero_config() -> None:
    for script in ("accelerate_loop", "fabric_loop"):
        result = launch(script, steps=300)
        assert (result["status"], result["outcome"]) == ("completed", "pass"), result["summary"]
        backward = result["captured"]["backward"]["site"]
        assert backward["line"] == line_of(script, "backward")  # through the wrapper, at the call
        assert codes(result) == {}


def test_lr_find_sweeps_a_lightning_trainer_whose_steps_take_a_closure() -> None:
    # Lightning hands every optimizer.step a closure that runs the training step once: that is
    # no line search, and the sweep applies
    result = launch("lightning_loop", check="lr-find", steps=60)
    assert result["status"] == "completed", result["summary"]
    assert result["outcome"] != "not_applicable", result["reason"]
    assert result["payload"]["steps_run"] >= 10


def test_lr_find_without_steps_runs_a_lightning_trainer_past_the_first_100_steps() -> None:
    # the Trainer is configured before the sweep's length is chosen from the step cost: it gets
    # room for the longest sweep, and the sweep ends the run when it is done
    result = launch("lightning_loop", check="lr-find")
    assert result["status"] == "completed", result["summary"]
    payload = result["payload"]
    assert payload["steps_requested"] > 100
    assert payload["steps_run"] > 110, result["summary"]  # the 100-step plan ends at 102


def test_lr_find_does_not_sweep_an_lbfgs_line_search() -> None:
    # the near miss: LBFGS evaluates its closure many times per step
    result = launch("lbfgs", check="lr-find", steps=20)
    assert (result["status"], result["outcome"]) == ("completed", "not_applicable")
    assert "a line search" in result["reason"] and "evaluated the loss" in result["reason"]
