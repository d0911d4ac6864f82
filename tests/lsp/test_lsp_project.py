"""Whole-project analysis in the language server: a document's loop calls a helper in another
project file, the finding shows up at the call, and editing, breaking, closing or rewriting the
helper's file (in the editor or on disk) lints the calling document again, which is itself never
touched.

One server for the module, its workspace one project (a `pyproject.toml` at its root); every
test has its own package in it."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path

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

from torchlint.engine import Analysis, analyze_source
from torchlint.lsp.project_index import ProjectIndex, analyse_with_project, file_path
from torchlint.project_view import AnalysisProject

# Only the tests over stdio: the index's own tests at the end are plain functions.
over_stdio = pytest.mark.asyncio(loop_scope="module")

ENGINE = """\
import torch


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            model(x)
"""
ENGINE_TRAINS_AGAIN = ENGINE + "    model.train()\n"
ENGINE_BROKEN = ENGINE.replace("    model.eval()\n", "    model.eval(\n")

TRAIN = """\
import torch

from .engine import evaluate


def fit(model, loader, val_loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        evaluate(model, val_loader)
"""
EVALUATE_CALL_LINE = 12  # 0-based: `evaluate(model, val_loader)`

# The optimizer travels inside a dict: alone, `finish(state)` is a call that cannot step (TL101
# on `loss.backward()`); with the project, `finish` is seen to step it.
HELPERS = """\
def finish(state):
    state["optimizer"].step()
    state["optimizer"].zero_grad()
"""
HELPERS_NO_STEP = """\
def finish(state):
    state["optimizer"].zero_grad()
"""
NEAR_MISS = """\
import torch

from .helpers import finish


def fit(model, loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    state = {"optimizer": optimizer}
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        finish(state)
"""

_names = itertools.count()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    return root


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: RecordingClient, workspace: Path) -> AsyncIterator[None]:
    await lsp_client.initialize_session(initialize_params([workspace]))
    yield
    await lsp_client.shutdown_session()
    errors = [m.message for m in lsp_client.log_messages if m.type == types.MessageType.Error]
    assert errors == []


@pytest.fixture
def package(client: RecordingClient, workspace: Path) -> Callable[..., dict[str, Document]]:
    """A new package in the project with these files on disk; a `Document` for each."""

    def make(**files: str) -> dict[str, Document]:
        folder = workspace / f"pkg{next(_names)}"
        folder.mkdir()
        (folder / "__init__.py").write_text("", encoding="utf-8")
        documents = {}
        for name, text in files.items():
            (folder / f"{name}.py").write_text(text, encoding="utf-8")
            documents[name] = Document(client, uri_of(folder / f"{name}.py"))
        return documents

    return make


def codes(diagnostics: list[types.Diagnostic]) -> list[str]:
    return [str(d.code) for d in diagnostics]


async def publication(doc: Document, count: int) -> list[types.Diagnostic]:
    """The `count`-th publication for `doc`'s current version (the document is not edited)."""
    return await doc.diagnostics(count=count)


def path_of(doc: Document) -> Path:
    path = file_path(doc.uri)
    assert path is not None
    return path


@over_stdio
async def test_a_finding_whose_other_half_is_in_a_file_on_disk(package) -> None:
    docs = package(engine=ENGINE, train=TRAIN)
    train = docs["train"]
    train.open(TRAIN)
    (diagnostic,) = await train.diagnostics()
    assert diagnostic.code == "TL105"
    assert "engine.py:5" in diagnostic.message
    assert "`evaluate()`" in diagnostic.message
    assert diagnostic.range.start.line == EVALUATE_CALL_LINE
    # Alone, the file has nothing to say: the finding needs engine.py.
    alone = analyze_source(TRAIN, str(path_of(train)))
    assert alone.diagnostics == []
    train.close()


@over_stdio
async def test_editing_the_helper_relints_the_caller(package) -> None:
    docs = package(engine=ENGINE, train=TRAIN)
    train, engine = docs["train"], docs["engine"]
    train.open(TRAIN)
    assert codes(await publication(train, 1)) == ["TL105"]

    # Opening engine.py changes nothing train.py read: it is not linted again for it.
    engine.open(ENGINE)
    assert await engine.diagnostics() == []

    engine.change(ENGINE_TRAINS_AGAIN)
    assert await engine.diagnostics() == []
    assert await publication(train, 2) == []
    assert train.version == 1  # train.py itself never changed

    engine.change(ENGINE)
    assert codes(await publication(train, 3)) == ["TL105"]

    # Unsaved edits are dropped on close: train.py reads engine.py from disk again.
    engine.change(ENGINE_TRAINS_AGAIN)
    assert await publication(train, 4) == []
    engine.close()
    assert codes(await publication(train, 5)) == ["TL105"]
    assert len(train.publications()) == 5
    train.close()


@over_stdio
async def test_a_helper_that_steps_is_not_a_missing_step(package) -> None:
    docs = package(helpers=HELPERS, train=NEAR_MISS)
    train, helpers = docs["train"], docs["helpers"]
    # Analysed alone, the loop looks like it never steps.
    alone = analyze_source(NEAR_MISS, str(path_of(train)))
    assert [d.code for d in alone.diagnostics] == ["TL101"]

    train.open(NEAR_MISS)
    assert await publication(train, 1) == []

    # The project really is what clears it: a helper that no longer steps brings TL101 back.
    helpers.open(HELPERS)
    await helpers.diagnostics()
    helpers.change(HELPERS_NO_STEP)
    (diagnostic,) = await publication(train, 2)
    assert diagnostic.code == "TL101"
    assert diagnostic.range.start.line == 10  # `loss.backward()`
    helpers.close()
    assert await publication(train, 3) == []
    train.close()


@over_stdio
async def test_a_syntax_error_in_the_helper_does_not_break_the_caller(
    package, client: RecordingClient
) -> None:
    docs = package(engine=ENGINE, train=TRAIN)
    train, engine = docs["train"], docs["engine"]
    train.open(TRAIN)
    assert codes(await publication(train, 1)) == ["TL105"]
    engine.open(ENGINE)
    await engine.diagnostics()

    engine.change(ENGINE_BROKEN)
    assert codes(await engine.diagnostics()) == ["TL001"]
    # evaluate() cannot be read now: the call is one the analysis cannot see into.
    assert await publication(train, 2) == []

    engine.change(ENGINE)
    assert await engine.diagnostics() == []
    assert codes(await publication(train, 3)) == ["TL105"]

    # Still serving.
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=train.uri),
            position=types.Position(line=EVALUATE_CALL_LINE, character=9),
        )
    )
    assert hover is not None
    engine.close()
    train.close()


