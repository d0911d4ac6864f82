"""Mixed precision on CUDA: overfit and grads under float16 with a GradScaler and under
bfloat16; the three GradScaler misuses found at their lines, confirming the static rules."""

from __future__ import annotations

import pytest
from gpu_helpers import by_code, line_of, run

AMP_CODES = {"TLR306", "TLR307", "TLR308"}


@pytest.mark.parametrize(("variant", "dtype"), [("fp16", "float16"), ("bf16", "bfloat16")])
def test_overfit_and_grads_under_autocast(variant: str, dtype: str) -> None:
    overfit = run("overfit", "amp_cuda", variant, steps=300)
    assert overfit["outcome"] == "pass", (overfit["summary"], overfit["diagnostics"])
    environment = overfit["environment"]
    assert environment["autocast"] == dtype
    assert environment["grad_scaler"] is (variant == "fp16")
    grads = run("grads", "amp_cuda", variant, steps=10)
    assert grads["outcome"] == "pass", (grads["summary"], grads["diagnostics"])
    assert not AMP_CODES & set(by_code(grads))


@pytest.mark.parametrize(
    ("variant", "code", "marker", "confirms"),
    [
        ("unscaled", "TLR306", "unscaled_backward", None),
        ("bypass", "TLR307", "bypass_step", ["TL202"]),
        ("clip", "TLR308", "clip", ["TL203"]),
    ],
)
def test_each_misuse_on_cuda(
    variant: str, code: str, marker: str, confirms: list[str] | None
) -> None:
    result = run("grads", "amp_cuda", variant, steps=6)
    found = by_code(result)
    assert AMP_CODES & set(found) == {code}, result["diagnostics"]
    assert found[code]["line"] == line_of("amp_cuda", marker)
    assert found[code]["evidence"].get("confirms") == confirms
