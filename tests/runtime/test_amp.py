"""Mixed precision mistakes found in real runs (GradScaler on the CPU, bfloat16 autocast): an
unscaled backward, a step that bypasses the scaler, clipping before `unscale_`; and the correct
uses next to each, which must find nothing."""

from __future__ import annotations

from typing import Any

import pytest
from envelope_schema import validate_envelope
from script_marks import SCRIPTS, at, codes

from torchlint.runtime.launcher import RunRequest, run_check

AMP_CODES = {"TLR306", "TLR307", "TLR308"}


def run(script: str, variant: str, check: str = "grads", steps: int = 6) -> dict[str, Any]:
    request = RunRequest(check, SCRIPTS / f"{script}.py", args=[variant], steps=steps, timeout_s=90)
    return validate_envelope(run_check(request))


@pytest.mark.parametrize(
    ("variant", "code", "marker", "words", "confirms"),
    [
        # the static TL201 stays silent here (the loop does scale a loss): nothing to confirm
        ("unscaled", "TLR306", "unscaled_backward", "scaler.scale(loss).backward()", None),
        ("bypass", "TLR307", "bypass_step", "scaler.step(optimizer)", ["TL202"]),
        ("clip", "TLR308", "clip", "scaler.unscale_(optimizer)", ["TL203"]),
    ],
)
def test_each_misuse_is_found_at_its_line(
    variant: str, code: str, marker: str, words: str, confirms: list[str] | None
) -> None:
    result = run("amp_misuse", variant)
    found = codes(result)
    assert AMP_CODES & set(found) == {code}, result["diagnostics"]
    finding = found[code]
    at(finding, "amp_misuse", marker)
    assert finding["severity"] == "error"
    assert words in finding["advice"]
    assert result["outcome"] == "fail"  # an error-level finding is the headline's reason
    assert result["environment"]["grad_scaler"] is True
    assert finding["evidence"].get("confirms") == confirms


def test_a_scaler_never_used_explains_torchs_assertion() -> None:
    result = run("amp_misuse", "never")
    assert result["status"] == "error"  # torch raises in scaler.step: _scale is None
    found = codes(result)
    at(found["TLR306"], "amp_misuse", "never_scaled")
    assert "TLR001" in found


def test_an_unscaled_backward_says_the_scale_and_fails_overfit() -> None:
    result = run("amp_misuse", "unscaled", check="overfit", steps=30)
    finding = codes(result)["TLR306"]
    assert finding["evidence"]["scale"] == 1024.0
    assert "1024" in finding["message"]
    assert result["outcome"] == "fail"


@pytest.mark.parametrize("variant", ["accumulate", "disabled", "two"])
def test_correct_uses_find_nothing(variant: str) -> None:
    result = run("amp_correct", variant)
    assert result["status"] == "completed", result["summary"]
    assert not AMP_CODES & set(codes(result)), result["diagnostics"]
    # a scaler built with enabled=False scales nothing: no GradScaler in the environment
    assert result["environment"]["grad_scaler"] is (variant != "disabled")
