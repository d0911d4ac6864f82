"""Verdicts a person can trust, on every loop shape: real child processes, real PyTorch on the
CPU, one unmodified script each (tests/runtime/scripts/). Every test asserts the outcome (pass,
fail with its cause, inconclusive with what would decide it, not applicable with why) and the
lines the findings point at; every envelope is validated against the schema and the typed
model."""

from __future__ import annotations

import math
import time
from typing import Any

from envelope_schema import validate_envelope
from script_marks import SCRIPTS, at, codes, line_of

from torchlint.runtime.launcher import RunRequest, exit_status, run_check


def launch(
    script: str,
    check: str = "overfit",
    steps: int | None = None,
    args: list[str] | None = None,
    timeout: float = 120,
    **options: Any,
) -> dict[str, Any]:
    request = RunRequest(
        check=check,
        script=SCRIPTS / f"{script}.py",
        args=args or [],
        steps=steps,
        timeout_s=timeout,
        options=options,
    )
    return validate_envelope(run_check(request))


def outcome(result: dict[str, Any]) -> tuple[str, str, str | None]:
    return result["status"], result["outcome"], result["verdict"]


# ---------------------------------------------------------------------------------------------
# loops without a DataLoader, and without torch.optim


def test_a_manual_update_is_recognised_at_its_line_and_the_batch_memorised() -> None:
    result = launch("manual_sgd", steps=400)
    assert outcome(result) == ("completed", "pass", "pass"), result["summary"]
    found = codes(result)
    at(found["TLR109"], "manual_sgd", "update")
    assert found["TLR109"]["severity"] == "info"
    # a fresh random batch every step: the first step's tensors are replayed instead
    assert "first training step (no DataLoader)" in result["payload"]["batch_source"]
    (optimizer,) = result["captured"]["optimizers"]
    assert optimizer["class"] == "manual update" and optimizer["primary"]


def test_a_manual_update_with_a_zero_learning_rate_fails_at_the_update_line() -> None:
    result = launch("manual_sgd", steps=200, args=["--lr", "0"])
    assert outcome(result)[:2] == ("completed", "fail"), result["summary"]
    assert exit_status(result) == 1
    found = codes(result)
    at(found["TLR108"], "manual_sgd", "update")
    assert result["reason"].startswith("TLR108")


def test_fit_without_a_data_loader_says_why_and_nothing_else() -> None:
    import io

    from rich.console import Console

    from torchlint.runtime.report import render_report

    result = launch("manual_sgd", check="fit")
    assert outcome(result) == ("completed", "not_applicable", "not_applicable")
    assert "DataLoader" in result["summary"] and "TLR006" in codes(result)  # for the editor
    console = Console(file=io.StringIO(), width=100, color_system=None)
    render_report(result, console)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert shown.lstrip().startswith("NOT APPLICABLE") and "DataLoader" in shown
    # no empty evidence ("- of - epochs"), no data checks that were never run, and the reason
    # once, not again as a diagnostic
    for heading in ("evidence", "data checks", "diagnostics", "of - epochs"):
        assert heading not in shown, shown
    assert shown.count("fit reads epochs") == 1, shown


def test_checks_that_need_an_optimizer_say_so_in_seconds() -> None:
    started = time.monotonic()
    result = launch("manual_sgd", check="lr-find")
    assert outcome(result) == ("completed", "not_applicable", "not_applicable")
    assert time.monotonic() - started < 60  # not after hundreds of backward calls
    assert "updates its parameters itself" in result["reason"]
    at(codes(result)["TLR006"], "manual_sgd", "update")
    assert exit_status(result) == 0


def test_grads_scans_each_manual_update() -> None:
    result = launch("manual_sgd", check="grads", steps=3)
    assert outcome(result) == ("completed", "pass", "healthy"), result["summary"]
    params = result["payload"]["params"]
    assert len(params) == 4 and all(len(p["grad_norm"]) == 3 for p in params)
    assert all(n is not None and n > 0 for p in params for n in p["grad_norm"])


