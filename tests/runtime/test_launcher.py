"""The zero-config launcher on real, unmodified training scripts (tests/runtime/scripts/), each
run in a real child process with real PyTorch on the CPU. Every test asserts the verdict and the
lines the findings point at; every envelope is validated against the shipped JSON Schema.

Lines are never hard-coded: scripts mark them with `# line: NAME` comments."""

from __future__ import annotations

import math
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from envelope_schema import validate_envelope
from script_marks import SCRIPTS, at, codes, hang_limit_s, line_of

from torchlint.runtime.launcher import RunRequest, exit_status, run_check, step_progress


def launch(
    script: str,
    check: str = "overfit",
    steps: int | None = 30,
    timeout: float = 60,
    args: list[str] | None = None,
    cwd: Path | None = None,
) -> dict[str, Any]:
    result = run_check(
        RunRequest(
            check=check,
            script=SCRIPTS / f"{script}.py",
            args=args or [],
            steps=steps,
            timeout_s=timeout,
            cwd=cwd,
        )
    )
    return validate_envelope(result)


# ---------------------------------------------------------------------------------------------
# loops that must pass


def test_plain_loop_passes_with_every_site_found(workspace: Path) -> None:
    result = launch("plain", steps=200)
    assert (result["status"], result["verdict"], result["outcome"]) == ("completed", "pass", "pass")
    assert exit_status(result) == 0
    payload = result["payload"]
    # it stops once the batch is memorised, well within the budget
    assert payload["stop"] == "converged" and payload["steps_run"] < 200
    assert len(payload["loss_curve"]) == payload["steps_run"]
    assert payload["ratio"] <= 0.1
    assert payload["expected_initial_loss"] == pytest.approx(math.log(4))
    assert 0.7 < payload["initial_loss_vs_expected"] < 1.3
    assert payload["final_accuracy"] == 1.0
    assert payload["backward_per_step"] == 1.0
    captured = result["captured"]
    (loader,) = captured["loaders"]
    assert loader["role"] == "train" and loader["site"]["line"] == line_of("plain", "loader")
    (optimizer,) = captured["optimizers"]
    assert optimizer["class"] == "Adam" and optimizer["site"]["line"] == line_of(
        "plain", "optimizer"
    )
    assert captured["backward"]["site"]["line"] == line_of("plain", "backward")
    assert captured["losses"][0]["site"]["line"] == line_of("plain", "loss")
    assert captured["models"][0]["forward_site"]["line"] == line_of("plain", "loss")
    assert result["environment"]["batch_size"] == 32
    assert result["environment"]["loader"]["num_workers"] == 0
    # the script's checkpoint.pt went to the run's scratch folder, not over the user's (the
    # workspace guard checks every byte); the envelope says what was written, and how
    files = result["isolation"]["files"]
    assert files["written"] == [
        {"path": "checkpoint.pt", "bytes": files["written"][0]["bytes"], "existed": True}
    ]
    assert files["written"][0]["bytes"] > 1000  # a real state dict, not the user's file
    assert files["mechanism"] in ("overlay", "redirect") and files["kept_in"] is None
    assert (workspace / "checkpoint.pt").read_bytes().startswith(b"the user's checkpoint.pt")
    assert result["diagnostics"] == []


def test_evaluate_first_is_not_mistaken_for_training() -> None:
    result = launch("split", steps=60)
    assert result["verdict"] == "pass", result["summary"]
    roles = {loader["site"]["line"]: loader["role"] for loader in result["captured"]["loaders"]}
    assert roles == {line_of("split", "train"): "train", line_of("split", "val"): "other"}
    assert result["environment"]["loader"]["num_workers"] == 2
    assert result["captured"]["backward"]["site"]["function"] == "train_one_epoch"
    found = codes(result)
    assert set(found) == {"TLR305"}  # evaluate() runs with gradients enabled
    at(found["TLR305"], "split", "eval_forward")
    assert found["TLR305"]["severity"] == "warning"


