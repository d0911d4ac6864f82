"""Hooks torchlint puts on the user's modules, kept out of everything the script saves.

After the first step the capture watches the root models through their own forward hooks, which
live in the modules' hook dictionaries. A script that pickles its model (`torch.save(model)`,
`pickle.dumps`), copies it (`copy.deepcopy` for an EMA) or sends it to another process would
take those hooks, and the capture behind them, along. While a run is instrumented,
`nn.Module.__getstate__` (which pickling and copying go through) leaves them out, so the
user's objects are saved and copied exactly as without torchlint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch import nn

#: the module attributes that hold forward and backward hooks by handle id
HOOK_DICTS = (
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_backward_pre_hooks",
    "_backward_hooks",
)


class HiddenHooks:
    """The handle ids of our hooks, and the `__getstate__` that leaves them out."""

    def __init__(self) -> None:
        self.ids: set[int] = set()
        self._original: Callable[[nn.Module], dict[str, Any]] | None = None

    def add(self, handle: Any) -> Any:
        self.ids.add(handle.id)
        return handle

    def install(self) -> None:
        if self._original is not None:
            return
        original: Callable[[nn.Module], dict[str, Any]] = nn.Module.__getstate__
        ids = self.ids

        def __getstate__(module: nn.Module) -> dict[str, Any]:
            state: dict[str, Any] = original(module)
            if ids and isinstance(state, dict):
                for name in HOOK_DICTS:
                    hooks = state.get(name)
                    if hooks and any(key in ids for key in hooks):
                        state[name] = type(hooks)(
                            (key, hook) for key, hook in hooks.items() if key not in ids
                        )
            return state

        self._original = original
        nn.Module.__getstate__ = __getstate__  # type: ignore[method-assign]

    def uninstall(self) -> None:
        if self._original is not None:
            nn.Module.__getstate__ = self._original  # type: ignore[method-assign]
            self._original = None
