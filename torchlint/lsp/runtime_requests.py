"""A runtime command's request and its answers, without the server: the command's arguments,
the file a document runs as (and whether the editor's text differs from it), the answer of a
command that started nothing, the kind of message an envelope makes, and the envelope of a run
the launcher itself failed on."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path, uri_scheme

from torchlint.runtime.envelope import envelope, error_info
from torchlint.runtime.launcher import RunRequest

SUMMARY_CHARACTERS = 200


def refusal(
    command: str, uri: str | None, line: int | None, reason: str, message: str
) -> dict[str, Any]:
    """The answer of a runtime command that did not start a run."""
    return {
        "status": "refused",
        "reason": reason,
        "command": command,
        "uri": uri,
        "line": line,
        "message": message,
    }


def parse_arguments(arguments: Sequence[Any]) -> tuple[str, int | None] | None:
    """`[uri, line]` (line 0-based, optional) from the command's arguments; None if malformed."""
    if not arguments or not isinstance(arguments[0], str) or len(arguments) > 2:
        return None
    line = arguments[1] if len(arguments) > 1 else None
    if line is not None and (isinstance(line, bool) or not isinstance(line, int) or line < 0):
        return None
    return arguments[0], line


def script_of(uri: str) -> tuple[Path | None, str]:
    """The file a document URI names and is saved as, or None and why it cannot run."""
    scheme = uri_scheme(uri)
    if scheme == "untitled":
        return None, "it is an untitled document: save it first, the runtime checks run files"
    if scheme != "file":
        return None, f"it is not a file on disk ({scheme or 'no'} scheme); only saved files run"
    path_text = to_fs_path(uri)
    if not path_text:
        return None, "it is not a file on disk"
    path = Path(path_text)
    if not path.is_file():
        return None, f"{path} does not exist on disk: save it first"
    return path, ""


def differs_from_disk(path: Path, text: str) -> bool:
    """Whether the editor's text of `path` is not what the file holds (unsaved changes)."""
    try:
        saved = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return True
    if saved == text:
        return False
    return _newlines(saved) != _newlines(text)


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def message_type(result: dict[str, Any]) -> types.MessageType:
    """Info for a passing (or a cancelled) run, Warning for a check that found problems, Error
    for a run that could not finish."""
    status = result.get("status")
    if status == "completed":
        if result.get("verdict") in ("pass", "healthy"):
            return types.MessageType.Info
        return types.MessageType.Warning
    if cancelled(result):
        return types.MessageType.Info
    return types.MessageType.Error


def cancelled(result: dict[str, Any]) -> bool:
    error = result.get("error")
    return isinstance(error, dict) and error.get("kind") == "cancelled"


def one_line(text: Any, limit: int = 400) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def internal_error_envelope(request: RunRequest, details: str) -> dict[str, Any]:
    """The envelope of a run the launcher itself failed on (a bug, not the script's doing)."""
    last = details.strip().splitlines()[-1] if details.strip() else "no details"
    message = f"{request.check}: internal error of the launcher: {one_line(last)}"
    result = envelope(request.check, "error", None, message, None, {})
    result.update(
        script=str(request.script),
        argv=list(request.args),
        error=error_info("internal", details),
    )
    return result