@over_stdio
async def test_a_helper_rewritten_on_disk_relints_the_caller(
    package, client: RecordingClient
) -> None:
    docs = package(engine=ENGINE, train=TRAIN)
    train = docs["train"]
    train.open(TRAIN)
    assert codes(await publication(train, 1)) == ["TL105"]

    path = path_of(docs["engine"])
    path.write_text(ENGINE_TRAINS_AGAIN, encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=docs["engine"].uri, type=types.FileChangeType.Changed)]
        )
    )
    assert await publication(train, 2) == []
    train.close()


@over_stdio
async def test_a_new_module_on_disk_relints_its_importer(package, client: RecordingClient) -> None:
    docs = package(train=TRAIN)
    train = docs["train"]
    train.open(TRAIN)
    assert await publication(train, 1) == []  # `.engine` does not exist yet

    engine = path_of(train).with_name("engine.py")
    engine.write_text(ENGINE, encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri_of(engine), type=types.FileChangeType.Created)]
        )
    )
    assert codes(await publication(train, 2)) == ["TL105"]
    train.close()


@over_stdio
async def test_an_untitled_document_is_linted_alone(client: RecordingClient) -> None:
    untitled = Document(client, f"untitled:Untitled-{next(_names)}")
    untitled.open(TRAIN.replace("from .engine import evaluate", "from engine import evaluate"))
    assert await untitled.diagnostics() == []
    untitled.close()
    await wait_until(lambda: len(untitled.publications()) == 2, message="the cleared publication")


