"""The oldest PyTorch a project declares (torchlint/requirements.py), read from the packaging
files as projects write them, and what TL503 then says through the CLI's configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import RunTorchlint

from torchlint.requirements import declared_torch_floor

LOAD = "import torch\n\nstate = torch.load('model.pt')\n"


@pytest.mark.parametrize(
    ("name", "text", "floor"),
    [
        # `[project] dependencies` on one line (Megatron-LM's layout) and over several lines.
        ("pyproject.toml", '[project]\ndependencies = ["torch>=2.6.0", "numpy"]\n', (2, 6)),
        (
            "pyproject.toml",
            '[project]\ndependencies = [\n  "numpy",\n  "torch ~= 2.7",\n]\n',
            (2, 7),
        ),
        ("pyproject.toml", '[project]\ndependencies = ["torch[opt]==2.8.1"]\n', (2, 8)),
        # The required floor wins over an extra that allows older releases.
        (
            "pyproject.toml",
            '[project]\ndependencies = ["torch>=2.6"]\n'
            '[project.optional-dependencies]\nold = [\n  "torch>=1.13",\n]\n',
            (2, 6),
        ),
        # Poetry, read by the line patterns.
        ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = ">=2.6"\n', (2, 6)),
        ("requirements.txt", "numpy\ntorch>=2.6\n", (2, 6)),
        ("setup.py", "setup(install_requires=['torch>=2.7', 'numpy'])\n", (2, 7)),
        # Near-misses: no floor at all, or another package whose name starts with torch.
        ("pyproject.toml", '[project]\ndependencies = ["torch", "numpy"]\n', None),
        ("pyproject.toml", '[project]\ndependencies = ["torchvision>=0.21"]\n', None),
        ("pyproject.toml", '[project]\ndependencies = ["torch<3"]\n', None),
        ("requirements.txt", "torchmetrics>=1.4\n", None),
    ],
)
def test_the_declared_floor(tmp_path: Path, name: str, text: str, floor: object) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    assert declared_torch_floor(tmp_path / "pkg") == floor


def test_a_broken_pyproject_falls_back_to_the_line_patterns(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project\n"torch>=2.6",\n', encoding="utf-8")
    assert declared_torch_floor(tmp_path) == (2, 6)


@pytest.mark.parametrize(("dependency", "fires"), [("torch>=2.6.0", False), ("torch>=2.1", True)])
def test_tl503_follows_a_one_line_dependency_list(
    tmp_path: Path, run_torchlint: RunTorchlint, dependency: str, fires: bool
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "p"\ndependencies = ["{dependency}", "numpy"]\n', encoding="utf-8"
    )
    script = tmp_path / "train.py"
    script.write_text(LOAD, encoding="utf-8")
    result = run_torchlint("check", "--no-cache", "--select", "TL503", "train.py", cwd=tmp_path)
    assert ("TL503" in result.stdout) is fires, result.stdout + result.stderr
