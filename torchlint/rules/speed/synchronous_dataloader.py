"""TL303: the training loader reads batches in the main process."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.apis import constructor_role
from torchlint.analysis.links import LoaderArgs
from torchlint.analysis.names import dotted
from torchlint.diagnostics import Severity
from torchlint.rules.base import Rule, RuleContext
from torchlint.rules.edits import is_docstring


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
            name = dotted(dataset.func) or ""
            if _only_indexes_its_tensors(ctx, name):
                return True
            helper = ctx.facts.functions.get(name)
            roles = set(helper.returned_roles) if helper is not None else set()
            return roles == {"tensor-dataset"}  # `make_dataset()` returns a TensorDataset
        text = dotted(dataset)
        for obj in reversed(ctx.facts.constructed):
            if obj.target == text:
                if obj.role == "subset" and obj.node.args:
                    return self._holds_tensors(ctx, obj.node.args[0].value, depth + 1)
                if obj.role == "instance":
                    return _only_indexes_its_tensors(ctx, obj.qualname)
                return obj.role == "tensor-dataset"
        return False


def _only_indexes_its_tensors(ctx: RuleContext, class_name: str) -> bool:
    """A Dataset class of this module whose `__getitem__` only returns items of what the
    object holds (`return self.x[idx], self.y[idx]`, or a dict of them): a `TensorDataset` in
    all but name, whose batches cost an index each."""
    info = ctx.facts.classes.get(class_name)
    getitem = info.methods.get("__getitem__") if info is not None else None
    node = getitem.node if getitem is not None else None
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        return False
    params = [p.name.value for p in node.params.params]
    if len(params) != 2:
        return False
    statements = list(node.body.body)
    if statements and is_docstring(statements[0]):
        statements = statements[1:]
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
        return False
    body = statements[0].body
    if len(body) != 1 or not isinstance(body[0], cst.Return) or body[0].value is None:
        return False
    value = body[0].value
    if isinstance(value, cst.Tuple | cst.List):
        items = [e.value for e in value.elements]
    elif isinstance(value, cst.Dict):
        items = [e.value for e in value.elements if isinstance(e, cst.DictElement)]
        if len(items) != len(value.elements):
            return False
    else:
        items = [value]
    return bool(items) and all(_self_item(item, params[0], params[1]) for item in items)


def _self_item(node: cst.BaseExpression, self_name: str, index: str) -> bool:
    """`self.x[idx]`."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return False
    key = node.slice[0].slice
    if not isinstance(key, cst.Index) or not isinstance(key.value, cst.Name):
        return False
    owner = node.value
    return (
        key.value.value == index
        and isinstance(owner, cst.Attribute)
        and isinstance(owner.value, cst.Name)
        and owner.value.value == self_name
    )


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
