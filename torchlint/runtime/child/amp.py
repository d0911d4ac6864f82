"""Mixed precision mistakes seen in a real run: the three ways a `GradScaler` is misused.

A `GradScaler` works in pairs: `scaler.scale(loss).backward()` multiplies the gradients by the
scale (65536 at first), and `scaler.step(optimizer)` divides them back (`unscale_`), skips the
step when they overflowed, and updates. `AmpWatch` follows an *enabled* scaler through one
window (from one optimizer step to the next) and reports, at the user's line:

* TLR306: `scaler.step()` took gradients from a backward of a loss that did not go through
  `scaler.scale()` (the update is divided by the scale: some 65536 times too small);
* TLR307: `optimizer.step()` called directly on gradients a scaled backward produced (the
  update is 65536 times too large, and an overflow is not skipped);
* TLR308: `clip_grad_norm_` / `clip_grad_value_` on scaled gradients, with no
  `scaler.unscale_(optimizer)` before it (the threshold is compared with scaled values).

A scaler built with `enabled=False` does nothing, and neither does the watch. Only calls made by
the user's own code count: a framework that drives the scaler itself (Lightning, Accelerate) is
trusted. Each finding is made once per line. GradScaler runs on the CPU
(`torch.amp.GradScaler("cpu")`), so all three are tested on the CPU for real.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import FrameType
from typing import Any

import torch

from torchlint.runtime.child.callers import user_caller
from torchlint.runtime.child.captured import Finding
from torchlint.runtime.sites import Site, SiteFinder

#: scaled losses remembered per window (a loop scales one or a few per step)
MAX_SCALED = 64
#: backward calls remembered per window (a loop without optimizer steps never closes one)
MAX_WINDOW = 64
#: autograd nodes walked from a backward's tensor looking for a scaled loss
MAX_WALK = 256


@dataclass
class _Backward:
    site: Site
    scaled: bool


class AmpWatch:
    """Follows enabled GradScalers through each optimizer step; findings go to `report`."""

    def __init__(self, finder: SiteFinder, report: Callable[[Finding], None]) -> None:
        self.finder = finder
        self.report = report
        #: the current window: backward calls since the last optimizer step
        self.window: deque[_Backward] = deque(maxlen=MAX_WINDOW)
        #: scaled losses of this window (kept for their autograd node)
        self._scaled: list[torch.Tensor] = []
        self._unscaled_optimizers = 0
        self._in_scaler_step = 0
        self._reported: set[tuple[str, str, int]] = set()
        self._patches: list[tuple[Any, str, Any]] = []
        self._handles: list[Any] = []

    # ------------------------------------------------------------------------------------------
    # installing

    def install(self) -> None:
        scaler_class = getattr(getattr(torch, "amp", None), "GradScaler", None)
        if scaler_class is None or self._patches:
            return
        watch = self
        original_scale = scaler_class.scale
        original_step = scaler_class.step
        original_unscale = scaler_class.unscale_
        original_backward = torch.autograd.backward

        def scale(scaler: Any, outputs: Any) -> Any:
            scaled = original_scale(scaler, outputs)
            if scaler.is_enabled() and isinstance(scaled, torch.Tensor):
                watch._remember(scaled)
            return scaled

        def step(scaler: Any, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
            if not scaler.is_enabled():
                return original_step(scaler, optimizer, *args, **kwargs)
            watch._on_scaler_step(scaler)
            watch._in_scaler_step += 1
            try:
                return original_step(scaler, optimizer, *args, **kwargs)
            finally:
                watch._in_scaler_step -= 1
                watch._end_window()

        def unscale_(scaler: Any, optimizer: Any) -> Any:
            if scaler.is_enabled():
                watch._unscaled_optimizers += 1
            return original_unscale(scaler, optimizer)

        def backward(tensors: Any, *args: Any, **kwargs: Any) -> Any:
            watch._on_backward(tensors, sys._getframe(1))
            return original_backward(tensors, *args, **kwargs)

        self._patch(scaler_class, "scale", scale)
        self._patch(scaler_class, "step", step)
        self._patch(scaler_class, "unscale_", unscale_)
        self._patch(torch.autograd, "backward", backward)
        for owner in (torch.nn.utils, torch.nn.utils.clip_grad):
            for name in ("clip_grad_norm_", "clip_grad_value_"):
                original = getattr(owner, name, None)
                if original is not None:
                    self._patch(owner, name, self._clipping(name, original))
        import torch.optim.optimizer as optim

        self._handles = [
            optim.register_optimizer_step_pre_hook(self._on_step_pre),
            optim.register_optimizer_step_post_hook(self._on_step_post),
        ]

    def uninstall(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        for owner, name, original in reversed(self._patches):
            setattr(owner, name, original)
        self._patches = []
        self._scaled = []
        self.window.clear()

    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        self._patches.append((owner, name, getattr(owner, name)))
        setattr(owner, name, replacement)

    # ------------------------------------------------------------------------------------------
    # events

    def _remember(self, scaled: torch.Tensor) -> None:
        if len(self._scaled) < MAX_SCALED:
            self._scaled.append(scaled)

    def _on_backward(self, tensors: Any, caller: FrameType | None) -> None:
        tensor = tensors if isinstance(tensors, torch.Tensor) else None
        if isinstance(tensors, (tuple, list)) and len(tensors) == 1:
            tensor = tensors[0] if isinstance(tensors[0], torch.Tensor) else None
        if tensor is None or tensor.grad_fn is None:
            return
        site = user_caller(self.finder, caller, through_torchlint=True)
        if site is None:
            return
        scaled = self._is_scaled(tensor)
        self.window.append(_Backward(site, scaled))

    def _is_scaled(self, tensor: torch.Tensor) -> bool:
        """Whether `tensor` is a scaled loss, or was computed from one (`scaler.scale(loss) /
        accumulation`)."""
        if not self._scaled:
            return False
        if any(tensor is s for s in self._scaled):
            return True
        targets = {id(s.grad_fn) for s in self._scaled if s.grad_fn is not None}
        stack = [tensor.grad_fn]
        seen = 0
        while stack and seen < MAX_WALK:
            node = stack.pop()
            if node is None:
                continue
            seen += 1
            if id(node) in targets:
                return True
            stack.extend(next_node for next_node, _ in node.next_functions)
        return False

    def _on_scaler_step(self, scaler: Any) -> None:
        unscaled = [call for call in self.window if not call.scaled]
        scale = _scale_of(scaler) if unscaled else None  # a host read: only for a finding
        for call in unscaled:
            self._once(
                Finding(
                    "TLR306",
                    "this backward's loss was not scaled, yet scaler.step() divides its "
                    f"gradients by the scale ({_scale_text(scale)}): the optimizer receives "
                    "gradients that much too small, and float16 gradients may underflow to zero.",
                    call.site,
                    {"scale": scale},
                    advice="Call scaler.scale(loss).backward() instead of loss.backward().",
                )
            )

    def _on_step_pre(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self._in_scaler_step or not any(call.scaled for call in self.window):
            return
        site = user_caller(self.finder, sys._getframe(1), through_torchlint=True)
        if site is None:
            return
        self._once(
            Finding(
                "TLR307",
                f"{type(optimizer).__name__}.step() is called directly on gradients that "
                "scaler.scale(loss).backward() multiplied by the loss scale: the update is that "
                "many times too large, and a step whose gradients overflowed is not skipped.",
                site,
                {"optimizer": type(optimizer).__name__},
                advice="Call scaler.step(optimizer) and then scaler.update() instead.",
            )
        )

    def _on_step_post(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if not self._in_scaler_step:
            self._end_window()

    def _end_window(self) -> None:
        self.window.clear()
        self._scaled = []
        self._unscaled_optimizers = 0

    def _clipping(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        watch = self

        def clip(parameters: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(parameters, torch.Tensor):
                params: Any = parameters
            else:
                params = list(parameters)  # a generator is read once: hand on the list
            watch._on_clip(name, params, sys._getframe(1))
            return original(params, *args, **kwargs)

        return clip

    def _on_clip(self, name: str, params: Any, caller: FrameType | None) -> None:
        if self._unscaled_optimizers or not any(call.scaled for call in self.window):
            return
        tensors: Iterable[Any] = [params] if isinstance(params, torch.Tensor) else params
        if not any(isinstance(p, torch.Tensor) and p.grad is not None for p in tensors):
            return
        site = user_caller(self.finder, caller, through_torchlint=True)
        if site is None:
            return
        self._once(
            Finding(
                "TLR308",
                f"{name} runs on gradients still multiplied by the loss scale (no "
                "scaler.unscale_(optimizer) since the scaled backward): the threshold is "
                "compared with scaled values, so clipping cuts nearly every step to a tiny "
                "update.",
                site,
                {"function": name},
                advice="Call scaler.unscale_(optimizer) right before clipping.",
            )
        )

    def _once(self, finding: Finding) -> None:
        site = finding.site
        key = (finding.code, site.filename if site else "", site.line if site else 0)
        if key not in self._reported:
            self._reported.add(key)
            self.report(finding)


def _scale_of(scaler: Any) -> float | None:
    try:
        return float(scaler.get_scale())
    except (RuntimeError, TypeError, ValueError):
        return None


def _scale_text(scale: float | None) -> str:
    return f"{scale:g}" if scale is not None else "the loss scale"
