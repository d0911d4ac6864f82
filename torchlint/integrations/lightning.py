"""`TorchlintCallback` for PyTorch Lightning (`lightning` or `pytorch_lightning`).

Under `torchlint run` it gives the Trainer the running check's limits: `overfit`, `lr-find` and
`profile` train at least as many steps as they need (a bug-report template limited to one batch
of one epoch still gets them), `fit` gets a few short epochs with validation after each, `grads`
runs the script as written; outside a run it does nothing. The launcher adds it to every
Trainer on its own; add it yourself (`callbacks=[TorchlintCallback()]`) where the Trainer is
built in a way it cannot see.
"""

from __future__ import annotations

from typing import Any

from torchlint.integrations import limits, under_torchlint

try:  # the class derives from Lightning's Callback, from whichever package is installed
    from lightning.pytorch.callbacks import Callback
except ImportError:  # pragma: no cover - the older package name
    from pytorch_lightning.callbacks import Callback  # type: ignore[assignment]


class TorchlintCallback(Callback):
    """Applies the running check's limits to the Trainer (a no-op outside `torchlint run`)."""

    def __init__(self) -> None:
        super().__init__()
        self.applied: dict[str, Any] = {}

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if stage != "fit" or not under_torchlint():
            return
        wanted = limits()
        if wanted.get("epochs") is not None:  # short epochs, each ending in a validation
            trainer.fit_loop.max_epochs = int(wanted["epochs"])
            trainer.fit_loop.epoch_loop.max_steps = -1
            for name in ("limit_train_batches", "limit_val_batches"):
                if wanted.get(name) is not None:
                    setattr(trainer, name, wanted[name])
            if wanted.get("validation"):
                trainer.num_sanity_val_steps = 0
                trainer.check_val_every_n_epoch = 1
                trainer.val_check_interval = 1.0
            self.applied.update(wanted)

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        if not under_torchlint():
            return
        needed = limits().get("min_steps")
        if needed is None:
            return
        planned = trainer.estimated_stepping_batches
        if planned is None or planned < needed:  # the script's own plan is too short
            trainer.fit_loop.max_epochs = -1
            trainer.fit_loop.epoch_loop.max_steps = int(needed)
            self.applied["min_steps"] = needed