def test_full_batch_training_is_its_own_overfit_test() -> None:
    result = launch("full_batch", steps=500)
    assert outcome(result) == ("completed", "pass", "pass"), result["summary"]
    assert result["payload"]["batch_source"].startswith("full batch")


def test_fit_without_a_dataloader_says_so_at_once() -> None:
    result = launch("full_batch", check="fit")
    assert outcome(result) == ("completed", "not_applicable", "not_applicable")
    assert "DataLoader" in result["reason"]
    assert result["captured"]["optimizers"][0]["steps"] == 0  # stopped at the first backward


def test_fit_without_a_dataloader_reads_the_scripts_own_evaluation_of_its_splits() -> None:
    # nanoGPT's shape: `estimate_loss` evaluates `for split in ["train", "val"]` before the
    # first step and every 50 steps; the validation curve is its "val" values, an epoch the
    # steps between two evaluations
    result = launch("evaluate_first", check="fit", epochs=3, timeout=180)
    assert result["status"] == "completed", result["summary"]
    assert result["outcome"] in ("pass", "inconclusive"), result["summary"]
    payload = result["payload"]
    assert payload["epochs_run"] == 3
    assert payload["train_batches"] == [50, 50, 50]
    assert payload["val_batches"] == [2, 2, 2]  # the "val" split only, two batches each time
    assert payload["val_loss_before_training"] is not None
    assert all(v is not None for v in payload["val_loss"])
    assert payload["loaders"]["validation"]["line"] == line_of("evaluate_first", "evaluation")
    assert "the script's own evaluation at line" in payload["reason"]
    assert result["captured"]["optimizers"][0]["steps"] in range(150, 152)


# ---------------------------------------------------------------------------------------------
# several optimizers, and objectives the criterion cannot judge


def test_a_gan_is_not_applicable_and_each_model_has_its_own_curve() -> None:
    result = launch("gan", steps=300)
    assert outcome(result) == ("completed", "not_applicable", "not_applicable"), result["summary"]
    assert "adversarial" in result["reason"]
    curves = {c["site"]["line"]: c for c in result["payload"]["curves"]}
    generator, discriminator = line_of("gan", "opt_g"), line_of("gan", "opt_d")
    assert set(curves) == {generator, discriminator}
    assert all(c["steps"] >= 1 and c["initial_loss"] is not None for c in curves.values())
    # each backward was attributed to the optimizer that stepped on it: two different curves
    assert curves[generator]["loss_curve"] != curves[discriminator]["loss_curve"]


def test_a_generator_optimizer_built_over_the_discriminator_is_tlr105_at_its_line() -> None:
    # created before the discriminator's own: which optimizer is wrong is read from the loss it
    # steps on (it trains the generator's parameters, which no optimizer holds), not the order
    result = launch("gan", steps=50, args=["--g-over-d"])
    assert outcome(result)[:2] == ("completed", "fail"), result["summary"]
    found = codes(result)
    at(found["TLR105"], "gan", "opt_g")
    assert f"created at line {line_of('gan', 'opt_d')} holds too" in found["TLR105"]["message"]
    assert found["TLR105"]["evidence"]["untrained_parameters"] == 4
    assert "TLR205" not in found  # the generator's parameters are this finding's
    assert result["reason"].startswith("TLR105")


def test_the_right_gan_has_no_optimizer_finding() -> None:
    result = launch("gan", steps=50)
    assert not {"TLR105", "TLR205"} & codes(result).keys(), result["diagnostics"]


