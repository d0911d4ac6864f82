"""The capture's backward hook: the loss, the optimizers it reaches, the first step's findings."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from torchlint.runtime.child.capture_state import CaptureState
from torchlint.runtime.child.captured import (
    Finding,
    OptimizerInfo,
    StopRun,
    mode_dependent_layers,
)


class BackwardHooks(CaptureState):
    """The backward hook of `Capture`: the loss, its attribution, the first backward."""

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

    def stopped_in_first_step(self) -> None:
        """A first-step check stops the run before any backward: the loader whose batch is in
        use is the training loader, for the report's environment."""
        if self.train_loader is None and self.last_fetch is not None:
            self.train_loader = self.last_fetch
            self.last_fetch.role = "train"


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
