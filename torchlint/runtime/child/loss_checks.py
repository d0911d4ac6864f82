"""The loss spy: a `TorchFunctionMode` active during the first training step (and the last
overfit step) that watches loss functions and softmax/sigmoid outputs, and the cheap sanity
checks it runs before each loss call, so a call that would crash is explained first."""

from __future__ import annotations

import inspect
import weakref
from typing import TYPE_CHECKING, Any

import torch
from torch.overrides import TorchFunctionMode

from torchlint.runtime.child.captured import Finding, LossCall, StopRun
from torchlint.runtime.sites import Site

if TYPE_CHECKING:
    from torchlint.runtime.child.capture import Capture

#: loss calls recorded (first step and final step)
MAX_LOSS_CALLS = 32

_F = torch.nn.functional
_CLASSIFICATION_LOSSES = {_F.cross_entropy: "cross_entropy", _F.nll_loss: "nll_loss"}
_REGRESSION_LOSSES = {
    _F.mse_loss: "mse_loss",
    _F.l1_loss: "l1_loss",
    _F.smooth_l1_loss: "smooth_l1_loss",
    _F.huber_loss: "huber_loss",
}
_BINARY_LOSSES = {
    _F.binary_cross_entropy_with_logits: "binary_cross_entropy_with_logits",
    _F.binary_cross_entropy: "binary_cross_entropy",
}
_PROBABILITY_OPS = {
    _F.softmax: "softmax",
    torch.softmax: "softmax",
    torch.Tensor.softmax: "softmax",
    torch.sigmoid: "sigmoid",
    torch.Tensor.sigmoid: "sigmoid",
}
_SIGNATURES: dict[Any, inspect.Signature] = {}


