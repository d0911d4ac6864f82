"""Collecting one module's facts: the walker (`walker.py`) with its recognisers (`recognise.py`)
over the parsed tree, once."""

from __future__ import annotations

from torchlint.analysis.facts import ApiUse, CrossEntropyInput, DeprecatedUse, ModuleFacts
from torchlint.analysis.guards import classify_guard
from torchlint.analysis.model import CallFrame
from torchlint.analysis.protocol import ProjectView
from torchlint.analysis.source import ParsedSource
from torchlint.analysis.walker import Walker


def collect(
    parsed: ParsedSource,
    project: ProjectView | None = None,
    watched: frozenset[str] = frozenset(),
    watched_prefixes: tuple[str, ...] = (),
) -> ModuleFacts:
    """The facts of one module. With `project`, relative imports are read and calls of other
    project files' functions and methods are recorded (resolution decides what they run).
    Calls of the qualified names in `watched` (or starting with `watched_prefixes`) are
    recorded as API uses for the rules that asked for them."""
    return Walker(parsed, project, watched, watched_prefixes).run()


__all__ = [
    "ApiUse",
    "CallFrame",
    "CrossEntropyInput",
    "DeprecatedUse",
    "ModuleFacts",
    "classify_guard",
    "collect",
]
