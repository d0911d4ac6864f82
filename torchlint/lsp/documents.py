"""What the server keeps per open document, the parser each one uses, and what its analysis
hands back."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from torchlint.analysis.source import parse_source
from torchlint.engine import Parser
from torchlint.lsp.lenses import LensTargets
from torchlint.selection import RuleSelection

PYTHON_SUFFIXES = (".py", ".pyi")
INCREMENTAL_MODULE = "torchlint.analysis.incremental"


def is_python_document(uri: str, language_id: str | None) -> bool:
    if language_id == "python":
        return True
    path = uri.split("?", 1)[0].split("#", 1)[0]
    return path.lower().endswith(PYTHON_SUFFIXES)


def _incremental_factory() -> tuple[Callable[[], Any] | None, str | None]:
    """The `IncrementalParser` class when `torchlint.analysis.incremental` provides one (it
    re-parses only the top-level blocks an edit touched), and why not otherwise."""
    try:
        module = importlib.import_module(INCREMENTAL_MODULE)
    except ImportError:
        return None, None  # not there (yet): parse from scratch
    except Exception as exc:  # a broken module must not take the server down
        return None, f"{INCREMENTAL_MODULE} failed to import ({exc!r}); parsing from scratch"
    factory = getattr(module, "IncrementalParser", None)
    if not callable(factory):
        return None, f"{INCREMENTAL_MODULE} has no IncrementalParser; parsing from scratch"
    return factory, None


@dataclass
class ParserChoice:
    """How documents are parsed: one `IncrementalParser` per document when available, else
    `parse_source` (which keeps no state)."""

    factory: Callable[[], Any] | None
    problem: str | None = None

    @classmethod
    def detect(cls) -> ParserChoice:
        factory, problem = _incremental_factory()
        return cls(factory, problem)

    @property
    def name(self) -> str:
        return "incremental" if self.factory is not None else "parse_source"

    def new_parser(self) -> tuple[Parser, str | None]:
        """A parser for one document, and a message when the incremental one failed."""
        if self.factory is None:
            return parse_source, None
        try:
            instance = self.factory()
            parse: Parser = instance.parse
        except Exception as exc:
            return parse_source, f"IncrementalParser() failed ({exc!r}); parsing from scratch"
        return parse, None


@dataclass
class Published:
    """The diagnostics last sent for a document, and the version they belong to."""

    version: int | None
    diagnostics: list[types.Diagnostic]


@dataclass
class LintOutcome:
    """What a worker thread hands back to the event loop."""

    diagnostics: list[types.Diagnostic]
    logs: list[tuple[types.MessageType, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # shown to the user, once each
    dependencies: dict[Path, str] = field(default_factory=dict)  # other project files read
    lenses: LensTargets = field(default_factory=LensTargets)  # where the code lenses go


@dataclass
class DocumentState:
    uri: str
    parse: Parser
    incremental: bool
    # One analysis at a time per document: an incremental parser holds the previous tree.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Bumped by every event that makes earlier work obsolete (an edit, new settings, close).
    generation: int = 0
    published: Published | None = None
    # Internal errors already logged for this document (each is logged once, not per keystroke).
    logged: set[str] = field(default_factory=set)
    # Where the lenses go: the last analysis's targets, moved through the edits since.
    lens_targets: LensTargets = field(default_factory=LensTargets)
    lens_served: LensTargets | None = None  # what the last `textDocument/codeLens` answered
    closed: bool = False
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    # The other project files its last analysis read (path -> content hash): a change to one
    # of them lints it again (`torchlint.workspace`).
    dependencies: dict[Path, str] = field(default_factory=dict)
    # What the last analysis read: the document's version, the rules its configuration chose
    # and the configuration's problem, if any. A save with the same ones lints nothing again.
    linted: tuple[int | None, RuleSelection | None, str | None] | None = None

    def current_diagnostics(self, version: int | None) -> list[types.Diagnostic] | None:
        """The published diagnostics if they belong to `version`, else None."""
        if self.published is None or self.published.version != version:
            return None
        return self.published.diagnostics
