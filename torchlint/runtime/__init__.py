"""Runtime checks for PyTorch training code (needs torch: `pip install torchlint[runtime]`).

`overfit_one_batch` and `grad_scan` run a few real training steps on the user's own model,
loader, loss and optimizer, restore their state afterwards, and return dataclasses whose
`to_json()` gives the report envelope (see `torchlint.runtime.envelope`). Names are imported
lazily, so `import torchlint.runtime` itself does not import torch; `results` never does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torchlint.runtime.child.core import grad_scan, overfit_one_batch
    from torchlint.runtime.results import (
        Environment,
        GradFinding,
        GradScanResult,
        OverfitResult,
        ParamGrad,
        error_envelope,
    )

__all__ = [
    "Environment",
    "GradFinding",
    "GradScanResult",
    "OverfitResult",
    "ParamGrad",
    "error_envelope",
    "grad_scan",
    "overfit_one_batch",
]

_CORE = {"grad_scan", "overfit_one_batch"}


def __getattr__(name: str) -> Any:
    if name in _CORE:
        try:
            from torchlint.runtime.child import core
        except ModuleNotFoundError as exc:
            if exc.name == "torch" or (exc.name or "").startswith("torch."):
                raise ImportError(
                    f"torchlint.runtime.{name} needs PyTorch: pip install 'torchlint[runtime]'"
                ) from exc
            raise
        return getattr(core, name)
    if name in __all__:
        from torchlint.runtime import results

        return getattr(results, name)
    raise AttributeError(f"module 'torchlint.runtime' has no attribute {name!r}")