def bind_arguments(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a call by parameter name (defaults not filled in); {} when they do
    not bind."""
    signature = _SIGNATURES.get(func)
    if signature is None:
        signature = _SIGNATURES[func] = inspect.signature(func)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return {}
    return dict(bound.arguments)


class LossSpy(TorchFunctionMode):
    """Watches loss functions (and softmax/sigmoid outputs) while active. Runs the sanity checks
    before the loss runs, so a call that would crash is explained first."""

    def __init__(self, capture: Capture, phase: str) -> None:
        super().__init__()
        self.capture = capture
        self.phase = phase
        self.probabilities: dict[int, tuple[weakref.ref[torch.Tensor], str]] = {}
        self.active = True

    def came_from(self, tensor: Any) -> str | None:
        if not isinstance(tensor, torch.Tensor):
            return None
        entry = self.probabilities.get(id(tensor))
        if entry is not None and entry[0]() is tensor:
            return entry[1]
        return None

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if not self.active:
            return func(*args, **kwargs)
        op = _PROBABILITY_OPS.get(func)
        if op is not None:
            out = func(*args, **kwargs)
            if isinstance(out, torch.Tensor):
                self.probabilities[id(out)] = (weakref.ref(out), op)
            return out
        call: LossCall | None = None
        known = getattr(func, "__wrapped__", func)  # a loss a plugin patched to report values
        if (
            known in _CLASSIFICATION_LOSSES
            or known in _REGRESSION_LOSSES
            or known in _BINARY_LOSSES
        ):
            call = check_loss_call(self.capture, self, known, args, kwargs)
        out = func(*args, **kwargs)
        if call is not None and isinstance(out, torch.Tensor) and out.numel() == 1:
            call.value = out.detach().float().reshape(())
        return out


def check_loss_call(
    capture: Capture, spy: LossSpy, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> LossCall | None:
    bound = bind_arguments(func, args, kwargs)
    inp = bound.get("input")
    target = bound.get("target")
    if not isinstance(inp, torch.Tensor) or not isinstance(target, torch.Tensor):
        return None
    name = str(
        _CLASSIFICATION_LOSSES.get(func)
        or _REGRESSION_LOSSES.get(func)
        or _BINARY_LOSSES.get(func)
        or getattr(func, "__name__", "loss")
    )
    site = capture.finder.find()
    reduction = bound.get("reduction", "mean")
    classes: int | None = None
    call = LossCall(
        name,
        site,
        spy.phase,
        list(inp.shape),
        list(target.shape),
        None,
        reduction if isinstance(reduction, str) else None,
    )
    if func in _CLASSIFICATION_LOSSES:
        classes = int(inp.shape[1]) if inp.dim() >= 2 else int(inp.shape[0])
        call.num_classes = classes
        if not target.is_floating_point():
            _check_labels(capture, name, inp, target, classes, bound, site)
            if inp.dim() == 2 and target.dim() == 1 and target.shape[0] == inp.shape[0]:
                with torch.no_grad():
                    call.accuracy = (
                        (inp.detach().argmax(dim=1) == target).float().mean().reshape(())
                    )
        if spy.phase == "first":
            _check_probabilities(capture, spy, name, inp, site)
    elif func in _REGRESSION_LOSSES and spy.phase == "first":
        if list(inp.shape) != list(target.shape):
            capture._add_once(
                Finding(
                    "TLR302",
                    f"{name} got input of shape {list(inp.shape)} and target of shape "
                    f"{list(target.shape)}; they broadcast to "
                    f"{list(torch.broadcast_shapes(inp.shape, target.shape))}, so every "  # type: ignore[no-untyped-call]
                    "output is compared with every target. Make the shapes equal "
                    "(e.g. `output.squeeze(-1)` or `target.unsqueeze(-1)`).",
                    site,
                    {"input_shape": list(inp.shape), "target_shape": list(target.shape)},
                )
            )
    elif (
        func is _F.binary_cross_entropy_with_logits
        and spy.phase == "first"
        and spy.came_from(inp) == "sigmoid"
    ):
        capture._add_once(
            Finding(
                "TLR303",
                f"{name} received the output of sigmoid, but it applies sigmoid itself: "
                "pass the raw logits (or use binary_cross_entropy on probabilities).",
                site,
                {"input_came_from": "sigmoid"},
            )
        )
    if len(capture.loss_calls) < MAX_LOSS_CALLS:
        capture.loss_calls.append(call)
    return call


def _check_labels(
    capture: Capture,
    name: str,
    inp: torch.Tensor,
    target: torch.Tensor,
    classes: int,
    bound: dict[str, Any],
    site: Site | None,
) -> None:
    finding = labels_finding(name, target, classes, bound.get("ignore_index", -100), site)
    if finding is None:
        return
    capture._add_once(finding)
    capture.stopped_in_first_step()
    raise StopRun("label_out_of_range")


def labels_finding(
    name: str, target: torch.Tensor, classes: int, ignore: Any, site: Site | None
) -> Finding | None:
    """TLR301 when the class targets (those not `ignore`d) fall outside 0..classes-1."""
    with torch.no_grad():
        valid = target[target != ignore] if isinstance(ignore, int) else target.reshape(-1)
        if valid.numel() == 0:
            return None
        low, high = int(valid.min()), int(valid.max())
    if low >= 0 and high < classes:
        return None
    if high == classes and low >= 1:
        hint = (
            f"The labels look 1-based ({low}..{high}): subtract 1 from them, so the "
            f"classes are 0..{classes - 1}."
        )
    elif high >= classes:
        hint = (
            f"Either the model's last layer should output {high + 1} classes, or the "
            "labels need remapping."
        )
    else:
        hint = (
            f"Negative labels are invalid; use ignore_index={ignore} (or pass "
            "ignore_index=...) for positions that have no label."
        )
    return Finding(
        "TLR301",
        f"{name} targets range over {low}..{high}, but the output has {classes} classes "
        f"(valid targets 0..{classes - 1}). {hint} On CUDA this shows up only as an "
        "opaque device-side assert.",
        site,
        {"target_min": low, "target_max": high, "num_classes": classes},
    )


#: the functions of torch.nn.functional whose frame holds a crashed call's class targets
_LABELLED_FRAMES = {"cross_entropy": "cross_entropy", "nll_loss": "nll_loss"}


def labels_from_crash(capture: Capture, exc: BaseException) -> Finding | None:
    """TLR301 for a script that crashed inside a classification loss because a target is out
    of range (`IndexError: Target 32 is out of bounds`): the spy watches only training steps,
    but an evaluation before the first one (nanoGPT's `estimate_loss`) runs the same loss on
    the same batches. The targets and classes are read from the loss function's own frame; the
    finding is at the user's line that called it."""
    if not isinstance(exc, (IndexError, RuntimeError)):
        return None
    functional = _F.__file__
    tb = exc.__traceback__
    frame_locals: dict[str, Any] | None = None
    name = ""
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == functional and code.co_name in _LABELLED_FRAMES:
            frame_locals, name = tb.tb_frame.f_locals, _LABELLED_FRAMES[code.co_name]
        tb = tb.tb_next
    if frame_locals is None:
        return None
    inp, target = frame_locals.get("input"), frame_locals.get("target")
    if not isinstance(inp, torch.Tensor) or not isinstance(target, torch.Tensor):
        return None
    if target.is_floating_point() or inp.dim() == 0:
        return None
    classes = int(inp.shape[1]) if inp.dim() >= 2 else int(inp.shape[0])
    try:
        return labels_finding(
            name,
            target,
            classes,
            frame_locals.get("ignore_index", -100),
            capture.finder.find_in_traceback(exc.__traceback__),
        )
    except RuntimeError:  # a device the failed call left unreadable
        return None


def _check_probabilities(
    capture: Capture, spy: LossSpy, name: str, inp: torch.Tensor, site: Site | None
) -> None:
    origin = spy.came_from(inp)
    # rows of non-negative values summing to 1 are probabilities: raw logits for cross_entropy
    # and log-probabilities (never positive) for nll_loss are not (`log_softmax(x).exp()`)
    if origin is None and inp.dim() >= 2 and inp.shape[1] > 1 and inp.is_floating_point():
        with torch.no_grad():
            x = inp.detach()
            if bool(x.min() >= 0) and bool(x.max() <= 1):
                sums = x.float().sum(dim=1)
                if bool(torch.allclose(sums, torch.ones_like(sums), atol=1e-3)):
                    origin = "probabilities"
    if origin is None:
        return
    wants = "raw logits" if name == "cross_entropy" else "log-probabilities (log_softmax)"
    capture._add_once(
        Finding(
            "TLR303",
            f"{name} received {origin} outputs (each row sums to 1), but it expects "
            f"{wants}: the loss applies log_softmax itself where needed, so gradients "
            "shrink and training stalls. Drop the softmax before the loss.",
            site,
            {"input_came_from": origin},
        )
    )
