"""TL401: the training loader yields batches in the same order every epoch."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.apis import STREAMING
from torchlint.analysis.links import LoaderArgs
from torchlint.analysis.model import ConstructedObject, Scope
from torchlint.analysis.names import dotted
from torchlint.analysis.values import What
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


def _streaming_kwarg(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value == "streaming" for a in call.args)


class UnshuffledTrainingLoader(Rule):
    code = "TL401"
    name = "unshuffled-training-loader"
    family = "data"
    severity = Severity.WARNING
    summary = "A `DataLoader` consumed by a training loop has neither `shuffle=True` nor a sampler."

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.step_loops:
            for loader in ctx.links.loaders_of(model.loop):
                args = LoaderArgs(loader.node)
                sometimes = self._sampler_may_be_none(ctx, loader)
                if args.has_unpacking or (
                    not sometimes
                    and self._orders_itself(
                        ctx, args, loader.scope, loader in ctx.facts.constructed
                    )
                ):
                    continue
                shuffle = args.get("shuffle", 2)
                if shuffle is not None and not (
                    isinstance(shuffle, cst.Name) and shuffle.value == "False"
                ):
                    continue  # shuffle=True, or read from a variable
                when = (
                    " whenever its sampler is None (`sampler=...` is only set on some runs, "
                    "such as distributed ones)"
                    if sometimes
                    else ""
                )
                ctx.report(
                    loader.node,
                    f"`{loader.target}` feeds the {model.loop.label} (line "
                    f"{ctx.line_of(model.loop.node)}) in the same order every epoch{when}, so "
                    "batches stay correlated and the model can fit the order; pass "
                    "`shuffle=True` (or a sampler).",
                    at=loader.named_at or model.loop.node,
                )

    def _sampler_may_be_none(self, ctx: RuleContext, loader: ConstructedObject) -> bool:
        """`sampler=DistributedSampler(ds) if ddp else None`: no sampler on a single GPU."""
        value = ctx.roles.flow.resolve(loader.value)
        sampler = dict(value.keywords).get("sampler")
        if sampler is None:
            return False
        sampler = ctx.roles.flow.resolve(sampler)
        return sampler.what is What.NONE or (sampler.what is What.SAMPLER and sampler.optional)

    def _orders_itself(self, ctx: RuleContext, args: LoaderArgs, scope: Scope, known: bool) -> bool:
        """A sampler or batch sampler decides the order, or we cannot tell that the dataset is
        map-style (an iterable-style or streaming dataset cannot be shuffled by the loader)."""
        if args.get("sampler", 3) is not None or args.get("batch_sampler", 4) is not None:
            return True
        return not self._map_style(ctx, args.dataset, scope, known)

    def _map_style(
        self, ctx: RuleContext, dataset: cst.BaseExpression | None, scope: Scope, known: bool
    ) -> bool:
        """Unless something says the dataset is iterable-style (streaming, an IterableDataset),
        it is a map-style dataset, as nearly all are."""
        if dataset is None:
            return False
        if isinstance(dataset, cst.Call):
            qual = ctx.facts.imports.qualify(dataset.func)
            if qual is not None:
                return not STREAMING.search(qual) and not _streaming_kwarg(dataset)
            if not isinstance(dataset.func, cst.Name):
                return False  # `corpus.map(tokenize)`: a method of something we cannot see
            name = dataset.func.value
            return name not in ctx.facts.classes or self._map_style_class(ctx, name, set())
        text = dotted(dataset)
        if text is None or STREAMING.search(text):
            return False
        found = ctx.links.resolve(text, scope)
        for obj in found:
            if obj.role == "iterable-dataset":
                return False
            if obj.role == "instance":
                return self._map_style_class(ctx, obj.qualname, set())
        # A loader found through a factory's return value names a dataset of the factory's
        # scope (maybe in another file): unless that is known, nothing says it is map-style.
        return bool(found) or known

    def _map_style_class(self, ctx: RuleContext, name: str, seen: set[str]) -> bool:
        """A module class that does not derive (directly or not) from an IterableDataset."""
        if name in seen:
            return True
        seen.add(name)
        cls = ctx.facts.classes.get(name)
        if cls is None:
            return True
        for base in cls.bases:
            if "Iterable" in base or not self._map_style_class(ctx, base, seen):
                return False
        return True
