"""The language server's warm project index: one `torchlint.project.Project` per project
layout, kept for the server's lifetime, so the exports and collected facts of the files that
open documents call into are computed once per content, not once per keystroke.

- *Reading.* A project reads a file that is open in the editor from the editor's text (as
  UTF-8), any other file from disk.
- *Locking.* A `Project` serves one analysis at a time: `ProjectIndex.use` holds the project's
  lock (analyses run in worker threads). Changes reported meanwhile (`changed`, called on the
  event loop, which must never wait for an analysis) are queued and handed to
  `Project.forget` when the next analysis takes the lock.
- *Staleness.* Every change gets a sequence number, so an analysis that read a file before it
  changed can tell (`changed_since`) and be redone.
"""

from __future__ import annotations

import os
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pygls.uris import to_fs_path

from torchlint.cache import content_hash
from torchlint.engine import Analysis
from torchlint.project.layout import ProjectLayout
from torchlint.project.project import read_file
from torchlint.project_view import AnalysisProject, open_project

OpenText = Callable[[Path], str | None]


def file_path(uri: str) -> Path | None:
    """The absolute path of a `file:` URI; None for untitled and other in-memory documents."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(os.path.abspath(path)) if path else None


@dataclass(eq=False)
class _Entry:
    project: AnalysisProject
    lock: threading.Lock = field(default_factory=threading.Lock)
    stale: set[Path] = field(default_factory=set)  # to forget before the next analysis


class ProjectIndex:
    def __init__(self, open_text: OpenText) -> None:
        self._open_text = open_text
        self._entries: dict[ProjectLayout, _Entry] = {}
        self._guard = threading.Lock()  # over `_entries` and every entry's `stale`
        self._sequence = 0
        self._changed_at: dict[Path, int] = {}

    def read(self, path: Path) -> bytes | None:
        """A project file's content as the analysis sees it: the editor's text when the file is
        open, else the file on disk (None when neither can be read)."""
        try:
            text = self._open_text(path)
        except Exception:
            text = None
        if text is not None:
            return text.encode("utf-8", errors="replace")
        return read_file(path)

    def current_hash(self, path: Path) -> str | None:
        data = self.read(path)
        return content_hash(data) if data is not None else None

    @property
    def layouts(self) -> list[ProjectLayout]:
        with self._guard:
            return list(self._entries)

    @contextmanager
    def use(self, path: Path) -> Iterator[AnalysisProject]:
        """The project `path` belongs to, held for one analysis (in a worker thread)."""
        layout = ProjectLayout.for_file(path)
        with self._guard:
            entry = self._entries.get(layout)
            if entry is None:
                entry = self._entries[layout] = _Entry(open_project(layout, self.read))
        with entry.lock:
            with self._guard:
                stale, entry.stale = entry.stale, set()
            for changed in stale:
                entry.project.forget(changed)
            yield entry.project

    # --- changes (on the event loop) -----------------------------------------------------

    @property
    def sequence(self) -> int:
        return self._sequence

    def changed(self, path: Path) -> None:
        """`path` changed, opened, closed or was saved: every project holding it reads it again."""
        self._sequence += 1
        self._changed_at[path] = self._sequence
        with self._guard:
            for layout, entry in self._entries.items():
                if layout.contains(path):
                    entry.stale.add(path)

    def changed_since(self, paths: Iterable[Path], sequence: int) -> bool:
        """Whether one of `paths` changed after `sequence` was read."""
        return any(self._changed_at.get(path, 0) > sequence for path in paths)


@dataclass
class ProjectRun:
    """One document's analysis with its project: the analysis, the project files it read
    (path -> content hash; kept even when the single-file analysis is used, so that fixing
    the file that broke it brings the project back), and what to log."""

    analysis: Analysis
    dependencies: dict[Path, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def analyse_with_project(
    index: ProjectIndex | None,
    path: Path | None,
    run: Callable[[AnalysisProject | None], Analysis],
) -> ProjectRun:
    """`run(project)` for the document at `path`, falling back to `run(None)` (the file alone)
    when anything about the project raises, or when the analysis with the project reports
    internal errors that the single-file one does not. An exception of `run(None)` itself
    propagates (the caller's parser fallback deals with it)."""
    if index is None or path is None:
        return ProjectRun(run(None))
    problems: list[str] = []
    try:
        with index.use(path) as project:
            analysis = run(project)
    except Exception:
        problems.append(
            f"analysing {path} with its project failed; linting the file alone:\n"
            + traceback.format_exc()
        )
        return ProjectRun(run(None), problems=problems)
    dependencies = dict(analysis.dependencies)
    if analysis.errors:
        alone = run(None)
        if len(alone.errors) < len(analysis.errors):
            problems.append(
                f"analysing {path} with its project failed ("
                + "; ".join(analysis.errors)
                + "); linting the file alone"
            )
            return ProjectRun(alone, dependencies, problems)
    return ProjectRun(analysis, dependencies, problems)