def test_a_generator_that_has_not_stepped_yet_is_no_finding() -> None:
    # grads: five steps of the discriminator; the generator's optimizer has not stepped yet
    result = launch("gan_discriminator_first", check="grads", steps=5)
    assert outcome(result)[:2] == ("completed", "pass"), result["summary"]
    rows = {p["name"]: p for p in result["payload"]["params"]}
    # two Sequential roots, told apart; the generator's rows point at the generator's line
    generator = [row for name, row in rows.items() if name.startswith("Sequential[1].")]
    assert len(generator) == 4 and len(rows) == 8
    assert {row["status"] for row in generator} == {"not_scanned"}
    assert {row["site"]["line"] for row in generator} == {
        line_of("gan_discriminator_first", "generator")
    }
    assert "none" not in {row["status"] for row in rows.values()}
    assert "TLR201" not in codes(result)
    # fit stops at the first backward, before the generator ran: no optimizer is "over another
    # model" for that
    fit = launch("gan_discriminator_first", check="fit", epochs=1, limit_batches=2)
    assert outcome(fit)[:2] == ("completed", "not_applicable"), fit["summary"]
    assert "TLR105" not in codes(fit)


def test_a_generator_that_steps_is_scanned() -> None:
    # the near miss: a scan of the discriminator's first twelve steps reaches the generator's
    # first two, and its gradients are read there
    result = launch("gan_discriminator_first", check="grads", steps=12)
    assert outcome(result)[:2] == ("completed", "pass"), result["summary"]
    generator = [p for p in result["payload"]["params"] if p["name"].startswith("Sequential[1].")]
    assert {row["status"] for row in generator} == {"ok"}


def test_a_loss_not_bounded_below_is_not_applicable() -> None:
    result = launch("unbounded", steps=200)
    assert outcome(result) == ("completed", "not_applicable", "not_applicable")
    assert "not a criterion bounded below" in result["reason"]
    at(codes(result)["TLR006"], "unbounded", "backward")


def test_reinforcement_learning_is_not_applicable_to_overfit_but_grads_apply() -> None:
    overfit = launch("rl_cartpole")
    assert outcome(overfit) == ("completed", "not_applicable", "not_applicable")
    assert "reinforcement learning (gymnasium" in overfit["reason"]
    grads = launch("rl_cartpole", check="grads", steps=2)
    assert outcome(grads) == ("completed", "pass", "healthy"), grads["summary"]


# ---------------------------------------------------------------------------------------------
# judging the reducible part of the loss, and the accuracy


def test_a_vae_is_judged_on_its_reducible_reconstruction_loss() -> None:
    result = launch("vae", steps=1500, time_budget=150, timeout=240)
    payload = result["payload"]
    assert payload["judged"] == "reducible binary_cross_entropy"
    assert payload["floor_reason"] == "soft targets" and payload["floor"] > 0
    # the KL term no loss function computed is reported apart
    assert payload["other_terms"] is not None and payload["other_terms"]["final"] > 0
    # the raw loss could never fall tenfold: it sits on the targets' entropy
    assert payload["loss_curve"][-1] > 0.5 * payload["loss_curve"][0]
    assert outcome(result) == ("completed", "pass", "pass"), result["summary"]


def test_label_smoothing_is_judged_against_its_floor() -> None:
    result = launch("label_smoothing", steps=600)
    payload = result["payload"]
    assert payload["floor_reason"] == "label smoothing 0.2"
    c, e = 5, 0.2
    high, low = 1 - e + e / c, e / c
    entropy = -(high * math.log(high) + (c - 1) * low * math.log(low))
    assert math.isclose(payload["floor"], entropy, rel_tol=1e-4)
    assert outcome(result) == ("completed", "pass", "pass"), result["summary"]
    assert payload["final_accuracy"] >= 0.9


def test_accuracy_counts_only_targets_that_are_not_ignored() -> None:
    result = launch("ignore_index", steps=800)
    payload = result["payload"]
    assert outcome(result) == ("completed", "pass", "pass"), result["summary"]
    # with the ignored positions counted as wrong it could not exceed 3/8
    assert payload["final_accuracy"] >= 0.9
    assert payload["initial_accuracy"] < 0.3


