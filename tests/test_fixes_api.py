"""The api rules' fixes (TL502-TL507): exact output, applicability, idempotence, and the forms
that get no fix because the rewrite would not be exact."""

from __future__ import annotations

import pytest

from torchlint.engine import analyze
from torchlint.fixer import fix_text
from torchlint.selection import RuleSelection

# (rule, source before, source after the fix, applicability); after=None: reported, no fix.
CASES: dict[str, tuple[str, str, str | None, str | None]] = {
    # --- TL502 deprecated-api ------------------------------------------------------------------
    "ger_is_renamed": (
        "TL502",
        "import torch\nv = torch.ger(a, b)\n",
        "import torch\nv = torch.outer(a, b)\n",
        "safe",
    ),
    "ger_reference_is_renamed": (
        "TL502",
        "import torch as th\nouter = th.ger\n",
        "import torch as th\nouter = th.outer\n",
        "safe",
    ),
    "qr_default": (
        "TL502",
        "import torch\nq, r = torch.qr(A)\n",
        "import torch\nq, r = torch.linalg.qr(A)\n",
        "safe",
    ),
    "qr_some_false_keyword": (
        "TL502",
        "import torch\nq, r = torch.qr(A, some=False)\n",
        'import torch\nq, r = torch.linalg.qr(A, mode="complete")\n',
        "safe",
    ),
    "qr_some_true_positional": (
        "TL502",
        "import torch\nq, r = torch.qr(A, True)\n",
        'import torch\nq, r = torch.linalg.qr(A, mode="reduced")\n',
        "safe",
    ),
    "qr_some_parenthesized": (
        "TL502",
        "import torch\nq, r = torch.qr(A, some=(False), out=(q0, r0))\n",
        'import torch\nq, r = torch.linalg.qr(A, mode="complete", out=(q0, r0))\n',
        "safe",
    ),
    "qr_some_variable_has_no_fix": (
        "TL502",
        "import torch\nq, r = torch.qr(A, some=full)\n",
        None,
        None,
    ),
    "qr_from_import_adds_import_torch": (
        "TL502",
        "from torch import qr\n\nq, r = qr(A)\n",
        "from torch import qr\nimport torch\n\nq, r = torch.linalg.qr(A)\n",
        "safe",
    ),
    "cholesky_lower": (
        "TL502",
        "import torch\nL = torch.cholesky(A)\n",
        "import torch\nL = torch.linalg.cholesky(A)\n",
        "safe",
    ),
    "cholesky_upper_has_no_fix": (
        "TL502",
        "import torch\nU = torch.cholesky(A, upper=True)\n",
        None,
        None,
    ),
    "chain_matmul_becomes_a_list": (
        "TL502",
        "import torch\nm = torch.chain_matmul(\n    a,\n    b,\n    c,\n)\n",
        "import torch\nm = torch.linalg.multi_dot(\n    [a,\n    b,\n    c],\n)\n",
        "safe",
    ),
    "chain_matmul_parenthesized_arguments": (
        "TL502",
        "import torch\nm = torch.chain_matmul((a), b @ c, (d))\n",
        "import torch\nm = torch.linalg.multi_dot([(a), b @ c, (d)])\n",
        "safe",
    ),
    "chain_matmul_one_matrix_has_no_fix": (
        "TL502",
        "import torch\nm = torch.chain_matmul(a)\n",
        None,
        None,
    ),
    "norm_without_arguments": (
        "TL502",
        "import torch\nn = torch.norm(x)\n",
        "import torch\nn = torch.linalg.vector_norm(x)\n",
        "safe",
    ),
    "norm_with_dim_has_no_fix": (
        "TL502",
        "import torch\nn = torch.norm(x, dim=1)\n",
        None,
        None,
    ),
    "lu_solve_moves_the_right_hand_side": (
        "TL502",
        "import torch\nX = torch.lu_solve(B, LU, pivots)\n",
        "import torch\nX = torch.linalg.lu_solve(LU, pivots, B)\n",
        "safe",
    ),
    "range_has_no_fix": (
        "TL502",
        "import torch\nr = torch.range(0, 10)\n",
        None,
        None,
    ),
    "functorch_import_is_rewritten": (
        "TL502",
        "from functorch import vmap as fvmap, grad\n\nf = fvmap(grad(g))\n",
        "from torch.func import vmap as fvmap, grad\n\nf = fvmap(grad(g))\n",
        "safe",
    ),
    "functorch_import_with_make_functional_has_no_fix": (
        "TL502",
        "from functorch import make_functional, vmap\n",
        None,
        None,
    ),
    "functorch_attribute": (
        "TL502",
        "import functorch\nf = functorch.jacrev(g)\n",
        "import functorch\nimport torch\nf = torch.func.jacrev(g)\n",
        "safe",
    ),
    # --- TL503 unsafe-torch-load ---------------------------------------------------------------
    "load_gets_weights_only": (
        "TL503",
        'import torch\nstate = torch.load("m.pt", map_location="cpu")\n',
        'import torch\nstate = torch.load("m.pt", map_location="cpu", weights_only=True)\n',
        "safe",
    ),
    "load_one_argument_per_line": (
        "TL503",
        'import torch\nstate = torch.load(\n    "m.pt",\n    map_location="cpu",\n)\n',
        'import torch\nstate = torch.load(\n    "m.pt",\n    map_location="cpu",\n'
        "    weights_only=True,\n)\n",
        "safe",
    ),
    "load_with_trailing_comment_has_no_fix": (
        "TL503",
        'import torch\nstate = torch.load(\n    "m.pt"  # the latest\n)\n',
        None,
        None,
    ),
    "load_with_pickle_module_has_no_fix": (
        "TL503",
        'import dill\nimport torch\nstate = torch.load("m.pt", pickle_module=dill)\n',
        None,
        None,
    ),
    "load_crlf": (
        "TL503",
        'import torch\r\nstate = torch.load("m.pt")\r\n',
        'import torch\r\nstate = torch.load("m.pt", weights_only=True)\r\n',
        "safe",
    ),
    # --- TL504 checkpoint-without-use-reentrant ------------------------------------------------
    "checkpoint_gets_use_reentrant_false": (
        "TL504",
        "from torch.utils.checkpoint import checkpoint\ny = checkpoint(block, x)\n",
        "from torch.utils.checkpoint import checkpoint\n"
        "y = checkpoint(block, x, use_reentrant=False)\n",
        "unsafe",
    ),
    "checkpoint_sequential": (
        "TL504",
        "import torch\ny = torch.utils.checkpoint.checkpoint_sequential(blocks, 2, x)\n",
        "import torch\n"
        "y = torch.utils.checkpoint.checkpoint_sequential(blocks, 2, x, use_reentrant=False)\n",
        "unsafe",
    ),
    # --- TL505 require-grad-typo ---------------------------------------------------------------
    "require_grad_is_renamed": (
        "TL505",
        "for p in model.parameters():\n    p.require_grad = False\n",
        "for p in model.parameters():\n    p.requires_grad = False\n",
        "unsafe",
    ),
    # --- TL506 deprecated-torchvision-pretrained -----------------------------------------------
    "pretrained_true_becomes_default_weights": (
        "TL506",
        "import torchvision\nm = torchvision.models.resnet50(pretrained=True)\n",
        'import torchvision\nm = torchvision.models.resnet50(weights="DEFAULT")\n',
        "unsafe",
    ),
    "pretrained_false_becomes_no_weights": (
        "TL506",
        "from torchvision import models\nm = models.vgg16(pretrained = False, num_classes=10)\n",
        "from torchvision import models\nm = models.vgg16(weights=None, num_classes=10)\n",
        "safe",
    ),
    "pretrained_parenthesized": (
        "TL506",
        "import torchvision\nm = torchvision.models.resnet18(pretrained=(False))\n",
        "import torchvision\nm = torchvision.models.resnet18(weights=None)\n",
        "safe",
    ),
    "pretrained_variable_has_no_fix": (
        "TL506",
        "from torchvision.models import resnet18\nm = resnet18(pretrained=args.pretrained)\n",
        None,
        None,
    ),
    # --- TL507 unstable-log-exp ----------------------------------------------------------------
    "log1p_one_on_the_left": (
        "TL507",
        "import torch\ny = torch.log(1 + x * scale)\n",
        "import torch\ny = torch.log1p(x * scale)\n",
        "safe",
    ),
    "log1p_float_one_on_the_right": (
        "TL507",
        "import torch as t\ny = t.log((a - b) + 1.0)\n",
        "import torch as t\ny = t.log1p(a - b)\n",
        "safe",
    ),
    "expm1_inside_a_larger_expression": (
        "TL507",
        "import torch\ny = 2 * torch.exp(x) + (torch.exp(x) - 1) / x\n",
        "import torch\ny = 2 * torch.exp(x) + (torch.expm1(x)) / x\n",
        "safe",
    ),
    "logsumexp_function_form": (
        "TL507",
        "import torch\ny = torch.log(torch.sum(torch.exp(x), -1, keepdim=True))\n",
        "import torch\ny = torch.logsumexp(x, -1, keepdim=True)\n",
        "safe",
    ),
    "logsumexp_method_chain": (
        "TL507",
        "y = (a + b).exp().sum(dim=0).log()\n",
        "y = (a + b).logsumexp(dim=0)\n",
        "safe",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_api_fix(name: str) -> None:
    code, before, after, applicability = CASES[name]
    selection = RuleSelection(select=(code,))
    diagnostics = analyze(before, "t.py", selection)
    assert diagnostics, f"{code} did not report"
    fixes = [d.fix for d in diagnostics if d.fix is not None]
    result = fix_text(before, "t.py", selection, unsafe=True)
    if after is None:
        assert not fixes
        assert result.text == before
        return
    assert {fix.applicability for fix in fixes} == {applicability}
    assert result.text == after
    assert analyze(result.text, "t.py", selection) == []
    assert fix_text(result.text, "t.py", selection, unsafe=True).text == result.text
    if applicability == "unsafe":  # not applied without --unsafe-fixes
        assert fix_text(before, "t.py", selection, unsafe=False).text == before
