"""`torchlint run fit` on real scripts (tests/runtime/scripts/fit_*.py) in real child processes:
the curve diagnosis (healthy, overfitting, underfitting, NaN), the anomaly pass, the data checks
(train/validation overlap, labels), the SVG plot, and the report; every envelope is validated
against the shipped JSON Schema and every finding's line is read from a `# line: NAME` marker."""

from __future__ import annotations

import copy
import io
import json
import math
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import RunTorchlint
from envelope_schema import validate_envelope
from rich.console import Console
from script_marks import SCRIPTS, at, codes, line_of

from torchlint.runtime.child.fit import (
    OVERFIT_RISE,
    UNDERFIT_RATIO,
    diagnose,
)
from torchlint.runtime.launcher import RunRequest, exit_status, run_check
from torchlint.runtime.report import render_report
from torchlint.runtime.report.fit import epoch_chart, render_evidence
from torchlint.runtime.report.parts import Glyphs

SVG = "{http://www.w3.org/2000/svg}"


def fit(script: str, **options: Any) -> dict[str, Any]:
    request = RunRequest("fit", SCRIPTS / f"{script}.py", timeout_s=90, options=options)
    return validate_envelope(run_check(request))


@cache
def fit_once(script: str, epochs: int) -> str:
    """The envelope of one run, shared by the tests that read it (as JSON: callers get a
    fresh copy)."""
    return json.dumps(fit(script, epochs=epochs))


def report(result: dict[str, Any], width: int = 100) -> str:
    console = Console(
        file=io.StringIO(), record=True, width=width, force_terminal=False, color_system=None
    )
    render_report(result, console)
    text = console.export_text()
    assert "could not render" not in text, text
    return text


# ---------------------------------------------------------------------------------------------
# the curves


def test_overfitting_is_named_at_the_validation_loss_with_a_plot(tmp_path: Path) -> None:
    plot = tmp_path / "curves.svg"
    result = fit("fit_overfit", epochs=6, plot=str(plot))
    assert (result["status"], result["verdict"]) == ("completed", "overfitting"), result["summary"]
    assert exit_status(result) == 1
    payload = result["payload"]
    assert payload["diagnosis"] == "overfitting"
    assert payload["epochs_run"] == 6 and payload["ended"] == "epochs_done"
    train, val = payload["train_loss"], payload["val_loss"]
    assert len(train) == len(val) == 6 and None not in train + val  # epoch 6's validation too
    assert train[-1] < train[0] / 4 and val[-1] > val[0] * (1 + OVERFIT_RISE)
    assert payload["train_batches"] == [6] * 6 and payload["val_batches"] == [4] * 6
    assert len(payload["train_loss_steps"]) == 36
    # stopped at the first fetch of epoch 7: exactly 6 epochs of steps
    assert result["captured"]["optimizers"][0]["steps"] == 36
    assert payload["metric"]["function"] == "cross_entropy"
    assert payload["metric"]["same_on_both_splits"] is True
    assert "with reduction mean on both splits" in payload["metric"]["description"]
    assert payload["loaders"]["validation"]["line"] == line_of("fit_overfit", "val_loader")
    found = codes(result)
    assert set(found) == {"TLR401"}
    at(found["TLR401"], "fit_overfit", "val_loss")
    assert "weight decay" in found["TLR401"]["message"]
    # the SVG: a file a browser opens, with the train and the validation line
    assert payload["plot"] == str(plot)
    root = ET.parse(plot).getroot()
    assert root.tag == f"{SVG}svg"
    lines = root.findall(f".//{SVG}polyline")
    assert len(lines) == 2
    assert all(len(line.get("points", "").split()) == 6 for line in lines)
    text = report(result)
    assert "diagnosis: overfitting" in text and "loss per epoch (6 epochs" in text
    assert "lowest validation" in text and f"plot: {plot}" in text


