"""The runtime checks started from the editor: `torchlint.runtime.overfit` / `.grads` run the
document's file in a child process (real torch), with progress, cancellation and diagnostics
merged into the document's. One server for the module, two workspace folders: `runs` (40 steps)
and `off` (`runtime.enable` false). Each run that reaches the script costs about 2 s (torch's
import in the child).
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_helpers import (
    Document,
    RecordingClient,
    initialize_params,
    server_config,
    uri_of,
    wait_until,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from workspace_guard import differences, make_workspace, snapshot

from torchlint.lsp.confirmed import with_confirmations
from torchlint.lsp.runtime_runs import (
    SOURCE,
    Finding,
    RuntimeDiagnostics,
    findings_of,
    message_type,
    parse_arguments,
    script_of,
    to_lsp_diagnostic,
)
from torchlint.lsp.settings import DEFAULT_RUNTIME, RuntimeSettings, parse_settings

SCRIPTS = Path(__file__).resolve().parents[1] / "runtime" / "scripts"
OVERFIT = "torchlint.runtime.overfit"
GRADS = "torchlint.runtime.grads"
PROFILE = "torchlint.runtime.child.profile"
RUN_TIMEOUT = 60.0  # a generous bound for one run on a loaded machine

FOLDERS: dict[str, dict[str, Any]] = {
    "runs": {"runtime": {"steps": 40, "timeoutSeconds": 60}},
    "off": {"runtime": {"enable": False}},
}


# --- the pure parts ---------------------------------------------------------------------------


def test_runtime_settings() -> None:
    assert parse_settings({})[0].runtime == DEFAULT_RUNTIME == RuntimeSettings(True, 300.0, None)
    settings, problems = parse_settings({"runtime": {"timeoutSeconds": 30, "steps": 12}})
    assert settings.runtime == RuntimeSettings(True, 30.0, 12) and problems == []
    flat, problems = parse_settings({"runtime.enable": False, "runtime.steps": 3})
    assert flat.runtime == RuntimeSettings(False, 300.0, 3) and problems == []
    bad, problems = parse_settings(
        {"runtime": {"enable": "no", "timeoutSeconds": -1, "steps": 2.5}}
    )
    assert bad.runtime == DEFAULT_RUNTIME and len(problems) == 3
    assert parse_settings({"runtime": 7})[0].runtime == DEFAULT_RUNTIME
    assert settings.to_json()["runtime"] == {"enable": True, "timeoutSeconds": 30.0, "steps": 12}


def test_arguments_and_scripts(tmp_path: Path) -> None:
    assert parse_arguments(["file:///t.py", 3]) == ("file:///t.py", 3)
    assert parse_arguments(["file:///t.py"]) == ("file:///t.py", None)
    for junk in ([], [3], ["file:///t.py", "3"], ["file:///t.py", -1], ["a", 1, 2]):
        assert parse_arguments(junk) is None
    script = tmp_path / "train.py"
    script.write_text("x = 1\n", encoding="utf-8")
    assert script_of(uri_of(script)) == (script, "")
    for uri, why in (
        ("untitled:Untitled-1", "untitled"),
        ("vscode-notebook-cell:/a.ipynb#W1", "not a file"),
        (uri_of(tmp_path / "missing.py"), "does not exist"),
    ):
        path, reason = script_of(uri)
        assert path is None and why in reason


def test_findings_become_statement_wide_diagnostics(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    other = tmp_path / "model.py"
    result = {
        "diagnostics": [
            {"code": "TLR301", "name": "n", "severity": "error", "message": "labels",
             "filename": str(script), "line": 2, "evidence": {"a": 1}},
            {"code": "TLR100", "name": "m", "severity": "info", "message": "somewhere",
             "filename": None, "line": None, "evidence": {}},
            {"code": "TLR200", "name": "o", "severity": "warning", "message": "there",
             "filename": str(other), "line": 9, "evidence": {}},
        ]
    }  # fmt: skip
    first, second, third = findings_of(result, script, fallback_line=4)
    assert (first.line, second.line, third.line) == (1, 4, 8)
    assert first.key == second.key != third.key
    text = "import torch\n    loss = f(x, 'é🔥')  \nz = 2\n"
    diagnostic = to_lsp_diagnostic(first, text, "utf-16", "overfit")
    assert diagnostic.source == SOURCE == "torchlint-runtime"
    assert diagnostic.code == "TLR301" and diagnostic.message == "labels"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    # The text does not parse: the line's code, without its indentation and trailing blanks
    # (UTF-16: the emoji is two units).
    assert diagnostic.range == types.Range(types.Position(1, 4), types.Position(1, 22))
    assert diagnostic.code_description is not None
    assert diagnostic.code_description.href.endswith("docs/runtime.md#runtime-diagnostics")
    assert diagnostic.data == {"check": "overfit", "name": "n", "evidence": {"a": 1}}
    past_the_end = to_lsp_diagnostic(Finding(first.key, 40, first.item), text, "utf-16", "grads")
    assert past_the_end.range.start.line == 3  # the (empty) last line
    info = to_lsp_diagnostic(second, text, "utf-16", "overfit")
    assert info.severity == types.DiagnosticSeverity.Information
    # A statement over several lines is covered whole; a loop's header only on its line.
    code = "for x in y:\n    loss = criterion(\n        model(x), y)\n    loss.backward()\n"
    call = to_lsp_diagnostic(Finding(first.key, 1, first.item), code, "utf-16", "overfit")
    assert call.range == types.Range(types.Position(1, 4), types.Position(2, 20))
    loop = to_lsp_diagnostic(Finding(first.key, 0, first.item), code, "utf-16", "overfit")
    assert loop.range == types.Range(types.Position(0, 0), types.Position(0, 11))


def test_runtime_diagnostics_store() -> None:
    store = RuntimeDiagnostics()
    one = types.Diagnostic(
        range=types.Range(types.Position(0, 0), types.Position(0, 1)), message="1"
    )
    two = types.Diagnostic(
        range=types.Range(types.Position(1, 0), types.Position(1, 1)), message="2"
    )
    store.put("file:///a.py", ("a", "overfit"), [one])
    store.put("file:///a.py", ("a", "grads"), [two])
    store.put("file:///b.py", ("a", "overfit"), [two])
    assert store.for_uri("file:///a.py") == [one, two]

    # The same code on the same line from three checks: shown once, the latest run's.
    def finding(message: str, line: int = 3) -> types.Diagnostic:
        where = types.Range(types.Position(line, 4), types.Position(line, 20))
        return types.Diagnostic(range=where, message=message, code="TLR107")

    for check in ("overfit", "grads", "profile"):
        store.put("file:///c.py", ("c", check), [finding(check)])
    assert [d.message for d in store.for_uri("file:///c.py")] == ["profile"]
    store.put("file:///c.py", ("c", "overfit"), [finding("overfit again"), finding("x", 5)])
    assert [d.message for d in store.for_uri("file:///c.py")] == ["overfit again", "x"]
    assert sorted(store.drop_origin(("a", "overfit"))) == ["file:///a.py", "file:///b.py"]
    assert store.for_uri("file:///a.py") == [two] and store.for_uri("file:///b.py") == []
    assert store.drop_uri("file:///a.py") and not store.drop_uri("file:///a.py")


def test_message_types() -> None:
    info, warning, error = (
        types.MessageType.Info,
        types.MessageType.Warning,
        types.MessageType.Error,
    )
    assert message_type({"status": "completed", "verdict": "pass"}) == info
    assert message_type({"status": "completed", "verdict": "healthy"}) == info
    assert message_type({"status": "completed", "verdict": "fail"}) == warning
    assert message_type({"status": "completed", "verdict": "problems"}) == warning
    for status in ("error", "timeout", "capture_failed"):
        assert message_type({"status": status, "error": {"kind": "exception"}}) == error
    assert message_type({"status": "error", "error": {"kind": "cancelled"}}) == info


# --- a real server ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runtime")
    paths = {}
    for name in FOLDERS:
        paths[name] = make_workspace(root / name)
    return paths


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: RecordingClient, folders: dict[str, Path]) -> AsyncIterator[None]:
    for name, settings in FOLDERS.items():
        lsp_client.set_configuration(settings, section="torchlint", scope_uri=uri_of(folders[name]))
    await lsp_client.initialize_session(initialize_params(list(folders.values())))
    yield
    await lsp_client.shutdown_session()


def open_copy(
    client: RecordingClient, folder: Path, script: str, name: str | None = None
) -> Document:
    path = folder / (name or script)
    shutil.copy(SCRIPTS / script, path)
    doc = Document(client, uri_of(path))
    doc.open(path.read_text(encoding="utf-8"))
    return doc


def marked_line(doc: Document, marker: str) -> int:
    """The 0-based line whose comment is `# line: <marker>`."""
    return next(i for i, line in enumerate(doc.text.splitlines()) if f"# line: {marker}" in line)


def command(uri: str, name: str = OVERFIT, line: int = 0) -> types.ExecuteCommandParams:
    return types.ExecuteCommandParams(command=name, arguments=[uri, line])


async def execute(client: RecordingClient, params: types.ExecuteCommandParams) -> Any:
    """Run a check from the editor; its script's folder (a workspace with data, checkpoints and
    logs) must be byte for byte the same afterwards."""
    script, _ = script_of(str((params.arguments or [""])[0]))
    before = snapshot(script.parent) if script is not None else {}
    result = await asyncio.wait_for(client.workspace_execute_command_async(params), RUN_TIMEOUT)
    if script is not None:
        changed = differences(before, snapshot(script.parent))
        assert not changed, "a runtime check changed the workspace:\n" + "\n".join(changed)
    return result


def new_token(client: RecordingClient, before: set[Any]) -> Any:
    tokens = set(client.progress_reports) - before
    return next(iter(tokens)) if len(tokens) == 1 else None


def reports_of(client: RecordingClient, token: Any) -> list[Any]:
    return list(client.progress_reports.get(token, []))


def step_reported(client: RecordingClient, token: Any, step: int) -> bool:
    return any(
        isinstance(r, types.WorkDoneProgressReport)
        and (r.message or "").startswith(f"step {step}/")
        for r in reports_of(client, token)
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_overfit_passes_with_progress(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_copy(client, folders["runs"], "plain.py")
    await doc.diagnostics()
    before, shown = set(client.progress_reports), len(client.messages)
    result = await execute(client, command(doc.uri, line=marked_line(doc, "loss")))
    assert (result["status"], result["verdict"], result["check"]) == (
        "completed",
        "pass",
        "overfit",
    )
    # the folder's `runtime.steps` is overfit's budget (it stops earlier once it converges)
    assert result["payload"]["steps_requested"] == 40
    token = new_token(client, before)
    reports = reports_of(client, token)
    begin, *middle, end = reports
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.title == "torchlint: overfit one batch" and begin.cancellable is True
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message
    steps = [r for r in middle if (r.message or "").startswith("step ")]
    assert steps and all(isinstance(r, types.WorkDoneProgressReport) for r in middle)
    # the progress ends full: at the budget, or where overfit decided (it converged)
    done = result["payload"]["steps_run"]
    assert steps[-1].message == f"step {done}/{done}" and steps[-1].percentage == 100
    percentages = [r.percentage for r in steps]
    assert percentages == sorted(percentages)
    await wait_until(lambda: len(client.messages) > shown, message="window/showMessage")
    message = client.messages[-1]
    assert message.type == types.MessageType.Info and message.message.startswith("overfit pass")
    script = folders["runs"] / "plain.py"
    assert any(
        f"-m torchlint run overfit {script} --steps 40 --timeout 60" in m.message
        and f"working directory {folders['runs']}" in m.message
        for m in client.log_messages
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_profile_lens_runs_the_stage_profiler(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_copy(client, folders["runs"], "profile_slow_loader.py")
    await doc.diagnostics()
    count = len(doc.publications())
    result = await execute(client, command(doc.uri, PROFILE, line=0))
    assert (result["status"], result["check"], result["verdict"]) == (
        "completed",
        "profile",
        "hints",
    )
    assert result["payload"]["measured_steps"] == 40  # the folder's `runtime.steps`

    def published() -> list[types.Diagnostic] | None:
        newer = doc.publications()[count:]
        return list(newer[-1].diagnostics) if newer else None

    diagnostics = await wait_until(published, message="the runtime diagnostics")
    runtime = [d for d in diagnostics if d.source == "torchlint-runtime"]
    assert [(d.code, d.range.start.line) for d in runtime] == [
        ("TLR601", marked_line(doc, "loader"))
    ]


@pytest.mark.asyncio(loop_scope="module")
async def test_failure_is_published_beside_the_static_diagnostics(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_copy(client, folders["runs"], "labels.py")
    static = await doc.diagnostics()
    assert [d.code for d in static] == ["TL401"]
    # An unsaved edit (below the code): the check runs the file on disk, and says so.
    doc.change(doc.text + "# an unsaved comment\n")
    await doc.diagnostics()
    loss = marked_line(doc, "loss")
    shown = len(client.messages)
    count = len(doc.publications())
    result = await execute(client, command(doc.uri, line=loss))
    assert (result["status"], result["verdict"]) == ("completed", "fail")
    assert [d["code"] for d in result["diagnostics"]] == ["TLR301"]

    def merged() -> list[types.Diagnostic] | None:
        newer = doc.publications()[count:]
        return list(newer[-1].diagnostics) if newer else None

    diagnostics = await wait_until(merged, message="the runtime diagnostics")
    assert sorted(str(d.code) for d in diagnostics) == ["TL401", "TLR301"]
    (runtime,) = [d for d in diagnostics if d.source == "torchlint-runtime"]
    assert runtime.severity == types.DiagnosticSeverity.Error
    # The loss statement, not its indentation.
    statement = doc.text.splitlines()[loss]
    indent = len(statement) - len(statement.lstrip())
    assert runtime.range.start == types.Position(loss, indent)
    code = statement.split("#")[0].rstrip()  # the statement ends before its comment
    assert runtime.range.end == types.Position(loss, len(code))
    assert "1-based" in runtime.message
    await wait_until(lambda: len(client.messages) > shown, message="window/showMessage")
    message = client.messages[-1]
    assert message.type == types.MessageType.Warning
    assert message.message.startswith("overfit: stopped at the first step")
    assert "unsaved changes" in message.message

    # A lint of the same version (here: after the settings changed) keeps them; an edit drops
    # them.
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    again = await doc.diagnostics(count=3)
    assert sorted(str(d.code) for d in again) == ["TL401", "TLR301"]
    doc.change(doc.text + "# another edit\n")
    assert [d.code for d in await doc.diagnostics()] == ["TL401"]


@pytest.mark.asyncio(loop_scope="module")
async def test_cancel_a_hanging_script_while_the_server_keeps_answering(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_copy(client, folders["runs"], "hang.py")
    await doc.diagnostics()
    before = set(client.progress_reports)
    task = asyncio.ensure_future(execute(client, command(doc.uri)))
    token = await wait_until(lambda: new_token(client, before), message="a progress token")
    await wait_until(lambda: step_reported(client, token, 2), RUN_TIMEOUT, "step 2 of hang.py")
    # The script hangs now; the server still answers.
    lenses = await asyncio.wait_for(
        client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
        ),
        5,
    )
    assert lenses and {lens.command.command for lens in lenses if lens.command} >= {OVERFIT}
    hover_line = next(i for i, line in enumerate(doc.text.splitlines()) if "DataLoader(" in line)
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=doc.uri),
                position=types.Position(hover_line, 12),
            )
        ),
        5,
    )
    assert hover is not None and "TL401" in str(hover.contents)
    doc.change(doc.text + "\n")
    assert [d.code for d in await doc.diagnostics(timeout=5)] == ["TL401"]
    assert not task.done()

    started = time.monotonic()
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(task, 10)
    assert time.monotonic() - started < 5
    assert result["status"] == "error" and result["error"]["kind"] == "cancelled"
    assert isinstance(reports_of(client, token)[-1], types.WorkDoneProgressEnd)


@pytest.mark.asyncio(loop_scope="module")
async def test_one_run_per_document_and_cancel_request(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_copy(client, folders["runs"], "hang.py", "hang_twice.py")
    before = set(client.progress_reports)
    request_id = "torchlint-test-first-run"
    first = asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND, command(doc.uri), msg_id=request_id
        )
    )
    token = await wait_until(lambda: new_token(client, before), message="a progress token")
    for name in (OVERFIT, GRADS):
        second = await execute(client, command(doc.uri, name))
        assert second["status"] == "refused" and second["reason"] == "already-running"
        assert "already running" in second["message"]
    assert set(client.progress_reports) - before == {token}  # nothing else started
    assert not first.done()
    # `$/cancelRequest` of the command stops the run too.
    client.cancel_request(types.CancelParams(id=request_id))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(first, 10)

    def ended() -> types.WorkDoneProgressEnd | None:
        last = reports_of(client, token)[-1]
        return last if isinstance(last, types.WorkDoneProgressEnd) else None

    end = await wait_until(ended, 10, "the end of the cancelled run")
    assert "cancelled" in (end.message or "")


@pytest.mark.asyncio(loop_scope="module")
async def test_refusals_start_nothing(client: RecordingClient, folders: dict[str, Path]) -> None:
    doc = open_copy(client, folders["off"], "plain.py")
    await doc.diagnostics()
    before, logged = set(client.progress_reports), len(client.log_messages)
    disabled = await execute(client, command(doc.uri))
    assert disabled["status"] == "refused" and disabled["reason"] == "disabled"
    assert "torchlint.runtime.enable" in disabled["message"]

    untitled = await execute(client, command("untitled:Untitled-1", GRADS))
    assert untitled["status"] == "refused" and untitled["reason"] == "not-a-file"
    assert "save it first" in untitled["message"]

    profile = await execute(client, command(doc.uri, PROFILE, 13))
    assert profile["status"] == "refused" and profile["reason"] == "disabled"

    bad = await execute(client, types.ExecuteCommandParams(command=OVERFIT, arguments=[1, 2]))
    assert bad["status"] == "refused" and bad["reason"] == "bad-arguments"

    assert set(client.progress_reports) == before
    assert not any("torchlint run" in m.message for m in client.log_messages[logged:])


@pytest_lsp.fixture(config=server_config())
async def own_client(lsp_client: RecordingClient, tmp_path: Path) -> AsyncIterator[None]:
    """A server of its own, for a test that shuts it down itself."""
    await lsp_client.initialize_session(initialize_params([tmp_path]))
    yield
    # Should the test fail before the server exits, make sure it does (pytest-lsp waits for it
    # forever, and stops reading its stderr: a server logging a traceback would block).
    process = getattr(lsp_client, "_server", None)
    if process is not None and process.returncode is None:
        try:
            await asyncio.wait_for(process.wait(), 5)
        except asyncio.TimeoutError:
            process.kill()


def processes_running(needle: str) -> list[int]:
    """The processes whose command line mentions `needle` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and needle in (entry / "cmdline").read_text("utf-8", "replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.asyncio
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
async def test_shutdown_stops_a_running_check(own_client: RecordingClient, tmp_path: Path) -> None:
    doc = open_copy(own_client, tmp_path, "hang.py", "hang_until_shutdown.py")
    task = asyncio.ensure_future(execute(own_client, command(doc.uri)))
    await wait_until(lambda: processes_running(str(tmp_path / doc.uri.rsplit("/", 1)[1])))
    await asyncio.wait_for(own_client.shutdown_session(), 10)  # answered without an error
    result = await asyncio.wait_for(task, 5)
    assert result["status"] == "error" and result["error"]["kind"] == "cancelled"
    assert processes_running(str(tmp_path / "hang_until_shutdown.py")) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_a_run_that_confirms_a_rule_is_one_finding_with_a_fix_and_run_again(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    """no_zero_grad.py: TL102 (static) and TLR107 (overfit and gradient scan) are one finding;
    its quick fix inserts `optimizer.zero_grad()` and can run the check again."""
    doc = open_copy(client, folders["runs"], "no_zero_grad.py", "confirmed.py")
    static = await doc.diagnostics()
    assert sorted(str(d.code) for d in static) == ["TL102", "TL401"]
    step = marked_line(doc, "step")
    seen = len(doc.publications())
    for check in (OVERFIT, GRADS):
        result = await execute(client, command(doc.uri, check, step))
        assert "TLR107" in [d["code"] for d in result["diagnostics"]], result["summary"]
    await wait_until(lambda: len(doc.publications()) >= seen + 2, message="the republications")
    shown = list(doc.publications()[-1].diagnostics)
    # One finding per cause: no TLR107 of its own after two checks, no second TL102, and no
    # generic "did not fit" (TLR100) beside the finding that says why overfit failed.
    assert sorted(str(d.code) for d in shown) == ["TL102", "TL401"]
    (confirmed,) = [d for d in shown if d.code == "TL102"]
    assert confirmed.message.startswith("Seen in the code and confirmed by a run (TLR107, grads")
    assert confirmed.source == "torchlint"
    assert confirmed.related_information is not None
    (run,) = [r for r in confirmed.related_information if "TLR107" in r.message]
    assert run.location.range.start == types.Position(step, 8)  # the step statement

    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri),
            position=confirmed.range.start,
        )
    )
    assert hover is not None and "confirmed by a run" in str(hover.contents)
    assert "TL102" in str(hover.contents)

    actions = await doc.code_actions([confirmed], only=[types.CodeActionKind.QuickFix])
    titles = [a.title for a in actions]
    insert = "TL102: insert `optimizer.zero_grad()` before the backward"
    assert insert in titles
    again = next(a for a in actions if a.title.startswith(insert + ", and run"))
    assert again.command is not None and again.command.command == GRADS
    fixed = doc.apply(again.edit)
    backward = confirmed.range.start.line
    assert fixed.splitlines()[backward] == "        optimizer.zero_grad()"
    assert fixed.splitlines()[backward + 1] == "        loss.backward()"
    doc.change(fixed)
    assert [str(d.code) for d in await doc.diagnostics()] == ["TL401"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_runtime_finding_alone_has_a_hover_and_a_documentation_link(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_copy(client, folders["runs"], "labels.py", "hovered.py")
    await doc.diagnostics()
    count = len(doc.publications())
    await execute(client, command(doc.uri, line=marked_line(doc, "loss")))
    await wait_until(lambda: len(doc.publications()) > count, message="the runtime diagnostics")
    (runtime,) = [d for d in doc.publications()[-1].diagnostics if d.source == SOURCE]
    assert runtime.code == "TLR301"
    assert runtime.code_description is not None
    assert runtime.code_description.href.endswith("docs/runtime.md#runtime-diagnostics")
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri),
            position=runtime.range.start,
        )
    )
    assert hover is not None
    text = str(hover.contents)
    assert "TLR301" in text and "label-out-of-range" in text and "overfit" in text
    assert "target_max" in text  # what the run measured


