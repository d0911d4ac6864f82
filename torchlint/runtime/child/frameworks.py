"""Frameworks that own the training loop, made first-class: when the script imports the
Lightning Trainer or the Hugging Face Trainer, its `__init__` gets torchlint's callback
(`torchlint.integrations`) added, which gives the Trainer the running check's limits. Fabric
and Accelerate wrap the DataLoader, the optimizer and `backward`, which `Capture` follows as
they are.

The patch is applied as the framework's module is imported (a `sys.meta_path` finder that finds
nothing itself: it wraps the loader another finder returns), or at once when it already is.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from typing import Any

from torchlint import integrations
from torchlint.runtime.post_import import PostImport

#: module -> (the Trainer's attribute, the module of its callback)
TRAINERS = {
    "lightning.pytorch.trainer.trainer": ("Trainer", "torchlint.integrations.lightning"),
    "pytorch_lightning.trainer.trainer": ("Trainer", "torchlint.integrations.lightning"),
    "transformers.trainer": ("Trainer", "torchlint.integrations.transformers"),
}
#: what the report says about each framework, when its Trainer was used
NOTES = {
    "torchlint.integrations.lightning": "PyTorch Lightning's Trainer ran with the check's limits "
    "(its own Trainer(overfit_batches=1) runs the same test inside Lightning)",
    "torchlint.integrations.transformers": "the Hugging Face Trainer ran with the check's limits",
}


class Frameworks:
    """The patches of one run, and which frameworks were used."""

    def __init__(self, run_limits: dict[str, Any]) -> None:
        self.limits = run_limits
        self.used: list[dict[str, Any]] = []
        self._patches: list[tuple[Any, str, Any]] = []
        self._finder: PostImport | None = None

    def install(self) -> None:
        integrations.set_limits(self.limits)
        self._finder = PostImport(TRAINERS, self._patch_module, "follow")
        sys.meta_path.insert(0, self._finder)
        for name in TRAINERS:
            module = sys.modules.get(name)
            if module is not None:
                self._patch_module(name, module)

    def uninstall(self) -> None:
        if self._finder is not None:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(self._finder)
            self._finder = None
        for owner, name, original in reversed(self._patches):
            setattr(owner, name, original)
        self._patches = []
        integrations.set_limits(None)

    def _patch_module(self, name: str, module: Any) -> None:
        attribute, callback_module = TRAINERS[name]
        trainer = getattr(module, attribute, None)
        if trainer is None or getattr(trainer.__init__, "__torchlint__", False):
            return
        original = trainer.__init__
        frameworks = self

        def __init__(self_: Any, *args: Any, **kwargs: Any) -> None:
            callback_class = importlib.import_module(callback_module).TorchlintCallback
            if callback_module.endswith("lightning"):
                kwargs["callbacks"] = _with_callback(kwargs.get("callbacks"), callback_class)
            original(self_, *args, **kwargs)
            if callback_module.endswith("transformers"):
                handler = getattr(self_, "callback_handler", None)
                present = handler is not None and any(
                    isinstance(c, callback_class) for c in handler.callbacks
                )
                if not present:
                    callback = callback_class()
                    self_.add_callback(callback)
                    callback.on_init_end(self_.args, self_.state, self_.control)
            frameworks.note(callback_module)

        __init__.__torchlint__ = True  # type: ignore[attr-defined]
        __init__.__wrapped__ = original  # type: ignore[attr-defined]
        self._patches.append((trainer, "__init__", original))
        trainer.__init__ = __init__

    def note(self, callback_module: str) -> None:
        entry = {"integration": callback_module, "note": NOTES[callback_module]}
        if entry not in self.used:
            self.used.append(entry)


def _with_callback(callbacks: Any, callback_class: type) -> list[Any]:
    """The Trainer's callbacks with ours added, unless the script added it itself."""
    if callbacks is None:
        listed: list[Any] = []
    elif isinstance(callbacks, (list, tuple)):
        listed = list(callbacks)
    else:
        listed = [callbacks]
    if not any(isinstance(c, callback_class) for c in listed):
        listed.append(callback_class())
    return listed
