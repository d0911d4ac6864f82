"""Instrumentation of an unmodified training script, for the zero-config launcher.

Runs only inside the child process that `torchlint run` starts. `Capture.install()` puts light
hooks into PyTorch before the script runs:

* global module forward hooks find the *root models* (modules with parameters called at depth 0),
  and are swapped for hooks on those roots alone after the first optimizer step;
* module and parameter registration hooks remember the line that created each submodule, so a
  parameter's finding can point at its `self.layer = nn.X(...)` line;
* `Optimizer.__init__` is wrapped (to know optimizers and their construction line before they
  step) and the global optimizer step pre/post hooks count steps and scan gradients;
* `torch.autograd.backward` is wrapped (it also serves `Tensor.backward`) to see the loss;
* `DataLoader.__init__`/`__iter__` are wrapped: each batch is copied on fetch until the first
  backward names the training loader (the loader whose batch preceded it, so an `evaluate()` run
  first is not mistaken for training); in overfit mode that loader then yields a fresh copy of
  its cached batch on every fetch;
* during the first training step (and the last overfit step) a `TorchFunctionMode` watches the
  loss functions for the cheap sanity checks.

The script is stopped with `StopRun`, a `BaseException` that the user's `except Exception`
cannot swallow, raised at the next fetch from the training loader once enough steps ran.
"""

from __future__ import annotations

