"""Settings: pulled per workspace folder, honoured, and re-pulled on didChangeConfiguration;
and the project's `[tool.torchlint]`. One server, one workspace folder per test."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_helpers import (
    AMP_SOURCE,
    Document,
    RecordingClient,
    initialize_params,
    server_config,
    uri_of,
)
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLEAN = "x = 1\n"
# What AMP_SOURCE gets with the default rules and severities.
AMP_FINDINGS = [
    ("TL204", types.DiagnosticSeverity.Warning),
    ("TL301", types.DiagnosticSeverity.Warning),
]

FOLDERS: dict[str, dict[str, Any] | None] = {
    "select": {"select": ["TL301"]},
    "ignore": {"ignore": ["item-in-hot-loop"]},
    "severity": {"severity": {"TL301": "error", "deprecated-cuda-amp": "hint"}},
    "on_save": {"run": "onSave"},
    "disabled": {"enable": False},
    "project": None,  # a pyproject.toml decides
    "project_and_client": {"select": ["TL2"]},  # the client's select replaces the project's
    "live": None,
    "saved": None,  # its pyproject.toml changes between saves
    "bad": {"select": ["TL999", "TL301"], "severity": {"nope": "error"}, "run": "sometimes"},
    # Only a typo in `select`: linting goes on with the project's (here: the default) rules.
    # `origins` is what the VS Code extension adds: where each value was set.
    "typo": {"select": ["TL998"], "origins": {"select": "user settings"}},
    "typo_too": {"select": ["TL998"], "origins": {"select": "user settings"}},
    "extend": {"extendSelect": ["TL301"]},  # over the project's select of TL204 alone
    "excluded": {"exclude": ["scratch/", "*_draft.py"]},
    "configured": {"configuration": "CONFIG"},  # the test puts a path here
    "quiet": {"showNotifications": "off", "select": ["TL997"]},
    # `lint.args`, as typed after the settings: its --select wins over the setting's
    "args": {"select": ["TL301"], "lint": {"args": ["--select=TL204", "--fix", "--bogus"]}},
    "args_flat": {"lint.args": ["--ignore", "TL204"]},
    "with_project": None,  # a package whose finding needs its other file
    "no_project": {"lint": {"args": ["--no-project"]}},  # the same package, each file alone
}

# A package whose train.py has two findings that need engine.py (`check` and `--no-project`).
PACKAGE = Path(__file__).resolve().parent.parent / "projects" / "package"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("config")
    paths = {}
    for name in FOLDERS:
        paths[name] = root / name
        paths[name].mkdir()
    project = (
        '[tool.torchlint]\nselect = ["TL204", "TL301"]\nignore = ["TL301"]\n'
        'exclude = ["generated/"]\n'
    )
    (paths["project"] / "pyproject.toml").write_text(project, encoding="utf-8")
    (paths["project_and_client"] / "pyproject.toml").write_text(project, encoding="utf-8")
    (paths["extend"] / "pyproject.toml").write_text(
        '[tool.torchlint]\nselect = ["TL204"]\n', encoding="utf-8"
    )
    custom = paths["configured"] / "settings" / "torchlint.toml"
    custom.parent.mkdir()
    custom.write_text('[tool.torchlint]\nselect = ["TL301"]\n', encoding="utf-8")
    FOLDERS["configured"] = {"configuration": str(custom)}
    for name in ("with_project", "no_project"):
        shutil.copytree(PACKAGE, paths[name], dirs_exist_ok=True)
    return paths


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: RecordingClient, folders: dict[str, Path]) -> AsyncIterator[None]:
    for name, settings in FOLDERS.items():
        if settings is not None:
            lsp_client.set_configuration(
                settings, section="torchlint", scope_uri=uri_of(folders[name])
            )
    await lsp_client.initialize_session(initialize_params(list(folders.values())))
    yield
    await lsp_client.shutdown_session()


def open_in(client: RecordingClient, folder: Path, text: str = AMP_SOURCE) -> Document:
    doc = Document(client, uri_of(folder / "train.py"))
    doc.open(text)
    return doc


def summary(diagnostics: list[types.Diagnostic]) -> list[tuple[str, int | None]]:
    return sorted((str(d.code), d.severity) for d in diagnostics)


async def test_select(client: RecordingClient, folders: dict[str, Path]) -> None:
    doc = open_in(client, folders["select"])
    assert summary(await doc.diagnostics()) == [("TL301", types.DiagnosticSeverity.Warning)]


async def test_ignore_by_name(client: RecordingClient, folders: dict[str, Path]) -> None:
    doc = open_in(client, folders["ignore"])
    assert summary(await doc.diagnostics()) == [("TL204", types.DiagnosticSeverity.Warning)]


async def test_severity_by_code_and_name(client: RecordingClient, folders: dict[str, Path]) -> None:
    doc = open_in(client, folders["severity"])
    assert summary(await doc.diagnostics()) == [
        ("TL204", types.DiagnosticSeverity.Hint),
        ("TL301", types.DiagnosticSeverity.Error),
    ]


async def test_disabled(client: RecordingClient, folders: dict[str, Path]) -> None:
    doc = open_in(client, folders["disabled"])
    assert await doc.diagnostics() == []


async def test_project_configuration(client: RecordingClient, folders: dict[str, Path]) -> None:
    doc = open_in(client, folders["project"])
    assert summary(await doc.diagnostics()) == [("TL204", types.DiagnosticSeverity.Warning)]


async def test_project_exclude(client: RecordingClient, folders: dict[str, Path]) -> None:
    doc = open_in(client, folders["project"] / "generated")
    assert await doc.diagnostics() == []


async def test_client_select_replaces_the_projects(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    # select TL2 (client) over select TL204+TL301 (project); the project's ignore still holds
    doc = open_in(client, folders["project_and_client"])
    assert summary(await doc.diagnostics()) == [("TL204", types.DiagnosticSeverity.Warning)]


async def test_bad_settings_are_reported_and_the_rest_used(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_in(client, folders["bad"])
    assert summary(await doc.diagnostics()) == [("TL301", types.DiagnosticSeverity.Warning)]
    # One warning for the whole settings pull, each problem named once with its folder.
    (shown,) = [m.message for m in client.messages if "torchlint settings" in m.message]
    scope = f"(the settings of {uri_of(folders['bad'])})"
    assert f"torchlint.select {scope}: `TL999` matches no rule" in shown
    assert "ignored, the rest apply" in shown
    assert f"torchlint.severity {scope}: `nope` is not a rule code or name" in shown
    assert f"torchlint.run {scope}: must be `onType` or `onSave`" in shown
    assert shown.count("TL999") == 1


async def test_run_on_save(client: RecordingClient, folders: dict[str, Path]) -> None:
    doc = open_in(client, folders["on_save"])
    assert len(await doc.diagnostics()) == 2
    doc.change(CLEAN)
    await asyncio.sleep(0.4)
    assert [p.version for p in doc.publications()] == [1]  # typing does not lint
    doc.save()
    assert await doc.diagnostics() == []
    assert [p.version for p in doc.publications()] == [1, 2]


async def test_a_save_lints_again_only_what_changed(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_in(client, folders["saved"])
    assert summary(await doc.diagnostics()) == AMP_FINDINGS
    # A save of the text just linted, with the same configuration: nothing is analysed again
    # (an editor that saves after each pause would otherwise double the work).
    doc.save()
    # Also an edit saved at once: the edit's lint is the only one.
    doc.change(AMP_SOURCE + "# a comment\n")
    doc.save()
    await doc.diagnostics()
    await asyncio.sleep(0.5)
    assert [p.version for p in doc.publications()] == [1, 2]
    # The project's configuration changed on disk: the next save lints with it.
    (folders["saved"] / "pyproject.toml").write_text(
        '[tool.torchlint]\nselect = ["TL204"]\n', encoding="utf-8"
    )
    doc.save()
    assert summary(await doc.diagnostics(count=2)) == [("TL204", types.DiagnosticSeverity.Warning)]
    assert [p.version for p in doc.publications()] == [1, 2, 2]


async def test_did_change_configuration_relints(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_in(client, folders["live"])
    assert summary(await doc.diagnostics()) == AMP_FINDINGS
    client.set_configuration(
        {"ignore": ["TL204"], "severity": {"TL301": "error"}},
        section="torchlint",
        scope_uri=uri_of(folders["live"]),
    )
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert summary(await doc.diagnostics(count=2)) == [("TL301", types.DiagnosticSeverity.Error)]


async def test_a_typo_in_select_is_named_once_and_linting_goes_on(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_in(client, folders["typo"])
    assert summary(await doc.diagnostics()) == AMP_FINDINGS
    # Two folders inherit the same user setting: named once per settings pull (one warning for
    # the pull), with the user settings as the place to fix it.
    shown = [m.message for m in client.messages if "TL998" in m.message]
    assert shown
    for message in shown:
        assert message.count("TL998") == 1
        assert "torchlint.select (user settings): `TL998` matches no rule" in message
        assert "so the project's selection applies" in message


async def test_extend_select_adds_to_the_projects_selection(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_in(client, folders["extend"])
    assert [code for code, _ in summary(await doc.diagnostics())] == ["TL204", "TL301"]


async def test_the_editors_exclude(client: RecordingClient, folders: dict[str, Path]) -> None:
    for where in (folders["excluded"] / "scratch" / "train.py", folders["excluded"] / "a_draft.py"):
        where.parent.mkdir(exist_ok=True)
        doc = Document(client, uri_of(where))
        doc.open(AMP_SOURCE)
        assert await doc.diagnostics() == []
    kept = open_in(client, folders["excluded"])
    assert len(await kept.diagnostics()) == 2


async def test_a_configuration_file_named_in_the_settings(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_in(client, folders["configured"])
    assert [code for code, _ in summary(await doc.diagnostics())] == ["TL301"]


async def test_show_notifications_off_keeps_problems_in_the_log(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_in(client, folders["quiet"])
    await doc.diagnostics()
    assert not any("TL997" in m.message for m in client.messages)
    assert any("TL997" in m.message for m in client.log_messages)


async def test_lint_args_apply_after_the_settings(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    doc = open_in(client, folders["args"])
    assert summary(await doc.diagnostics()) == [("TL204", types.DiagnosticSeverity.Warning)]
    shown = [m.message for m in client.messages if "--bogus" in m.message]
    assert shown  # one warning per settings pull, naming each problem once
    for message in shown:
        assert message.count("--bogus") == 1
        assert "`--bogus`: not an option of `torchlint check`" in message
        assert "`--fix`: no meaning for one file in the editor; ignored" in message
    flat = open_in(client, folders["args_flat"])
    assert summary(await flat.diagnostics()) == [("TL301", types.DiagnosticSeverity.Warning)]


async def test_lint_args_no_project_analyses_each_file_alone(
    client: RecordingClient, folders: dict[str, Path]
) -> None:
    text = (PACKAGE / "mypkg" / "train.py").read_text(encoding="utf-8")
    seen = Document(client, uri_of(folders["with_project"] / "mypkg" / "train.py"))
    seen.open(text)
    assert [code for code, _ in summary(await seen.diagnostics())] == ["TL101", "TL105"]
    alone = Document(client, uri_of(folders["no_project"] / "mypkg" / "train.py"))
    alone.open(text)
    assert await alone.diagnostics() == []