def test_a_falling_loss_at_a_low_batch_accuracy_never_passes() -> None:
    result = launch("conflicting_labels", steps=400)
    assert outcome(result) == ("completed", "inconclusive", "inconclusive"), result["summary"]
    payload = result["payload"]
    assert payload["ratio"] < 0.1  # the loss fell far: a ratio alone would have said pass
    assert payload["final_accuracy"] <= 0.875 and payload["accuracy_needed"] == 0.9
    assert "batch accuracy 0.8" in result["reason"]
    at(codes(result)["TLR110"], "conflicting_labels", "loss")


def test_a_time_budget_spent_in_a_few_slow_steps_is_inconclusive_not_a_failure() -> None:
    result = launch("slow_steps", time_budget=3)
    assert outcome(result) == ("completed", "inconclusive", "inconclusive"), result["summary"]
    assert result["payload"]["stop"] == "time_budget"
    assert result["payload"]["steps_run"] < 100
    assert "too few to judge; --time-budget" in result["reason"]
    assert not any(d["severity"] == "error" for d in result["diagnostics"])


def test_the_default_time_budget_grows_for_steps_that_take_a_second() -> None:
    # a step costs a CPU second: 90 s would stop at about 90 steps, before a plateau can be
    # told (100); measured over the first steps, the budget grows to fit them
    result = launch("slow_steps", steps=6, timeout=300, args=["--cost", "1.0"])
    payload = result["payload"]
    assert payload["stop"] == "step_budget" and payload["steps_run"] == 6, result["summary"]
    assert 100 < payload["budget"]["seconds"] < payload["budget"]["wall_guard_seconds"]


def test_slow_steps_that_change_nothing_still_fail() -> None:
    result = launch("slow_steps", time_budget=3, args=["--lr", "0"])
    assert outcome(result)[:2] == ("completed", "fail"), result["summary"]
    at(codes(result)["TLR104"], "slow_steps", "optimizer")


def test_the_time_budget_is_cpu_time_so_wall_clock_slow_steps_do_not_spend_it() -> None:
    # each step sleeps 0.3 s: the clock runs as on a busy machine, the training thread's CPU
    # time hardly moves, so the 3 s budget is not what stops it: the --timeout hang guard is,
    # and running out of wall time is inconclusive with what would decide, never a failure
    result = launch("slow_steps", time_budget=3, timeout=40, args=["--wait", "sleep"])
    assert outcome(result) == ("completed", "inconclusive", "inconclusive"), result["summary"]
    payload = result["payload"]
    assert payload["stop"] == "wall_clock"
    assert payload["steps_run"] > 3 / 0.3  # a wall-clock budget of 3 s would have stopped here
    assert payload["budget"]["cpu_seconds_used"] < 3
    assert payload["budget"]["clock"] == "cpu time of the training thread"
    assert "ran out of wall time" in result["reason"] and "longer --timeout" in result["reason"]
    assert not any(d["severity"] == "error" for d in result["diagnostics"])
    assert exit_status(result) == 0


def test_cpu_slow_steps_spend_the_time_budget_in_cpu_seconds() -> None:
    result = launch("slow_steps", time_budget=3)
    budget = result["payload"]["budget"]
    assert budget["seconds"] == 3 and budget["cpu_seconds_used"] >= 3
    assert budget["wall_guard_seconds"] is not None and budget["wall_guard_seconds"] > 3


def test_a_confidently_wrong_start_is_judged_from_a_uniform_prediction() -> None:
    # every input the same: the loss falls from 60 to log 4, which is no learning at all
    result = launch("low_accuracy", steps=300)
    assert outcome(result)[:2] == ("completed", "fail"), result["summary"]
    assert "did not fall below a uniform prediction's (1.386" in result["reason"]
    assert result["payload"]["final_accuracy"] == 0.25