def test_while_loop_with_dict_batches_and_accumulation() -> None:
    result = launch("while_dict", steps=60)
    assert result["verdict"] == "pass", result["summary"]
    assert result["diagnostics"] == []  # accumulation within a step is not "not cleared"
    assert result["payload"]["backward_per_step"] == 2.0
    assert result["captured"]["backward"]["site"]["line"] == line_of("while_dict", "backward")


def test_two_optimizers_step_in_one_iteration() -> None:
    result = launch("two_optimizers", steps=60)
    assert result["verdict"] == "pass", result["summary"]
    optimizers = result["captured"]["optimizers"]
    assert [o["site"]["line"] for o in optimizers] == [
        line_of("two_optimizers", "opt_enc"),
        line_of("two_optimizers", "opt_dec"),
    ]
    assert [o["primary"] for o in optimizers] == [True, False]
    steps = result["payload"]["steps_run"]
    assert all(o["steps"] >= steps for o in optimizers)
    # one loss reached both models and both stepped on it: the same curve, judged once
    curves = result["payload"]["curves"]
    assert [c["steps"] for c in curves] == [o["steps"] for o in optimizers]
    assert curves[0]["loss_curve"] == curves[1]["loss_curve"]
    assert len(result["captured"]["models"]) == 2


def test_lbfgs_closure_counts_one_step_per_call() -> None:
    result = launch("lbfgs", steps=20)
    assert result["verdict"] == "pass", result["summary"]
    assert 1 < result["payload"]["steps_run"] <= 20
    assert result["payload"]["backward_per_step"] > 1
    assert result["captured"]["optimizers"][0]["step_site"]["line"] == line_of("lbfgs", "step")


def test_script_arguments_reach_the_script() -> None:
    passing = launch("args", steps=60)
    failing = launch("args", steps=20, args=["--lr", "0"])
    assert passing["verdict"] == "pass", passing["summary"]
    assert failing["verdict"] == "fail" and failing["argv"] == ["--lr", "0"]
    at(codes(failing)["TLR104"], "args", "optimizer")


def test_setup_factory_runs_instead_of_the_script() -> None:
    # the script's __main__ block never ends: finishing proves it was not run
    result = launch("factory", steps=80, timeout=30)
    assert (result["status"], result["verdict"]) == ("completed", "pass"), result["summary"]
    assert result["payload"]["source"] == "torchlint_setup()"


# ---------------------------------------------------------------------------------------------
# loops that must fail, for the right reason, at the right line


@pytest.mark.parametrize(
    ("script", "code", "marker"),
    [
        ("wrong_optimizer", "TLR105", "optimizer"),
        ("lr_zero", "TLR104", "optimizer"),
        ("detached", "TLR106", "backward"),
        ("detached_plain", "TLR103", "backward"),
        ("no_zero_grad", "TLR107", "step"),
        ("no_zero_grad_clipped", "TLR107", "step"),
    ],
)
def test_overfit_fails_and_names_the_cause(script: str, code: str, marker: str) -> None:
    result = launch(script, steps=20)
    assert (result["status"], result["verdict"]) == ("completed", "fail"), result["summary"]
    assert exit_status(result) == 1
    found = codes(result)
    assert found[code]["severity"] == "error"
    at(found[code], script, marker)


def test_clipped_gradients_that_are_cleared_are_not_accumulation() -> None:
    # the near miss of no_zero_grad_clipped: the same clipping, with zero_grad()
    result = launch("no_zero_grad_clipped", steps=20, args=["--zero-grad"])
    assert result["status"] == "completed", result["summary"]
    assert "TLR107" not in codes(result)


def test_frozen_backbone_fails_and_points_at_the_backbone() -> None:
    result = launch("frozen_backbone", steps=60)
    assert result["verdict"] == "fail", result["summary"]
    found = codes(result)
    at(found["TLR100"], "frozen_backbone", "backward")
    assert found["TLR204"]["severity"] == "warning"  # frozen parameters explain the failure
    at(found["TLR204"], "frozen_backbone", "freeze")  # the line that froze them
    assert found["TLR204"]["evidence"]["params"][0].startswith("backbone.")


