"""The project files the documents read (see `torchlint.workspace`): the editor's text of an
open file for the analyses, and what follows when a file is edited, opened, closed, saved or
changed on disk: the projects read it again, and the open documents whose last analysis read
it are linted again."""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types

from torchlint.lsp.server_core import ServerCore
from torchlint.lsp.server_documents import DEPENDENT_PAUSE_SECONDS
from torchlint.lsp.text import file_path


class ProjectFiles(ServerCore):
    def open_text(self, path: Path) -> str | None:
        """The editor's text of `path` while it is open (called from worker threads)."""
        uri = self._open_paths.get(path)
        if uri is None:
            return None
        document = self.workspace.text_documents.get(unquote(uri))
        return document.source if document is not None else None

    def file_changed(self, path: Path | None, uri: str | None = None, typing: bool = False) -> None:
        """`path` was edited (`typing`), opened, closed, saved or changed on disk: the projects
        read it again, and the other open documents whose last analysis read it are linted
        again. After an edit, the ones linted on type, after the usual pause; otherwise at once,
        those that read a content other than the file's now."""
        if path is None:
            return
        try:
            self.files.changed(path)
            dependents = [
                state
                for state in self.documents.values()
                if state.uri != uri and path in state.dependencies
            ]
            if typing:
                for state in dependents:
                    if self.settings.for_uri(state.uri).run == "onType":
                        self.schedule(state.uri, DEPENDENT_PAUSE_SECONDS)
                return
            current = self.files.current_hash(path) if dependents else None
            for state in dependents:
                if state.dependencies.get(path) != current:
                    self.schedule(state.uri, delay=0.0)
        except Exception:
            self.log(
                f"following the change of {path} into other documents failed:\n"
                + traceback.format_exc(),
                types.MessageType.Error,
            )

    def watched_files_changed(self, changes: Sequence[types.FileEvent]) -> None:
        """Files changed on disk. A new module may be what an open document imports: every
        open document of its project is linted again."""
        for change in changes:
            path = file_path(change.uri)
            if path is None or not path.name.endswith((".py", ".pyi")):
                continue
            self.file_changed(path)
            if change.type != types.FileChangeType.Created:
                continue
            layouts = [layout for layout in self.files.layouts if layout.contains(path)]
            for state in list(self.documents.values()):
                own = file_path(state.uri)
                if own is not None and any(layout.contains(own) for layout in layouts):
                    self.schedule(state.uri, delay=0.0)