def test_the_same_start_with_separable_inputs_passes() -> None:
    result = launch("separable", steps=300)
    assert outcome(result) == ("completed", "pass", "pass"), result["summary"]
    assert result["payload"]["final_accuracy"] >= 0.9
    assert "TLR110" not in codes(result)


def test_a_script_that_ends_early_is_inconclusive_not_broken() -> None:
    result = launch("ends_early", steps=200)
    assert outcome(result) == ("completed", "inconclusive", "inconclusive"), result["summary"]
    assert "the script ended after 3 step(s)" in result["reason"]
    assert exit_status(result) == 0
    assert not any(d["severity"] == "error" for d in result["diagnostics"])


# ---------------------------------------------------------------------------------------------
# frozen parameters, escapes, the configured learning rate


def test_everything_frozen_is_named_at_the_line_that_froze_it() -> None:
    result = launch("all_frozen", steps=20)
    assert outcome(result)[:2] == ("completed", "fail"), result["summary"]
    found = codes(result)
    assert "TLR103" not in found  # not blamed on detached tensors
    at(found["TLR204"], "all_frozen", "freeze")
    assert found["TLR204"]["severity"] == "error"


def test_terminal_escapes_never_reach_the_report() -> None:
    result = launch("ansi_crash")
    assert result["status"] == "error"
    assert "\x1b" not in result["error"]["message"] and "\x1b" not in result["summary"]
    assert "shard 3 is corrupt" in result["error"]["message"]
    assert all("\x1b" not in line for line in result["error"]["output_tail"])
    at(codes(result)["TLR001"], "ansi_crash", "raise")


def test_lr_find_reads_the_configured_rate_not_the_warm_up_start() -> None:
    result = launch("warmup_lr", check="lr-find", steps=80)
    assert result["status"] == "completed", result["summary"]
    payload = result["payload"]
    assert math.isclose(payload["script_lr"], 3e-3, rel_tol=1e-6)  # not 3e-6, the first step's
    assert "TLR502" not in codes(result)  # so no "1000x too low"
    if payload["suggested_lr"] is not None:
        assert payload["suggestion_reason"].startswith("where the smoothed loss fell fastest")


# ---------------------------------------------------------------------------------------------
# fit: the same metric on both splits


def test_fit_compares_a_summed_validation_loss_per_element() -> None:
    result = launch("fit_sum_validation", check="fit", epochs=3, limit_batches=8)
    assert result["status"] == "completed", result["summary"]
    payload = result["payload"]
    metric = payload["metric"]
    assert metric["aggregation"] == "mean_per_element_per_epoch"
    assert metric["reductions"] == {"train": ["mean"], "validation": ["sum"]}
    assert "divided by the elements it summed" in metric["description"]
    # per element, the validation loss is on the training loss's scale (not 40x above it)
    assert all(v < 3 * max(payload["train_loss"]) for v in payload["val_loss"] if v is not None)
    # the loader over the training split, named so, is an evaluation of it on purpose
    roles = {item["role"] for item in payload["data_checks"]["leakage"]}
    assert roles == {"other", "train_eval"}
    assert "TLR405" not in codes(result)
    assert outcome(result)[1] in ("pass", "inconclusive")


# ---------------------------------------------------------------------------------------------
# profile: never ok without a measured step


def test_profile_is_inconclusive_when_no_step_was_measured() -> None:
    result = launch("ends_early", check="profile")
    assert outcome(result)[:2] == ("completed", "inconclusive"), result["summary"]
    assert "no step was measured: the script stopped after 3 step(s)" in result["reason"]
    assert result["payload"]["measured_steps"] == 0
    assert exit_status(result) == 0


def test_profile_measures_the_same_script_given_enough_steps() -> None:
    # the near miss: without warm-up the three steps are measured, and profile decides
    result = launch("ends_early", check="profile", warmup=0, steps=1)  # warm-up 0 means 1
    assert outcome(result)[:2] == ("completed", "pass"), result["summary"]
    assert result["payload"]["measured_steps"] >= 1
