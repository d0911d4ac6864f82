"""`TorchlintCallback` for the Hugging Face `transformers` Trainer.

Under `torchlint run` it gives the Trainer the check's limits once it is built (at least the
steps the check needs, or a few epochs with an evaluation after each; no reporting to
trackers), so a short run still reaches the evaluation; outside a run it does nothing. The
launcher adds it to every Trainer on its own; `Trainer(..., callbacks=[TorchlintCallback()])`
adds it by hand.
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from torchlint.integrations import limits, under_torchlint


class TorchlintCallback(TrainerCallback):
    """Applies the running check's limits to the TrainingArguments (a no-op outside a run)."""

    def __init__(self) -> None:
        super().__init__()
        self.applied: dict[str, Any] = {}

    def on_init_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not under_torchlint():
            return
        wanted = limits()
        settings: dict[str, Any] = {"report_to": []}
        needed, epochs = wanted.get("min_steps"), wanted.get("epochs")
        if isinstance(needed, int) and needed > 0:
            # the run ends after `needed` steps anyway: planning exactly that many is never
            # shorter than what the check uses
            settings["max_steps"] = needed
        elif isinstance(epochs, int) and epochs > 0:
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
