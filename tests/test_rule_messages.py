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
    "TL306": [
        (
            12,
            19,
            12,
            30,
            "`loss.item()` reads a tensor as a Python number inside `train_step`, which "
            "`@torch.compile` compiles: dynamo cannot trace it, so it breaks the graph here",
            False,
        ),
    ],
    "TL404": [
        (
            61,
            9,
            61,
            83,
            "`crops` loads `CropDataset` with `num_workers=4` and no `worker_init_fn`, but "
            "`CropDataset.__getitem__` draws from `self.rng`, a generator "
            "`CropDataset.__init__()` builds once in the main process "
            "(`np.random.default_rng(seed)` at line 11): each worker gets a copy in the same "
            "state, so the workers draw the same random numbers and, as the workers start again "
            "each epoch, every epoch repeats them",
            False,
        ),
        (63, 10, 63, 56, "`jitter` loads `JitterDataset` with `num_workers=2`", False),
        (
            64,
            9,
            66,
            2,
            "`masks` loads `MaskDataset` with `num_workers=8` and no `worker_init_fn`, but "
            "`MaskDataset.__getitem__` draws from `self.generator`, a generator "
            "`MaskDataset.__init__()` builds once in the main process (`torch.Generator()` at "
            "line 39): each worker gets a copy in the same state, so the workers draw the same "
            "random numbers; reseed it",
            False,
        ),
        (67, 9, 67, 66, "`noise` loads `NoiseStream` with `num_workers=2`", False),
    ],
    "TL123": [
        (
            19,
            12,
            19,
            29,
            "`model.fc = nn.Linear(16, 10)` replaces a part of `model` after `optimizer` was "
            "built over `model.parameters()` (line 18), and `optimizer` is used again at line "
            "23: it still holds the old parameters, so the new `model.fc` is never updated; "
            "build the optimizer after the replacement (or pass the new parameters to "
            "`optimizer.add_param_group(...)`).",
            False,
        ),
        (
            30,
            11,
            30,
            31,
            "`student = copy.deepcopy(model)` replaces the object that holds "
            "`student.features` after `student_opt` was built over "
            "`student.features.parameters()` (line 29)",
            False,
        ),
    ],
}

# Messages that name a training framework's loop or object: (code, case file) -> for each
# finding, (row, column, a part of the message).
FRAMEWORK_MESSAGES = {
    ("TL301", "lightning_training_step"): [
        (16, 32, "the loop Lightning runs `Classifier.training_step` in; hand the tensor itself "
         "to `self.log(...)`"),
        (28, 23, "the loop Lightning runs `Regressor.training_step` in"),
        (36, 29, "the loop the Trainer runs `WeightedTrainer.compute_loss` in; keep the value a "
         "tensor (detached)"),
    ],
    ("TL101", "framework_loops"): [
        (13, 9, "call `optimizer.step()` after the backward pass"),
        (21, 9, "call `model_engine.step()` after the backward pass"),
    ],
    ("TL102", "lightning_manual_optimization"): [
        (18, 9, "Gradients are never cleared in the loop Lightning runs "
         "`ManualModule.training_step` in, so each `opt.step()`"),
    ],
    ("TL206", "framework_autocast"): [
        (14, 13, "`accelerator.backward(loss)` runs inside `accelerator.autocast(...)`"),
        (25, 13, "`fabric.backward(loss)` runs inside `fabric.autocast(...)`"),
    ],
    ("TL104", "framework_engine"): [
        (9, 9, "`model_engine.step()` runs before `model_engine.backward(loss)`"),
    ],
}  # fmt: skip


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


@pytest.mark.parametrize("case", sorted(FRAMEWORK_MESSAGES), ids=lambda c: f"{c[0]}/{c[1]}")
def test_framework_messages(case: tuple[str, str]) -> None:
    code, name = case
    path = CASES / code / f"{name}.py"
    found = [d for d in analyze(path.read_text(), str(path), ALL) if d.code == code]
    expected = FRAMEWORK_MESSAGES[case]
    assert [(d.location.row, d.location.column) for d in found] == [e[:2] for e in expected]
    for d, (*_, part) in zip(found, expected, strict=True):
        assert part in d.message, d.message


def test_tl113_names_the_call_as_written() -> None:
    """`th.compile(model)` and `compile_model(model)` are named as the code spells them, not as
    `torch.compile(model)`."""
    path = CASES / "TL113" / "aliased_spellings.py"
    found = analyze(path.read_text(encoding="utf-8"), str(path), RuleSelection(select=("TL113",)))
    starts = [(d.location.row, d.message.split(" runs on")[0]) for d in found]
    assert starts == [(7, "`th.compile(model)`"), (17, "`compile_model(model)`")]
