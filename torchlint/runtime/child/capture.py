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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from torchlint.runtime.checks import CHECKS
from torchlint.runtime.child.amp import AmpWatch
from torchlint.runtime.child.captured import (
    Finding,
    ForwardEvent,
    LoaderInfo,
    LossCall,
    OptimizerInfo,
    RootInfo,
    StopRun,
    learning_rates,
    mode_dependent_layers,
)
from torchlint.runtime.child.core import first_tensor, map_tensors
from torchlint.runtime.child.frameworks import Frameworks
from torchlint.runtime.child.hidden_hooks import HiddenHooks
from torchlint.runtime.child.loss_checks import LossSpy
from torchlint.runtime.child.losses import LossObserver
from torchlint.runtime.child.plugin import RunPlugin
from torchlint.runtime.child.replay import ForwardReplay
from torchlint.runtime.child.updates import UpdateWatch
from torchlint.runtime.sites import Site, SiteFinder

Emit = Callable[[dict[str, Any]], None]

#: forwards recorded for the sanity checks (the first ones only)
MAX_FORWARD_EVENTS = 64
#: backward losses kept per optimizer (the curves), far above any check's steps
MAX_STEP_LOSSES = 100_000
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


class Capture:
    """Everything the hooks learn about one run, and the hooks themselves."""

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
    # modules

    def _on_module_registered(self, parent: nn.Module, name: str, module: Any) -> None:
        if isinstance(module, nn.Module) and module not in self.module_sites:
            site = self.finder.find()
            if site is not None:
                self.module_sites[module] = site

    def _on_param_registered(self, module: nn.Module, name: str, param: Any) -> None:
        if param is None:
            return
        site = self.finder.find()
        if site is not None:
            self.param_sites.setdefault(module, {}).setdefault(name, site)

    def _global_pre(self, module: nn.Module, args: Any) -> Any:
        self._depth += 1
        if self._depth == 1:
            replaced = self._root_forward(module, args, {}, discover=True)
            if replaced is not None:
                return replaced[0]
        return None

    def _global_post(self, module: nn.Module, args: Any, output: Any) -> None:
        self._depth -= 1
        if self._depth == 0:
            root = self._roots_by_id.get(id(module))
            if root is not None:
                self.plugin.on_forward_end(root)

    def _root_post(self, module: nn.Module, args: Any, output: Any) -> None:
        root = self._roots_by_id.get(id(module))
        if root is not None:
            self.plugin.on_forward_end(root)

    def _root_pre(self, module: nn.Module, args: Any, kwargs: Any) -> Any:
        return self._root_forward(module, args, kwargs, discover=False)

    def _root_forward(
        self, module: nn.Module, args: Any, kwargs: Any, discover: bool
    ) -> tuple[Any, Any] | None:
        info = self._roots_by_id.get(id(module))
        if info is None:
            if not discover or next(module.parameters(), None) is None:
                return None
            info = RootInfo(module, self.finder.find())
            self._roots_by_id[id(module)] = info
            self.roots.append(info)
        info.forwards += 1
        if self.spy is not None and not self.spy.active:
            self._stop_spy()
        if self.update_watch.spy is not None:
            self._close_update_gap()
        grad = torch.is_grad_enabled()
        primary = self.primary
        if primary is not None and primary.manual is not None and self._backward_since_step:
            self._manual_step()
        if self.stop_reason is not None and self._forward_after_step and primary is not None:
            raise StopRun(self.stop_reason)
        if len(self.forwards) < MAX_FORWARD_EVENTS:
            site = info.forward_site if info.forwards == 1 else self.finder.find()
            self.forwards.append(ForwardEvent(info, module.training, grad, self.last_fetch, site))
        if grad and self.backward_calls == 0:
            # (re)start the first-step window: a grad-enabled forward before any backward
            self._stop_spy()
            self._start_spy("first")
            self._note_autocast(module)
        self.plugin.on_forward_start(info, module.training, grad)
        replay = self.forward_replay
        if replay is not None and grad and self.train_loader is None and self.stop_reason is None:
            replaced: tuple[Any, Any] | None = replay.forward(
                module, tuple(args), dict(kwargs or {})
            )
            return replaced
        return None

    def _note_autocast(self, module: nn.Module) -> None:
        param = next(module.parameters(), None)
        device_type = param.device.type if param is not None else "cpu"
        try:
            if torch.is_autocast_enabled(device_type):
                self.autocast = str(torch.get_autocast_dtype(device_type)).removeprefix("torch.")
            else:
                self.autocast = None
        except (TypeError, RuntimeError, AttributeError):
            self.autocast = None

    def _switch_to_root_hooks(self) -> None:
        """After the first step the roots are known: drop the global module hooks (they fire
        for every submodule call) and watch the roots alone."""
        for handle in self._global_handles + self._registration_handles:
            handle.remove()
        self._global_handles = []
        self._registration_handles = []
        self._depth = 0
        hide = self.hidden.add
        self._root_handles = [
            hide(root.module.register_forward_pre_hook(self._root_pre, with_kwargs=True))
            for root in self.roots
        ]
        self._root_handles += [
            hide(root.module.register_forward_hook(self._root_post, always_call=True))
            for root in self.roots
        ]

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

    def _add_once(self, finding: Finding) -> None:
        if any(f.code == finding.code and f.site == finding.site for f in self.findings):
            return
        self.findings.append(finding)

    # ----------------------------------------------------------------------------------------
    # optimizers

    def _register_optimizer(self, opt: Any, site: Site | None) -> OptimizerInfo:
        info = self._optimizers_by_id.get(id(opt))
        if info is None:
            info = OptimizerInfo(opt, site, configured_lrs=learning_rates(opt))
            self._optimizers_by_id[id(opt)] = info
            self.optimizers.append(info)
            self._reached = {}
        return info

    def _on_step_pre(self, opt: Any, args: Any, kwargs: Any) -> None:
        info = self._optimizers_by_id.get(id(opt)) or self._register_optimizer(opt, None)
        self.in_optimizer_step = True
        self.optimizer_stepped = True
        if self.update_watch.spy is not None:
            self._close_update_gap()
        if self.primary is None or self.primary.manual is not None:
            self.primary = info
        if info.step_site is None:
            info.step_site = self.finder.find()
        if info.first_lrs is None:
            info.first_lrs = learning_rates(info.optimizer)
        has_closure = _has_closure(args, kwargs)
        info.closure = has_closure
        if info is self.primary and not has_closure:
            if info.steps == 0:
                self._check_gradients_reach_model()
            self.probe.before_step(info.steps)
        self.plugin.on_step_start(info)

    def _on_step_post(self, opt: Any, args: Any, kwargs: Any) -> None:
        self.in_optimizer_step = False
        info = self._optimizers_by_id.get(id(opt))
        if info is None:
            return
        has_closure = _has_closure(args, kwargs)
        if info is self.primary and info.steps == 0 and has_closure:
            self._check_gradients_reach_model()
        self._take_step_loss(info)
        info.steps += 1
        self.plugin.on_step_end(info)
        if info is not self.primary:
            return
        step = info.steps
        if step == 1:
            self._switch_to_root_hooks()
            if not has_closure:
                self.probe.attach(self._probe_parameter(info))
        if not has_closure:
            self.probe.after_step(step)
        self._primary_step_done(step)

    def _primary_step_done(self, step: int) -> None:
        self.step_stamps.append(time.perf_counter())
        self._forward_after_step = True
        self._backward_since_step = False
        if self.forward_replay is not None:
            self.forward_replay.start_step()
        if step >= self.target_steps:
            self.request_stop("steps_done")
        self.emit({"event": "step", "step": step, "of": self.target_steps})

    def _manual_step(self) -> None:
        """A manual update ran since the last backward: one step of the manual optimizer."""
        info = self.primary
        if info is None or info.manual is None:
            return
        self.plugin.on_step_start(info)
        self._take_step_loss(info)
        info.steps += 1
        self.plugin.on_step_end(info)
        if info.steps == 1:
            self._switch_to_root_hooks()
        self._primary_step_done(info.steps)

    def _close_update_gap(self) -> None:
        found = self.update_watch.close_gap()
        if found is None or self.optimizer_stepped:
            return
        params = [p for root in self.roots for p in root.module.parameters()]
        info = OptimizerInfo(None, found.site, manual=found, step_site=found.site)
        info.manual_params = params
        self.optimizers.append(info)
        self.primary = info
        self._reached = {}
        self.findings.append(
            Finding(
                "TLR109",
                f"the script updates the parameters itself ({found.operation} on "
                f"{found.tensors} parameter tensor(s) here), without a torch.optim optimizer: "
                "each backward is counted as one step.",
                found.site,
                {"operation": found.operation, "tensors": found.tensors},
            )
        )
        if self.update_watch.changed is False:
            self.findings.append(
                Finding(
                    "TLR108",
                    f"the update here ({found.operation}) left the parameters exactly as they "
                    "were: a learning rate of 0, or an update applied to a copy of the "
                    "parameters instead of the parameters themselves.",
                    found.site,
                    {"operation": found.operation},
                    advice="Check the learning rate the update uses, and that it updates "
                    "`p.data` (or `p` under torch.no_grad()) of the model's own parameters.",
                )
            )
        self.plugin.on_manual_update(info)
        self._manual_step()

    def _take_step_loss(self, info: OptimizerInfo) -> None:
        """The loss of the step `info` just took: the sum of the losses of the backward calls
        that reached its parameters since its gradients were last cleared (the first of them
        for a closure, which calls backward many times on one loss)."""
        pending = info.pending
        values = [loss for loss, _ in pending]
        value: torch.Tensor | None = None
        if values and all(v is not None for v in values):
            if info.closure or len(values) == 1:
                value = values[0]
            else:
                value = torch.stack([v for v in values if v is not None]).sum()
        for _, entry in pending:
            entry.consumed_by.add(id(info))
            info.orphans_trained |= entry.orphans
        if len(info.step_losses) < MAX_STEP_LOSSES:
            info.step_losses.append(value)
            info.step_backwards.append(len(values))
        info.pending = []

    def _probe_parameter(self, info: OptimizerInfo) -> nn.Parameter | None:
        """The smallest trainable parameter of the roots that `info` optimizes (cheap to copy)."""
        owned = {id(p) for p in info.parameters()}
        candidates = [
            p
            for root in self.roots
            for p in root.module.parameters()
            if p.requires_grad and id(p) in owned and p.grad is not None
        ]
        return min(candidates, key=lambda p: p.numel()) if candidates else None

    def _check_gradients_reach_model(self) -> None:
        """At the first step: when no trainable parameter of any root model has a gradient,
        the loss is not connected to the model (a `.detach()` and a `requires_grad_()` that
        silenced the error, or a loss built from `.data`)."""
        trainable = [p for root in self.roots for p in root.module.parameters() if p.requires_grad]
        if trainable and all(p.grad is None for p in trainable):
            self._add_once(
                Finding(
                    "TLR106",
                    f"after the first backward, none of the model's {len(trainable)} trainable "
                    "parameter tensors has a gradient: the loss is not connected to the model "
                    "(detached outputs, `.data`, or a `requires_grad_()` on the loss that "
                    "silenced the error), so nothing can learn.",
                    self.backward_site,
                    {"trainable_parameters": len(trainable)},
                    advice="Compute the loss from the model's output without detaching it.",
                )
            )

    # ----------------------------------------------------------------------------------------
    # backward

    def _on_backward(self, tensors: Any) -> torch.Tensor | None:
        """Records a backward call; returns the (unscaled) loss, None when it is not a tensor."""
        loss = tensors
        if isinstance(tensors, (list, tuple)) and tensors:
            loss = tensors[0]
        if not isinstance(loss, torch.Tensor):
            return None
        loss = self._unscaled_loss(loss)
        if self.update_watch.spy is not None:
            self._close_update_gap()
        first = self.backward_calls == 0
        self.backward_calls += 1
        if first:
            self.backward_site = self.finder.find()
            self._on_first_backward(loss)
        manual = self.primary is not None and self.primary.manual is not None
        if manual and self._backward_since_step:
            self._manual_step()
        if self.forwards and self.forwards[-1].grad_enabled:
            self.forwards[-1].backward_followed = True
        if self.spy is not None:
            # Tensor.backward may be running inside the spy's own dispatch (the mode is popped
            # while its handler runs), so it cannot leave the mode stack here: it goes quiet,
            # and the next root forward removes it.
            self.spy.active = False
        if not loss.requires_grad:
            self.loss_differentiable = False
            self._not_differentiable()
            raise StopRun("loss_not_differentiable")
        value = loss.detach().float().reshape(()) if loss.numel() == 1 else None
        self._attribute(loss, value)
        self._backward_since_step = True
        return loss

    def _not_differentiable(self) -> None:
        params = [p for root in self.roots for p in root.module.parameters()]
        if params and not any(p.requires_grad for p in params):
            sites = [s for p in params if (s := self.freeze_site(p)) is not None]
            site = sites[0] if sites else self.backward_site
            where = f" (frozen at line {site.line})" if sites and site is not None else ""
            self._add_once(
                Finding(
                    "TLR204",
                    f"every one of the model's {len(params)} parameter tensors is frozen "
                    f"(requires_grad=False){where}, so the loss does not require grad and "
                    "backward() has nothing to compute.",
                    site,
                    {"params": len(params), "frozen": len(params)},
                    advice="Unfreeze the parameters that should learn (requires_grad_(True)), "
                    "or remove the line that froze them.",
                    severity="error",
                )
            )
            return
        self._add_once(
            Finding(
                "TLR103",
                "backward() was called on a loss that does not require grad: it was computed "
                "from detached tensors (`.detach()`, `.data`, `.item()`) or under no_grad, so "
                "no parameter can learn.",
                self.backward_site,
                {"requires_grad": False},
                advice="Compute the loss from the model's output directly.",
            )
        )

    def _after_backward(self) -> None:
        self.plugin.on_backward_end()
        if not self.optimizer_stepped and (self.primary is None or self.primary.manual is None):
            self.update_watch.after_backward()

    def _attribute(self, loss: torch.Tensor, value: torch.Tensor | None) -> None:
        """Add the loss to the pending window of each optimizer whose parameters it reaches
        (all of them with a single optimizer), after dropping the windows whose gradients were
        cleared since."""
        entry = _Pending()
        optimizers = [o for o in self.optimizers if o.manual is None or o is self.primary]
        if not optimizers:
            return
        if len(optimizers) == 1:
            reached = {id(o) for o in optimizers}
        else:
            found, orphans = self._reached_by(loss)
            reached, entry.orphans = set(found), orphans
        for info in optimizers:
            # a closure clears the gradients before each of its evaluations: one step
            if info.pending and not self.in_optimizer_step and info.cleared():
                self._discard(info)
            if id(info) in reached:
                entry.reached.add(id(info))
                info.pending.append((value, entry))

    def _discard(self, info: OptimizerInfo) -> None:
        """`info`'s gradients were cleared before it stepped on its pending backward calls: an
        adversarial pair when another optimizer stepped on one of them (one over other
        parameters: two optimizers over the same ones are one model stepped twice, a bug that
        coverage_findings reports, not a game between two models)."""
        for _, entry in info.pending:
            for other_id in entry.consumed_by:
                other = next((o for o in self.optimizers if id(o) == other_id), None)
                if other is not None and other is not info and not _shared(info, other):
                    pair = (other, info)
                    if pair not in self.adversarial:
                        self.adversarial.append(pair)
        info.pending = []

    def _reached_by(self, loss: torch.Tensor) -> tuple[frozenset[int], frozenset[int]]:
        """The optimizers whose parameters the loss's graph reaches, and the trainable
        parameters it reaches that no optimizer holds; cached per backward line (one walk of
        the graph per line)."""
        site = self.finder.find()
        cached = self._reached.get(site)
        if cached is not None:
            return cached
        owners: dict[int, set[int]] = {}
        for info in self.optimizers:
            for p in info.parameters():
                owners.setdefault(id(p), set()).add(id(info))
        found: set[int] = set()
        orphans: set[int] = set()
        seen: set[int] = set()
        kept: list[Any] = []  # the nodes' Python wrappers stay alive, so their ids stay unique
        stack = [loss.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            kept.append(node)
            variable = getattr(node, "variable", None)
            if isinstance(variable, torch.Tensor):
                owned = owners.get(id(variable))
                if owned:
                    found |= owned
                elif isinstance(variable, nn.Parameter):
                    orphans.add(id(variable))
            stack.extend(child for child, _ in getattr(node, "next_functions", ()))
        reached = self._reached[site] = (frozenset(found), frozenset(orphans))
        return reached

    def _on_first_backward(self, loss: torch.Tensor) -> None:
        train = self.last_fetch
        if train is not None:
            self.train_loader = train
            train.role = "train"
            if self.plugin.replays_batch:
                self.replay = train.cached
            for loader in self.loaders:
                loader.cached = None
        forward = next((f for f in reversed(self.forwards) if f.grad_enabled), None)
        if forward is not None and not forward.training:
            layers = mode_dependent_layers(forward.root.module)
            if layers:
                shown = ", ".join(layers[:4]) + (" ..." if len(layers) > 4 else "")
                self._add_once(
                    Finding(
                        "TLR304",
                        f"the training step ran {type(forward.root.module).__name__} in eval "
                        f"mode, so {shown} behave as at inference (dropout off, BatchNorm on "
                        "running statistics) while it trains.",
                        forward.site,
                        {"mode_dependent_layers": layers[:20]},
                        advice="Call model.train() before training, and again after each "
                        "evaluation.",
                    )
                )
        self.emit({"event": "captured", "summary": self.describe()})
        self.plugin.on_first_backward(loss)

    def gradients_accumulate_across_steps(self) -> None:
        primary = self.primary
        self._add_once(
            Finding(
                "TLR107",
                "the gradients are not cleared between optimizer steps: before each step the "
                "gradient holds the previous steps' gradients plus this batch's, so every "
                "update repeats all earlier ones.",
                primary.step_site if primary is not None else self.backward_site,
                {"checked_steps": PROBE_STEPS},
                advice="Call optimizer.zero_grad() once per optimizer step (after step(), or "
                "before the backward of the first micro-batch).",
            )
        )

    def stopped_in_first_step(self) -> None:
        """A first-step check stops the run before any backward: the loader whose batch is in
        use is the training loader, for the report's environment."""
        if self.train_loader is None and self.last_fetch is not None:
            self.train_loader = self.last_fetch
            self.last_fetch.role = "train"

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

    # ----------------------------------------------------------------------------------------
    # loaders

    def _register_loader(self, loader: Any, site: Site | None) -> LoaderInfo:
        info = self._loaders_by_id.get(id(loader))
        if info is None:
            info = LoaderInfo(loader, site)
            self._loaders_by_id[id(loader)] = info
            self.loaders.append(info)
        return info

    def _wrap_iterator(self, loader: Any, inner: Iterator[Any]) -> _CapturedIterator:
        info = self._loaders_by_id.get(id(loader)) or self._register_loader(loader, None)
        if info.iter_site is None:
            info.iter_site = self.finder.find()
        self.plugin.on_loader_iter(info)
        limit = self.plugin.batch_limit(info)
        return _CapturedIterator(self, info, inner, limit)

    def next_batch(self, info: LoaderInfo, inner: Iterator[Any]) -> Any:
        plugin = self.plugin
        plugin.on_fetch_start(info)
        batch = self._next_batch(info, inner)
        plugin.on_fetch_end(info, batch)
        return batch

    def _next_batch(self, info: LoaderInfo, inner: Iterator[Any]) -> Any:
        if info is self.train_loader:
            if self.stop_reason is not None:
                raise StopRun(self.stop_reason)
            if self.replay is not None:
                info.batches += 1
                self.last_fetch = info
                return map_tensors(self.replay, torch.Tensor.clone)
        batch = next(inner)
        info.batches += 1
        self.last_fetch = info
        if self.train_loader is None and self.plugin.replays_batch:
            info.cached = map_tensors(batch, lambda t: t.detach().clone())
        if info.batch_size_seen is None:
            tensor = first_tensor(batch)
            if tensor is not None and tensor.dim() > 0:
                info.batch_size_seen = int(tensor.shape[0])
        return batch

    # ----------------------------------------------------------------------------------------
    # what the plugins read

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


def _shared(first: OptimizerInfo, second: OptimizerInfo) -> bool:
    """Whether every parameter of one of the two optimizers is also the other's."""
    a, b = {id(p) for p in first.parameters()}, {id(p) for p in second.parameters()}
    return bool(a) and bool(b) and (a <= b or b <= a)


class _Pending:
    """One backward call in the pending windows: the optimizers it reached and those that
    stepped on it."""

    __slots__ = ("consumed_by", "orphans", "reached")

    def __init__(self) -> None:
        self.reached: set[int] = set()
        self.consumed_by: set[int] = set()
        #: the trainable parameters it reached that no optimizer holds
        self.orphans: frozenset[int] = frozenset()


#: steps over which the accumulation probe watches (from step 1, after the probe is attached)
PROBE_STEPS = 3


def _has_closure(args: Any, kwargs: Any) -> bool:
    """Whether `optimizer.step` got a closure; the hooks' `args` start with the optimizer."""
    return len(args) > 1 or bool(kwargs and kwargs.get("closure") is not None)


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


class _CapturedIterator:
    """Stands in for a DataLoader iterator: delegates to it, through `Capture.next_batch`."""

    def __init__(
        self, capture: Capture, info: LoaderInfo, inner: Iterator[Any], limit: int | None = None
    ) -> None:
        self._capture = capture
        self._info = info
        self._inner = inner
        self._limit = limit  # batches in this pass (--limit-batches), None: the loader's own
        self._served = 0

    def __iter__(self) -> _CapturedIterator:
        return self

    def __next__(self) -> Any:
        if self._limit is not None and self._served >= self._limit:
            raise StopIteration
        batch = self._capture.next_batch(self._info, self._inner)
        self._served += 1
        return batch

    def __len__(self) -> int:
        size = len(self._inner)  # type: ignore[arg-type]
        return size if self._limit is None else min(size, self._limit)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
