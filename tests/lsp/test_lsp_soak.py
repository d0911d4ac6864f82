"""A soak test through a real client: 2,000 seeded random edits (inserts, deletes, pastes of
whole files, undo to an earlier version) across four documents, interleaved with code action,
hover and code lens requests. The server must answer every request, never publish a version
older than one it already published for that document, end with the diagnostics of each
document's last version, and keep its memory flat (RSS after a warm-up vs at the end)."""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
import snippets
from lsp_helpers import (
    AMP_SOURCE,
    Document,
    RecordingClient,
    initialize_params,
    server_config,
    uri_of,
)
from lsprotocol import types

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for the RSS"),
]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEED = 20261129
EDITS = 2000
WARM_UP = 200
REQUESTS_EVERY = 20  # edits between two rounds of code action + hover + code lens requests
MAX_RSS_GROWTH_MB = 50.0

FILES = [AMP_SOURCE, *(p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.py")))]
FRAGMENTS = [
    snippets.MISSING_STEP,
    snippets.MISSING_STEP_AND_ITEM,
    snippets.DEPRECATED_SCALER,
    snippets.CLEAN,
    "    print(loss.item())\n",
    "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n",
    "def f(:\n",  # a syntax error for a while
    "# just a comment \U0001f600\n",
    "    ",
    "scaler = torch.cuda.amp.GradScaler()\n",
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("soak")


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: RecordingClient, workspace: Path) -> AsyncIterator[None]:
    await lsp_client.initialize_session(initialize_params([workspace]))
    yield
    await lsp_client.shutdown_session()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def server_pid(client: RecordingClient) -> int:
    process: Any = getattr(client, "_server", None)
    assert process is not None and process.returncode is None, "no server process"
    return int(process.pid)


def edited(rng: random.Random, text: str, history: list[str]) -> str:
    """One random edit of `text`: insert, delete, paste a whole file, or undo."""
    lines = text.splitlines(keepends=True)
    kind = rng.choices(["insert", "delete", "paste", "undo", "type"], [35, 25, 5, 10, 25])[0]
    if kind == "insert" or (kind == "delete" and not lines):
        at = rng.randint(0, len(lines))
        return "".join([*lines[:at], rng.choice(FRAGMENTS), *lines[at:]])
    if kind == "delete":
        start = rng.randrange(len(lines))
        end = min(len(lines), start + rng.randint(1, 4))
        return "".join(lines[:start] + lines[end:])
    if kind == "paste":
        return rng.choice(FILES)
    if kind == "undo" and history:
        return rng.choice(history[-30:])
    # typing: a few characters in the middle of a line
    at = rng.randint(0, len(text))
    return text[:at] + rng.choice(["x", ".", "(", ")", ":", "\n", " ", "item()"]) + text[at:]


def requests_for(client: RecordingClient, doc: Document, rng: random.Random) -> list[Any]:
    lines = doc.text.splitlines() or [""]
    line = rng.randrange(len(lines))
    position = types.Position(line=line, character=rng.randint(0, len(lines[line])))
    identifier = types.TextDocumentIdentifier(uri=doc.uri)
    published = doc.publications()
    diagnostics = list(published[-1].diagnostics) if published else []
    return [
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=identifier,
                range=types.Range(start=position, end=position),
                context=types.CodeActionContext(diagnostics=diagnostics[:3]),
            )
        ),
        client.text_document_hover_async(
            types.HoverParams(text_document=identifier, position=position)
        ),
        client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier)),
    ]


def assert_versions_never_go_back(client: RecordingClient) -> None:
    newest: dict[str, int] = {}
    for publication in client.publications:
        if publication.version is None:
            continue
        last = newest.get(publication.uri, 0)
        assert publication.version >= last, (publication.uri, publication.version, last)
        newest[publication.uri] = publication.version


async def settle(docs: list[Document]) -> None:
    for doc in docs:
        await doc.diagnostics(timeout=60)


async def test_two_thousand_random_edits(client: RecordingClient, workspace: Path) -> None:
    rng = random.Random(SEED)
    pid = server_pid(client)
    docs = [Document(client, uri_of(workspace / f"soak{i}.py")) for i in range(4)]
    histories: dict[str, list[str]] = {}
    for doc in docs:
        doc.open(rng.choice(FILES))
        histories[doc.uri] = [doc.text]
    pending: list[Any] = []
    answered = 0
    started = time.monotonic()
    rss_start = 0.0
    for n in range(1, EDITS + 1):
        doc = rng.choice(docs)
        history = histories[doc.uri]
        doc.change(edited(rng, doc.text, history))
        history.append(doc.text)
        del history[:-60]
        if n % REQUESTS_EVERY == 0:
            pending.extend(requests_for(client, rng.choice(docs), rng))
        if n % 5 == 0:
            # Bursts of edits with pauses around the server's 15 ms debounce in between, so
            # some edits coalesce and others land while an analysis runs.
            await asyncio.sleep(rng.choice([0.0, 0.001, 0.005, 0.015, 0.03]))
        if n % 100 == 0:
            results = await asyncio.wait_for(asyncio.gather(*pending), 60)
            answered += len(results)
            pending.clear()
        if n == WARM_UP:
            await settle(docs)
            rss_start = rss_mb(pid)
    answered += len(await asyncio.wait_for(asyncio.gather(*pending), 60))
    await settle(docs)
    elapsed = time.monotonic() - started
    rss_end = rss_mb(pid)

    assert answered == 3 * (EDITS // REQUESTS_EVERY)
    assert_versions_never_go_back(client)
    # The last publication of each document is of its last version, and matches what a fresh
    # document with the same text gets.
    for i, doc in enumerate(docs):
        last = doc.publications()[-1]
        assert last.version == doc.version
        fresh = Document(client, uri_of(workspace / f"fresh{i}.py"))
        fresh.open(doc.text)
        expected = await fresh.diagnostics()
        assert [(d.code, d.range) for d in last.diagnostics] == [
            (d.code, d.range) for d in expected
        ]
    growth = rss_end - rss_start
    print(
        f"\nsoak: {EDITS} edits, {answered} requests answered, {len(client.publications)} "
        f"publications in {elapsed:.1f}s; server RSS {rss_start:.1f} MB after {WARM_UP} edits, "
        f"{rss_end:.1f} MB at the end ({growth:+.1f} MB)"
    )
    assert growth < MAX_RSS_GROWTH_MB
    # Still serving, and quickly.
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=docs[0].uri),
                position=types.Position(0, 0),
            )
        ),
        5,
    )
    assert hover is None or isinstance(hover, types.Hover)
