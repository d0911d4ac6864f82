"""TL401: the training loader yields batches in the same order every epoch."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.data import LoaderArgs
from torchlint.analysis.names import dotted
from torchlint.analysis.training import does_step_work
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class UnshuffledTrainingLoader(Rule):
    code = "TL401"
    name = "unshuffled-training-loader"
    family = "data"
    severity = Severity.WARNING
    summary = "A `DataLoader` consumed by a training loop has neither `shuffle=True` nor a sampler."

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.loops.all:
            if not does_step_work(model, ctx.roles):
                continue
            for loader in ctx.loader_links.loaders_of(model.loop):
                args = LoaderArgs(loader.node)
                if args.has_unpacking or self._orders_itself(ctx, args):
                    continue
                shuffle = args.get("shuffle", 2)
                if shuffle is not None and not (
                    isinstance(shuffle, cst.Name) and shuffle.value == "False"
                ):
                    continue  # shuffle=True, or read from a variable
                ctx.report(
                    loader.node,
                    f"`{loader.target}` feeds the {model.loop.label} (line "
                    f"{ctx.line_of(model.loop.node)}) in the same order every epoch, so "
                    "batches stay correlated and the model can fit the order; pass "
                    "`shuffle=True` (or a sampler).",
                )

    def _orders_itself(self, ctx: RuleContext, args: LoaderArgs) -> bool:
        """A sampler or batch sampler decides the order, or the dataset is iterable-style."""
        if args.get("sampler", 3) is not None or args.get("batch_sampler", 4) is not None:
            return True
        dataset = args.dataset
        if dataset is None:
            return True
        text = (dotted(dataset) or "").lower()
        if "iterable" in text or "stream" in text:
            return True
        class_name = None
        if isinstance(dataset, cst.Call):
            class_name = dotted(dataset.func)
        elif text:
            for obj in reversed(ctx.facts.constructed):
                if obj.target == dotted(dataset) and obj.role == "instance":
                    class_name = obj.qualname
                    break
        return class_name is not None and self._is_iterable_class(ctx, class_name, set())

    def _is_iterable_class(self, ctx: RuleContext, name: str, seen: set[str]) -> bool:
        if "Iterable" in name or name in seen:
            return "Iterable" in name
        seen.add(name)
        cls = ctx.facts.classes.get(name)
        return cls is not None and any(
            self._is_iterable_class(ctx, base, seen) for base in cls.bases
        )
