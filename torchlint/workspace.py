"""One pipeline for `torchlint check` and the language server: how a file is read, analysed with
its project, and fixed.

Both front ends go through a `Workspace`:

- *Reading.* `Workspace.read(path)` is a project file's content as the analysis sees it: the
  editor's text while the file is open in the language server (`open_text`), else the bytes on
  disk. The command line has no open files.
- *Projects.* One warm `torchlint.project.Project` per project layout, kept for the workspace's
  life, so the exports and collected facts of the files that others call into are computed once
  per content (the project's own cache, by content hash). A `Project` serves one analysis at a
  time: `Workspace.project(path)` holds the project's lock (the server analyses in worker
  threads). Changes reported meanwhile (`changed`, called on the server's event loop, which must
  never wait for an analysis) are queued and handed to `Project.forget` when the next analysis
  takes the lock; every change gets a sequence number, so an analysis that read a file before it
  changed can tell (`changed_since`) and be redone.
- *Analysing.* `Workspace.analyse` runs `engine.analyze_source` with the file's project, and
  falls back to the file alone when anything about the project raises, or when the analysis
  with the project reports internal errors that the file alone does not. A file without a path
  (an unsaved editor buffer, `--no-project`) is analysed alone.
- *Fixing.* `Workspace.fix` runs `fixer.fix_text` with the same project, under the same lock,
  so the findings left after a fix are those a check of the fixed file reports, whether the
  fix-all comes from `torchlint check --fix` or from the editor's `source.fixAll.torchlint`.

The results cache of the command line (`torchlint.cache`) stores what `Workspace.analyse` found,
keyed on the hashes of the files `FileRun.dependencies` names.
"""

from __future__ import annotations

import os
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from torchlint.analysis.source import SourceDecodeError, decode_source, parse_source
from torchlint.cache import content_hash
from torchlint.diagnostics import Diagnostic
from torchlint.engine import Analysis, Parser, analyze_bytes, analyze_source
from torchlint.fixer import FixResult, fix_text
from torchlint.notebook import analyze_notebook, is_notebook
from torchlint.project.layout import ProjectLayout
from torchlint.project.project import read_file
from torchlint.project_view import AnalysisProject, open_project
from torchlint.selection import RuleSelection

OpenText = Callable[[Path], str | None]


@dataclass(eq=False)
class _Entry:
    project: AnalysisProject
    lock: threading.Lock = field(default_factory=threading.Lock)
    stale: set[Path] = field(default_factory=set)  # to forget before the next analysis


@dataclass
class FileRun:
    """One file's analysis with its project: the analysis, the other project files it read
    (path -> content hash; kept even when the single-file analysis is used, so that fixing the
    file that broke it brings the project back), and what to log."""

    analysis: Analysis
    dependencies: dict[Path, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


@dataclass
class FixRun:
    """`fix_text`'s result for one file with its project, and what to log."""

    result: FixResult
    problems: list[str] = field(default_factory=list)


def absolute(path: Path | str) -> Path:
    return Path(os.path.abspath(path))


class Workspace:
    def __init__(self, open_text: OpenText | None = None) -> None:
        self._open_text = open_text
        self._entries: dict[ProjectLayout, _Entry] = {}
        self._guard = threading.Lock()  # over `_entries` and every entry's `stale`
        self._sequence = 0
        self._changed_at: dict[Path, int] = {}

    # --- reading --------------------------------------------------------------------------

    def read(self, path: Path) -> bytes | None:
        """A project file's content as the analysis sees it: the editor's text when the file is
        open, else the file on disk (None when neither can be read)."""
        text = None
        if self._open_text is not None:
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

    # --- projects -------------------------------------------------------------------------

    @property
    def layouts(self) -> list[ProjectLayout]:
        with self._guard:
            return list(self._entries)

    @contextmanager
    def project(self, path: Path, layout: ProjectLayout | None = None) -> Iterator[AnalysisProject]:
        """The project `path` belongs to (`layout`, when the caller knows it), held for one
        analysis."""
        layout = layout or ProjectLayout.for_file(path)
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

    # --- analysing and fixing -------------------------------------------------------------

    def analyse(
        self,
        text: str,
        filename: str,
        selection: RuleSelection,
        *,
        path: Path | None,
        layout: ProjectLayout | None = None,
        parse: Parser = parse_source,
        training_loops: bool = False,
    ) -> FileRun:
        """`text` (the file `filename`) analysed with the project of `path`; alone when `path`
        is None."""

        def run(project: AnalysisProject | None) -> Analysis:
            return analyze_source(
                text,
                filename,
                selection,
                parse=parse,
                training_loops=training_loops,
                project=project,
            )

        return with_project(self, path, layout, run)

    def analyse_file(
        self,
        data: bytes,
        filename: str,
        selection: RuleSelection,
        *,
        layout: ProjectLayout | None,
    ) -> FileRun:
        """A file's bytes analysed (the command line): a notebook alone, a Python file with the
        project of `layout` (alone when None), a file that cannot be decoded as one TL001."""
        if is_notebook(filename):
            return FileRun(analyze_notebook(data, filename, selection))
        try:
            text = decode_source(data)
        except SourceDecodeError:
            return FileRun(analyze_bytes(data, filename, selection))
        path = absolute(filename) if layout is not None else None
        return self.analyse(text, filename, selection, path=path, layout=layout)

    def fix(
        self,
        text: str,
        filename: str,
        selection: RuleSelection,
        *,
        path: Path | None,
        layout: ProjectLayout | None = None,
        unsafe: bool = False,
        allow: Callable[[str, Diagnostic], bool] | None = None,
    ) -> FixRun:
        """Every applicable fix of `text` applied, the file analysed with its project between
        passes (alone when `path` is None, or when the project fails)."""
        if path is None:
            return FixRun(fix_text(text, filename, selection, unsafe, allow))
        try:
            with self.project(path, layout) as project:
                return FixRun(fix_text(text, filename, selection, unsafe, allow, project=project))
        except Exception:
            problem = (
                f"fixing {path} with its project failed; fixing the file alone:\n"
                + traceback.format_exc()
            )
            return FixRun(fix_text(text, filename, selection, unsafe, allow), [problem])


def with_project(
    workspace: Workspace | None,
    path: Path | None,
    layout: ProjectLayout | None,
    run: Callable[[AnalysisProject | None], Analysis],
) -> FileRun:
    """`run(project)` for the file at `path`, falling back to `run(None)` (the file alone) when
    anything about the project raises, or when the analysis with the project reports internal
    errors that the single-file one does not. An exception of `run(None)` itself propagates (the
    server's parser fallback deals with it)."""
    if workspace is None or path is None:
        return FileRun(run(None))
    problems: list[str] = []
    try:
        with workspace.project(path, layout) as project:
            analysis = run(project)
    except Exception:
        problems.append(
            f"analysing {path} with its project failed; linting the file alone:\n"
            + traceback.format_exc()
        )
        return FileRun(run(None), problems=problems)
    dependencies = dict(analysis.dependencies)
    if analysis.errors:
        alone = run(None)
        if len(alone.errors) < len(analysis.errors):
            problems.append(
                f"analysing {path} with its project failed ("
                + "; ".join(analysis.errors)
                + "); linting the file alone"
            )
            return FileRun(alone, dependencies, problems)
    return FileRun(analysis, dependencies, problems)
