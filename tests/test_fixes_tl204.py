"""TL204's fix on every import form: exact output, parses, idempotent, and nothing else changes."""

from __future__ import annotations

import textwrap

import pytest

from torchlint.engine import analyze
from torchlint.fixer import fix_text
from torchlint.rules.text import word_count
from torchlint.selection import RuleSelection

TL204 = RuleSelection(select=("TL204",))

CASES = {
    "module_path": (
        "import torch\nscaler = torch.cuda.amp.GradScaler()\n",
        'import torch\nscaler = torch.amp.GradScaler("cuda")\n',
    ),
    "keeps_arguments_and_comments": (
        "import torch\nscaler = torch.cuda.amp.GradScaler(  # tuned\n    init_scale=2.0**10,\n)\n",
        "import torch\n"
        'scaler = torch.amp.GradScaler(  # tuned\n    "cuda", init_scale=2.0**10,\n)\n',
    ),
    "positional_autocast_arguments_become_keywords": (
        "import torch\nwith torch.cuda.amp.autocast(True, torch.bfloat16):\n    pass\n",
        'import torch\nwith torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16):\n'
        "    pass\n",
    ),
    "positional_grad_scaler_arguments_keep_their_order": (
        "import torch\ns = torch.cuda.amp.GradScaler(2.0**10, 2.0)\n",
        'import torch\ns = torch.amp.GradScaler("cuda", 2.0**10, 2.0)\n',
    ),
    "from_import_becomes_import_torch": (
        "from torch.cuda.amp import autocast\n\nwith autocast():\n    pass\n",
        'import torch\n\nwith torch.amp.autocast("cuda"):\n    pass\n',
    ),
    "from_import_removed_when_torch_is_imported": (
        "import torch\nfrom torch.cuda.amp import autocast\n\n"
        "with autocast():\n    pass\nwith autocast(dtype=torch.bfloat16):\n    pass\n",
        'import torch\n\nwith torch.amp.autocast("cuda"):\n    pass\n'
        'with torch.amp.autocast("cuda", dtype=torch.bfloat16):\n    pass\n',
    ),
    "one_name_of_two_removed": (
        "import torch\nfrom torch.cuda.amp import autocast, custom_fwd\n\n"
        "with autocast():\n    pass\n",
        "import torch\nfrom torch.cuda.amp import custom_fwd\n\n"
        'with torch.amp.autocast("cuda"):\n    pass\n',
    ),
    "aliased_torch_is_reused": (
        "import torch as t\nwith t.cuda.amp.autocast(dtype=t.float16):\n    pass\n",
        'import torch as t\nwith t.amp.autocast("cuda", dtype=t.float16):\n    pass\n',
    ),
    "module_alias": (
        "import torch\nfrom torch.cuda import amp\nscaler = amp.GradScaler(enabled=True)\n",
        "import torch\nfrom torch.cuda import amp\n"
        'scaler = torch.amp.GradScaler("cuda", enabled=True)\n',
    ),
    "docstring_first_and_no_imports": (
        '"""Train."""\nscaler = __import__("torch").cuda.amp.GradScaler()\n',
        None,  # not an import form we resolve: no finding, nothing to fix
    ),
    "two_uses_one_import": (
        "from torch.cuda.amp import GradScaler, autocast\n"
        "scaler = GradScaler()\nwith autocast():\n    pass\n",
        'import torch\nscaler = torch.amp.GradScaler("cuda")\nwith torch.amp.autocast("cuda"):\n'
        "    pass\n",
    ),
    "decorator": (
        "import torch\n\n\n@torch.cuda.amp.autocast()\ndef forward(x):\n    return x\n",
        'import torch\n\n\n@torch.amp.autocast("cuda")\ndef forward(x):\n    return x\n',
    ),
    "crlf_file": (
        "import torch\r\ns = torch.cuda.amp.GradScaler()\r\n",
        'import torch\r\ns = torch.amp.GradScaler("cuda")\r\n',
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tl204_fix(name: str) -> None:
    before, after = CASES[name]
    result = fix_text(before, "t.py", TL204, unsafe=False)
    if after is None:
        assert result.text == before
        return
    assert result.text == after
    assert analyze(result.text, "t.py", TL204) == []
    again = fix_text(result.text, "t.py", TL204, unsafe=False)
    assert again.text == result.text  # idempotent


def test_reference_without_call_is_reported_but_not_fixed() -> None:
    text = textwrap.dedent(
        """\
        import torch
        amp_context = torch.cuda.amp.autocast
        """
    )
    [diag] = analyze(text, "t.py", TL204)
    assert diag.fix is None
    assert fix_text(text, "t.py", TL204, unsafe=False).text == text


def test_import_kept_while_another_reference_remains() -> None:
    """`ctx = autocast` still needs the name: the call is rewritten, the import stays."""
    before = (
        "import torch\nfrom torch.cuda.amp import autocast\n\nctx = autocast\n"
        "with autocast():\n    pass\n"
    )
    result = fix_text(before, "t.py", TL204, unsafe=False)
    assert result.text == (
        "import torch\nfrom torch.cuda.amp import autocast\n\nctx = autocast\n"
        'with torch.amp.autocast("cuda"):\n    pass\n'
    )


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("from torch.cuda import amp\nwith amp.autocast():\n    amp_scale = 1\n", 2),
        ("import torch\nx = torch.amp\ny = camp + amp_\n", 0),  # attribute, longer names
        ("amp", 1),  # at the very start and the very end of the text
        ("é_amp = 1\nampère = 2\n(amp)\n", 1),  # a word character before it, Unicode too
        ("x.amp\n# amp in a comment\n'amp'\n", 2),  # comments and strings are words too
    ],
)
def test_references_count_the_name_as_a_word(text: str, count: int) -> None:
    assert word_count(text, "amp") == count