def test_nan_is_reported_with_its_step() -> None:
    result = launch("nan_step", steps=30)
    assert result["verdict"] == "nan"
    assert result["payload"]["nan_step"] == 6
    assert all(v is not None for v in result["payload"]["loss_curve"][:6])
    at(codes(result)["TLR101"], "nan_step", "backward")


def test_labels_out_of_range_stop_before_the_loss_runs() -> None:
    result = launch("labels", steps=30)
    assert (result["status"], result["verdict"]) == ("completed", "fail")
    finding = codes(result)["TLR301"]
    at(finding, "labels", "loss")
    assert finding["evidence"] == {"target_min": 1, "target_max": 4, "num_classes": 4}
    assert "1-based" in finding["message"]


def test_labels_out_of_range_in_an_evaluation_before_training_are_tlr301_not_a_crash() -> None:
    # nanoGPT's shape: the loss crashes in `estimate_loss` under no_grad, before the first
    # training step the spy watches; the crash is classified from the loss's own frame
    result = launch("evaluate_first", steps=30, args=["--shift", "1"])
    assert (result["status"], result["outcome"]) == ("completed", "fail"), result["summary"]
    found = codes(result)
    assert "TLR001" not in found
    at(found["TLR301"], "evaluate_first", "loss")
    assert found["TLR301"]["evidence"] == {"target_min": 1, "target_max": 8, "num_classes": 8}
    assert result["reason"].startswith("TLR301")


def test_the_same_loop_with_labels_in_range_trains() -> None:
    result = launch("evaluate_first", steps=30)
    assert (result["status"], result["outcome"]) == ("completed", "pass"), result["summary"]
    assert "TLR301" not in codes(result) and result["payload"]["steps_run"] >= 5


def test_an_index_error_outside_any_loss_stays_the_scripts_crash() -> None:
    result = launch("evaluate_first", steps=30, args=["--bad-index"])
    assert result["status"] == "error", result["summary"]
    found = codes(result)
    assert "TLR301" not in found
    at(found["TLR001"], "evaluate_first", "bad index")


def test_probabilities_into_nll_loss_are_found_by_their_rows() -> None:
    result = launch("nll_probabilities", steps=30, args=["--exp"])
    assert result["outcome"] == "fail", result["summary"]
    finding = codes(result)["TLR303"]
    at(finding, "nll_probabilities", "loss")
    assert finding["evidence"]["input_came_from"] == "probabilities"
    assert "log-probabilities (log_softmax)" in finding["message"]


def test_log_probabilities_into_nll_loss_are_no_finding() -> None:
    result = launch("nll_probabilities", steps=30)
    assert "TLR303" not in codes(result), result["diagnostics"]


def test_first_step_sanity_checks() -> None:
    result = launch("sanity", steps=10)
    found = codes(result)
    at(found["TLR303"], "sanity", "loss")
    assert found["TLR303"]["evidence"]["input_came_from"] == "softmax"
    at(found["TLR304"], "sanity", "forward")
    assert found["TLR304"]["evidence"]["mode_dependent_layers"] == ["layers.2"]


def test_regression_shapes_that_broadcast() -> None:
    result = launch("mse_broadcast", steps=10)
    finding = codes(result)["TLR302"]
    at(finding, "mse_broadcast", "loss")
    assert finding["evidence"] == {"input_shape": [16, 1], "target_shape": [16]}


# ---------------------------------------------------------------------------------------------
# scripts that cannot be checked: a clear status, the line, exit 2


def test_a_crash_is_reported_at_its_line() -> None:
    result = launch("crash")
    assert (result["status"], result["verdict"]) == ("error", None)
    assert exit_status(result) == 2
    assert result["error"]["kind"] == "crash"
    assert result["error"]["site"]["line"] == line_of("crash", "raise")
    assert "corrupt shard 17" in result["error"]["message"]
    assert set(codes(result)) == {"TLR001"}  # no overfit verdict on a crashed run
    at(codes(result)["TLR001"], "crash", "raise")


