"""The accumulation probe: are the gradients cleared between optimizer steps?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn

if TYPE_CHECKING:
    from torchlint.runtime.child.capture import Capture


#: steps over which the accumulation probe watches (from step 1, after the probe is attached)
PROBE_STEPS = 3


class AccumulationProbe:
    """Are gradients cleared between optimizer steps? On one small parameter, a tensor hook sums
    what each backward contributes; just before the next step, the parameter's gradient should
    equal that sum (cleared) and not the previous step's gradient plus it (accumulated: no
    `zero_grad()` between steps). Runs for `PROBE_STEPS` steps, then removes its hook."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.param: nn.Parameter | None = None
        self.handle: Any = None
        self.previous: torch.Tensor | None = None
        self.incoming: torch.Tensor | None = None
        self.accumulated = 0
        self.cleared = 0
        self.accumulated_handle: Any = None
        self.after_backward: torch.Tensor | None = None

    def attach(self, param: nn.Parameter | None) -> None:
        if param is None or param.grad is None:
            return
        self.param = param
        self.handle = param.register_hook(self._on_gradient)  # type: ignore[no-untyped-call]
        # the gradient as the backward left it, before anything rescales it in place before the
        # step (clip_grad_norm_, a GradScaler's unscale_)
        self.accumulated_handle = param.register_post_accumulate_grad_hook(  # type: ignore[no-untyped-call]
            self._on_accumulated
        )

    def _on_accumulated(self, param: torch.Tensor) -> None:
        grad = param.grad
        self.after_backward = grad.detach().clone() if grad is not None else None

    def _on_gradient(self, grad: torch.Tensor) -> None:
        contribution = grad.detach()
        self.incoming = (
            contribution.clone() if self.incoming is None else self.incoming + contribution
        )

    def after_step(self, step: int) -> None:
        param = self.param
        if param is None:
            return
        if step > PROBE_STEPS:
            self.detach()
            return
        grad = param.grad
        self.previous = grad.detach().clone() if grad is not None else None
        self.incoming = None

    def before_step(self, step: int) -> None:
        param, previous, incoming = self.param, self.previous, self.incoming
        if param is None or previous is None or incoming is None or param.grad is None:
            return
        with torch.no_grad():
            grad = self.after_backward if self.after_backward is not None else param.grad.detach()
            self.after_backward = None
            if not bool(previous.abs().sum() > 0):
                return  # a zero gradient cannot tell the two cases apart
            summed = torch.allclose(grad, previous + incoming, rtol=1e-4, atol=1e-7)
            fresh = torch.allclose(grad, incoming, rtol=1e-4, atol=1e-7)
        if summed and not fresh:
            self.accumulated += 1
        elif fresh:
            self.cleared += 1
        if self.accumulated == 2 and self.cleared == 0:
            self.capture.gradients_accumulate_across_steps()

    def detach(self) -> None:
        if self.handle is not None:
            self.handle.remove()
        if self.accumulated_handle is not None:
            self.accumulated_handle.remove()
        self.handle = self.accumulated_handle = None
        self.param = None