def test_underfitting_is_named_at_the_training_loss() -> None:
    result = json.loads(fit_once("fit_underfit", 4))
    assert (result["status"], result["verdict"]) == ("completed", "underfitting"), result["summary"]
    assert exit_status(result) == 1
    payload = result["payload"]
    # a new DataLoader every epoch, and a no_grad pass over it: still 4 epochs of 16 steps
    assert (payload["epochs_run"], payload["ended"]) == (4, "epochs_done")
    assert payload["train_batches"] == [16] * 4 and payload["val_batches"] == [4] * 4
    assert result["captured"]["optimizers"][0]["steps"] == 64
    assert payload["num_classes"] == 2
    assert min(payload["train_loss"][-1], payload["val_loss"][-1]) > 0.9 * math.log(2)
    found = codes(result)
    assert set(found) == {"TLR402"}
    at(found["TLR402"], "fit_underfit", "train_loss")
    assert "learning rate" in found["TLR402"]["message"]


def test_nan_is_reported_at_the_backward_and_stops_the_run() -> None:
    result = fit("fit_nan", epochs=6)
    assert (result["status"], result["verdict"]) == ("completed", "nan"), result["summary"]
    assert exit_status(result) == 1
    payload = result["payload"]
    nan = payload["nan"]
    assert nan["split"] == "train" and nan["epoch"] >= 2
    # stopped at the epoch after the NaN, not after all 6
    assert payload["ended"] == "nan" and payload["epochs_run"] == nan["epoch"] < 6
    assert payload["train_loss"][-1] is None and None not in payload["train_loss"][:-1]
    assert payload["train_loss_steps"][nan["step"]] is None
    assert None not in payload["train_loss_steps"][: nan["step"]]
    finding = codes(result)["TLR403"]
    at(finding, "fit_nan", "backward")
    assert f"epoch {nan['epoch']}, step {nan['step']}" in finding["message"]
    assert "--detect-anomaly" in finding["message"]
    assert "non-finite" in report(result)


def test_detect_anomaly_points_at_the_forward_operation() -> None:
    result = fit("fit_nan", epochs=6, detect_anomaly=True)
    # anomaly mode raises in backward: the run crashes there, and says which operation
    assert (result["status"], result["verdict"]) == ("error", None), result["summary"]
    assert exit_status(result) == 2
    anomaly = result["payload"]["anomaly"]
    assert anomaly["operation"] == "SqrtBackward0"
    assert anomaly["site"]["line"] == line_of("fit_nan", "sqrt")
    assert anomaly["loss_was_finite"] is True  # the NaN starts in the backward pass
    found = codes(result)
    at(found["TLR404"], "fit_nan", "sqrt")
    assert "SqrtBackward0" in found["TLR404"]["message"]
    at(found["TLR001"], "fit_nan", "backward")


def test_healthy_run_that_ends_early_with_a_baseline_evaluation() -> None:
    result = fit("fit_healthy", epochs=6)
    assert (result["status"], result["verdict"]) == ("completed", "healthy"), result["summary"]
    assert exit_status(result) == 0
    payload = result["payload"]
    # the script runs 4 epochs; evaluate() before training is a baseline, not an epoch
    assert (payload["epochs_run"], payload["ended"]) == (4, "script_finished")
    assert payload["val_loss_before_training"] > payload["val_loss"][0]
    assert payload["train_batches"] == [20] * 4 and payload["val_batches"] == [2] * 4
    (leak,) = payload["data_checks"]["leakage"]
    assert (leak["method"], leak["overlap"], leak["validation"]) == ("indices", 0, True)
    assert (leak["train_checked"], leak["val_checked"]) == (640, 128)
    labels = payload["data_checks"]["labels"]
    assert labels["num_classes"] == 3 and labels["checked"] == 640
    assert labels["missing"] == [] and labels["dominant"] is None
    assert result["diagnostics"] == []
    text = report(result)
    assert "diagnosis: healthy" in text and "4 of 6 epochs" in text


# ---------------------------------------------------------------------------------------------
# the data checks


def test_validation_subset_overlapping_training_is_exact() -> None:
    result = fit("fit_leak_subset", epochs=3)
    # both curves fall, but on shared samples that shows nothing: inconclusive, not healthy
    assert result["verdict"] == "inconclusive", result["summary"]
    assert "also appear in the training data" in result["payload"]["reason"]
    (leak,) = result["payload"]["data_checks"]["leakage"]
    assert (leak["method"], leak["overlap"]) == ("indices", 32)
    assert (leak["train_checked"], leak["val_checked"]) == (256, 96)
    assert leak["examples"] == [{"index": i} for i in range(224, 229)]
    found = codes(result)
    assert set(found) == {"TLR405"}
    at(found["TLR405"], "fit_leak_subset", "val_loader")
    assert found["TLR405"]["severity"] == "error"