def test_a_timeout_names_the_steps_the_check_was_running_to() -> None:
    # the child's last step event carries the total at that moment (fit and profile grow it);
    # the requested count (0 for fit: "25 of 0 steps") is not it
    assert step_progress({"event": "step", "step": 25, "of": 40}) == "after 25 of 40 steps"
    assert step_progress({"event": "step", "step": 25, "of": 0}) == "after 25 steps"
    assert step_progress({"event": "step", "step": 21, "of": 10}) == "after 21 steps"
    assert step_progress({"event": "step", "step": 3, "of": 10**9}) == "after 3 steps"
    assert step_progress({"event": "step", "step": 1}) == "after 1 step"


def test_a_hang_times_out_at_the_stuck_line() -> None:
    limit = hang_limit_s()  # past torch's import, on a loaded machine too
    started = time.monotonic()
    result = launch("hang", timeout=limit)
    elapsed = time.monotonic() - started
    assert result["status"] == "timeout" and exit_status(result) == 2
    assert elapsed < limit + 4, elapsed
    at(codes(result)["TLR002"], "hang", "hang")
    assert "after 2 of 30 steps" in result["error"]["message"]
    # the stack at the moment it was stopped ends the output tail, innermost frame last
    last = result["error"]["output_tail"][-1]
    assert last.endswith(f'hang.py", line {line_of("hang", "hang")} in <module>'), last
    assert result["isolation"]["timeout_s"] == limit


def test_sys_exit_is_reported_with_its_status_and_line() -> None:
    result = launch("sys_exit")
    assert result["status"] == "error" and result["error"]["kind"] == "exit"
    assert result["error"]["exit_code"] == 1
    at(codes(result)["TLR004"], "sys_exit", "exit")


def test_no_dataloader_replays_the_first_steps_tensors() -> None:
    result = launch("no_loader", steps=300)
    assert (result["status"], result["verdict"]) == ("completed", "pass"), result["summary"]
    assert "first training step (no DataLoader)" in result["payload"]["batch_source"]


def test_nothing_to_capture_is_a_capture_failure_with_advice() -> None:
    result = launch("no_step")
    assert result["status"] == "capture_failed" and exit_status(result) == 2
    assert "backward() was never called" in result["payload"]["missing"]
    assert "torchlint_setup()" in result["payload"]["advice"]


def test_a_check_that_ignores_torchlint_setup_never_suggests_it() -> None:
    for check in ("profile", "fit", "lr-find"):
        result = launch("no_step", check=check)
        assert result["status"] == "capture_failed", (check, result["summary"])
        advice = result["payload"]["advice"]
        assert advice.startswith(f"{check} follows the script's own training loop"), advice
        assert "Define `torchlint_setup()`" not in advice


def test_missing_interpreter_is_an_error_not_an_exception(tmp_path: Path) -> None:
    result = validate_envelope(
        run_check(RunRequest("overfit", SCRIPTS / "plain.py", python=str(tmp_path / "no-python")))
    )
    assert result["status"] == "error" and result["error"]["kind"] == "setup"


# ---------------------------------------------------------------------------------------------
# the gradient scan on the user's own loop


def test_grads_finds_unused_frozen_and_unoptimised_parameters() -> None:
    result = launch("grads_issues", check="grads", steps=3)
    assert (result["status"], result["verdict"]) == ("completed", "problems")
    found = codes(result)
    at(found["TLR201"], "grads_issues", "aux")
    assert found["TLR201"]["evidence"]["params"] == ["aux_head.weight", "aux_head.bias"]
    at(found["TLR204"], "grads_issues", "freeze")  # the line that froze it
    at(found["TLR205"], "grads_issues", "optimizer")
    assert found["TLR205"]["evidence"]["params"] == ["head.weight", "head.bias"]
    statuses = {p["name"]: p["status"] for p in result["payload"]["params"]}
    assert statuses == {
        "embed.weight": "frozen",
        "embed.bias": "frozen",
        "body.weight": "ok",
        "body.bias": "ok",
        "head.weight": "not_in_optimizer",
        "head.bias": "not_in_optimizer",
        "aux_head.weight": "none",
        "aux_head.bias": "none",
    }
    assert result["payload"]["steps_run"] == 3