def test_a_runtime_finding_confirms_the_static_one_on_its_line() -> None:
    def at(line: int, code: str, **kwargs: Any) -> types.Diagnostic:
        where = types.Range(types.Position(line, 4), types.Position(line, 15))
        return types.Diagnostic(range=where, message=f"{code} message", code=code, **kwargs)

    item = at(30, "TL301", source="torchlint")
    elsewhere = at(12, "TL301", source="torchlint")
    other_rule = at(30, "TL401", source="torchlint")
    measured = at(30, "TLR603", data={"evidence": {"per_step": 3.0, "ms_per_step": 2.104}})
    confirmed = with_confirmations([item, elsewhere, other_rule], [measured])
    assert confirmed[0].message == (
        "TL301 message (confirmed by a run: 3 sync(s) per step, 2.10 ms)"
    )
    assert confirmed[1:] == [elsewhere, other_rule]  # another line, another rule
    assert item.message == "TL301 message"  # the published static diagnostic is not changed
    assert with_confirmations([item], []) == [item]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_profile_confirms_the_static_sync_at_its_line(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_copy(client, folders["runs"], "profile_copies.py")
    static = await doc.diagnostics()
    line = marked_line(doc, "reported_sync")
    assert [d.range.start.line for d in static if d.code == "TL301"] == [line]
    count = len(doc.publications())
    result = await execute(client, command(doc.uri, PROFILE, line=0))
    assert result["check"] == "profile" and result["status"] == "completed"

    def published() -> list[types.Diagnostic] | None:
        newer = doc.publications()[count:]
        return list(newer[-1].diagnostics) if newer else None

    diagnostics = await wait_until(published, message="the runtime diagnostics")
    (item,) = [d for d in diagnostics if d.code == "TL301"]
    assert item.message.endswith("(confirmed by a run: 1 sync(s) per step)")
    (runtime,) = [d for d in diagnostics if d.code == "TLR603"]
    assert runtime.range.start.line == line
    assert "confirms the static finding TL301" in runtime.message
