"""The loop model itself: which forms become which events, and how calls are expanded."""

from __future__ import annotations

import textwrap

from torchlint.analysis.collect import collect
from torchlint.analysis.frameworks import framework_bodies
from torchlint.analysis.loops import LoopModel, LoopModels
from torchlint.analysis.model import Kind
from torchlint.analysis.resolve import resolve
from torchlint.analysis.source import ParsedSource, parse_source


def models(source: str) -> list[LoopModel]:
    parsed = parse_source(textwrap.dedent(source))
    assert isinstance(parsed, ParsedSource)
    facts = collect(parsed)
    return LoopModels(facts.scopes, resolve(facts)).all


def kinds(model: LoopModel) -> list[tuple[str, str | None, str | None]]:
    return [
        (e.kind.value, e.receiver, e.event.via)
        for e in model.events
        if e.kind not in (Kind.CALL, Kind.GRAD_READ)
    ]


def test_backward_and_step_forms() -> None:
    [loop] = models(
        """
        import torch
        from torch.optim import AdamW as Opt
        optimizers = [Opt(m.parameters()) for m in nets]
        for batch in loader:
            loss.backward()
            scaler.scale(loss).backward()
            accelerator.backward(loss)
            torch.autograd.backward([loss])
            self.optimizer.step()
            optimizers[0].step()
            opt.step(closure)
            scaler.step(opt)
            lr_scheduler.step()
            thing.step()
        """
    )
    assert kinds(loop) == [
        ("backward", "loss", "tensor"),
        ("backward", "scaler.scale(loss)", "scaled"),
        ("backward", "accelerator", "framework"),
        ("backward", None, "autograd"),
        ("step", "self.optimizer", "optimizer"),
        ("step", "optimizers[0]", "optimizer"),
        ("step", "opt", "optimizer"),
        ("step", "opt", "scaler"),
        ("scheduler-step", "lr_scheduler", None),
        ("maybe-step", "thing", None),
    ]


def test_clearing_forms() -> None:
    [outer, param_loop] = models(
        """
        for batch in loader:
            optimizer.zero_grad(set_to_none=True)
            model.zero_grad()
            for p in model.parameters():
                p.grad = None
        """
    )
    assert [(e.kind, e.receiver, e.depth) for e in outer.events if e.kind is Kind.ZERO_GRAD] == [
        (Kind.ZERO_GRAD, "optimizer", 0),
        (Kind.ZERO_GRAD, "model", 0),
        (Kind.ZERO_GRAD, "p", 0),  # a loop over parameters is not a loop level
    ]
    assert param_loop.loop.is_param_loop


def test_calls_are_expanded_with_receivers_renamed() -> None:
    [loop] = models(
        """
        def update(o):
            o.step()
            o.zero_grad()

        def step_all(net, o):
            net(x).sum().backward()
            update(o)

        for x in loader:
            step_all(model, self_optimizer)
        """
    )
    steps = [e for e in loop.events if e.kind in (Kind.STEP, Kind.MAYBE_STEP, Kind.ZERO_GRAD)]
    # `o` has no telling name inside `update`, but the caller passes an optimizer.
    assert [(e.kind, e.receiver) for e in steps] == [
        (Kind.STEP, "self_optimizer"),
        (Kind.ZERO_GRAD, "self_optimizer"),
    ]
    assert all(e.site.method == "step_all" for e in steps)
    assert [e.event.scope.name for e in steps] == ["update", "update"]


def test_methods_resolve_through_self_and_base_classes() -> None:
    [loop] = models(
        """
        class Base:
            def optimizer_step(self):
                self.optimizer.step()

        class Trainer(Base):
            def backward(self, loss):
                loss.backward()

            def fit(self):
                for batch in self.loader:
                    self.backward(self.model(batch))
                    self.optimizer_step()
        """
    )
    assert [k for k, _, _ in kinds(loop)] == ["backward", "step"]


def test_instances_of_module_classes_resolve() -> None:
    [loop] = models(
        """
        class Engine:
            def train_step(self, batch):
                self.model(batch).sum().backward()
                self.opt.step()

        engine = Engine()
        for batch in loader:
            engine.train_step(batch)
        """
    )
    assert [(k, r) for k, r, _ in kinds(loop)] == [
        ("backward", "engine.model(batch).sum()"),
        ("step", "engine.opt"),
    ]


