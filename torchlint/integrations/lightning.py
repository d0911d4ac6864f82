"""`TorchlintCallback` for PyTorch Lightning (`lightning` or `pytorch_lightning`).

Under `torchlint run` it gives the Trainer the check's limits when fitting starts (max steps or
epochs, batches per epoch for training and validation, no sanity check), so `overfit` trains as
long as it needs, `fit` gets short epochs that still reach validation, and `profile` measures
steps; outside a run it does nothing. The launcher adds it to every Trainer on its own; add it
yourself (`callbacks=[TorchlintCallback()]`) where the Trainer is built in a way it cannot
see.
"""

from __future__ import annotations

from typing import Any

from torchlint.integrations import limits, under_torchlint

try:  # the class derives from Lightning's Callback, from whichever package is installed
    from lightning.pytorch.callbacks import Callback
except ImportError:  # pragma: no cover - the older package name
    from pytorch_lightning.callbacks import Callback  # type: ignore[no-redef]


#: (the trainer's attribute, the limit it takes)
_TRAINER = (
    ("limit_train_batches", "limit_train_batches"),
    ("limit_val_batches", "limit_val_batches"),
    ("num_sanity_val_steps", "num_sanity_val_steps"),
)


class TorchlintCallback(Callback):  # type: ignore[misc]
    """Applies the running check's limits to the Trainer (a no-op outside `torchlint run`)."""

    def __init__(self) -> None:
        super().__init__()
        self.applied: dict[str, Any] = {}

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if stage != "fit" or not under_torchlint():
            return
        wanted = limits()
        loop = getattr(trainer, "fit_loop", None)
        if loop is not None:
            if wanted.get("max_steps") is not None:
                loop.epoch_loop.max_steps = int(wanted["max_steps"])
                self.applied["max_steps"] = wanted["max_steps"]
            if wanted.get("max_epochs") is not None:
                loop.max_epochs = int(wanted["max_epochs"])
                self.applied["max_epochs"] = wanted["max_epochs"]
        for attribute, key in _TRAINER:
            value = wanted.get(key)
            if value is not None and hasattr(trainer, attribute):
                setattr(trainer, attribute, value)
                self.applied[key] = value
        if wanted.get("validation") and hasattr(trainer, "check_val_every_n_epoch"):
            trainer.check_val_every_n_epoch = 1
            trainer.val_check_interval = 1.0
            self.applied["check_val_every_n_epoch"] = 1
