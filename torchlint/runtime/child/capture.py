"""Instrumentation of an unmodified training script, for the zero-config launcher.

Runs only inside the child process that `torchlint run` starts. `Capture.install()` puts light
hooks into PyTorch before the script runs, and turns what they see into events for the check's
plugin (`plugin.RunPlugin`, named by the registry in `torchlint.runtime.checks`):

* global module forward hooks find the *root models* (modules with parameters called at depth 0),
  and are swapped for hooks on those roots alone after the first step;
* module and parameter registration hooks remember the line that created each submodule, and
  `requires_grad_(False)` / `p.requires_grad = False` the line that froze each parameter;
* `Optimizer.__init__` is wrapped (optimizers and their construction line, and the learning
  rate they were configured with, before they step), and the global optimizer step pre/post
  hooks count steps; with several optimizers, each backward is attributed to the optimizers
  whose parameters it reached and that stepped on it;
* without `torch.optim`, the script's own parameter update (`p.data.add_`, `p -= lr * p.grad`)
  is recognised in the gap after the first backward (`updates.py`) and counted as the steps;
* `torch.autograd.backward` is wrapped (it also serves `Tensor.backward`) to see the loss;
* `DataLoader.__init__`/`__iter__` are wrapped: each batch is copied on fetch until the first
  backward names the training loader (the loader whose batch preceded it, so an `evaluate()` run
  first is not mistaken for training); a plugin that replays one batch then gets a fresh copy of
  it on every fetch, and a loop without a DataLoader gets its first step's forward inputs and
  loss targets again (`replay.py`);
* during the first training step a `TorchFunctionMode` watches the loss functions for the cheap
  sanity checks (`loss_checks.py`).

The script is stopped with `StopRun`, a `BaseException` that the user's `except Exception`
cannot swallow, raised at the next fetch from the training loader once the plugin asked for it
(`request_stop`), or at the first root forward after the next step.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from torchlint.runtime.checks import CHECKS
from torchlint.runtime.child.accumulation import AccumulationProbe
from torchlint.runtime.child.amp import AmpWatch
from torchlint.runtime.child.capture_backward import BackwardHooks
from torchlint.runtime.child.capture_loaders import LoaderHooks, _CapturedIterator
from torchlint.runtime.child.capture_modules import ModuleHooks
from torchlint.runtime.child.capture_optimizers import OptimizerHooks
from torchlint.runtime.child.capture_state import Emit
from torchlint.runtime.child.captured import (
    Finding,
    ForwardEvent,
    LoaderInfo,
    LossCall,
    OptimizerInfo,
    RootInfo,
)
from torchlint.runtime.child.frameworks import Frameworks
from torchlint.runtime.child.hidden_hooks import HiddenHooks
from torchlint.runtime.child.loss_checks import LossSpy
from torchlint.runtime.child.losses import LossObserver
from torchlint.runtime.child.plugin import RunPlugin
from torchlint.runtime.child.replay import ForwardReplay
from torchlint.runtime.child.updates import UpdateWatch
from torchlint.runtime.sites import Site, SiteFinder

#: the step bound of a plugin that stops the run itself
UNBOUNDED_STEPS = 10**9

#: optimizer steps whose durations are dropped from `timing` (warm-up)
TIMING_WARMUP = 5


def make_plugin(check: str, capture: Capture, options: dict[str, Any]) -> RunPlugin:
    """The plugin that runs `check`, from the registry."""
    module_name, _, class_name = CHECKS[check].plugin.partition(":")
    plugin_class = getattr(importlib.import_module(module_name), class_name)
    plugin: RunPlugin = plugin_class(capture, options)
    return plugin


class Capture(ModuleHooks, OptimizerHooks, BackwardHooks, LoaderHooks):
    """Everything the hooks learn about one run, and the hooks themselves: the parts
    (`capture_*.py`) hook the modules, the optimizers, the backward and the loaders;
    this class installs and removes them, and holds what the plugins read."""

    def __init__(
        self,
        mode: str,
        steps: int,
        project_root: Path,
        emit: Emit,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.mode = mode  # the check
        #: steps the check asked for (its budget); the run stops when the primary reaches it
        self.requested_steps = steps
        self.target_steps = steps
        self.finder = SiteFinder(project_root)
        self.emit = emit
        self.started = time.monotonic()
        self.roots: list[RootInfo] = []
        self._roots_by_id: dict[int, RootInfo] = {}
        self.optimizers: list[OptimizerInfo] = []
        self._optimizers_by_id: dict[int, OptimizerInfo] = {}
        self.primary: OptimizerInfo | None = None
        self.loaders: list[LoaderInfo] = []
        self._loaders_by_id: dict[int, LoaderInfo] = {}
        self.train_loader: LoaderInfo | None = None
        self.last_fetch: LoaderInfo | None = None
        self.replay: Any = None
        self.forwards: list[ForwardEvent] = []
        self.loss_calls: list[LossCall] = []
        self.findings: list[Finding] = []
        self.backward_site: Site | None = None
        self.backward_calls = 0
        self.stop_reason: str | None = None
        self.loss_differentiable = True
        self.grad_scaler_used = False
        self.autocast: str | None = None
        #: perf_counter at the end of each primary step (the envelope's `timing`)
        self.step_stamps: list[float] = []
        #: id(scaled loss) -> (the scaled tensor, weakly; the loss before GradScaler.scale)
        self._unscaled: dict[int, tuple[weakref.ref[torch.Tensor], torch.Tensor]] = {}
        self.hidden = HiddenHooks()
        self.module_sites: weakref.WeakKeyDictionary[nn.Module, Site] = weakref.WeakKeyDictionary()
        self.param_sites: weakref.WeakKeyDictionary[nn.Module, dict[str, Site]] = (
            weakref.WeakKeyDictionary()
        )
        #: id(parameter) -> (the parameter, weakly; the line that set requires_grad False)
        self.frozen_sites: dict[int, tuple[weakref.ref[torch.Tensor], Site | None]] = {}
        self.spy: LossSpy | None = None
        self.update_watch = UpdateWatch(self)
        self.amp = AmpWatch(self.finder, lambda finding: self.findings.append(finding))
        self.in_optimizer_step = False
        self.optimizer_stepped = False
        #: backward call site -> ids of the optimizers whose parameters it reached, and of the
        #: trainable parameters it reached that no optimizer holds
        self._reached: dict[Site | None, tuple[frozenset[int], frozenset[int]]] = {}
        #: (the optimizer that stepped on a backward, one whose parameters it also reached but
        #: that discarded its gradient): an adversarial pair, as in a GAN
        self.adversarial: list[tuple[OptimizerInfo, OptimizerInfo]] = []
        self._backward_since_step = False
        self._forward_after_step = False
        self.forward_replay: ForwardReplay | None = None
        self.losses: LossObserver | None = None
        self.frameworks: Frameworks | None = None
        self.plugin: RunPlugin = make_plugin(mode, self, options or {})
        bound = self.plugin.total_steps()
        self.target_steps = bound if bound is not None else UNBOUNDED_STEPS
        self.probe = AccumulationProbe(self)
        self._depth = 0
        self._global_handles: list[Any] = []
        self._root_handles: list[Any] = []
        self._registration_handles: list[Any] = []
        self._step_handles: list[Any] = []
        self._patches: list[tuple[Any, str, Any]] = []
        self._added: list[tuple[Any, str]] = []

    # ----------------------------------------------------------------------------------------
    # installing and removing

    def install(self) -> None:
        module_hooks = torch.nn.modules.module
        self._global_handles = [
            module_hooks.register_module_forward_pre_hook(self._global_pre),
            module_hooks.register_module_forward_hook(self._global_post, always_call=True),
        ]
        self._registration_handles = [
            module_hooks.register_module_module_registration_hook(self._on_module_registered),
            module_hooks.register_module_parameter_registration_hook(self._on_param_registered),
        ]
        import torch.optim.optimizer as optim

        self._step_handles = [
            optim.register_optimizer_step_pre_hook(self._on_step_pre),
            optim.register_optimizer_step_post_hook(self._on_step_post),
        ]
        capture = self

        original_opt_init = torch.optim.Optimizer.__init__

        def optimizer_init(opt: Any, *args: Any, **kwargs: Any) -> None:
            original_opt_init(opt, *args, **kwargs)
            capture._register_optimizer(opt, capture.finder.find())

        original_backward = torch.autograd.backward

        def backward(tensors: Any, *args: Any, **kwargs: Any) -> Any:
            loss = capture._on_backward(tensors)
            if loss is None:
                return original_backward(tensors, *args, **kwargs)
            capture.plugin.on_backward_start(loss)
            done = original_backward(tensors, *args, **kwargs)
            capture._after_backward()
            return done

        original_loader_init = DataLoader.__init__

        def loader_init(loader: Any, *args: Any, **kwargs: Any) -> None:
            original_loader_init(loader, *args, **kwargs)
            capture._register_loader(loader, capture.finder.find())

        original_loader_iter = DataLoader.__iter__

        def loader_iter(loader: Any) -> Any:
            return capture._wrap_iterator(loader, original_loader_iter(loader))

        self._patch(torch.optim.Optimizer, "__init__", optimizer_init)
        self._patch(torch.autograd, "backward", backward)
        self._patch(DataLoader, "__init__", loader_init)
        self._patch(DataLoader, "__iter__", loader_iter)
        self._watch_freezing()
        self.hidden.install()
        plugin = self.plugin
        if plugin.wants_losses or plugin.replays_batch:
            self.losses = LossObserver(
                plugin.on_loss, floors=plugin.replays_batch, keep_targets=plugin.replays_batch
            )
            if plugin.replays_batch:
                self.losses.substitute = self.substitute_target
            self.losses.install()
        if plugin.replays_batch:
            self.forward_replay = ForwardReplay()
        scaler_class = getattr(getattr(torch, "amp", None), "GradScaler", None)
        if scaler_class is not None:
            original_scale = scaler_class.scale

            def scale(scaler: Any, outputs: Any) -> Any:
                scaled = original_scale(scaler, outputs)
                if (
                    isinstance(outputs, torch.Tensor)
                    and isinstance(scaled, torch.Tensor)
                    and scaler.is_enabled()  # GradScaler(enabled=False) scales nothing
                ):
                    capture.grad_scaler_used = True
                    if scaled is not outputs:
                        capture.remember_unscaled(scaled, outputs)
                return scaled

            self._patch(scaler_class, "scale", scale)
        self.amp.install()
        self.frameworks = Frameworks(plugin.framework_limits())
        self.frameworks.install()
        plugin.on_install()

    def _watch_freezing(self) -> None:
        """Remember the line that froze each parameter (`requires_grad_(False)` on it or its
        module, or `param.requires_grad = False`), for the frozen-parameter findings."""
        capture = self
        original = torch.Tensor.requires_grad_

        def requires_grad_(tensor: torch.Tensor, requires_grad: bool = True) -> torch.Tensor:
            if not requires_grad and isinstance(tensor, nn.Parameter):
                capture._froze(tensor)
            return original(tensor, requires_grad)

        self._patch(torch.Tensor, "requires_grad_", requires_grad_)
        base: Any = vars(torch._C.TensorBase)["requires_grad"]  # the C attribute descriptor

        def get(tensor: torch.Tensor) -> bool:
            return bool(base.__get__(tensor))

        def put(tensor: torch.Tensor, value: bool) -> None:
            if not value:
                capture._froze(tensor)
            base.__set__(tensor, value)

        if "requires_grad" not in vars(nn.Parameter):
            nn.Parameter.requires_grad = property(get, put)  # type: ignore[assignment]
            self._added.append((nn.Parameter, "requires_grad"))

    def _froze(self, param: torch.Tensor) -> None:
        if len(self.frozen_sites) < 100_000:
            self.frozen_sites[id(param)] = (weakref.ref(param), self.finder.find())

    def freeze_site(self, param: torch.Tensor) -> Site | None:
        entry = self.frozen_sites.get(id(param))
        if entry is not None and entry[0]() is param:
            return entry[1]
        return None

    def remember_unscaled(self, scaled: torch.Tensor, loss: torch.Tensor) -> None:
        """A side table, not an attribute of the tensor: nothing of ours may be reachable
        from a tensor the script keeps or saves."""
        if len(self._unscaled) > 64:
            self._unscaled = {k: v for k, v in self._unscaled.items() if v[0]() is not None}
        self._unscaled[id(scaled)] = (weakref.ref(scaled), loss)

    def _unscaled_loss(self, loss: torch.Tensor) -> torch.Tensor:
        entry = self._unscaled.pop(id(loss), None)
        if entry is not None and entry[0]() is loss:
            return entry[1]
        return loss

    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        self._patches.append((owner, name, getattr(owner, name)))
        setattr(owner, name, replacement)

    def uninstall(self) -> None:
        self.amp.uninstall()  # it wraps this capture's patches: undone first
        self._stop_spy()
        self.update_watch.close_gap()
        self.probe.detach()
        for handle in (
            self._global_handles
            + self._root_handles
            + self._registration_handles
            + self._step_handles
        ):
            handle.remove()
        self._global_handles = []
        self._root_handles = []
        self._registration_handles = []
        self._step_handles = []
        for owner, name, original in reversed(self._patches):
            setattr(owner, name, original)
        self._patches = []
        for owner, name in self._added:
            with contextlib.suppress(AttributeError):
                delattr(owner, name)
        self._added = []
        if self.losses is not None:
            self.losses.uninstall()
        if self.frameworks is not None:
            self.frameworks.uninstall()
        self.hidden.uninstall()
        self.plugin.on_uninstall()

    # ----------------------------------------------------------------------------------------
    # stopping

    def request_stop(self, reason: str) -> None:
        """End the script at the next fetch from the training loader, or at the first root
        forward after the next step. A check that decided early (a converged overfit) ends
        its progress there: the steps it ran are all it needs."""
        if self.stop_reason is None:
            self.stop_reason = reason
            primary = self.primary
            if primary is not None and 0 < primary.steps < self.target_steps:
                self.emit({"event": "step", "step": primary.steps, "of": primary.steps})

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    # ----------------------------------------------------------------------------------------
    # loss spy

    def _start_spy(self, phase: str) -> None:
        spy = LossSpy(self, phase)
        spy.__enter__()  # type: ignore[no-untyped-call]
        self.spy = spy

    def _stop_spy(self) -> None:
        spy, self.spy = self.spy, None
        if spy is not None:
            # the user's code may have changed the mode stack; then nothing is left to undo
            with contextlib.suppress(RuntimeError, AssertionError, IndexError):
                spy.__exit__(None, None, None)  # type: ignore[no-untyped-call]

    # ----------------------------------------------------------------------------------------
    # loaders

    def _wrap_iterator(self, loader: Any, inner: Iterator[Any]) -> _CapturedIterator:
        info = self._loaders_by_id.get(id(loader)) or self._register_loader(loader, None)
        if info.iter_site is None:
            info.iter_site = self.finder.find()
        self.plugin.on_loader_iter(info)
        limit = self.plugin.batch_limit(info)
        return _CapturedIterator(self, info, inner, limit)

    # ----------------------------------------------------------------------------------------
    # what the plugins read

    def describe(self) -> str:
        parts = [
            f"{len(self.roots)} model(s)",
            f"{len(self.optimizers)} optimizer(s)",
            f"{len(self.loaders)} loader(s)",
        ]
        return "captured " + ", ".join(parts)

    def substitute_target(self, name: str, target: torch.Tensor) -> torch.Tensor:
        """The loss target to use: the first step's, when a loop without a DataLoader is
        replayed."""
        replay = self.forward_replay
        if replay is None or self.train_loader is not None or not torch.is_grad_enabled():
            return target
        return replay.target(name, target)

    def step_losses(self, info: OptimizerInfo | None = None) -> list[torch.Tensor | None]:
        """The loss of each step of `info` (default: the primary)."""
        info = info if info is not None else self.primary
        return list(info.step_losses) if info is not None else []

    def timing(self) -> dict[str, Any] | None:
        """The median duration of a primary step after the warm-up, in ms."""
        stamps = self.step_stamps
        gaps = [b - a for a, b in itertools.pairwise(stamps)][TIMING_WARMUP:]
        if not gaps:
            return None
        ordered = sorted(gaps)
        return {"step_ms_median": round(ordered[len(ordered) // 2] * 1e3, 3), "steps": len(gaps)}