def test_copied_rows_are_found_by_their_hashes() -> None:
    result = fit("fit_leak_rows", epochs=3)
    (leak,) = result["payload"]["data_checks"]["leakage"]
    assert (leak["method"], leak["overlap"]) == ("hashes", 24)
    # the training loader does not shuffle: its sample numbers are dataset indices
    assert leak["examples"] == [
        {"val_sample": 0, "train_sample": 5},
        {"val_sample": 1, "train_sample": 17},
        {"val_sample": 2, "train_sample": 40},
        {"val_sample": 3, "train_sample": 41},
        {"val_sample": 4, "train_sample": 77},
    ]
    found = codes(result)
    at(found["TLR405"], "fit_leak_rows", "val_loader")
    assert "24 of the 96 samples" in found["TLR405"]["message"]
    assert "train/validation overlap" in report(result)


def test_missing_classes_and_imbalance_in_the_first_labels() -> None:
    result = fit("fit_labels", epochs=2)
    assert result["status"] == "completed", result["summary"]
    labels = result["payload"]["data_checks"]["labels"]
    assert labels["num_classes"] == 4 and labels["missing"] == [2, 3]
    assert labels["dominant"]["label"] == 0 and labels["dominant"]["share"] > 0.9
    found = codes(result)
    assert {"TLR406", "TLR407"} <= set(found)
    at(found["TLR406"], "fit_labels", "train_loader")
    at(found["TLR407"], "fit_labels", "train_loader")


def test_a_validation_loader_over_the_training_dataset_object_is_a_leak() -> None:
    result = fit("fit_val_on_train", epochs=2, limit_batches=4)
    assert result["outcome"] == "fail", result["summary"]
    leak = codes(result)["TLR405"]
    at(leak, "fit_val_on_train", "val")
    (checked,) = result["payload"]["data_checks"]["leakage"]
    assert checked["method"] == "indices" and checked["overlap"] == checked["val_checked"] == 256


def test_the_training_split_evaluated_on_purpose_is_no_leak() -> None:
    request = RunRequest(
        "fit",
        SCRIPTS / "fit_val_on_train.py",
        args=["--named-for-training"],
        timeout_s=90,
        options={"epochs": 2, "limit_batches": 4},
    )
    result = validate_envelope(run_check(request))
    assert "TLR405" not in codes(result), result["diagnostics"]
    roles = sorted(item["role"] for item in result["payload"]["data_checks"]["leakage"])
    assert roles == ["other", "train_eval"]


def test_a_label_out_of_range_is_named_before_the_loss_crashes() -> None:
    result = fit("fit_bad_label", epochs=2)
    # cross-entropy raised in batch 3: not the script's crash but a failed check, with the
    # cause at the loader's line and the loss's
    assert (result["status"], result["outcome"]) == ("completed", "fail"), result["summary"]
    assert result["summary"].startswith("fit fail: TLR408")
    found = codes(result)
    assert "TLR001" not in found
    at(found["TLR408"], "fit_bad_label", "train_loader")
    at(found["TLR301"], "fit_bad_label", "loss")
    assert found["TLR408"]["evidence"]["examples"] == [4]
    assert "1-based" in found["TLR408"]["message"]


# ---------------------------------------------------------------------------------------------
# the command line


