"""TL205: float16 autocast without a GradScaler."""

from __future__ import annotations

from torchlint.analysis.loops import IterEvent, LoopModel
from torchlint.analysis.model import Kind
from torchlint.analysis.training import (
    autocast_frame,
    context,
    grad_disabled,
    is_float16,
    visible_scaler,
)
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class Fp16WithoutScaler(Rule):
    code = "TL205"
    name = "fp16-without-scaler"
    family = "amp"
    severity = Severity.WARNING
    summary = (
        "float16 autocast (the CUDA default) around a loss that is backpropagated, "
        "with no GradScaler."
    )

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.training:
            if any(e.event.scaler for e in model.events):
                continue
            if visible_scaler(ctx.facts, model) is not None:
                continue  # a scaler is there: TL201 / TL202 judge how it is used
            for backward in model.events:
                if backward.kind is not Kind.BACKWARD or backward.event.via != "tensor":
                    continue
                forward = self._fp16_forward(model, backward)
                if forward is None:
                    continue
                ctx.report(
                    backward.event.node,
                    f"`{ctx.text(backward.event.node)}`{ctx.where(backward)} backpropagates a "
                    "loss computed under float16 autocast without a GradScaler, so small "
                    "gradients underflow to zero and training silently stalls; use "
                    '`scaler = torch.amp.GradScaler("cuda")` with '
                    "`scaler.scale(loss).backward()`, or autocast to `torch.bfloat16`.",
                )

    def _fp16_forward(self, model: LoopModel, backward: IterEvent) -> IterEvent | None:
        for e in model.events[: backward.index]:
            if e.kind is not Kind.CALL or not e.related(backward) or e.exclusive_with(backward):
                continue  # (`if scaler is None: ... else: with autocast(): ...` twice)
            frames = context(model, e)
            frame = autocast_frame(frames)
            device = frame.autocast_device if frame is not None else None
            if frame is None or not (device or "").startswith("cuda") or grad_disabled(frames):
                continue  # not fp16 on CUDA, or a frozen model whose output needs no gradient
            if is_float16(frame):
                return e
        return None
