"""The language server through a second, independent client: Neovim's built-in LSP client,
headless. `make test` installs Neovim (Debian's package) where it can; a machine without it
skips this one test, which CI never does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

INIT = Path(__file__).parent / "neovim" / "init.lua"

MISSING_STEP = """\
import torch

model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(3, 2)]:
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward()
"""


@pytest.mark.skipif(
    shutil.which("nvim") is None and not os.environ.get("CI"),
    reason="Neovim is not installed (make test installs it where it can)",
)
def test_neovim_receives_the_diagnostics(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(MISSING_STEP)
    out = tmp_path / "out.json"
    env = {**os.environ, "TORCHLINT_NVIM_OUT": str(out), "TORCHLINT_PYTHON": sys.executable}
    completed = subprocess.run(
        ["nvim", "--headless", "--clean", "-u", str(INIT)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert completed.returncode == 0, completed.stderr
    received = json.loads(out.read_text())
    assert received["ok"], "no diagnostics reached Neovim within 30 s"
    [diagnostic] = received["diagnostics"]
    assert diagnostic["code"] == "TL101"
    assert diagnostic["source"] == "torchlint"
    assert diagnostic["lnum"] == 7  # 0-based: `loss.backward()`
    assert "optimizer.step()" in diagnostic["message"]
