"""The CUDA suite (`make test-gpu`): collected only with TORCHLINT_GPU=1 (tests/conftest.py
leaves this folder out otherwise, so `make test` neither runs nor skips it). Asked for on a
machine that cannot run it, it stops at once and says what is missing, rather than skipping."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # gpu_helpers
sys.path.insert(0, str(HERE.parent))  # envelope_schema

os.environ.setdefault("OMP_NUM_THREADS", "4")


def _missing() -> list[str]:
    missing = []
    try:
        import torch
    except ImportError:
        return ["torch"]
    if not torch.cuda.is_available():
        missing.append(f"a CUDA device (torch {torch.__version__} sees none)")
    for name in ("libcst", "jsonschema"):
        if importlib.util.find_spec(name) is None:
            missing.append(f"the Python package {name}")
    return missing


def pytest_configure(config: pytest.Config) -> None:
    missing = _missing()
    if missing:
        pytest.exit("the GPU suite needs " + "; ".join(missing), returncode=4)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from gpu_helpers import write_figures

    write_figures()
