"""TL401: the training loader yields batches in the same order every epoch."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.apis import STREAMING
from torchlint.analysis.links import LoaderArgs
from torchlint.analysis.model import ConstructedObject, Scope
from torchlint.analysis.names import dotted
from torchlint.analysis.value import What
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
                feeds = f"feeds the {model.loop.label} (line {ctx.line_of(model.loop.node)})"
                self._judge(ctx, loader, feeds, loader.named_at or model.loop.node)
        for loader, owner in _lightning_training_loaders(ctx):
            feeds = f"that `{owner}.train_dataloader()` returns feeds Lightning's training loop"
            self._judge(ctx, loader, feeds, loader.node, built_here=True)

    def _judge(
        self,
        ctx: RuleContext,
        loader: ConstructedObject,
        feeds: str,
        at: cst.CSTNode,
        built_here: bool = False,
    ) -> None:
        args = LoaderArgs(loader.node)
        sometimes = self._sampler_may_be_none(ctx, loader)
        if args.has_unpacking or (
            not sometimes
            and self._orders_itself(
                ctx, args, loader.scope, built_here or loader in ctx.facts.constructed
            )
        ):
            return
        shuffle = args.get("shuffle", 2)
        if shuffle is not None and not (isinstance(shuffle, cst.Name) and shuffle.value == "False"):
            return  # shuffle=True, or read from a variable
        when = (
            " whenever its sampler is None (`sampler=...` is only set on some runs, "
            "such as distributed ones)"
            if sometimes
            else ""
        )
        ctx.report(
            loader.node,
            f"`{loader.target}` {feeds} in the same order every epoch{when}, so batches stay "
            "correlated and the model can fit the order; pass `shuffle=True` (or a sampler).",
            at=at,
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


_LIGHTNING_HOLDERS = ("LightningDataModule", "LightningModule")


def _lightning_training_loaders(ctx: RuleContext) -> list[tuple[ConstructedObject, str]]:
    """The loaders that the `train_dataloader()` hook of a LightningDataModule (or of a
    LightningModule) of this file builds, with the class's name."""
    found: list[tuple[ConstructedObject, str]] = []
    for info in ctx.facts.classes.values():
        if not any(base.rsplit(".", 1)[-1] in _LIGHTNING_HOLDERS for base in info.bases):
            continue
        hook = info.methods.get("train_dataloader")
        if hook is None:
            continue
        built = [o for o in ctx.facts.constructed if o.role == "dataloader" and o.scope is hook]
        for node, value in zip(hook.return_nodes, hook.return_values, strict=False):
            # `return DataLoader(...)` in the hook itself: a loader a helper method builds is
            # judged where its dataset is known, not here.
            resolved = ctx.roles.flow.resolve(value)
            if resolved.what is not What.LOADER or not isinstance(node, cst.Call):
                continue
            if ctx.facts.imports.qualify(node.func) is None:
                continue
            if not any(o.node is node for o in built):
                text = (resolved.cls or "DataLoader").rsplit(".", 1)[-1] + "(...)"
                obj = ConstructedObject(
                    "dataloader", text, resolved.cls or "", node, hook, value=resolved
                )
                built.append(obj)
        found.extend((obj, info.name) for obj in built)
    return found
