"""The server's copies of the editor's texts, kept in step with incremental changes.

The server asks for incremental synchronisation: an editor then sends each keystroke as the range
it replaced and the new text, at once (with full synchronisation, VS Code's client holds changes
back for 250 ms after the last keystroke and then sends the whole text). pygls applies ranged
changes by splitting the text with `str.splitlines`, which also breaks lines at form feeds,
vertical tabs, `\\x1c`-`\\x1e`, `\\x85` and the Unicode line and paragraph separators, where
the protocol (and every editor) breaks only at `\\r\\n`, `\\r` and `\\n`; a change on a line
after such a character would land in the wrong place. `Document` applies changes with the
protocol's lines and the negotiated position encoding (`torchlint.lsp.convert.PositionMap`),
and `TorchlintWorkspace` makes every text document (notebook cells included) one of them.

`shift_rows` moves remembered line numbers (the code lenses' rows) through a change, so that
what the server shows before the next analysis stays where the code went.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace

from torchlint.lsp.convert import PositionMap, count_newlines, split_lines


def file_path(uri: str) -> Path | None:
    """The absolute path of a `file:` URI; None for untitled and other in-memory documents."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(os.path.abspath(path)) if path else None


class Document(TextDocument):
    """A pygls text document whose lines and ranged changes follow the protocol's line breaks."""

    @property
    def lines(self) -> Sequence[str]:
        return split_lines(self.source)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        text = self.source
        positions = PositionMap(text, self._encoding())
        start = positions.to_offset(change.range.start)
        end = max(start, positions.to_offset(change.range.end))
        self._source = text[:start] + change.text + text[end:]

    def _encoding(self) -> str:
        encoding = self.position_codec.encoding or types.PositionEncodingKind.Utf16
        return encoding.value if isinstance(encoding, types.PositionEncodingKind) else encoding


class TorchlintWorkspace(Workspace):
    """pygls's workspace, with `Document`s."""

    @classmethod
    def replacing(cls, workspace: Workspace) -> TorchlintWorkspace:
        """A workspace like `workspace` (created by pygls at `initialize`, still empty)."""
        return cls(
            workspace.root_uri,
            workspace._sync_kind,
            list(workspace.folders.values()),
            workspace.position_encoding,
        )

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return Document(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self.position_codec,
        )


def shift_rows(
    rows: Iterable[int], changes: Sequence[types.TextDocumentContentChangeEvent]
) -> tuple[int, ...]:
    """1-based `rows` of a text moved through `changes` (applied in order): rows below a change
    move by the lines it added or removed (so does a row that text was inserted in front of);
    rows inside a replaced range go to its first line. A
    change of the whole text keeps them as they are (nothing tells where they went)."""
    current = list(rows)
    for change in changes:
        if not isinstance(change, types.TextDocumentContentChangePartial):
            continue
        first = change.range.start.line + 1
        last = change.range.end.line + 1
        delta = count_newlines(change.text) - (last - first)
        inserted_before = (
            change.range.end == change.range.start and change.range.start.character == 0
        )
        moved = []
        for row in current:
            if row > last or (row == last and (first < last or inserted_before)):
                moved.append(row + delta)
            elif row > first:
                moved.append(first)
            else:
                moved.append(row)
        current = moved
    return tuple(sorted(set(current)))
