"""TL303: the training loader reads batches in the main process."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.apis import constructor_role
from torchlint.analysis.links import LoaderArgs
from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext


class SynchronousDataLoader(Rule):
    code = "TL303"
    name = "synchronous-dataloader"
    family = "speed"
    severity = Severity.INFO
    summary = "A `DataLoader` used by a training loop has no `num_workers` or `num_workers=0`."

    def check(self, ctx: RuleContext) -> None:
        for model in ctx.step_loops:
            for loader in ctx.links.loaders_of(model.loop):
                args = LoaderArgs(loader.node)
                if args.has_unpacking or self._in_memory(ctx, args):
                    continue
                if loader.qualname.startswith(_GRAPH_LIBRARIES):
                    continue  # graph loaders: in-memory graphs, collation no worker speeds up
                workers = args.get("num_workers", 5)
                if workers is not None and not (
                    isinstance(workers, cst.Integer) and workers.value == "0"
                ):
                    continue  # set, or read from a variable
                ctx.report(
                    loader.node,
                    f"`{loader.target}` feeds the {model.loop.label} (line "
                    f"{ctx.line_of(model.loop.node)}) but loads and collates every batch in the "
                    "main process (`num_workers=0`), so the GPU waits on Python between steps; "
                    "set `num_workers` (e.g. 4) and `persistent_workers=True`.",
                    at=loader.named_at or model.loop.node,
                )

    def _in_memory(self, ctx: RuleContext, args: LoaderArgs) -> bool:
        """A `TensorDataset` (or a split of one) already holds its tensors, and a loader over
        indices (`range(n)`, `torch.arange(n)`, `train_idx`) only batches integers for the
        loop to slice with: worker processes would only add inter-process copies, so the
        advice would make things slower."""
        return _indices(ctx, args.dataset) or self._holds_tensors(ctx, args.dataset, 0)

    def _holds_tensors(
        self, ctx: RuleContext, dataset: cst.BaseExpression | None, depth: int
    ) -> bool:
        if dataset is None or depth > 3:
            return False
        if isinstance(dataset, cst.Call):
            qual = ctx.facts.imports.qualify(dataset.func) or ""
            role = constructor_role(qual) if qual else None
            if role == "tensor-dataset":
                return True
            if role == "subset" and dataset.args:
                return self._holds_tensors(ctx, dataset.args[0].value, depth + 1)
            helper = ctx.facts.functions.get(dotted(dataset.func) or "")
            roles = set(helper.returned_roles) if helper is not None else set()
            return roles == {"tensor-dataset"}  # `make_dataset()` returns a TensorDataset
        text = dotted(dataset)
        for obj in reversed(ctx.facts.constructed):
            if obj.target == text:
                if obj.role == "subset" and obj.node.args:
                    return self._holds_tensors(ctx, obj.node.args[0].value, depth + 1)
                return obj.role == "tensor-dataset"
        return False


# Graph libraries' loaders collate graphs held in memory (or sample neighbours, which their
# own docs tune separately): whether workers pay off is theirs to say, not a rule of thumb.
_GRAPH_LIBRARIES = ("torch_geometric.", "dgl.")
_INDEX_NAME = re.compile(r"(^|_)(idx|index|indices|ids|perm)$")
_INDEX_FUNCTIONS = {"torch.arange", "torch.randperm", "numpy.arange"}


def _indices(ctx: RuleContext, dataset: cst.BaseExpression | None) -> bool:
    """The dataset is a range of integers or a tensor of indices (named like one)."""
    if isinstance(dataset, cst.Call):
        if dotted(dataset.func) == "range":
            return True
        return ctx.facts.imports.qualify(dataset.func) in _INDEX_FUNCTIONS
    text = dotted(dataset) if dataset is not None else None
    return text is not None and bool(_INDEX_NAME.search(text.rsplit(".", 1)[-1]))
