"""The terminal report of `torchlint run`: rendered from real envelopes (the explicit API on a
tiny model, or small dicts checked against the schema) into a recording console, and read back
as plain text."""

from __future__ import annotations

import copy
import io
import math
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from envelope_schema import validate_envelope
from rich.console import Console

from torchlint.runtime.envelope import envelope, error_info
from torchlint.runtime.report import (
    ProgressDisplay,
    actions,
    environment_line,
    isolation_line,
    make_console,
    render_report,
)
from torchlint.runtime.report.chart import Chart, loss_chart, use_log_scale
from torchlint.runtime.report.grads import MAX_PARAM_ROWS, sort_params
from torchlint.runtime.report.parts import Glyphs
from torchlint.runtime.results import GRAD_ADVICE, error_envelope

RENDER_FAILURE = "could not render part of this report"


def render(result: dict[str, Any], width: int = 100, *, valid: bool = True) -> str:
    """The report as plain text; every envelope rendered here is checked against the schema
    (unless it is meant to be invalid)."""
    if valid:
        validate_envelope(result)
    console = Console(
        file=io.StringIO(), record=True, width=width, force_terminal=False, color_system=None
    )
    render_report(result, console)
    text = console.export_text()
    assert RENDER_FAILURE not in text, text
    return "\n".join(line.rstrip() for line in text.splitlines())


def first_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.strip())


def chart_rows(text: str) -> list[str]:
    """The rows of the loss chart: the lines with a y axis."""
    return [line for line in text.splitlines() if "┤" in line or "│" in line]


# ---------------------------------------------------------------------------------------------
# envelopes: from the explicit API (one torch import, computed once) and hand-made dicts