import contextlib
import functools
import math
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from torchlint.runtime.captured import (
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
from torchlint.runtime.core import first_tensor, foreach_norms, map_tensors
from torchlint.runtime.hidden_hooks import HiddenHooks
from torchlint.runtime.loss_checks import LossSpy
from torchlint.runtime.plugin import RunPlugin, make_plugin
from torchlint.runtime.sites import Site, SiteFinder

Emit = Callable[[dict[str, Any]], None]

#: forwards recorded for the sanity checks (the first ones only)
MAX_FORWARD_EVENTS = 64
#: a loop that never fetches from the training loader again is stopped at a root forward once
#: the primary optimizer is this many steps past the target
FALLBACK_STOP_MARGIN = 2
#: backward calls without any optimizer step before the run is stopped as "no optimizer"
#: (far above any gradient-accumulation factor)
MAX_BACKWARDS_WITHOUT_STEP = 256
#: functional losses whose values a plugin with `wants_losses` receives
REPORTED_LOSSES = (
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
)
#: backward losses kept (the first per step is what the curves use)
MAX_BACKWARD_LOSSES = 100_000
#: the step bound of a plugin that stops the run itself
UNBOUNDED_STEPS = 10**9


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
        self.mode = mode  # "overfit", "grads", or a plugin's check
        self.target_steps = steps
        self.finder = SiteFinder(project_root)
        self.emit = emit
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
        #: (primary optimizer steps before this backward, detached scalar loss or None)
        self.backward_losses: list[tuple[int, torch.Tensor | None]] = []
        self.stop_reason: str | None = None
        self.nan_step: int | None = None
        self.loss_differentiable = True
        self.grad_scaler_used = False
        self.autocast: str | None = None
        #: id(scaled loss) -> (the scaled tensor, weakly; the loss before GradScaler.scale)
        self._unscaled: dict[int, tuple[weakref.ref[torch.Tensor], torch.Tensor]] = {}
        self.hidden = HiddenHooks()
        self.module_sites: weakref.WeakKeyDictionary[nn.Module, Site] = weakref.WeakKeyDictionary()
        self.param_sites: weakref.WeakKeyDictionary[nn.Module, dict[str, Site]] = (
            weakref.WeakKeyDictionary()
        )
        self.spy: LossSpy | None = None
        self.plugin: RunPlugin | None = make_plugin(mode, self, options or {})
        if self.plugin is not None:
            self.target_steps = self.plugin.total_steps() or UNBOUNDED_STEPS
        self.probe = AccumulationProbe(self)
        self._final_spy_started = False
        self._depth = 0
        self._global_handles: list[Any] = []
        self._root_handles: list[Any] = []
        self._registration_handles: list[Any] = []
        self._step_handles: list[Any] = []
        self._patches: list[tuple[Any, str, Any]] = []
        # gradient scan (grads mode)
        self.scan_names: list[str] = []
        self.scan_params: list[nn.Parameter] = []
        self.scan_optimizer_ids: set[int] = set()
        self.scan_foreign = 0
        self._scan_index: dict[int, int] = {}
        self._scan_owned: dict[int, list[int]] = {}  # id(optimizer) -> its param indices
        self._scan_orphans: list[int] = []  # trainable params in no optimizer
        self.grad_rows: list[torch.Tensor] = []
        self.weight_rows: list[torch.Tensor] = []
        self.present_rows: list[torch.Tensor] = []

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
            plugin = capture.plugin
            if plugin is None or loss is None:
                return original_backward(tensors, *args, **kwargs)
            plugin.on_backward_start(loss)
            done = original_backward(tensors, *args, **kwargs)
            plugin.on_backward_end()
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
        self.hidden.install()
        if self.plugin is not None and self.plugin.wants_losses:
            self._patch_losses(self.plugin)
        scaler_class = getattr(getattr(torch, "amp", None), "GradScaler", None)
        if scaler_class is not None:
            original_scale = scaler_class.scale

            def scale(scaler: Any, outputs: Any) -> Any:
                scaled = original_scale(scaler, outputs)
                if isinstance(outputs, torch.Tensor) and isinstance(scaled, torch.Tensor):
                    capture.grad_scaler_used = True
                    if scaled is not outputs:
                        capture.remember_unscaled(scaled, outputs)
                return scaled

            self._patch(scaler_class, "scale", scale)

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

    def _patch_losses(self, plugin: RunPlugin) -> None:
        """Report every scalar value of the functional losses (nn.*Loss modules call them)."""
        functional = torch.nn.functional
        busy = [False]  # a loss calling another (or the loss spy calling it again) reports once

        def wrap(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(original)
            def loss(*args: Any, **kwargs: Any) -> Any:
                if busy[0]:
                    return original(*args, **kwargs)
                busy[0] = True
                try:
                    out = original(*args, **kwargs)
                finally:
                    busy[0] = False
                if isinstance(out, torch.Tensor) and out.numel() == 1:
                    plugin.on_loss(name, out.detach(), torch.is_grad_enabled())
                return out

            return loss

        for name in REPORTED_LOSSES:
            original = getattr(functional, name, None)
            if original is not None:
                self._patch(functional, name, wrap(name, original))

    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        self._patches.append((owner, name, getattr(owner, name)))
        setattr(owner, name, replacement)

    def uninstall(self) -> None:
        self._stop_spy()
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
        self.hidden.uninstall()

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

    def _global_pre(self, module: nn.Module, args: Any) -> None:
        self._depth += 1
        if self._depth == 1:
            self._root_forward(module, discover=True)

    def _global_post(self, module: nn.Module, args: Any, output: Any) -> None:
        self._depth -= 1
        if self._depth == 0 and self.plugin is not None:
            root = self._roots_by_id.get(id(module))
            if root is not None:
                self.plugin.on_forward_end(root)

    def _root_post(self, module: nn.Module, args: Any, output: Any) -> None:
        root = self._roots_by_id.get(id(module))
        if root is not None and self.plugin is not None:
            self.plugin.on_forward_end(root)

    def _root_pre(self, module: nn.Module, args: Any) -> None:
        self._root_forward(module, discover=False)

    def _root_forward(self, module: nn.Module, discover: bool) -> None:
        info = self._roots_by_id.get(id(module))
        if info is None:
            if not discover or next(module.parameters(), None) is None:
                return
            info = RootInfo(module, self.finder.find())
            self._roots_by_id[id(module)] = info
            self.roots.append(info)
        info.forwards += 1
        if self.spy is not None and not self.spy.active:
            self._stop_spy()
        grad = torch.is_grad_enabled()
        if len(self.forwards) < MAX_FORWARD_EVENTS:
            site = info.forward_site if info.forwards == 1 else self.finder.find()
            self.forwards.append(ForwardEvent(info, module.training, grad, self.last_fetch, site))
        primary = self.primary
        if grad and self.backward_calls == 0:
            # (re)start the first-step window: a grad-enabled forward before any backward
            self._stop_spy()
            self._start_spy("first")
            self._note_autocast(module)
        elif (
            grad
            and self.mode == "overfit"
            and primary is not None
            and primary.steps == self.target_steps - 1
            and not self._final_spy_started
        ):
            self._final_spy_started = True
            self._start_spy("final")
        if (
            primary is not None
            and self.stop_reason is not None
            and primary.steps >= self.target_steps + FALLBACK_STOP_MARGIN
        ):
            raise StopRun(self.stop_reason)
        if self.plugin is not None:
            self.plugin.on_forward_start(info, module.training, grad)

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
            hide(root.module.register_forward_pre_hook(self._root_pre)) for root in self.roots
        ]
        if self.plugin is not None:
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
            info = OptimizerInfo(opt, site)
            self._optimizers_by_id[id(opt)] = info
            self.optimizers.append(info)
        return info

    def _on_step_pre(self, opt: Any, args: Any, kwargs: Any) -> None:
        info = self._optimizers_by_id.get(id(opt)) or self._register_optimizer(opt, None)
        if self.primary is None:
            self.primary = info
        if info.step_site is None:
            info.step_site = self.finder.find()
        if info.first_lrs is None:
            info.first_lrs = learning_rates(info.optimizer)
        has_closure = _has_closure(args, kwargs)
        if self.mode == "grads" and not has_closure:
            self._scan(info)
        if info is self.primary and not has_closure:
            if info.steps == 0:
                self._check_gradients_reach_model()
            self.probe.before_step(info.steps)
        if self.plugin is not None:
            self.plugin.on_step_start(info)

    def _on_step_post(self, opt: Any, args: Any, kwargs: Any) -> None:
        info = self._optimizers_by_id.get(id(opt))
        if info is None:
            return
        has_closure = _has_closure(args, kwargs)
        if self.mode == "grads" and has_closure:
            self._scan(info)
        if info is self.primary and info.steps == 0 and has_closure:
            self._check_gradients_reach_model()
        info.steps += 1
        if self.plugin is not None:
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
        if self.mode == "overfit" and self.nan_step is None:
            loss = self._loss_of_step(step - 1)
            if loss is not None and not bool(torch.isfinite(loss)):
                self.nan_step = step - 1
                self.stop_reason = "nan"
        if step >= self.target_steps and self.stop_reason is None:
            self.stop_reason = "steps_done"
        self.emit({"event": "step", "step": step, "of": self.target_steps})

    def _probe_parameter(self, info: OptimizerInfo) -> nn.Parameter | None:
        """The smallest trainable parameter of the roots that `info` optimizes (cheap to copy)."""
        owned = {id(p) for g in info.optimizer.param_groups for p in g["params"]}
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
                    "no-gradient-reaches-model",
                    "error",
                    f"after the first backward, none of the model's {len(trainable)} trainable "
                    "parameter tensors has a gradient: the loss is not connected to the model "
                    "(detached outputs, `.data`, or a `requires_grad_()` on the loss that "
                    "silenced the error), so nothing can learn.",
                    self.backward_site,
                    {"trainable_parameters": len(trainable)},
                )
            )

    def _loss_of_step(self, step: int) -> torch.Tensor | None:
        for index in range(len(self.backward_losses) - 1, -1, -1):
            k, loss = self.backward_losses[index]
            if k < step:
                return None
            if k == step and (index == 0 or self.backward_losses[index - 1][0] < step):
                return loss
        return None

    # ----------------------------------------------------------------------------------------
    # gradient scan

    def _prepare_scan(self) -> None:
        seen: set[int] = set()
        many = len(self.roots) > 1
        for root in self.roots:
            prefix = f"{type(root.module).__name__}." if many else ""
            for name, param in root.module.named_parameters():
                if id(param) in seen:
                    continue
                seen.add(id(param))
                self._scan_index[id(param)] = len(self.scan_params)
                self.scan_names.append(prefix + name)
                self.scan_params.append(param)
        for info in self.optimizers:
            owned: list[int] = []
            for group in info.optimizer.param_groups:
                for param in group["params"]:
                    self.scan_optimizer_ids.add(id(param))
                    index = self._scan_index.get(id(param))
                    if index is None:
                        self.scan_foreign += 1
                    elif param.requires_grad:
                        owned.append(index)
            self._scan_owned[id(info.optimizer)] = owned
        self._scan_orphans = [
            i
            for i, p in enumerate(self.scan_params)
            if p.requires_grad and id(p) not in self.scan_optimizer_ids
        ]

    def _scan(self, info: OptimizerInfo) -> None:
        """Norms of this optimizer's gradients (and, at the primary's step, of trainable
        parameters in no optimizer) at its k-th step, as one foreach call; kept on device."""
        k = info.steps
        if k >= self.target_steps:
            return
        if not self.scan_params:
            self._prepare_scan()
            if not self.scan_params:
                return
        indices = list(self._scan_owned.get(id(info.optimizer), []))
        if info is self.primary:
            indices += self._scan_orphans
        if not indices:
            return
        count = len(self.scan_params)
        device = self.scan_params[indices[0]].device
        while len(self.grad_rows) <= k:
            self.grad_rows.append(torch.full((count,), math.nan, device=device))
            self.weight_rows.append(torch.full((count,), math.nan, device=device))
            self.present_rows.append(torch.zeros(count, dtype=torch.bool))
        params = self.scan_params
        with_grad = [i for i in indices if params[i].grad is not None]
        with torch.no_grad():
            if with_grad:
                grads = [g for i in with_grad if (g := params[i].grad) is not None]
                where = torch.tensor(with_grad, dtype=torch.long, device=device)
                self.grad_rows[k][where] = foreach_norms(grads, device)
                self.present_rows[k][with_grad] = True
            where_all = torch.tensor(indices, dtype=torch.long, device=device)
            self.weight_rows[k][where_all] = foreach_norms(
                [params[i].detach() for i in indices], device
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
        first = self.backward_calls == 0
        self.backward_calls += 1
        if first:
            self.backward_site = self.finder.find()
            self._on_first_backward()
            if self.mode == "overfit" and self.train_loader is None:
                # nothing to replay: say so now, not at the timeout
                self.stop_reason = "no_loader"
                raise StopRun(self.stop_reason)
        if self.primary is None and self.backward_calls > MAX_BACKWARDS_WITHOUT_STEP:
            self.stop_reason = "no_optimizer"
            raise StopRun(self.stop_reason)
        if self.forwards and self.forwards[-1].grad_enabled:
            self.forwards[-1].backward_followed = True
        if self.spy is not None:
            # Tensor.backward may be running inside the spy's own dispatch (the mode is popped
            # while its handler runs), so it cannot leave the mode stack here: it goes quiet,
            # and the next root forward removes it.
            self.spy.active = False
        if not loss.requires_grad:
            self.loss_differentiable = False
            self._add_once(
                Finding(
                    "TLR103",
                    "loss-not-differentiable",
                    "error",
                    "backward() was called on a loss that does not require grad: it was "
                    "computed from detached tensors (`.detach()`, `.data`, `.item()`) or under "
                    "no_grad, so no parameter can learn. Compute the loss from the model's "
                    "output directly.",
                    self.backward_site,
                    {"requires_grad": False},
                )
            )
            raise StopRun("loss_not_differentiable")
        steps = self.primary.steps if self.primary is not None else 0
        value = loss.detach().float().reshape(()) if loss.numel() == 1 else None
        if len(self.backward_losses) < MAX_BACKWARD_LOSSES:
            self.backward_losses.append((steps, value))
        return loss

    def _on_first_backward(self) -> None:
        train = self.last_fetch
        if train is not None:
            self.train_loader = train
            train.role = "train"
            if self.mode == "overfit":
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
                        "eval-mode-training",
                        "warning",
                        f"the training step ran {type(forward.root.module).__name__} in eval "
                        f"mode, so {shown} behave as at inference (dropout off, BatchNorm on "
                        "running statistics). Call model.train() before training (and again "
                        "after each evaluation).",
                        forward.site,
                        {"mode_dependent_layers": layers[:20]},
                    )
                )
        self.emit({"event": "captured", "summary": self.describe()})

    def gradients_accumulate_across_steps(self) -> None:
        primary = self.primary
        self._add_once(
            Finding(
                "TLR107",
                "gradients-not-cleared",
                "error",
                "the gradients are not cleared between optimizer steps: before each step the "
                "gradient holds the previous steps' gradients plus this batch's, so every "
                "update repeats all earlier ones. Call optimizer.zero_grad() once per optimizer "
                "step (after step(), or before the backward of the first micro-batch).",
                primary.step_site if primary is not None else self.backward_site,
                {"checked_steps": PROBE_STEPS},
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
        limit = None
        if self.plugin is not None:
            self.plugin.on_loader_iter(info)
            limit = self.plugin.batch_limit(info)
        return _CapturedIterator(self, info, inner, limit)

    def next_batch(self, info: LoaderInfo, inner: Iterator[Any]) -> Any:
        plugin = self.plugin
        if plugin is None:
            return self._next_batch(info, inner)
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
        if self.train_loader is None and self.mode == "overfit":
            info.cached = map_tensors(batch, lambda t: t.detach().clone())
        if info.batch_size_seen is None:
            tensor = first_tensor(batch)
            if tensor is not None and tensor.dim() > 0:
                info.batch_size_seen = int(tensor.shape[0])
        return batch


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

    def attach(self, param: nn.Parameter | None) -> None:
        if param is None or param.grad is None:
            return
        self.param = param
        self.handle = param.register_hook(self._on_gradient)  # type: ignore[no-untyped-call]

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
            grad = param.grad.detach()
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
        self.handle = None
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