def test_recursion_is_bounded() -> None:
    [loop] = models(
        """
        def ping(n):
            loss.backward()
            pong(n - 1)

        def pong(n):
            optimizer.step()
            ping(n - 1)

        for batch in loader:
            ping(3)
        """
    )
    assert [k for k, _, _ in kinds(loop)] == ["backward", "step"]


def test_loop_depth_guards_and_contexts() -> None:
    [epoch, step] = models(
        """
        import torch
        for epoch in range(3):
            for i, batch in enumerate(loader):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = model(batch)
                loss.backward()
                if (i + 1) % accum == 0:
                    optimizer.step()
            print(loss.item())
        """
    )
    assert step.loop.label == "for-loop over `loader`"
    assert step.is_step_loop and not epoch.is_step_loop
    [backward] = step.of(Kind.BACKWARD)
    [opt_step] = step.of(Kind.STEP)
    assert backward.depth == 0 and backward.is_unconditional
    assert opt_step.guards and opt_step.guards[0].kind.value == "periodic"
    [forward] = [e for e in step.events if e.callee_text == "model"]
    assert forward.withs[0].autocast_dtype == "bfloat16"
    assert [e.depth for e in epoch.of(Kind.BACKWARD, Kind.HOST_SYNC)] == [1, 0]


def test_while_loops_and_next() -> None:
    [loop] = models(
        """
        it = iter(loader)
        while step < max_steps:
            batch = next(it)
            optimizer.zero_grad()
            model(batch).mean().backward()
            optimizer.step()
        """
    )
    assert loop.loop.label == "while-loop"
    assert [k for k, _, _ in kinds(loop)] == ["zero-grad", "backward", "step"]


def _bodies(source: str) -> list[LoopModel]:
    parsed = parse_source(textwrap.dedent(source))
    assert isinstance(parsed, ParsedSource)
    facts = collect(parsed)
    bodies = framework_bodies(facts.classes, facts.imports)
    return [m for m in LoopModels(facts.scopes, resolve(facts), bodies).all if m.loop.runner]


def test_framework_training_steps_are_loop_bodies() -> None:
    found = _bodies(
        """
        import lightning.pytorch as pl
        from transformers import Trainer

        class Base(pl.LightningModule):
            pass

        class Auto(Base):
            def training_step(self, batch, batch_idx):
                return self.net(batch).mean()

            def validation_step(self, batch, batch_idx):
                return self.net(batch).mean()

        class Manual(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.automatic_optimization = False

            def training_step(self, batch, batch_idx):
                opt = self.optimizers()
                opt.zero_grad()
                self.manual_backward(self.net(batch).mean())
                opt.step()

        class Weighted(Trainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                return model(**inputs).loss

        class NotAFramework:
            def training_step(self, batch, batch_idx):
                return batch
        """
    )
    described = [(m.loop.scope.qualname, m.loop.runner, m.loop.manual) for m in found]
    assert described == [
        ("Auto.training_step", "Lightning", False),
        ("Manual.training_step", "Lightning", True),
        ("Weighted.compute_loss", "the Trainer", False),
    ]
    auto, manual, trainer = found
    assert auto.framework_steps and auto.is_step_loop and auto.has_backward
    assert not manual.framework_steps and manual.is_step_loop
    assert [k for k, _, _ in kinds(manual)] == ["zero-grad", "backward", "step"]
    assert trainer.framework_steps


def test_framework_calls_become_events() -> None:
    [accelerate, engine] = models(
        """
        for batch in loader:
            with accelerator.accumulate(model):
                with accelerator.autocast():
                    loss = model(batch)
                accelerator.backward(loss)
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
        for batch in loader:
            model_engine.backward(model_engine(batch))
            model_engine.step()
        """
    )
    assert kinds(accelerate) == [
        ("backward", "accelerator", "framework"),
        ("clip", None, "framework"),
        ("step", "optimizer", "optimizer"),
    ]
    withs = {tuple(w.kind.value for w in e.withs) for e in accelerate.events}
    assert ("accumulate", "autocast") in withs  # the forward
    [backward] = accelerate.of(Kind.BACKWARD)
    assert [w.kind.value for w in backward.withs] == ["accumulate"]
    assert kinds(engine) == [
        ("backward", "model_engine", "framework"),
        ("step", "model_engine", "engine"),
    ]
