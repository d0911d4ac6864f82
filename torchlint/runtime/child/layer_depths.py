"""Each parameter's layer depth from the loss, read from the autograd graph."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


def layer_depths(loss: torch.Tensor) -> dict[int, int]:
    """id(parameter) -> how many layers lie between it and the loss in the autograd graph: 0
    for the layer that produced the loss's input, one more for each operation with parameters
    on the way back (views, activations and the loss's own arithmetic are free). A layer's depth
    is that of the longest way back to it, so a residual stack (`x = x + block(x)`) counts its
    blocks one by one instead of reaching every block in one step through the skip path;
    parallel branches get the same depths. A parameter used in several places (tied weights)
    gets the smallest of its depths."""
    root = loss.grad_fn
    if root is None:
        return {}
    # the reachable graph: each node's children, whether it runs a layer, how many parents
    children: dict[int, list[Any]] = {}
    holders: dict[int, list[Any]] = {}
    parents: dict[int, int] = {id(root): 0}
    nodes: dict[int, Any] = {id(root): root}  # keeps the wrappers alive: their ids stay unique
    todo = [root]
    while todo:
        node = todo.pop()
        kids = [c for c, _ in getattr(node, "next_functions", ()) if c is not None]
        held = [c for c in kids if _parameter_leaf(c) is not None]
        held += [c for c in kids if c not in held and _holds_only_parameters(c)]
        holders[id(node)] = held
        children[id(node)] = [c for c in kids if c not in held]
        for child in children[id(node)]:
            key = id(child)
            parents[key] = parents.get(key, 0) + 1
            if key not in nodes:
                nodes[key] = child
                todo.append(child)
    # longest path from the loss, in topological order (the graph has no cycles)
    depth = {id(root): 0}
    found: dict[int, int] = {}
    ready = [root]
    while ready:
        node = ready.pop()
        here = depth[id(node)]
        held = holders[id(node)]
        for child in held:
            for leaf in [child, *(g for g, _ in getattr(child, "next_functions", ()))]:
                param = _parameter_leaf(leaf) if leaf is not None else None
                if param is not None:
                    found[id(param)] = min(here, found.get(id(param), here))
        below = here + (1 if held else 0)
        for child in children[id(node)]:
            key = id(child)
            depth[key] = max(below, depth.get(key, below))
            parents[key] -= 1
            if parents[key] == 0:
                ready.append(child)
    return found


def _parameter_leaf(node: Any) -> nn.Parameter | None:
    variable = getattr(node, "variable", None)
    return variable if isinstance(variable, nn.Parameter) else None


def _holds_only_parameters(node: Any) -> bool:
    """A transpose or view of parameters only (the weight of a Linear layer under `mm`)."""
    children = [child for child, _ in getattr(node, "next_functions", ()) if child is not None]
    return bool(children) and all(_parameter_leaf(c) is not None for c in children)