@pytest.fixture(scope="module")
def api() -> dict[str, dict[str, Any]]:
    """Envelopes of the explicit API on tiny CPU models: a pass, a NaN, and a gradient scan
    with a parameter that never gets a gradient, a frozen one and one outside the optimizer."""
    import torch
    from torch import nn

    from torchlint.runtime import grad_scan, overfit_one_batch

    torch.manual_seed(0)
    batches = [(torch.randn(16, 8), torch.randint(0, 4, (16,))) for _ in range(3)]
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    passed = overfit_one_batch(
        model,
        batches,
        nn.CrossEntropyLoss(),
        torch.optim.Adam(model.parameters(), lr=1e-2),
        steps=60,
    )

    calls = {"n": 0}

    def blows_up_at_step_4(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        calls["n"] += 1
        loss = nn.functional.cross_entropy(output, target)
        return loss * math.nan if calls["n"] == 5 else loss

    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    nan = overfit_one_batch(
        model, batches, blows_up_at_step_4, torch.optim.SGD(model.parameters(), lr=0.1), steps=20
    )

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Linear(8, 8)
            self.body = nn.Linear(8, 8)
            self.head = nn.Linear(8, 4)
            self.unused = nn.Linear(8, 4)
            self.embed.requires_grad_(False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(torch.relu(self.body(self.embed(x))))

    net = Net()
    in_optimizer = [p for n, p in net.named_parameters() if not n.startswith("head.")]
    scan = grad_scan(net, batches, nn.CrossEntropyLoss(), torch.optim.SGD(in_optimizer, lr=0.1))

    deep = nn.Sequential(*[nn.Linear(4, 4) for _ in range(20)])
    wide = grad_scan(
        deep,
        [(torch.randn(8, 4), torch.randint(0, 4, (8,)))],
        nn.CrossEntropyLoss(),
        torch.optim.SGD(deep.parameters(), lr=0.1),
        steps=1,
    )
    return {
        "pass": validate_envelope(passed.to_json()),
        "nan": validate_envelope(nan.to_json()),
        "grads": validate_envelope(scan.to_json()),
        "wide": validate_envelope(wide.to_json()),
    }


def launched(check: str = "overfit", status: str = "completed", **fields: Any) -> dict[str, Any]:
    """An envelope as `torchlint run` fills it, around the given payload and fields."""
    result = envelope(check, status, fields.pop("verdict", None), fields.pop("summary"), None, {})
    result.update(
        script="/work/project/train.py",
        argv=["--epochs", "1"],
        duration_s=3.25,
        isolation={
            "process": "child",
            "timeout_s": 300.0,
            "working_directory": "/work/project",
            "environment": {"WANDB_MODE": "disabled", "TORCHLINT_RUN": "1"},
        },
    )
    result.update(fields)
    return result


def overfit_payload(curve: list[float | None], **fields: Any) -> dict[str, Any]:
    finite = [v for v in curve if v is not None]
    payload: dict[str, Any] = {
        "steps_requested": max(1, len(curve)),
        "steps_run": len(curve),
        "loss_curve": curve,
        "initial_loss": curve[0] if curve else None,
        "final_loss": min(finite[-5:]) if finite else None,
        "final_window": 5,
        "ratio": None,
        "target_ratio": 0.1,
        "absolute_floor": 1e-4,
        "nan_step": None,
        "expected_initial_loss": None,
        "initial_loss_vs_expected": None,
        "initial_accuracy": None,
        "final_accuracy": None,
        "num_classes": None,
        "loss_differentiable": True,
        "backward_per_step": 1.0,
        "batch_source": "first batch of the loader, a fresh copy each step",
        "judged": "loss",
        "judged_curve": curve,
        "reference": curve[0] if curve else None,
        "floor": None,
        "floor_reason": None,
        "other_terms": None,
        "accuracy_needed": None,
        "budget": None,
        "stop": None,
        "curves": [],
        "final_loss_after": None,
        "source": None,
    }
    payload.update(fields)
    return payload


def diagnostic(
    code: str,
    severity: str,
    message: str,
    filename: str | None,
    line: int | None,
    advice: str | None = None,
) -> dict[str, Any]:
    return {
        "code": code,
        "name": "some-check",
        "severity": severity,
        "message": message if advice is None else f"{message} {advice}",
        "advice": advice,
        "filename": filename,
        "line": line,
        "evidence": {},
    }


# ---------------------------------------------------------------------------------------------
# verdict first, then the evidence


def test_a_pass_leads_with_the_verdict_and_draws_the_curve(api: dict[str, Any]) -> None:
    result = api["pass"]
    text = render(result)
    assert first_line(text).strip().startswith("PASS")
    assert result["summary"][:40] in first_line(text)
    curve = [v for v in result["payload"]["loss_curve"] if v is not None]
    rows = chart_rows(text)
    assert len(rows) == 8
    assert rows[0].split("┤")[0].strip() == f"{max(curve):.4g}"
    assert rows[-1].split("┤")[0].strip() == f"{min(curve):.4g}"
    assert all(len(row.split("┤" if "┤" in row else "│")[1]) <= 60 for row in rows)
    ticks = next(line.split() for line in text.splitlines() if line.strip().startswith("0 "))
    assert ticks[-1] == str(len(curve) - 1)  # the x axis: first and last step
    payload = result["payload"]
    assert f"expected {payload['expected_initial_loss']:.4g}" in text
    assert "batch accuracy" in text
    assert "not sufficient" in text  # what a pass does not prove
    assert "what to do" not in text
    assert "torch " in text and "batch 16" in text  # the environment line


def test_a_nan_curve_marks_the_step_where_it_broke(api: dict[str, Any]) -> None:
    result = api["nan"]
    assert result["payload"]["nan_step"] == 4
    text = render(result)
    assert first_line(text).strip().startswith("NaN")
    assert "the loss became non-finite at step 4" in text
    rows = chart_rows(text)
    assert "✕" in rows[0]  # the gap is marked on the chart itself
    assert "✕" not in "".join(rows[1:])
    assert "what to do" in text and "learning rate" in text  # advice without diagnostics


def test_log_scale_for_a_wide_range_and_not_for_a_narrow_one() -> None:
    assert use_log_scale([1000.0, 100.0, 10.0, 1.0])
    assert not use_log_scale([2.0, 1.5, 1.0])
    assert not use_log_scale([1000.0, 0.0])  # zero has no log
    assert not use_log_scale([None, None])
    wide = "\n".join(t.plain for t in loss_chart([1000.0, 100.0, 10.0, 1.0], Glyphs(True)))
    narrow = "\n".join(t.plain for t in loss_chart([2.0, 1.5, 1.0], Glyphs(True)))
    assert "log scale" in wide and "linear scale" in narrow
    labels = [line.split("┤")[0].strip() for line in wide.splitlines() if "┤" in line]
    assert labels == ["1000", "1"]
    # on a log scale 10**1.5 sits halfway between 1 and 1000 (levels 0..31)
    chart = Chart([1000.0, 10**1.5, 1.0], width=40)
    spans = chart.spans()
    assert chart.log and spans[len(spans) // 2] == pytest.approx((1.5, 1.5), abs=0.05)


def test_a_long_curve_is_downsampled_keeping_a_one_step_spike() -> None:
    curve: list[float | None] = [1.0] * 1000
    curve[500] = 5.0
    lines = [t.plain for t in loss_chart(curve, Glyphs(True))]
    rows = [line for line in lines if "┤" in line or "│" in line]
    assert len(rows) == 8
    top = rows[0].split("┤")[1]
    assert len(top) <= 60 and top.strip(), "min/max per column keeps the spike"
    assert rows[0].split("┤")[0].strip() == "5" and rows[-1].split("┤")[0].strip() == "1"
    assert "999" in lines[-1]


def test_the_ascii_chart_for_a_console_without_unicode() -> None:
    lines = [t.plain for t in loss_chart([3.0, 2.0, None], Glyphs(False), nan_step=2)]
    text = "\n".join(lines)
    assert text.isascii()
    assert "*" in text and "x the loss became non-finite at step 2" in text


def test_an_empty_or_all_nan_curve_draws_no_chart() -> None:
    text = render(
        launched(
            verdict="nan",
            summary="overfit: loss became non-finite at step 0",
            payload=overfit_payload([None], nan_step=0, steps_run=0),
        )
    )
    assert "no finite loss was recorded" in text and not chart_rows(text)
    text = render(launched(verdict="fail", summary="overfit: stopped", payload=overfit_payload([])))
    assert "no loss was recorded (0 steps ran)" in text


def test_grads_table_lists_the_worst_parameters_first(api: dict[str, Any]) -> None:
    text = render(api["grads"])
    assert first_line(text).strip().startswith("PROBLEMS")
    body = text.splitlines()
    row_of = {
        name: next(i for i, line in enumerate(body) if line.strip().startswith(name + " "))
        for name in ("unused.weight", "head.weight", "embed.weight", "body.weight")
    }
    assert row_of["unused.weight"] < row_of["head.weight"] < row_of["embed.weight"]
    assert row_of["embed.weight"] < row_of["body.weight"]
    assert "no gradient" in body[row_of["unused.weight"]]
    assert "no optimizer" in body[row_of["head.weight"]]
    assert "frozen" in body[row_of["embed.weight"]]
    assert "depth:" in text and "largest gradients:" in text


def test_grads_table_stops_at_the_limit_with_a_count_of_the_rest(api: dict[str, Any]) -> None:
    result = api["wide"]
    assert len(result["payload"]["params"]) == 40
    text = render(result)
    shown = [line for line in text.splitlines() if re.match(r"  \d+\.(weight|bias) ", line)]
    assert len(shown) == MAX_PARAM_ROWS
    assert f"… {40 - MAX_PARAM_ROWS} more parameters" in text


def test_sort_params_puts_nonfinite_and_none_before_ok_and_extremes_first() -> None:
    def row(name: str, status: str, ratio: float | None) -> dict[str, Any]:
        return {"name": name, "status": status, "ratio": ratio}

    rows = [
        row("typical", "ok", 1e-2),
        row("frozen", "frozen", None),
        row("tiny", "ok", 1e-7),
        row("missing", "none", None),
        row("broken", "nonfinite", None),
        row("zero", "zero", 0.0),
        row("outside", "not_in_optimizer", 1e-2),
        row("typical2", "ok", 2e-2),
    ]
    assert [r["name"] for r in sort_params(rows)] == [
        "broken",
        "missing",
        "outside",
        "zero",
        "frozen",
        "tiny",
        "typical2",
        "typical",
    ]  # 1e-7 and 2e-2 lie further from the median 1e-2 than 1e-2


def test_a_nonfinite_gradient_row_is_rendered_and_first(api: dict[str, Any]) -> None:
    result = copy.deepcopy(api["grads"])
    params = result["payload"]["params"]
    broken = next(p for p in params if p["name"] == "body.bias")
    broken.update(status="nonfinite", grad_norm=[None] * len(broken["grad_norm"]), ratio=None)
    text = render(result)
    table = [line for line in text.splitlines() if line.startswith("  ") and "(" in line]
    assert table[0].strip().startswith("body.bias") and "non-finite" in table[0]
    assert "nan/inf" in table[0]


# ---------------------------------------------------------------------------------------------
# diagnostics and what to do


def test_diagnostics_show_file_and_line_relative_to_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    outside = str(tmp_path.parent / "elsewhere.py")
    result = launched(
        verdict="fail",
        summary="overfit fail: loss 1.4 -> 1.4 in 3 steps",
        payload=overfit_payload([1.4, 1.4, 1.4]),
        diagnostics=[
            diagnostic(
                "TLR205",
                "error",
                "2 trainable parameter(s) are in no optimizer (head.weight, head.bias): they "
                "get gradients but never change.",
                str(tmp_path / "src" / "train.py"),
                26,
                "Add them to the optimizer created at line 26.",
            ),
            diagnostic(
                "TLR104", "error", "SGD has a learning rate of 0.", outside, 7, "Raise it above 0."
            ),
            diagnostic(
                "TLR204", "info", "2 parameters are frozen. Only the rest can learn.", None, None
            ),
        ],
    )
    text = render(result)
    assert "src/train.py:26  TLR205 error  2 trainable parameter(s)" in text
    assert f"{outside}:7  TLR104 error" in text
    assert "(no location)  TLR204 info" in text
    what_to_do = text.split("what to do", 1)[1]
    assert "Add them to the optimizer created at line 26." in what_to_do
    assert "Raise it above 0." in what_to_do  # each finding's advice, not its message
    assert "frozen" not in what_to_do.split("environment:")[0]  # info is no action
    order = [text.index(h) for h in ("FAIL", "evidence", "diagnostics", "what to do")]
    assert order == sorted(order)


def test_actions_are_deduplicated_and_fall_back_to_the_grads_findings(
    api: dict[str, Any],
) -> None:
    twice = diagnostic("TLR100", "error", "It failed.", "a.py", 1, "Check the loss.")
    result = launched(
        verdict="fail",
        summary="overfit fail",
        payload=overfit_payload([1.0, 1.0]),
        diagnostics=[twice, {**twice, "line": 2}],
    )
    assert [a for a, _ in actions(result)] == ["Check the loss."]
    found = [a for a, _ in actions(api["grads"])]  # the explicit API: findings, no diagnostics
    # each finding's own advice field, not a sentence recovered from its message
    assert found == [GRAD_ADVICE["never_gradient"], GRAD_ADVICE["not_in_optimizer"]]
    kinds = {f["kind"]: f for f in api["grads"]["payload"]["findings"]}
    assert kinds["frozen"]["advice"] is None  # info only: no action


# ---------------------------------------------------------------------------------------------
# a check that could not run


def test_capture_failed_lists_what_was_missing_and_the_advice() -> None:
    missing = ["no torch.utils.data.DataLoader was iterated", "backward() was never called"]
    advice = "Define `torchlint_setup()` in the script, returning dict(model=...), and run again."
    result = launched(
        status="capture_failed",
        summary="overfit: could not capture the training step: " + "; ".join(missing),
        payload={"missing": missing, "advice": advice, "frameworks": []},
        diagnostics=[
            diagnostic("TLR003", "error", f"torchlint could not find it. {advice}", None, None)
        ],
    )
    text = render(result)
    assert first_line(text).strip().startswith("NOT CAPTURED")
    for item in missing:
        assert f"• {item}" in text
    assert f"advice: {advice}" in text
    assert text.count("Define `torchlint_setup()`") == 2  # the advice and the diagnostic only


def test_a_timeout_shows_the_message_the_site_and_the_output_tail() -> None:
    tail = [f"epoch 0 batch {i}" for i in range(30)]
    message = "train.py did not finish within 5 s (after 2 of 200 steps). Raise --timeout."
    site = {"filename": "/work/project/train.py", "line": 20, "function": "<module>"}
    finding = diagnostic("TLR002", "error", message, site["filename"], 20, "Raise --timeout.")
    finding["message"] = message
    result = launched(
        status="timeout",
        summary="overfit: timed out after 2 of 200 steps",
        isolation=None,
        error=error_info("timeout", message, site, None, tail),
        diagnostics=[finding],
    )
    text = render(result)
    assert first_line(text).strip().startswith("TIMEOUT")
    assert message in text
    assert "train.py:20 in <module>" in text
    assert "epoch 0 batch 29" in text and "epoch 0 batch 18" in text
    assert "epoch 0 batch 17" not in text  # only the last lines
    assert text.count(message) == 1  # the identical diagnostic is not repeated
    assert "Raise --timeout." in text.split("what to do", 1)[1]


def test_an_error_with_a_curve_shows_it_and_an_error_without_output_says_so() -> None:
    message = "the script crashed at line 17: RuntimeError: corrupt shard"
    result = launched(
        status="error",
        summary=f"overfit: {message} after 2 step(s)",
        payload=overfit_payload([1.5, 1.2]),
        error=error_info("crash", message),
        diagnostics=[diagnostic("TLR001", "error", message, "/work/project/train.py", 17)],
    )
    text = render(result)
    assert first_line(text).strip().startswith("ERROR")
    assert "before it stopped" in text and len(chart_rows(text)) == 8
    assert "(the script printed nothing)" in text
    assert "/work/project/train.py:17  TLR001 error" in text
    what_to_do = text.split("what to do", 1)[1]
    assert "Make the script run on its own" in what_to_do  # not the crash message again
    assert "corrupt shard" not in what_to_do
    text = render(error_envelope("grads", ValueError("the loader yielded no batch")))
    assert first_line(text).strip() == "ERROR  ValueError: the loader yielded no batch"


# ---------------------------------------------------------------------------------------------
# never raises on a valid envelope


def nullable_variants(result: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`result` with each field that the schema lets be null (or empty) set so, one at a time,
    then all at once."""
    top = ["script", "duration_s", "isolation", "environment", "captured"]
    environment = ["batch_size", "autocast", "grad_scaler", "loader"]
    payload = {
        "overfit": [
            "initial_loss",
            "final_loss",
            "ratio",
            "nan_step",
            "final_loss_after",
            "expected_initial_loss",
            "initial_loss_vs_expected",
            "initial_accuracy",
            "final_accuracy",
            "num_classes",
            "backward_per_step",
        ],
        "grads": [],
    }[result["check"]]
    edits: list[Callable[[dict[str, Any]], None]] = []
    edits += [lambda r, k=k: r.__setitem__(k, None) for k in top]
    edits += [lambda r, k=k: r["environment"].__setitem__(k, None) for k in environment]
    edits += [lambda r, k=k: r["payload"].__setitem__(k, None) for k in payload]
    if result["check"] == "overfit":
        edits.append(lambda r: r["payload"].update(loss_curve=[None, None]))
    else:
        edits.append(lambda r: r["payload"].update(losses=[None], global_grad_norm=[]))
        edits.append(lambda r: r["payload"]["depth"].update(first_third_ratio=None))
        edits.append(lambda r: r["payload"].update(params=[], largest=[], smallest=[]))
        edits.append(
            lambda r: [
                p.update(weight_norm=None, ratio=None, grad_norm=[], shape=[])
                for p in r["payload"]["params"]
            ]
        )
    for edit in edits:
        variant = copy.deepcopy(result)
        edit(variant)
        yield variant
    everything = copy.deepcopy(result)
    for edit in edits[len(top) :] + edits[: len(top)]:  # the environment's fields before it
        edit(everything)
    yield everything


def test_no_valid_envelope_breaks_the_report(api: dict[str, Any]) -> None:
    rendered = 0
    for name in ("pass", "nan", "grads"):
        for variant in nullable_variants(api[name]):
            render(variant, width=60)
            rendered += 1
    bare = envelope("overfit", "error", None, "x", None, {"loss_curve": "junk", "params": 3})
    bare["error"] = error_info("internal", "")
    render(bare, width=40, valid=False)  # not even an invalid envelope breaks it
    assert rendered > 30


# ---------------------------------------------------------------------------------------------
# context lines, console and progress


def test_environment_and_isolation_lines() -> None:
    line = environment_line(
        {
            "torch": "2.4.0",
            "device": "cuda:0",
            "dtype": "float32",
            "batch_size": 64,
            "model_mode": "eval",
            "autocast": "bfloat16",
            "grad_scaler": True,
            "loader": {
                "batch_size": 64,
                "num_workers": 4,
                "pin_memory": True,
                "persistent_workers": True,
                "prefetch_factor": 2,
                "drop_last": False,
            },
        }
    )
    assert line.startswith("environment: torch 2.4.0, cuda:0, float32, batch 64")
    assert "eval mode" in line and "autocast bfloat16" in line and "GradScaler" in line
    assert "num_workers=4 pin_memory=True persistent_workers=True prefetch_factor=2" in line
    written = [{"path": p, "bytes": 10, "existed": False} for p in ("a.pt", "b.pt", "c/d.pt")]
    files = {
        "mechanism": "overlay",
        "protected": ["/nowhere"],
        "reason": None,
        "written": written,
        "written_count": 5,
        "deleted": ["old.pt"],
        "deleted_count": 1,
        "kept_in": None,
    }
    isolation = {
        "process": "child",
        "timeout_s": 300.0,
        "working_directory": "/nowhere",
        "environment": {"WANDB_MODE": "disabled"},
        "files": files,
    }
    text = isolation_line(isolation, Glyphs(True))
    assert text.startswith("ran in a child process, limit 300 s")
    assert "5 files written (a.pt, b.pt, c/d.pt, …) went to a scratch folder (overlay" in text
    assert "removed at the end; 1 deletion of your files not applied" in text
    kept = isolation_line(
        {**isolation, "files": {**files, "kept_in": "/out", "mechanism": "redirect"}},
        Glyphs(True),
    )
    assert "(redirection in the script's Python processes), kept in /out" in kept
    none = {**files, "written": [], "written_count": 0, "deleted": [], "deleted_count": 0}
    assert isolation_line({**isolation, "files": none}, Glyphs(True)).endswith(
        "no file written (writes isolated by overlay mounts)"
    )
    assert environment_line({}) == "" and isolation_line({}, Glyphs(True)) == ""


def test_make_console_honours_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    console = make_console()
    assert console.no_color and not console.is_terminal  # pytest captures stdout


def test_progress_prints_nothing_off_a_terminal_and_survives_odd_events() -> None:
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=False, width=80)
    with pytest.raises(RuntimeError), ProgressDisplay(console, "overfit", 10) as on_event:
        on_event({"event": "step", "step": 3, "of": 10})  # before "captured"
        on_event({"event": "captured", "summary": "captured 1 model(s)"})
        on_event({"event": "result", "envelope": {}})
        on_event({"event": "step", "step": "three"})
        on_event({"nonsense": True})
        on_event([])  # type: ignore[arg-type]
        raise RuntimeError("the run failed")
    on_event({"event": "step", "step": 4, "of": 10})  # after exit: ignored
    assert stream.getvalue() == ""


def test_progress_on_a_terminal_takes_events_from_threads_and_stops_on_error() -> None:
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=80, color_system=None)
    display = ProgressDisplay(console, "grads", 50)
    with pytest.raises(KeyboardInterrupt), display as on_event:
        on_event({"event": "captured", "summary": "captured 1 model(s)"})
        workers = [
            threading.Thread(
                target=lambda k=k: [
                    on_event({"event": "step", "step": s, "of": 50}) for s in range(k, 50, 4)
                ]
            )
            for k in range(1, 5)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        on_event({"event": "step", "step": 2, "of": 50})  # late and older: the bar stays
        assert display._step == 49
        raise KeyboardInterrupt
    assert "grads: step 49/50" in stream.getvalue()
    assert console._live_stack == []  # the live display was stopped
    on_event({"event": "step", "step": 50, "of": 50})
