"""`pip install torchlint` (no extras) must give a working `torchlint check`: the static path
never imports torch. We prove it by running the CLI in a child where importing torch fails, as it
would on a machine without it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

BLOCK_TORCH = textwrap.dedent(
    """\
    import importlib.abc, sys

    class NoTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ModuleNotFoundError("No module named 'torch'", name=name)
            return None

    sys.meta_path.insert(0, NoTorch())
    from torchlint.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def test_check_runs_without_torch(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n"
        "model = torch.nn.Linear(2, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for x in [torch.randn(3, 2)]:\n"
        "    optimizer.zero_grad()\n"
        "    loss = model(x).sum()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    print(loss.item())\n"
    )
    for args in (["check", str(script)], ["rules"], ["rule", "TL301"]):
        result = subprocess.run(
            [sys.executable, "-c", BLOCK_TORCH, *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "torch" not in result.stderr, result.stderr
        if args[0] == "check":
            assert result.returncode == 1
            assert "TL301" in result.stdout
        else:
            assert result.returncode == 0
