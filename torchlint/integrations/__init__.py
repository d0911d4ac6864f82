"""One-line integrations of `torchlint run` with training frameworks whose loop it cannot see
through PyTorch alone, and that run the check's own limits (so a short run still reaches the
framework's validation):

    # PyTorch Lightning
    from torchlint.integrations.lightning import TorchlintCallback
    trainer = Trainer(..., callbacks=[TorchlintCallback()])

    # Hugging Face transformers
    from torchlint.integrations.transformers import TorchlintCallback
    trainer = Trainer(..., callbacks=[TorchlintCallback()])

Under `torchlint run` they are added automatically when the framework's Trainer is created (so
a script needs none of this); outside a run they do nothing. Fabric and Accelerate wrap plain
PyTorch objects (the DataLoader, the optimizer, `backward`), which the launcher follows
zero-config. No module here imports torch or a framework at import time.
"""

from __future__ import annotations

import os
from typing import Any

#: set by the child process of `torchlint run` (and inherited by nothing else)
RUN_VARIABLE = "TORCHLINT_RUN"

#: the limits of the check being run, set by the child (`torchlint.runtime.child.frameworks`)
_LIMITS: dict[str, Any] | None = None


def under_torchlint() -> bool:
    """Whether this process is the script of a `torchlint run`."""
    return os.environ.get(RUN_VARIABLE) == "1" and _LIMITS is not None


def limits() -> dict[str, Any]:
    """The check's run limits (framework-neutral: max_steps, max_epochs, limit_train_batches,
    limit_val_batches, validation); {} outside a run."""
    return dict(_LIMITS or {})


def set_limits(values: dict[str, Any] | None) -> None:
    global _LIMITS
    _LIMITS = dict(values) if values is not None else None
