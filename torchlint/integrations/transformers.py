"""`TorchlintCallback` for the Hugging Face `transformers` Trainer.

Under `torchlint run` it gives the Trainer the check's limits once it is built (`max_steps`,
or a few epochs with an evaluation after each; no checkpoints, no reporting to trackers), so a
short run still reaches the evaluation; outside a run it does nothing. The launcher adds it to
every Trainer on its own; `Trainer(..., callbacks=[TorchlintCallback()])` adds it by hand.
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from torchlint.integrations import limits, under_torchlint


class TorchlintCallback(TrainerCallback):  # type: ignore[misc]
    """Applies the running check's limits to the TrainingArguments (a no-op outside a run)."""

    def __init__(self) -> None:
        super().__init__()
        self.applied: dict[str, Any] = {}

    def on_init_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not under_torchlint():
            return
        wanted = limits()
        settings: dict[str, Any] = {"save_strategy": "no", "report_to": []}
        steps, epochs = wanted.get("max_steps"), wanted.get("max_epochs")
        if isinstance(steps, int) and steps > 0:
            settings["max_steps"] = steps
        elif isinstance(epochs, int) and epochs > 0:  # (-1 means "no limit" to Lightning)
            settings.update(max_steps=-1, num_train_epochs=epochs)
        if wanted.get("validation"):
            settings["eval_strategy"] = "epoch"
        for name, value in settings.items():
            if hasattr(args, name):
                try:
                    setattr(args, name, value)
                except (AttributeError, TypeError, ValueError):
                    continue
                self.applied[name] = value
