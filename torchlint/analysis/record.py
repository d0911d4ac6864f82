"""`@record`: the analysis's immutable records, frozen for the type checker and cheap to build.

A frozen dataclass sets each field through `object.__setattr__`, one function call per field:
building a `Value` (22 fields) took about 4 microseconds, ten times a plain dataclass, and one
analysis of a 250-line script builds a few hundred of them, and as many call sites and events.
These records are compared and hashed by identity (`eq=False`), so freezing them at run time
adds nothing to what mypy already enforces: it rejects every assignment to a field (the
decorator is declared with `dataclass_transform(frozen_default=True)`). New versions are made
with `dataclasses.replace`, as before."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

T = TypeVar("T")

if TYPE_CHECKING:
    from typing import dataclass_transform

    @dataclass_transform(frozen_default=True, eq_default=False)
    def record(*, slots: bool = False) -> Callable[[type[T]], type[T]]: ...

else:

    def record(*, slots=False):
        """`slots=True` where nothing needs an instance dict (a `cached_property` does)."""
        return dataclass(eq=False, slots=slots)
