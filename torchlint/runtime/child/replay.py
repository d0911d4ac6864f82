"""One fixed batch for a loop without a DataLoader: the tensors passed to the root models'
forwards in the first training step, and the targets the losses received, are kept and given
again (as fresh copies) in every later step, in the same order. So `X, Y = get_batch()` over a
memmap, NumPy arrays sliced into tensors, or a fresh random batch each step all train on the
first step's batch; an RNN's hidden state starts from the first step's too.

Full-batch training (the same tensors in every step) needs no replay and is reported as such.
"""

from __future__ import annotations

from typing import Any

import torch

from torchlint.runtime.child.batches import map_tensors

#: forwards (and loss calls) per step that are kept; past it, later ones run as the loop says
MAX_CALLS_PER_STEP = 64


def _copy(value: Any) -> Any:
    return map_tensors(value, lambda t: t.detach().clone())


def _same(first: Any, now: Any) -> bool:
    """Whether two call arguments hold the very same tensors (full-batch training)."""
    if isinstance(first, torch.Tensor):
        return isinstance(now, torch.Tensor) and first.data_ptr() == now.data_ptr()
    if isinstance(first, (list, tuple)):
        return (
            isinstance(now, (list, tuple))
            and len(first) == len(now)
            and all(_same(a, b) for a, b in zip(first, now, strict=True))
        )
    if isinstance(first, dict):
        return (
            isinstance(now, dict)
            and first.keys() == now.keys()
            and all(_same(first[k], now[k]) for k in first)
        )
    return True


def _merge(first: Any, now: Any) -> Any:
    """`now` with each data tensor (one that does not require grad) replaced by a fresh copy of
    the first step's at the same place; tensors computed by another model (a GAN's generator
    output into its discriminator) stay live, so the graph between models is kept."""
    if isinstance(now, torch.Tensor):
        if now.requires_grad or not isinstance(first, torch.Tensor):
            return now
        return first.clone()
    if isinstance(now, dict) and isinstance(first, dict):
        return type(now)((k, _merge(first.get(k), v)) for k, v in now.items())
    if isinstance(now, tuple) and hasattr(now, "_fields") and isinstance(first, tuple):
        return type(now)(*(_merge(a, b) for a, b in zip(first, now, strict=False)))
    if (
        isinstance(now, (list, tuple))
        and isinstance(first, (list, tuple))
        and len(now) == len(first)
    ):
        return type(now)(_merge(a, b) for a, b in zip(first, now, strict=True))
    return now


def _has_tensor(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_has_tensor(v) for v in value.values())
    return False


class ForwardReplay:
    """Records the first training step's forward inputs (per root, in call order) and loss
    targets (per loss function, in call order); replays them from the second step on."""

    def __init__(self) -> None:
        self.recording = True
        self.replaying = False
        self.full_batch: bool | None = None
        self._forwards: dict[int, list[tuple[Any, Any, Any]]] = {}  # root -> [(args, kwargs, raw)]
        self._targets: dict[str, list[torch.Tensor]] = {}
        self._forward_calls: dict[int, int] = {}
        self._target_calls: dict[str, int] = {}
        self.replayed_forwards = 0
        #: whether a forward of this step ran on the first step's inputs (its targets must then
        #: be the first step's too, whatever the live ones' shape)
        self._replayed_this_step = False

    @property
    def has_batch(self) -> bool:
        return any(self._forwards.values())

    def start_step(self) -> None:
        """A new training step begins (after an optimizer step, or a manual update)."""
        if self.recording and self.has_batch:
            self.recording = False
            self.replaying = True
        self._forward_calls = {}
        self._target_calls = {}
        self._replayed_this_step = False

    def forward(self, root: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """At a grad-enabled root forward: record it (first step), or the (args, kwargs) to
        run it with instead (later steps); None keeps the call as it is."""
        key = id(root)
        index = self._forward_calls.get(key, 0)
        self._forward_calls[key] = index + 1
        if self.recording:
            calls = self._forwards.setdefault(key, [])
            if len(calls) < MAX_CALLS_PER_STEP and (_has_tensor(args) or _has_tensor(kwargs)):
                calls.append((_copy(args), _copy(kwargs), (args, kwargs)))
            return None
        if not self.replaying:
            return None
        calls = self._forwards.get(key, [])
        if index >= len(calls):
            return None
        first_args, first_kwargs, raw = calls[index]
        if self.full_batch is None:
            self.full_batch = _same(raw, (args, kwargs))
            if self.full_batch:
                self.replaying = False  # the loop already trains on one batch
                return None
        if len(args) != len(first_args) or set(kwargs) != set(first_kwargs):
            return None
        self.replayed_forwards += 1
        self._replayed_this_step = True
        return _merge(first_args, args), _merge(first_kwargs, kwargs)

    def target(self, name: str, target: torch.Tensor) -> torch.Tensor:
        """A loss's target: recorded (first step), or the first step's (later steps)."""
        index = self._target_calls.get(name, 0)
        self._target_calls[name] = index + 1
        if target.requires_grad:
            return target
        if self.recording:
            kept = self._targets.setdefault(name, [])
            if len(kept) < MAX_CALLS_PER_STEP:
                kept.append(target.detach().clone())
            return target
        if not self.replaying:
            return target
        kept = self._targets.get(name, [])
        if index >= len(kept):
            return target
        if kept[index].shape != target.shape and not self._replayed_this_step:
            return target
        return kept[index].clone()