# --- the index's fallbacks, in this process ----------------------------------------------------


def _analysis(errors: list[str], dependencies: dict[Path, str] | None = None) -> Analysis:
    analysis = Analysis("train.py", "")
    analysis.errors = errors
    analysis.dependencies = dependencies or {}
    return analysis


def test_a_project_that_raises_falls_back_to_the_file_alone(tmp_path: Path) -> None:
    index = ProjectIndex(lambda path: None)
    seen: list[AnalysisProject | None] = []

    def run(project: AnalysisProject | None) -> Analysis:
        seen.append(project)
        if project is not None:
            raise RuntimeError("cross-file resolution broke")
        return _analysis([])

    result = analyse_with_project(index, tmp_path / "train.py", run)
    assert seen[0] is not None and seen[1] is None
    assert result.analysis.errors == []
    (problem,) = result.problems
    assert "cross-file resolution broke" in problem and "linting the file alone" in problem


def test_internal_errors_only_with_the_project_fall_back_and_keep_its_files(
    tmp_path: Path,
) -> None:
    index = ProjectIndex(lambda path: None)
    engine = tmp_path / "engine.py"

    def run(project: AnalysisProject | None) -> Analysis:
        if project is None:
            return _analysis([])
        return _analysis(["train.py: internal error while reading the file: boom"], {engine: "h"})

    result = analyse_with_project(index, tmp_path / "train.py", run)
    assert result.analysis.errors == []
    assert result.dependencies == {engine: "h"}  # fixing engine.py brings the project back
    assert len(result.problems) == 1

    # A rule that crashes with or without the project: the project's analysis stands.
    def crashing(project: AnalysisProject | None) -> Analysis:
        return _analysis(["train.py: rule TL102 failed: boom"], {engine: "h"} if project else {})

    kept = analyse_with_project(index, tmp_path / "train.py", crashing)
    assert kept.dependencies == {engine: "h"} and kept.problems == []


def test_the_reader_prefers_the_editor_text(tmp_path: Path) -> None:
    engine = tmp_path / "engine.py"
    engine.write_text("on disk\n", encoding="utf-8")
    open_texts = {engine: "in the editor\n"}
    index = ProjectIndex(open_texts.get)
    assert index.read(engine) == b"in the editor\n"
    del open_texts[engine]
    assert index.read(engine) == b"on disk\n"
    assert index.read(tmp_path / "missing.py") is None


def test_changes_reach_the_next_analysis(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    index = ProjectIndex(lambda path: None)
    engine = tmp_path / "engine.py"
    before = index.sequence
    with index.use(tmp_path / "train.py") as project:
        first = project
    index.changed(engine)
    assert index.changed_since([engine], before)
    assert not index.changed_since([tmp_path / "other.py"], before)
    generation = first.generation()
    with index.use(tmp_path / "sub.py") as project:
        assert project is first  # one project per layout, kept
        assert project.generation() > generation  # the change was forgotten before this one


def test_untitled_documents_have_no_path() -> None:
    assert file_path("untitled:Untitled-1") is None
    assert file_path("file:///tmp/a%20b.py") == Path("/tmp/a b.py")


@over_stdio
async def test_opening_many_documents_stays_responsive(package) -> None:
    """Documents of one project share its lock; none of them waits forever."""
    docs = package(engine=ENGINE, **{f"train{i}": TRAIN for i in range(6)})
    trains = [doc for name, doc in docs.items() if name != "engine"]
    for doc in trains:
        doc.open(TRAIN)
    results = await asyncio.gather(*(publication(doc, 1) for doc in trains))
    assert all(codes(r) == ["TL105"] for r in results)
    for doc in trains:
        doc.close()
