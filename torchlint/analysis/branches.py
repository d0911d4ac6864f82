"""What names hold after an `if` / `else`: each branch walked from the state before the `if`.

The walk is one pass in program order. Without this, the `else` of

    if args.model == "Transformer":
        model = model.TransformerModel(...)   # the module `model`, then the instance
    else:
        model = model.RNNModel(...)           # still the module, on this path

would be read after the body's assignments, as though both branches ran. An `Undo` per open
branch records the first write of each name in it (its value before the branch), so that the
walker can undo the body's writes before it walks the `else`, then put back what the body left
for the names the `else` did not bind.

After the `if`, a name both branches bound holds the `else`'s value (the branch walked last:
what the rules were always given), and remembers the body's as an `Alternative`: "may" rules
(a loss that receives probabilities on one of the paths) read the alternatives, "must" rules
do not. A name only one branch bound holds that branch's value, as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import libcst as cst

from torchlint.analysis.record import record

if TYPE_CHECKING:
    from torchlint.analysis.value import Value

K = TypeVar("K")
V = TypeVar("V")

# A name bound in every branch of a long `elif` chain keeps this many alternatives.
MAX_ALTERNATIVES = 4


@record(slots=True)
class Alternative:
    """What a name held at the end of the body of an `if` whose `else` bound it too."""

    value: Value
    element: int | None  # the item of a call's result it was (see `Values.unpacked`)
    node: cst.If  # the `if` whose body bound it


@dataclass(slots=True)
class Undo:
    """The values, before one branch, of what that branch wrote (None: not bound then)."""

    env: dict[str, Value | None] = field(default_factory=dict)
    unpacked: dict[str, int | None] = field(default_factory=dict)
    alternatives: dict[str, tuple[Alternative, ...] | None] = field(default_factory=dict)


@dataclass(slots=True)
class BranchEnd:
    """What the body of an `if` left, for the names it wrote, once undone."""

    env: dict[str, Value | None]
    unpacked: dict[str, int | None]
    alternatives: dict[str, tuple[Alternative, ...] | None]


def remember(log: dict[K, V | None], store: dict[K, V], key: K) -> None:
    """Before `store[key]` changes in a branch: keep its value in the branch's `log`, once."""
    if key not in log:
        log[key] = store.get(key)


def restore(store: dict[K, V], previous: dict[K, V | None]) -> dict[K, V | None]:
    """Put back `previous` into `store`; return what `store` held instead."""
    now: dict[K, V | None] = {}
    for key, value in previous.items():
        now[key] = store.get(key)
        if value is None:
            store.pop(key, None)
        else:
            store[key] = value
    return now


def inherit(outer: Undo, inner: Undo) -> None:
    """An inner branch's writes are writes of the branch around it, with the same values
    before (the outer branch had not written them, or has its own record already)."""
    for key, value in inner.env.items():
        outer.env.setdefault(key, value)
    for key, number in inner.unpacked.items():
        outer.unpacked.setdefault(key, number)
    for key, alternatives in inner.alternatives.items():
        outer.alternatives.setdefault(key, alternatives)