def test_grads_on_a_healthy_loop() -> None:
    result = launch("plain", check="grads", steps=4)
    assert (result["status"], result["verdict"]) == ("completed", "healthy"), result["summary"]
    params = result["payload"]["params"]
    assert [p["name"] for p in params] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert all(len(p["grad_norm"]) == 4 and None not in p["grad_norm"] for p in params)
    assert all(n is not None and n > 0 for n in result["payload"]["global_grad_norm"])


def test_vanishing_gradients_in_a_deep_stack_are_a_warning_that_does_not_fail_grads() -> None:
    result = launch("deep_sigmoid", check="grads", steps=3)
    assert (result["status"], result["outcome"], result["verdict"]) == (
        "completed",
        "pass",
        "healthy",
    ), result["summary"]
    finding = codes(result)["TLR207"]
    assert finding["severity"] == "warning"
    assert "layer depths (farthest from the loss)" in finding["message"]
    assert result["payload"]["depth"]["verdict"] == "vanishing"
    assert exit_status(result) == 0


def test_parallel_branches_of_an_actor_critic_are_not_compared_as_depths() -> None:
    # by registration order the critic's first layers were compared with the actor's small
    # head; by layer depth the two branches are averaged per depth, and three layers are too
    # few to call a trend
    result = launch("two_branches", check="grads", steps=3)
    assert (result["status"], result["verdict"]) == ("completed", "healthy"), result["summary"]
    assert not {"TLR207", "TLR208"} & codes(result).keys()
    assert result["payload"]["depth"]["verdict"] == "insufficient"


def test_grads_reports_the_first_nonfinite_step() -> None:
    result = launch("nan_step", check="grads", steps=8)
    assert result["verdict"] == "problems"
    finding = codes(result)["TLR203"]
    at(finding, "nan_step", "backward")
    assert finding["evidence"]["step"] == 6


def test_scripts_are_copied_nowhere_and_left_unchanged(tmp_path: Path) -> None:
    """A check reads the script where it is and changes nothing in its folder."""
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(SCRIPTS / "plain.py", folder / "train.py")
    before = sorted(p.name for p in folder.iterdir())
    result = validate_envelope(
        run_check(RunRequest("overfit", folder / "train.py", steps=5, cwd=folder))
    )
    assert result["status"] == "completed"
    assert sorted(p.name for p in folder.iterdir()) == before


def test_mixed_precision_records_the_unscaled_loss() -> None:
    result = launch("amp", steps=60)
    assert result["verdict"] == "pass", result["summary"]
    environment = result["environment"]
    assert (environment["autocast"], environment["grad_scaler"]) == ("bfloat16", True)
    # the curve holds the loss itself, not the scaled tensor backward() was called on
    assert result["payload"]["loss_curve"][0] == pytest.approx(math.log(4), rel=0.3)


def test_grads_under_a_grad_scaler_are_unscaled() -> None:
    result = launch("amp", check="grads", steps=3)
    assert result["verdict"] == "healthy", result["summary"]
    norms = [n for p in result["payload"]["params"] for n in p["grad_norm"]]
    assert max(norms) < 50  # scaled by 1024 they would be in the hundreds


def test_out_of_memory_is_named() -> None:
    result = launch("out_of_memory")
    assert result["status"] == "error" and result["error"]["kind"] == "out_of_memory"
    assert result["error"]["site"]["line"] == line_of("out_of_memory", "alloc")


def test_a_killed_script_is_reported_with_its_signal_and_output() -> None:
    result = launch("killed")
    assert result["status"] == "error" and result["error"]["kind"] == "killed"
    assert "SIGKILL" in result["error"]["message"]
    assert "loading a large dataset..." in result["error"]["output_tail"]


def test_os_exit_is_reported_with_its_status() -> None:
    result = launch("os_exit")
    assert result["status"] == "error" and result["error"]["kind"] == "exit"
    assert result["error"]["exit_code"] == 3


def test_megabytes_of_output_are_cut_to_their_tail() -> None:
    result = launch("noisy")
    assert result["error"]["kind"] == "crash" and "bad config" in result["error"]["message"]
    tail = result["error"]["output_tail"]
    assert 0 < len(tail) <= 20
    assert any("the real error comes last" in line for line in tail)
