"""Parameter updates without `torch.optim`: `p.data.add_(p.grad, alpha=-lr)`, `p -= lr * p.grad`
under no_grad, `torch._foreach_add_(params, ...)`, a hand-written optimizer class.

Between a backward and the next root forward (where a training step updates its parameters),
a `TorchFunctionMode` watches for in-place operations on the storage of a model parameter
outside `Optimizer.step`. The first one seen names the update's line; from then on each
backward of the loop is one step of a "manual" optimizer. The mode is active only in that gap
and only until the update is recognised (or a torch.optim step is seen), so it costs nothing
afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch.overrides import TorchFunctionMode

from torchlint.runtime.sites import Site

if TYPE_CHECKING:
    from torchlint.runtime.child.capture import Capture

#: backward calls watched for an update before giving up (gradient accumulation steps the
#: parameters only every few backward calls)
WATCHED_BACKWARDS = 8


@dataclass
class ManualUpdate:
    """A recognised update by hand: its line, the operation, and how many parameter tensors it
    touched in the first step."""

    site: Site | None
    operation: str
    tensors: int


def _in_place(func: Any) -> str | None:
    name = getattr(func, "__name__", "") or ""
    if name.startswith("__i") and name.endswith("__"):  # __isub__, __iadd__, __imul__
        return name
    if name.endswith("_") and not name.endswith("__") and name not in ("requires_grad_",):
        return name
    return None


def _tensors(value: Any) -> Iterable[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield item


class UpdateSpy(TorchFunctionMode):
    """Records in-place operations on parameter storage (the first argument of the op)."""

    def __init__(self, capture: Capture, storages: dict[int, torch.nn.Parameter]) -> None:
        super().__init__()
        self.capture = capture
        self.storages = storages
        self.found: ManualUpdate | None = None
        self.touched: set[int] = set()
        self.active = True

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if self.active and not self.capture.in_optimizer_step and args:
            operation = _in_place(func)
            if operation is not None:
                hit = [t for t in _tensors(args[0]) if t.data_ptr() in self.storages]
                if hit:
                    self.touched.update(t.data_ptr() for t in hit)
                    if self.found is None:
                        self.found = ManualUpdate(self.capture.finder.find(), operation, 0)
        return func(*args, **kwargs)


class UpdateWatch:
    """Starts and stops the spy around the gaps between a backward and the next forward, and
    says when a manual update was recognised."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.spy: UpdateSpy | None = None
        self.recognised: ManualUpdate | None = None
        self.watched = 0
        self.done = False
        #: a small parameter's value before the update, to see whether the update changed it
        self._probe: tuple[torch.nn.Parameter, torch.Tensor] | None = None
        self.changed: bool | None = None

    def after_backward(self) -> None:
        """A backward ended: watch the gap until the next forward."""
        if self.done or self.capture.optimizer_stepped:
            self.done = True
            return
        self.watched += 1
        if self.watched > WATCHED_BACKWARDS:
            self.done = True
            return
        storages = {
            p.data_ptr(): p for root in self.capture.roots for p in root.module.parameters()
        }
        if not storages:
            return
        probe = min(
            (p for p in storages.values() if p.requires_grad and p.numel() > 0),
            key=lambda p: p.numel(),
            default=None,
        )
        if probe is not None and self._probe is None:
            self._probe = (probe, probe.detach().clone())
        self.spy = UpdateSpy(self.capture, storages)
        self.spy.__enter__()  # type: ignore[no-untyped-call]

    def close_gap(self) -> ManualUpdate | None:
        """The gap ended (a root forward, a backward, or an optimizer step): stop the spy; the
        update it recognised, if any (once)."""
        spy, self.spy = self.spy, None
        if spy is None:
            return None
        spy.active = False
        # the user's code may have changed the mode stack
        with contextlib.suppress(RuntimeError, AssertionError, IndexError):
            spy.__exit__(None, None, None)  # type: ignore[no-untyped-call]
        if spy.found is None or self.recognised is not None:
            return None
        spy.found.tensors = len(spy.touched)
        self.recognised = spy.found
        self.done = True
        if self._probe is not None:
            param, before = self._probe
            with torch.no_grad():
                self.changed = not torch.equal(param.detach(), before)
            self._probe = None
        return spy.found
