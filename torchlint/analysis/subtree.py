"""The nodes under a libcst node, without whitespace or punctuation: a walk that costs a
fraction of a `CSTVisitor`'s (which calls two hooks on every node, whitespace included) or of
`node.children` (which visits every field to build the list). Siblings come in the order of the
node's fields: source order for statements and most expressions (not for decorators, which
follow the body, nor for the test of `a if test else b`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

import libcst as cst

# Fields that hold only whitespace, comments, brackets and punctuation: no name is in them.
_LAYOUT = re.compile(
    r"whitespace|^(lpar|rpar|lbracket|rbracket|lbrace|rbrace|leading_lines|header|footer"
    r"|lines_after_decorators|semicolon|comma|dot|equal|colon|arrow|newline|asynchronous)$"
)


@cache
def _fields(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    fields: dict[str, object] = getattr(kind, "__dataclass_fields__", {})
    return tuple(n for n in fields if not n.startswith("__") and not _LAYOUT.search(n))


def parts(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes directly under `node` that may hold code."""
    found: list[cst.CSTNode] = []
    for name in _fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif type(value) is tuple or type(value) is list:
            found.extend(v for v in value if isinstance(v, cst.CSTNode))
    return found


def preorder(root: cst.CSTNode, enter: Callable[[cst.CSTNode], bool]) -> None:
    """Visit `root` and the nodes under it, parents first; `enter(node)` says whether to go
    on into the node's parts."""
    stack = [root]
    while stack:
        node = stack.pop()
        if enter(node):
            stack.extend(reversed(parts(node)))
