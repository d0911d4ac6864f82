"""The message, range and fix of the newer rules, pinned on their flat_script case: the case
tests pin only the rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchlint.engine import analyze
from torchlint.selection import RuleSelection

CASES = Path(__file__).parent / "cases"
ALL = RuleSelection(select=("ALL",))

# code -> each finding of tests/cases/<code>/flat_script.py: (row, column, end row, end column,
# how the message starts, whether it has a fix)
PINNED = {
    "TL112": [
        (
            23,
            16,
            23,
            47,
            "`model(data)` is raw logits (`Net.forward` returns `self.out(...)`",
            False,
        ),
        (29, 12, 29, 37, "`probs` is a softmax, and `nll_loss` expects log-probabilities", False),
    ],
    "TL605": [
        (
            21,
            27,
            21,
            68,
            "`accelerator.gather(...)` in the evaluation loop over `eval_dataloader`",
            True,
        ),
    ],
    "TL606": [
        (14, 9, 14, 67, "`self.log(..., sync_dist=True, on_step=True)` in `training_step`", False),
    ],
    "TL113": [
        (9, 13, 9, 33, "`torch.compile(model)` runs on every pass of a training loop", False),
    ],
}


@pytest.mark.parametrize("code", sorted(PINNED))
def test_message_range_and_fix(code: str) -> None:
    path = CASES / code / "flat_script.py"
    found = [d for d in analyze(path.read_text(), str(path), ALL) if d.code == code]
    got = [
        (
            d.location.row,
            d.location.column,
            d.end_location.row,
            d.end_location.column,
            d.message[: len(start)],
            d.fix is not None,
        )
        for d, (*_, start, _fixed) in zip(found, PINNED[code], strict=True)
    ]
    assert got == PINNED[code]