def test_cli_exit_status_and_json(run_torchlint: RunTorchlint, tmp_path: Path) -> None:
    done = run_torchlint(
        "run", "fit", str(SCRIPTS / "fit_underfit.py"), "--epochs", "3", "--limit-batches", "4",
        "--output-format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    result = validate_envelope(json.loads(done.stdout))
    assert result["verdict"] == "underfitting"
    assert result["payload"]["limit_batches"] == 4
    assert result["payload"]["train_batches"] == [4, 4, 4]
    assert result["payload"]["val_batches"] == [4, 4, 4]


# ---------------------------------------------------------------------------------------------
# the rules on their own


@pytest.mark.parametrize(
    ("train", "val", "start", "classes", "expected"),
    [
        ([1.0, 0.6, 0.4, 0.3], [1.0, 0.7, 0.5, 0.45], 1.2, None, "healthy"),
        # validation rises over its minimum for two epochs while training falls
        ([1.0, 0.6, 0.3, 0.1, 0.05], [0.9, 0.7, 0.8, 0.95, 1.1], 1.2, None, "overfitting"),
        # one bad epoch after the minimum is not enough
        ([1.0, 0.6, 0.3, 0.1], [0.9, 0.7, 0.65, 0.8], 1.2, None, "healthy"),
        # a rise under the margin neither
        ([1.0, 0.6, 0.3, 0.1, 0.05], [0.9, 0.7, 0.72, 0.74, 0.75], 1.2, None, "healthy"),
        # training barely moves from where it started, validation neither
        ([1.0, 0.98, 0.97], [1.0, 0.99, 0.99], 1.05, None, "underfitting"),
        # stuck at log C, although it fell from a confidently wrong start
        ([1.5, 1.2, 1.15], [1.2, 1.17, 1.16], 2.5, 3, "underfitting"),
        ([1.0, 0.6], [None, None], 1.2, None, "inconclusive"),
        ([1.0], [0.9], 1.2, None, "inconclusive"),
        # training falls, validation ends above where it started but within the margin
        ([1.0, 0.6, 0.3], [0.9, 0.95, 0.97], 1.2, None, "inconclusive"),
        # negative losses (a Gaussian NLL): no ratio rules, the plain comparison still works
        ([-0.1, -0.5, -0.9], [0.0, -0.3, -0.6], None, None, "healthy"),
    ],
)
def test_diagnosis_rules(
    train: list[float | None],
    val: list[float | None],
    start: float | None,
    classes: int | None,
    expected: str,
) -> None:
    assert diagnose(train, val, start, classes).diagnosis == expected


def test_underfitting_ratio_is_the_documented_threshold() -> None:
    below = diagnose([1.0, 0.9, 0.89], [1.0, 0.99, 0.98], 1.0).diagnosis
    at_threshold = diagnose([1.0, 0.95, UNDERFIT_RATIO], [1.0, 0.99, 0.98], 1.0).diagnosis
    assert (below, at_threshold) == ("healthy", "underfitting")


# ---------------------------------------------------------------------------------------------
# the report on unusual payloads


def _console() -> Console:
    return Console(
        file=io.StringIO(), record=True, width=80, force_terminal=False, color_system=None
    )


def test_report_renders_sparse_and_odd_payloads() -> None:
    result = json.loads(fit_once("fit_underfit", 4))
    payload = result["payload"]
    sparse = copy.deepcopy(result)
    sparse["payload"].update(
        train_loss=[None, 1.0],
        val_loss=[None, None],
        train_batches=[3, 3],
        val_batches=[0, 0],
        train_loss_steps=[],
        best_epoch=None,
        nan={"split": "validation", "epoch": 1, "step": None},
        data_checks={
            "leakage": [],
            "labels": {
                "checked": 0,
                "num_classes": None,
                "counts": [],
                "missing": [],
                "dominant": None,
                "out_of_range": [],
                "shuffled": None,
            },
        },
        anomaly={
            "enabled": True,
            "operation": None,
            "site": None,
            "loss_was_finite": None,
            "source": None,
        },
        plot=None,
        plot_note="fit draws SVG only",
    )
    empty = copy.deepcopy(result)
    empty["payload"].update(train_loss=[], val_loss=[], train_batches=[], val_batches=[])
    for envelope in (sparse, empty):
        text = report(validate_envelope(envelope), width=60)
        assert "data checks" in text
    assert "non-finite" in report(sparse)
    for glyphs in (Glyphs(True), Glyphs(False)):  # a console that cannot encode Unicode too
        console = _console()
        render_evidence(payload, console, glyphs)
        render_evidence({}, console, glyphs)
        assert "loss per epoch" in console.export_text()


def test_ascii_chart_draws_both_series() -> None:
    lines = [line.plain for line in epoch_chart([3.0, 2.0, 1.0], [2.5, 2.6, 2.9], Glyphs(False))]
    body = "\n".join(lines[1:-2])
    assert "o" in body and "x" in body
    assert lines[-1].split()[:3] == ["1", "2", "3"]
    assert epoch_chart([None], [None], Glyphs(True))[0].plain == "no finite loss was recorded"
