"""The api rules (TL501-TL507) and `target-torch-version`, and the deprecation table itself."""

from __future__ import annotations

import pytest

from torchlint.analysis.deprecations import API_CHANGES, BY_QUALNAME
from torchlint.engine import analyze
from torchlint.selection import RuleSelection


def codes(text: str, target: tuple[int, int] | None) -> list[tuple[str, int]]:
    selection = RuleSelection(select=("TL5",), target_torch=target)
    return [(d.code, d.location.row) for d in analyze(text, "t.py", selection)]


REMOVED = "import torch\nx = torch.solve(b, A)\n"
LINALG = "import torch\nq, r = torch.qr(A)\n"
LU = "import torch\nx = torch.lu_solve(b, LU, pivots)\n"
RANGE = "import torch\nr = torch.range(0, 3)\n"
FUNCTORCH = "from functorch import vmap\nf = vmap(g)\n"
LOAD = 'import torch\nstate = torch.load("m.pt")\n'
CHECKPOINT = "from torch.utils.checkpoint import checkpoint\ny = checkpoint(f, x)\n"
SEQUENTIAL = "from torch.utils.checkpoint import checkpoint_sequential as cs\ny = cs(f, 2, x)\n"
PRETRAINED = "import torchvision\nm = torchvision.models.resnet18(pretrained=True)\n"


@pytest.mark.parametrize(
    ("text", "target", "expected"),
    [
        # TL501: silent only where the replacement does not exist yet
        (REMOVED, None, [("TL501", 2)]),
        (REMOVED, (1, 8), []),
        (REMOVED, (1, 9), [("TL501", 2)]),
        (REMOVED, (2, 5), [("TL501", 2)]),
        # TL502: silent when the replacement is newer than the target
        (LINALG, (1, 8), []),
        (LINALG, (1, 9), [("TL502", 2)]),
        (LU, (1, 12), []),
        (LU, (1, 13), [("TL502", 2)]),
        (RANGE, (1, 0), [("TL502", 2)]),  # torch.arange is in every release
        (FUNCTORCH, (1, 13), []),
        (FUNCTORCH, (2, 0), [("TL502", 1)]),
        # TL503: between 1.13 (weights_only exists) and 2.6 (it is the default), or no target
        (LOAD, None, [("TL503", 2)]),
        (LOAD, (1, 12), []),
        (LOAD, (1, 13), [("TL503", 2)]),
        (LOAD, (2, 5), [("TL503", 2)]),
        (LOAD, (2, 6), []),
        # TL504: checkpoint from 1.11, checkpoint_sequential from 2.0
        (CHECKPOINT, (1, 10), []),
        (CHECKPOINT, (1, 11), [("TL504", 2)]),
        (SEQUENTIAL, (1, 13), []),
        (SEQUENTIAL, (2, 0), [("TL504", 2)]),
        # TL506: weights= arrived with torchvision 0.13 / PyTorch 1.12
        (PRETRAINED, (1, 11), []),
        (PRETRAINED, (1, 12), [("TL506", 2)]),
    ],
)
def test_target_torch_version(
    text: str, target: tuple[int, int] | None, expected: list[tuple[str, int]]
) -> None:
    assert codes(text, target) == expected


def test_import_forms_resolve_to_the_same_api() -> None:
    text = (
        "import torch as th\n"
        "from torch import qr as decompose\n"
        "import torch.linalg\n"
        "a = th.qr(A)\n"
        "b = decompose(A)\n"
        "c = torch.qr(A)\n"
    )
    assert codes(text, None) == [("TL502", 4), ("TL502", 5), ("TL502", 6)]


def test_names_that_are_not_torchs_own_stay_silent() -> None:
    text = (
        "import torch\n"
        "def qr(a):\n    return torch.linalg.qr(a)\n"
        "def load(path, torch=torch):\n    return torch.load(path)\n"
        "q = qr(A)\n"
    )
    assert codes(text, None) == []


def test_require_grad_only_on_parameters_and_tensors() -> None:
    text = "class A:\n    def __init__(self):\n        self.require_grad = True\n"
    assert codes(text, None) == []
    loop = "for p in model.parameters():\n    p.require_grad = False\n"
    assert codes(loop + "print(q.require_grad)\n", None) == []
    assert codes(loop, None) == [("TL505", 2)]
    assert codes("layer.weight.require_grad = False\n", None) == [("TL505", 1)]
    assert codes("cfg.require_grad = True\n", None) == []  # not known to hold parameters


def test_deprecation_table_is_consistent() -> None:
    assert len(BY_QUALNAME) == len(API_CHANGES), "one entry per API"
    for change in API_CHANGES:
        assert change.qualname.startswith(("torch.", "functorch.")), change.qualname
        assert change.note and not change.note.endswith("."), change.qualname
        if change.status == "removed":
            assert not change.mechanical, f"{change.qualname}: a removed API gets no fix"
        versions = (change.deprecated_in, change.replacement_since)
        if None not in versions:
            assert change.replacement_since <= change.deprecated_in  # type: ignore[operator]
