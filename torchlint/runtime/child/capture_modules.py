"""The capture's module hooks: the root models, their forwards, the lines that built them."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from torchlint.runtime.child.capture_state import CaptureState
from torchlint.runtime.child.captured import ForwardEvent, RootInfo, StopRun

#: forwards recorded for the sanity checks (the first ones only)
MAX_FORWARD_EVENTS = 64


class ModuleHooks(CaptureState):
    """The module hooks of `Capture`: registrations, root forwards, the switch to root hooks."""

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
