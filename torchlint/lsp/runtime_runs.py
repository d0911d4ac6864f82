"""Runtime checks started from the editor: `torchlint.runtime.overfit` and
`torchlint.runtime.grads` (the code lenses' commands), run on the document's file on disk.

- *Only on request.* A check runs only on an explicit `workspace/executeCommand`, and not at all
  when the client's `torchlint.runtime.enable` is false. Only `file:` documents can run; an
  untitled one must be saved first, and a document with unsaved changes runs as it is on disk
  (the message says so).
- *Never on the event loop.* `torchlint.runtime.launcher.run_check` blocks for the whole run: it
  runs on a daemon thread of its own (not the lint executor, so linting never waits behind a
  run, and not a pool thread, so a run can never keep the server process from exiting). The
  user's script runs in a child process of the launcher, with the `runtime.timeoutSeconds`
  limit; whatever it does, the command answers with the launcher's envelope.
- *One run per file.* A second command for a file whose check is still running is answered
  "already running" and starts nothing. Runs of different files overlap (each has its own
  child process and thread).
- *Progress and cancellation.* When the client supports `window/workDoneProgress`, a run shows
  a cancellable progress ("step k/N" with a percentage). `window/workDoneProgress/cancel`, a
  `$/cancelRequest` of the command, the server's shutdown and its exit all stop the child
  (the envelope then says `error`, kind `cancelled`).
- *Diagnostics.* The envelope's findings are published (source `torchlint-runtime`, the whole
  line) for the script and for every other open document they point at, merged with the static
  diagnostics of that document: `RuntimeDiagnostics` keeps them per document, and the server
  adds them to every publication of it. They go stale and are dropped when their document is
  edited or closed, and when the same check of the same script starts again.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from torchlint.lsp.commands import RUNTIME_TITLES
from torchlint.lsp.findings import (
    RUNTIME_SOURCE,
    Finding,
    Origin,
    RuntimeDiagnostics,
    findings_of,
    path_key,
    to_lsp_diagnostic,
    zero_grad_actions,
)
from torchlint.lsp.lenses import GRADS, OVERFIT, PROFILE
from torchlint.lsp.runtime_host import RuntimeHost
from torchlint.lsp.runtime_notebooks import ExportedNotebook, export_notebook
from torchlint.lsp.runtime_progress import RunProgress
from torchlint.lsp.runtime_requests import (
    SUMMARY_CHARACTERS,
    differs_from_disk,
    internal_error_envelope,
    message_type,
    one_line,
    parse_arguments,
    refusal,
    script_of,
)
from torchlint.lsp.settings import RuntimeSettings, innermost_folder
from torchlint.runtime.launcher import RunRequest, run_check

SOURCE = RUNTIME_SOURCE

#: command -> the launcher's check
CHECKS: dict[str, str] = {OVERFIT: "overfit", GRADS: "grads", PROFILE: "profile"}
#: check -> the progress title
PROGRESS_TITLES: dict[str, str] = {
    "overfit": "torchlint: overfit one batch",
    "grads": "torchlint: gradient scan",
    "profile": "torchlint: profile the training step",
}

PROGRESS_CREATE_TIMEOUT_SECONDS = 10.0
#: how long a command that arrives before the client's settings waits for them
SETTINGS_WAIT_SECONDS = 15.0
#: how long the server's shutdown waits for running children to be stopped
SHUTDOWN_WAIT_SECONDS = 3.0


@dataclass
class ActiveRun:
    check: str
    uri: str
    cancel: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    task: asyncio.Task[Any] | None = None  # the command's handler


def _on_cancelled(cancel: threading.Event) -> Callable[[Future[Any]], None]:
    def callback(future: Future[Any]) -> None:
        if future.cancelled():
            cancel.set()

    return callback


class RuntimeRuns:
    """The server's runtime checks: the running ones and the diagnostics they left."""

    def __init__(self, server: RuntimeHost) -> None:
        self.server = server
        self.diagnostics = RuntimeDiagnostics()
        self.active: dict[str, ActiveRun] = {}  # script path key -> its run
        # Runs whose thread has not finished (it removes itself), even when their command is
        # gone (the event loop cancelled it on exit): `cancel_all` waits for these.
        self._working: dict[int, ActiveRun] = {}
        self._working_lock = threading.Lock()

    # --- document events --------------------------------------------------------------------

    def document_changed(self, uri: str) -> bool:
        """An edit makes the document's runtime diagnostics stale: drop them. True when there
        were some (the caller publishes the document again)."""
        return self.diagnostics.drop_uri(uri)

    def document_closed(self, uri: str) -> None:
        self.diagnostics.drop_uri(uri)

    async def stop_all(self, wait: float) -> None:
        """Stop every running check and wait (up to `wait` seconds) until their commands have
        been answered (with a `cancelled` envelope). The `shutdown` request does this first:
        pygls's own shutdown cancels the requests still pending, and a pending
        `workspace/executeCommand` makes it fail (it changes the dictionary it iterates)."""
        runs = list(self.active.values())
        for run in runs:
            run.cancel.set()
        tasks = [run.task for run in runs if run.task is not None and not run.task.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=wait)

    def cancel_all(self, wait: float = 0.0) -> None:
        """Stop every running check (the server is going away); wait up to `wait` seconds
        for their children to be gone (blocking: only once the event loop has stopped)."""
        with self._working_lock:
            working = list(self._working.values())
        runs = list({id(run): run for run in [*self.active.values(), *working]}.values())
        for run in runs:
            run.cancel.set()
        deadline = time.monotonic() + wait
        for run in runs:
            if run.thread is not None:
                run.thread.join(max(0.0, deadline - time.monotonic()))

    # --- the command ------------------------------------------------------------------------

    def _refuse(
        self,
        command: str,
        uri: str | None,
        line: int | None,
        reason: str,
        message: str,
        kind: types.MessageType = types.MessageType.Warning,
    ) -> dict[str, Any]:
        self.server.log(f"{command}: {message}", kind)
        self.server.window_show_message(types.ShowMessageParams(type=kind, message=message))
        return refusal(command, uri, line, reason, message)

    async def execute(self, command: str, arguments: Sequence[Any]) -> dict[str, Any]:
        """Run `command` (a runtime check) for the document and lens line in `arguments`.
        Answers the envelope, or a `refused` answer that started nothing."""
        check = CHECKS[command]
        title = RUNTIME_TITLES.get(command, check)
        parsed = parse_arguments(arguments)
        if parsed is None:
            return self._refuse(
                command,
                None,
                None,
                "bad-arguments",
                f"{title}: expected the arguments [uri, line], got {list(arguments)!r}",
                types.MessageType.Error,
            )
        uri, line = parsed
        if not self.server.settings_ready.is_set():  # a command before the first settings
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.server.settings_ready.wait(), SETTINGS_WAIT_SECONDS)
        settings = self.server.settings.for_uri(uri).runtime
        if not settings.enable:
            return self._refuse(
                command,
                uri,
                line,
                "disabled",
                f"{title} did not run: the runtime checks are turned off "
                "(the setting `torchlint.runtime.enable` is false).",
                types.MessageType.Info,
            )
        cells = self.server.notebook_of_cell(uri)
        exported: ExportedNotebook | None = None
        if cells is not None:
            exported = export_notebook(self.server, cells)
            script: Path | None = exported.script if exported is not None else None
            why = "the notebook has no Python code cells, or is not a file on disk"
        else:
            script, why = script_of(uri)
        if script is None:
            return self._refuse(
                command, uri, line, "not-a-file", f"{title} cannot run {uri}: {why}."
            )
        key = path_key(exported.notebook_path if exported is not None else script)
        running = self.active.get(key)
        if running is not None:
            return self._refuse(
                command,
                uri,
                line,
                "already-running",
                f"{title} did not start: {_title_of(running.check)} is already running for "
                f"{script.name}; wait for it to finish, or cancel it.",
                types.MessageType.Info,
            )
        # Registered before the first `await`: a second command for this file that arrives
        # meanwhile sees it.
        run = ActiveRun(check, uri, task=asyncio.current_task())
        self.active[key] = run
        try:
            return await self._run(title, run, uri, line, script, key, settings, exported)
        finally:
            if self.active.get(key) is run:
                del self.active[key]
            if exported is not None:
                exported.remove()

    async def _run(
        self,
        title: str,
        run: ActiveRun,
        uri: str,
        line: int | None,
        script: Path,
        key: str,
        settings: RuntimeSettings,
        exported: ExportedNotebook | None = None,
    ) -> dict[str, Any]:
        server = self.server
        check = run.check
        origin: Origin = (key, check)
        for stale in self.diagnostics.drop_origin(origin):
            server.republish(stale)

        unsaved = False
        if exported is not None:
            pass  # the notebook's code as the editor has it, saved or not
        elif uri in server.documents:
            text = server.workspace.get_text_document(uri).source
            unsaved = differs_from_disk(script, text)
        # Where the user would run `python train.py`: the workspace folder (as VS Code's "Run
        # Python File" does), else the script's own folder.
        folder = innermost_folder(uri, server.folder_uris())
        folder_path = to_fs_path(folder) if folder is not None else None
        cwd = Path(folder_path) if folder_path else script.parent
        if exported is not None:
            cwd = exported.notebook_path.parent  # where Jupyter runs the notebook's kernel
        request = RunRequest(
            check=check,
            script=script,
            steps=settings.steps,
            timeout_s=settings.timeout_seconds,
            python=sys.executable,
            cwd=cwd,
        )
        server.log(
            f"{title} of {script}: {shlex.join(_equivalent_command(request))} "
            f"(working directory {cwd}; the launcher runs {request.python} -m "
            "torchlint.runtime.child)"
        )
        if unsaved:
            server.log(f"{uri} has unsaved changes: running the file on disk")

        request_future = self._request_future()
        if request_future is not None:
            request_future.add_done_callback(_on_cancelled(run.cancel))
        progress = RunProgress(server, await self._create_progress(run.cancel))
        if progress.token is not None:
            on_disk = " (as saved on disk)" if unsaved else ""
            server.work_done_progress.begin(
                progress.token,
                types.WorkDoneProgressBegin(
                    title=PROGRESS_TITLES[check],
                    message=f"starting {script.name}{on_disk}",
                    percentage=0,
                    cancellable=True,
                ),
            )

        result: dict[str, Any] | None = None
        try:
            result = await self._in_thread(run, request, progress)
        except asyncio.CancelledError:
            run.cancel.set()
            raise
        finally:
            summary = one_line(result["summary"], SUMMARY_CHARACTERS) if result else "stopped"
            progress.end(summary)

        if exported is not None:
            self._publish_cells(result, run, exported, origin, line)
            result = exported.as_notebook(result)
            self._announce(result, title, exported.notebook_path, unsaved)
            return result
        self._publish(result, run, script, origin, line)
        self._announce(result, title, script, unsaved)
        return result

    def _request_future(self) -> Future[Any] | None:
        """The pending `workspace/executeCommand` request being handled (cancelled by the
        client's `$/cancelRequest`), when pygls lets us see it."""
        protocol = self.server.protocol
        try:
            msg_id = protocol.msg_id
            futures = getattr(protocol, "_request_futures", None)
        except Exception:
            return None
        if msg_id is None or not isinstance(futures, dict):
            return None
        future = futures.get(msg_id)
        return future if isinstance(future, Future) else None

    async def _create_progress(self, cancel: threading.Event) -> str | None:
        """A server-created progress token, when the client supports them."""
        capabilities = self.server.client_capabilities
        window = capabilities.window if capabilities else None
        if not (window and window.work_done_progress):
            return None
        token = f"torchlint-runtime-{uuid.uuid4()}"
        progress = self.server.work_done_progress
        try:
            await asyncio.wait_for(progress.create_async(token), PROGRESS_CREATE_TIMEOUT_SECONDS)
        except Exception as exc:
            self.server.log(
                f"window/workDoneProgress/create failed ({exc!r}); running without progress",
                types.MessageType.Warning,
            )
            return None
        registered = progress.tokens.get(token)
        if registered is None:  # pygls registers it on success; be sure
            registered = progress.tokens[token] = Future()
        registered.add_done_callback(_on_cancelled(cancel))
        return token

    async def _in_thread(
        self, run: ActiveRun, request: RunRequest, progress: RunProgress
    ) -> dict[str, Any]:
        """`run_check` on a daemon thread, its events and its result handed to the loop."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[dict[str, Any]] = loop.create_future()

        def deliver(callback: Callable[..., None], *args: Any) -> None:
            with contextlib.suppress(RuntimeError):  # a closed loop: the server is exiting
                loop.call_soon_threadsafe(callback, *args)

        def resolve(result: dict[str, Any]) -> None:
            if not done.done():
                done.set_result(result)

        def work() -> None:
            try:
                result = run_check(
                    request,
                    on_event=lambda event: deliver(progress.event, event),
                    cancel=run.cancel,
                )
            except Exception:
                result = internal_error_envelope(request, traceback.format_exc())
            finally:
                with self._working_lock:
                    self._working.pop(id(run), None)
            deliver(resolve, result)

        run.thread = threading.Thread(
            target=work, name=f"torchlint-runtime-{request.check}", daemon=True
        )
        with self._working_lock:
            self._working[id(run)] = run
        run.thread.start()
        return await done

    def _publish(
        self,
        result: dict[str, Any],
        run: ActiveRun,
        script: Path,
        origin: Origin,
        line: int | None,
    ) -> None:
        server = self.server
        open_documents: dict[str, str] = {}
        for uri in server.documents:
            path = to_fs_path(uri)
            if path:
                open_documents[path_key(path)] = uri
        grouped: dict[str, list[Finding]] = {}
        not_open = 0
        for finding in findings_of(result, script, line):
            target = open_documents.get(finding.key)
            if target is None:
                not_open += 1
                continue
            grouped.setdefault(target, []).append(finding)
        backward = _site(result, "backward")
        for uri, findings in grouped.items():
            text = server.workspace.get_text_document(uri).source
            extra: dict[str, Any] = {}
            if backward is not None and open_documents.get(backward[0]) == uri:
                extra["backward_line"] = backward[1]  # where a missing zero_grad() goes
            diagnostics = [
                to_lsp_diagnostic(finding, text, server.encoding, run.check, extra)
                for finding in findings
            ]
            self.diagnostics.put(uri, origin, diagnostics)
            server.republish(uri)
        if not_open:
            server.log(
                f"{not_open} runtime finding(s) of {script.name} point at files that are not "
                "open; they are in the command's result"
            )

    def _publish_cells(
        self,
        result: dict[str, Any],
        run: ActiveRun,
        exported: ExportedNotebook,
        origin: Origin,
        line: int | None,
    ) -> None:
        """A notebook run's findings on the cells they point at (lines within the cell)."""
        server = self.server
        grouped: dict[str, list[Finding]] = {}
        for finding in findings_of(result, exported.script, None):
            placed = exported.place(finding)
            if placed is not None:
                grouped.setdefault(placed[0], []).append(placed[1])
            elif line is not None and finding.key == path_key(exported.script):
                grouped.setdefault(run.uri, []).append(Finding(finding.key, line, finding.item))
        for uri, findings in grouped.items():
            text = exported.texts.get(uri, "")
            diagnostics = [
                to_lsp_diagnostic(finding, text, server.encoding, run.check) for finding in findings
            ]
            self.diagnostics.put(uri, origin, diagnostics)
            server.republish_cell(uri)

    def quick_fixes(
        self, uri: str, diagnostics: Sequence[types.Diagnostic], text: str, version: int | None
    ) -> list[types.CodeAction]:
        """The fixes of the causes the runs (or the rules they confirm) found at a place, and
        "fix and run again" for those a run found."""
        commands = {check: command for command, check in CHECKS.items()}
        return zero_grad_actions(
            uri, diagnostics, text, version, self.server.versioned_edits, commands
        )

    def _announce(self, result: dict[str, Any], title: str, script: Path, unsaved: bool) -> None:
        kind = message_type(result)
        summary = one_line(result.get("summary") or f"{title} of {script.name} ended")
        note = " (ran the file as saved on disk; the editor has unsaved changes)" if unsaved else ""
        self.server.window_show_message(types.ShowMessageParams(type=kind, message=summary + note))
        details = [
            f"{title} of {script}: status {result.get('status')}, verdict "
            f"{result.get('verdict')}, {result.get('duration_s')} s: {summary}"
        ]
        error = result.get("error")
        if isinstance(error, dict):
            details.append(f"  {error.get('kind')}: {error.get('message')}")
            for output in error.get("output_tail") or []:
                details.append(f"  | {output}")
        for item in result.get("diagnostics") or []:
            if isinstance(item, dict):
                details.append(
                    f"  {item.get('code')} {item.get('filename')}:{item.get('line')}: "
                    f"{one_line(item.get('message'))}"
                )
        self.server.log("\n".join(details), kind)


def _site(result: dict[str, Any], what: str) -> tuple[str, int] | None:
    """(file key, 0-based line) of a captured object's site in the envelope (`backward`)."""
    captured = result.get("captured")
    found = captured.get(what) if isinstance(captured, dict) else None
    site = found.get("site") if isinstance(found, dict) else None
    if not isinstance(site, dict):
        return None
    filename, line = site.get("filename"), site.get("line")
    if not isinstance(filename, str) or not isinstance(line, int) or line < 1:
        return None
    return path_key(filename), line - 1


def _title_of(check: str) -> str:
    command = next((command for command, name in CHECKS.items() if name == check), check)
    return RUNTIME_TITLES.get(command, check)


def _equivalent_command(request: RunRequest) -> list[str]:
    """The `torchlint run` command line that does the same run."""
    command = [request.python, "-m", "torchlint", "run", request.check, str(request.script)]
    if request.steps is not None:
        command += ["--steps", str(request.steps)]
    command += ["--timeout", f"{request.timeout_s:g}"]
    return command
